// Package accelc is accelc's library entry point: what the accelc commands
// do to a cluster directory, as calls a CI plugin, the catalog server or a
// controller can make without copying the command line.
//
// Cluster compiles a cluster directory's CUE, reads its inventory (a
// snapshot file, the directory's inventory.json, or a live cluster),
// checks one against the other and, when asked, renders the tree:
//
//	res, err := accelc.Cluster(ctx, "clusters/prod", accelc.Options{Stages: accelc.Rendered})
//	if err != nil {
//		return err // compile.Errors for a wrong configuration
//	}
//	for _, d := range res.Diagnostics {
//		log.Print(d) // warnings, each once
//	}
//	err = res.Tree.Write("out/prod")
//
// Errors say whose fault they are: IsOutside reports a system outside the
// configuration that failed (an unreachable cluster); every other error
// is the input's. Diagnostics hold the warnings, each reported once in
// accelc's words; errors are never in them.
//
// Options.Stages say what the caller wants beyond compiling: the nodes
// read (ReadNodes), the configuration checked against them (CheckConfig),
// the DRA selectors checked (CheckSelectors), the tree rendered
// (RenderTree); Checked and Rendered are the sets the commands
// use, and zero compiles alone.
//
// Fleet does the same for every cluster folder of a fleet repository, in
// parallel, and Checkout reads the Git facts render and push annotate
// their output with.
//
// Every other command is one call here too, with typed options and a
// result the command only prints: Push publishes a rendered tree as
// Flux's OCI artifact, Diff compares a render with a previous one, Test
// runs the policies' tests and admission fixtures, Audit judges what a
// cluster runs, TakeSnapshot writes the nodes to commit, Suggest proposes
// hardware profiles, ShowNodes is the node view. Options that cannot work
// are a UsageError (IsUsage).
//
// ReadStatus reads what is true now in a live cluster that accelc renders
// for: what Gatekeeper's audit reports of accelc's constraints, what Kueue
// holds in its queues, what Flux applied and, given the cluster directory,
// whether that is what the checkout renders (by the content digest push
// writes into the artifact). It only reads; Status.WriteText prints it.
package accelc
