// Package schemas embeds the CUE schema of accelc's configuration and the
// built-in accelerator catalog, so the binary needs no files beside it.
package schemas

import "embed"

// FS holds schema.cue (definitions) and catalog.cue (built-in classes).
//
//go:embed *.cue
var FS embed.FS

// Files lists the embedded files in the order they are built.
var Files = []string{"schema.cue", "catalog.cue", "mig.cue"}
