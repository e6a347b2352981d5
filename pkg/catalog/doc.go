// Package catalog owns accelerator classes: the canonical record of each
// accelerator type (id, display name, architecture, memory, PCI ids,
// throughput) and the raw node-label values that identify it.
//
// The built-in catalog is CUE data embedded from schemas/catalog.cue;
// clusters extend or override it through pkg/compile. Everything else in
// accelc (inventory classification, rendering, estimates) reads classes
// through a *Catalog and never parses the CUE itself.
package catalog
