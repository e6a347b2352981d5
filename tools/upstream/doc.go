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
//
// Kueue (v0.19.2, KUEUE_VERSION): every rendered Kueue object decoded
// strictly into Kueue's own types and put through the validation its
// webhooks run (ClusterQueues, Cohorts, ResourceFlavors), and each
// rendered Configuration fragment loaded and validated as the manager
// loads its --config file, with the job integrations it registers.
//
// Open Data Hub (opendatahub-operator v2.35.0, the one release the module
// proxy serves; it predates infrastructure.opendatahub.io/v1 and has
// v1alpha1, whose fields v1 keeps): every rendered HardwareProfile decoded
// strictly into the operator's Go types, and the e2e tests' hand-written
// HardwareProfile CRD compared with the operator's own CRD file, schema for
// schema.
package upstream
