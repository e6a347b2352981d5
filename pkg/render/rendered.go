package render

// The files a rendered directory holds, told by their header.

import "github.com/accelc/accelc/pkg/rendered"

// headerPrefix starts every file accelc renders (see header); Write
// replaces only a directory whose root kustomization.yaml starts with it.
const headerPrefix = rendered.HeaderPrefix

// RenderedFiles lists the files accelc rendered into dir, by slash path,
// sorted, and what else dir holds (rendered.Files): the set push
// publishes.
func RenderedFiles(dir string) (files, extra []string, err error) {
	return rendered.Files(dir)
}
