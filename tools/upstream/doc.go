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
//
// NVIDIA's device plugin (v0.19.0, the newest the module proxy serves;
// the GPU Operator's current release ships v0.20): every config of the
// rendered device-plugin ConfigMaps through the plugin's own loader
// (api/config/v1.NewConfig with --config-file, the code it runs at start:
// replicas of 2 or more, a resource named, a known version), plus the
// checks its main makes on the result, which are not importable and are
// restated here (the MIG strategy's values; MPS never under MIG mixed).
package upstream
