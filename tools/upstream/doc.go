// Package upstream checks accelc's rendered trees with each upstream
// project's own validation code, so that an object a neighbour would
// refuse or silently drop fails CI before any cluster sees it. A separate
// module: the projects' modules carry replace directives and heavy
// dependency graphs the main module must not take on.
//
// Node Feature Discovery (v0.19.0, NFD_VERSION in the Makefile): every
// rendered NodeFeatureRule through NFD's own validator (the code behind
// `kubectl nfd validate`), which nfd-master applies before it labels and
// taints nodes.
package upstream
