package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// inventorySource is where a command reads nodes from: a snapshot file
// (--inventory, else the cluster directory's inventory.json) or a live
// cluster (--live, with the usual kubeconfig rules).
type inventorySource struct {
	file       string
	live       bool
	kubeconfig string
	context    string
	maxAge     time.Duration
}

// bind adds the flags; withAge adds --max-snapshot-age.
func (s *inventorySource) bind(cmd *cobra.Command, withAge bool) {
	f := cmd.Flags()
	f.StringVar(&s.file, "inventory", "", "node snapshot (`kubectl get nodes -o json`, or `accelc inventory snapshot`); default CLUSTER_DIR/inventory.json")
	f.BoolVar(&s.live, "live", false, "read the nodes (and the pods that use their accelerators) from the cluster of the current kubeconfig context")
	f.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file for --live (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&s.context, "context", "", "kubeconfig context for --live (default: the current context)")
	if withAge {
		f.DurationVar(&s.maxAge, "max-snapshot-age", 7*24*time.Hour, "warn when the snapshot is older than this (0: never)")
	}
}

func (s *inventorySource) check() error {
	if s.live && s.file != "" {
		return usageErr("--live and --inventory both name the nodes: give one")
	}
	if !s.live && (s.kubeconfig != "" || s.context != "") {
		return usageErr("--kubeconfig and --context only apply with --live")
	}
	return nil
}

// read returns the snapshot, or nil when there is no live flag, no file
// and no inventory.json in dir. where names it for messages.
func (s *inventorySource) read(ctx context.Context, dir string, stderr io.Writer) (snap *inventory.Snapshot, where string, err error) {
	file := s.file
	if !s.live && file == "" {
		if file = compile.DefaultInventory(dir); file == "" {
			return nil, "", s.check()
		}
	}
	snap, where, err = s.fetch(ctx, file, true, stderr)
	if err != nil {
		return nil, "", err
	}
	if age, ok := snap.Source.Age(time.Now()); ok && !s.live && s.maxAge > 0 && age > s.maxAge {
		fmt.Fprintf(stderr, "warning: %s was taken %s ago from cluster %s (more than --max-snapshot-age %s): refresh it with `accelc inventory snapshot --live -o %s`\n",
			where, roundAge(age), snap.Source.Cluster, roundAge(s.maxAge), where)
	}
	return snap, where, nil
}

// fetch reads the live cluster (counting pods or not) or the file.
func (s *inventorySource) fetch(ctx context.Context, file string, pods bool, stderr io.Writer) (*inventory.Snapshot, string, error) {
	if err := s.check(); err != nil {
		return nil, "", err
	}
	if !s.live {
		snap, err := inventory.ReadSnapshot(file)
		if err != nil {
			return nil, "", &exitError{exitInput, err}
		}
		return snap, file, nil
	}
	snap, err := live.Read(ctx, live.Options{Kubeconfig: s.kubeconfig, Context: s.context, SkipPods: !pods})
	if err != nil {
		return nil, "", &exitError{exitOutside, err}
	}
	for _, w := range snap.Warnings {
		fmt.Fprintln(stderr, "warning: --live:", w)
	}
	return snap, "cluster " + snap.Source.Cluster, nil
}

// load reads and classifies, printing the nodes it had to leave out.
func (s *inventorySource) load(ctx context.Context, dir string, cat *catalog.Catalog, opts inventory.Options, stderr io.Writer) (*inventory.Inventory, error) {
	snap, where, err := s.read(ctx, dir, stderr)
	if err != nil || snap == nil {
		return nil, err
	}
	inv := snap.Classify(cat, opts)
	for _, p := range inv.Problems {
		fmt.Fprintf(stderr, "warning: %s: %s; %s\n", where, p, p.Effect())
	}
	return inv, nil
}

// roundAge prints a duration as people say it: "9d", "5h", "12m".
func roundAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
}
