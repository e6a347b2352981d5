package compile

// Loading a cluster directory into a Model: the phases in order, and
// where its default inventory is.

import (
	"os"
	"path/filepath"
)

// loadUnbounded compiles the cluster directory dir, unbounded (see
// LoadContext). It runs the loader's stages in order, each in a file of
// its own:
//
//	load_package.go     load: the directory's CUE package
//	load_decode.go      decode: evaluated against accelc's schema
//	load_cluster.go     cluster settings: names, namespaces, catalog service
//	load_catalog.go     merge catalog: accelerators into the built-in one
//	load_pins.go        resolve pins: nodes pinned to a type
//	pools.go            sharing pools and MIG configs as node pools
//	load_profiles.go    check profiles: types, resource, priority, ranges
//	load_sharing.go     check sharing and MIG configs
//	load_teams.go       check teams: types, profiles, namespaces
//	load_quotas.go      check quotas, cohorts' limits and tiers
//
// then Kueue's queues, cohorts, admission fair sharing and topology, DRA,
// autoscaling, the catalog service, provisioning and MultiKueue, each a
// row of the list below and a file of its own. Load, decode and
// the catalog stop at their first failure (what follows needs their
// output); every later stage reports what it finds and the next runs, so
// one load lists every problem.
func loadUnbounded(dir string) (*Model, error) {
	pkg, err := loadPackage(dir)
	if err != nil {
		return nil, err
	}
	raw, err := pkg.decode()
	if err != nil {
		return nil, err
	}
	m := &Model{Cluster: raw.Cluster.Cluster, Pins: map[string]string{}, pins: map[string]Path{}, src: pkg.src}
	diags := raw.checkNames(m)
	cat, catDiags, err := raw.catalog(m)
	if err != nil {
		return nil, err
	}
	if diags = append(diags, catDiags...); cat == nil {
		return nil, Errors(diags)
	}
	m.Catalog = cat
	for _, stage := range []func(*Model) []Diagnostic{
		raw.resolvePins,
		buildNodePools,
		raw.checkProfiles,
		checkMIG,
		checkSharing,
		raw.checkTeams,
		checkQuotas,
		checkQueueCoverage,
		checkDeviceClassMappings,
		checkDRA,
		checkCohorts,
		checkAdmissionFairSharing,
		checkTopology,
		checkAutoscaling,
		checkCatalogService,
		checkKubernetesMinor,
		checkOlderMinorLabelling,
		checkNonAcceleratorResources,
		checkProvisioning,
		checkMultiKueue,
	} {
		diags = append(diags, stage(m)...)
	}
	if len(diags) > 0 {
		return nil, Errors(diags)
	}
	return m, nil
}

// DefaultInventory returns the inventory snapshot that sits in a cluster
// directory by convention (inventory.json, .yaml or .yml), or "".
func DefaultInventory(dir string) string {
	for _, name := range []string{"inventory.json", "inventory.yaml", "inventory.yml"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}
