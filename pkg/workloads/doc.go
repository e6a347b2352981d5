// Package workloads owns what a cluster runs, as accelc's audit judges
// it: the pods, and every object of the kinds Gatekeeper's audit reviews
// for accelc's constraint (the workload kinds accelc checks as the pods
// they make, render.WorkloadKinds, and Dynamic Resource Allocation's
// claims). It reads them from a snapshot file committed to Git (Decode,
// ReadFile), so that CI audits without access to the cluster, or from
// the API server itself (ReadLive), listing only; and it tells which
// workload each pod belongs to by its owner references (Set.Workload).
// Read live, a Set also holds Kueue's Workloads where Kueue is served,
// and names the pods holding accelerators that no admitted Workload
// accounts for (Set.Unaccounted): Kueue's quota counts only the pods
// Kueue sees.
//
// Every object is trimmed as it is read (Trim): a snapshot holds no
// secrets and no addresses, only what the policies judge. Objects stay
// unstructured, as Gatekeeper reviews them, so a kind's fields need no
// Go type here; they are decoded straight from the stream (jsontext),
// skipping what is dropped, and sorted in one fixed order.
package workloads
