package upstream

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	spec "github.com/NVIDIA/k8s-device-plugin/api/config/v1"
	cli "github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"
)

// loadDevicePluginConfig loads a config file as the NVIDIA device plugin
// does at start (spec.NewConfig with --config-file: its own parser, with
// the replica, resource-name and strategy checks of its JSON decoding),
// then makes the checks on the result its main makes (validateFlags, not
// importable: the MIG strategy's values, MPS never with MIG mixed).
func loadDevicePluginConfig(t *testing.T, file string) (*spec.Config, error) {
	t.Helper()
	set := flag.NewFlagSet("nvidia-device-plugin", flag.ContinueOnError)
	set.String("config-file", file, "")
	config, err := spec.NewConfig(cli.NewContext(cli.NewApp(), set, nil), nil)
	if err != nil {
		return nil, err
	}
	mig := spec.MigStrategyNone
	if config.Flags.MigStrategy != nil {
		mig = *config.Flags.MigStrategy
	}
	if !slices.Contains([]string{spec.MigStrategyNone, spec.MigStrategySingle, spec.MigStrategyMixed}, mig) {
		return nil, &validationError{"unknown MIG strategy: " + mig}
	}
	if config.Sharing.SharingStrategy() == spec.SharingStrategyMPS && mig == spec.MigStrategyMixed {
		return nil, &validationError{"using --mig-strategy=mixed is not supported with MPS"}
	}
	return config, nil
}

type validationError struct{ msg string }

func (e *validationError) Error() string { return e.msg }

// TestDevicePluginConfigsLoad runs every config of every example's
// rendered device-plugin ConfigMap (the golden trees) through the device
// plugin's own loader, and checks it shares what accelc says: each
// time-sliced or MPS pool's replicas of its resource.
func TestDevicePluginConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/sharing/configmap-accelc-device-plugin-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no rendered device-plugin ConfigMap under testdata/golden: run from tools/upstream")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cm struct{ Data map[string]string }
		if err := yaml.Unmarshal(b, &cm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(cm.Data) == 0 {
			t.Errorf("%s: no configs", f)
		}
		for _, name := range slices.Sorted(maps.Keys(cm.Data)) {
			file := filepath.Join(t.TempDir(), name+".yaml")
			if err := os.WriteFile(file, []byte(cm.Data[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			config, err := loadDevicePluginConfig(t, file)
			if err != nil {
				t.Errorf("%s: config %s: the device plugin refuses it: %v", f, name, err)
				continue
			}
			var shared []string
			if rr := config.Sharing.ReplicatedResources(); rr != nil {
				for _, r := range rr.Resources {
					shared = append(shared, string(r.Name)+"×"+strconv.Itoa(r.Replicas)+renamed(string(r.Rename)))
				}
			}
			t.Logf("%s: config %s: the device plugin loads it: MIG strategy %s, sharing %s %v", filepath.Base(filepath.Dir(filepath.Dir(f))), name,
				*config.Flags.MigStrategy, config.Sharing.SharingStrategy(), shared)
			if strings.Contains(cm.Data[name], "replicas:") && len(shared) == 0 {
				t.Errorf("%s: config %s names replicas, but the device plugin shares nothing", f, name)
			}
		}
	}
}

func renamed(r string) string {
	if r == "" {
		return ""
	}
	return " as " + r
}

// TestDevicePluginRefuses: the loader is no rubber stamp: it refuses what
// the plugin would refuse at start.
func TestDevicePluginRefuses(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n", "number of replicas must be >= 2"},
		{"version: v1\nsharing:\n  timeSlicing:\n    resources: []\n", "no resources specified"},
		{"version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n", "mixed is not supported with MPS"},
		{"version: v2\n", "unknown version"},
	} {
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, []byte(tc.config), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadDevicePluginConfig(t, file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: want an error containing %q, got %v", tc.config, tc.want, err)
		}
	}
}
