// Package inventory owns what accelc knows about a cluster's nodes: it
// reads node lists (a `kubectl get nodes` snapshot; live clusters and NVML
// reports plug in as further sources) and the ResourceSlices Dynamic
// Resource Allocation drivers publish of their devices, classifies every
// node (or, where its slices say, every device) into an accelerator class
// of a *catalog.Catalog with its sharing mode, and builds the node view
// and per-type summary.
//
// Inventory never goes through CUE: a cluster can have thousands of nodes,
// and parsing plus classification in Go keeps a 5,000-node render well
// under a second. One unreadable node is reported as a Problem and the
// rest are still classified.
package inventory
