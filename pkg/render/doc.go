// Package render turns a compiled Model and a classified Inventory into
// Kubernetes objects and writes them as a kustomize tree, one folder per
// concern (nodes/, profiles/, …) under a root kustomization.yaml.
//
// Render is a pure function of its inputs: no clock, no randomness, no map
// order reaches the output, so the same commit always renders the same
// bytes. Write replaces the output directory atomically: it renders into a
// temporary sibling and renames it into place, so a failed run leaves the
// previous tree untouched.
//
// render imports neither client-go nor NVML nor the registry client (a
// test enforces it): rendering runs in CI without cluster access, and
// what uses it does not link what only pushing needs.
package render
