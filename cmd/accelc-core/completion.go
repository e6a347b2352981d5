package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Shell completion (`accelc completion bash|zsh|fish|powershell`, cobra's)
// completes what the directory or inventory at hand holds: cluster
// folders, accelerator types, node names, kubeconfig contexts, and every
// flag's fixed choices. Completion never fails a shell: what cannot be
// read completes nothing.

// completeClusterDir completes a CLUSTER_DIR argument: the cluster folders
// (folders whose CUE declares a cluster) beside what is typed, and other
// folders to descend into.
func completeClusterDir(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	parent := filepath.Dir(toComplete + "x")
	clusters, _ := accelc.ClusterDirs(parent)
	entries, _ := os.ReadDir(parent)
	var out []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := e.Name()
		if parent != "." || strings.HasPrefix(toComplete, "./") {
			p = filepath.Join(parent, e.Name())
		}
		if !strings.HasPrefix(p, toComplete) {
			continue
		}
		if slices.Contains(clusters, filepath.Join(parent, e.Name())) {
			out = append(out, p+"\tcluster")
		} else {
			out = append(out, p+"/")
		}
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeTypes completes --type: the accelerator classes of the --config
// cluster's catalog, else the built-in one, and unknown and mixed where
// nodes are selected by them.
func completeTypes(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	cat, _ := catalog.Builtin()
	if dir, _ := cmd.Flags().GetString("config"); dir != "" {
		if m, err := compile.Load(dir); err == nil {
			cat = m.Catalog
		}
	}
	if cat == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, c := range cat.Classes() {
		out = append(out, c.ID+"\t"+c.DisplayName)
	}
	if cmd.Name() == "show" {
		out = append(out, inventory.TypeUnknown+"\tnodes of no known type", inventory.TypeMixed+"\tnodes with more than one type")
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNodes completes node names from the inventory the command would
// read (--inventory, else the --config folder's or this folder's
// inventory.json); a live cluster is not read for it.
func completeNodes(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	file, _ := cmd.Flags().GetString("inventory")
	if file == "" {
		dir, _ := cmd.Flags().GetString("config")
		file = compile.DefaultInventory(firstNonEmpty(dir, "."))
	}
	read, err := (&accelc.Source{File: file}).Snapshot(cmd.Context(), ".")
	if err != nil || read.Snapshot == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	snap := read.Snapshot
	out := make([]string, 0, len(snap.Nodes))
	for i := range snap.Nodes {
		out = append(out, snap.Nodes[i].Metadata.Name)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeContexts completes --context from the kubeconfig kubectl would
// read (or --kubeconfig).
func completeContexts(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath, _ = cmd.Flags().GetString("kubeconfig")
	cfg, err := rules.Load()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := make([]string, 0, len(cfg.Contexts))
	for name := range cfg.Contexts {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}
