#!/usr/bin/env bash
# What the end-to-end tests (e2e/, `make e2e`) need beyond the control plane
# of hack/control-plane.sh, each cached under bin/ by version so that a second
# run costs seconds:
#
#   bin/k8s-$K8S_VERSION/kubectl          kubectl at the API server's version, from tools/e2e
#   bin/gatekeeper-$GATEKEEPER_VERSION/manager
#                                         Gatekeeper's controller manager, from tools/gatekeeper
#   bin/gatekeeper-$GATEKEEPER_VERSION/crds/
#                                         Gatekeeper's CRDs, from the same module
#   bin/kueue-$KUEUE_VERSION/manager    Kueue's controller manager, from tools/kueue
#   bin/kueue-$KUEUE_VERSION/crds/      all of Kueue's CRDs (config/components/crd/bases)
#   bin/kueue-$KUEUE_VERSION/webhooks.yaml
#                                         Kueue's webhook configurations (config/components/webhook/manifests.yaml)
#   bin/kueue-$KUEUE_VERSION/controller_manager_config.yaml
#                                         Kueue's default Configuration, which the tests start from
#   bin/flux-$FLUX_VERSION/{source-controller,kustomize-controller}
#                                         Flux's controllers, from tools/flux
#   bin/flux-$FLUX_VERSION/crds/        all of source-controller's and kustomize-controller's CRDs
#   bin/nfd-$NFD_VERSION/nfd-master    Node Feature Discovery's nfd-master, from tools/nfd
#   bin/kwok-$KWOK_VERSION/kwok          KWOK's simulated kubelets, from tools/kwok
#   bin/kwok-$KWOK_VERSION/stages/       the KWOK Stages it runs, from the same module
#   bin/e2e-crds-$CRDS_KEY/               the CRDs of the other API groups accelc renders,
#                                         copied from the pinned upstream modules' zips
#
#   K8S_VERSION=v1.36.3 GATEKEEPER_VERSION=v3.23.1 KUEUE_VERSION=v0.19.2 FLUX_VERSION=v1.9.6 ./hack/e2e-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."

: "${K8S_VERSION:?K8S_VERSION is not set (the Makefile sets it)}"
: "${GATEKEEPER_VERSION:?GATEKEEPER_VERSION is not set (the Makefile sets it)}"
: "${KUEUE_VERSION:?KUEUE_VERSION is not set (the Makefile sets it)}"
: "${FLUX_VERSION:?FLUX_VERSION is not set (the Makefile sets it)}"
: "${KARPENTER_VERSION:?KARPENTER_VERSION is not set (the Makefile sets it)}"
: "${NFD_VERSION:?NFD_VERSION is not set (the Makefile sets it)}"
: "${KWOK_VERSION:?KWOK_VERSION is not set (the Makefile sets it)}"
GO=${GO:-go}
export GOTOOLCHAIN=local

# The upstream modules whose zips carry the CRDs of the API groups accelc
# renders, and the files to take from each. The module proxy serves these
# versions. Of the Open Data Hub operator it serves only v2.35.0, which
# predates the v1 HardwareProfile accelc renders, so that CRD is accelc's
# own (tools/e2e/crds/), checked against v2.35.0's by tools/upstream.
# JobSet's, KubeRay's RayCluster and RayJob, the training operator's
# PyTorchJob, LeaderWorkerSet's, AppWrapper's, the MPI operator's v2beta1
# MPIJob and Kubeflow Trainer's TrainJob are the ML workloads whose
# templates accelc's policies judge at the workload. (KServe's
# InferenceService is judged too, but its CRD with a schema is over a
# megabyte beyond these, and no end-to-end test makes one.)
CRD_MODULES=(
	"sigs.k8s.io/kueue@$KUEUE_VERSION config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml config/components/crd/bases/kueue.x-k8s.io_workloadpriorityclasses.yaml config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml"
	"sigs.k8s.io/node-feature-discovery@$NFD_VERSION deployment/base/nfd-crds/nfd-api-crds.yaml"
	"github.com/fluxcd/source-controller@$FLUX_VERSION config/crd/bases/source.toolkit.fluxcd.io_ocirepositories.yaml"
	"github.com/fluxcd/kustomize-controller@$FLUX_VERSION config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml"
	"github.com/prometheus-operator/prometheus-operator@v0.85.0 example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"
	"sigs.k8s.io/karpenter@$KARPENTER_VERSION pkg/apis/crds/karpenter.sh_nodepools.yaml"
	"sigs.k8s.io/jobset@v0.10.1 config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
	"github.com/ray-project/kuberay/ray-operator@v1.4.0 config/crd/bases/ray.io_rayclusters.yaml config/crd/bases/ray.io_rayjobs.yaml"
	"github.com/kubeflow/training-operator@v1.8.1 manifests/base/crds/kubeflow.org_pytorchjobs.yaml"
	"sigs.k8s.io/lws@v0.7.0 config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"
	"github.com/project-codeflare/appwrapper@v1.1.2 config/crd/bases/workload.codeflare.dev_appwrappers.yaml"
	"github.com/kubeflow/mpi-operator@v0.6.0 manifests/base/kubeflow.org_mpijobs.yaml"
	"github.com/kubeflow/trainer/v2@v2.1.0 manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"
)

# check_pin fails when a tools module requires another version than asked.
check_pin() { # module-dir module version
	local pinned
	pinned=$(cd "$1" && $GO list -m -f '{{.Version}}' "$2")
	if [ "$pinned" != "$3" ]; then
		echo "e2e-tools: $1/go.mod requires $2 $pinned, but the Makefile asks for $3; change one to match" >&2
		exit 1
	fi
}

# kubectl from the same Kubernetes release as the API server, so that
# `kubectl apply --server-side` speaks the server's version.
k8s=bin/k8s-$K8S_VERSION
check_pin tools/e2e k8s.io/kubernetes "$K8S_VERSION"
if [ -x "$k8s/kubectl" ]; then
	echo "e2e-tools: $k8s/kubectl already built"
else
	echo "e2e-tools: building kubectl $K8S_VERSION into $k8s (a minute or two after the control plane)" >&2
	minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	mkdir -p "$k8s"
	tmp=$(mktemp -d "bin/.kubectl-$K8S_VERSION.XXXXXX")
	(cd tools/e2e && $GO build -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor" \
		-o "../../$tmp/kubectl" k8s.io/kubernetes/cmd/kubectl)
	mv "$tmp/kubectl" "$k8s/kubectl"
	rm -rf "$tmp"
fi
"$k8s/kubectl" version --client | sed -n 1p

# Gatekeeper's manager and its CRDs, from the module the pinned gator comes from.
gk=bin/gatekeeper-$GATEKEEPER_VERSION
check_pin tools/gatekeeper github.com/open-policy-agent/gatekeeper/v3 "$GATEKEEPER_VERSION"
if [ -x "$gk/manager" ] && [ -d "$gk/crds" ]; then
	echo "e2e-tools: $gk/manager and crds/ already there"
else
	echo "e2e-tools: building Gatekeeper $GATEKEEPER_VERSION into $gk (5 to 7 minutes the first time on 2 cores)" >&2
	mkdir -p bin
	tmp=$(mktemp -d "bin/.gatekeeper-$GATEKEEPER_VERSION.XXXXXX")
	chmod 0755 "$tmp"
	(cd tools/gatekeeper && $GO build -trimpath \
		-ldflags "-s -w -X github.com/open-policy-agent/gatekeeper/v3/pkg/version.Version=$GATEKEEPER_VERSION" \
		-o "../../$tmp/manager" github.com/open-policy-agent/gatekeeper/v3)
	src=$(cd tools/gatekeeper && $GO list -m -f '{{.Dir}}' github.com/open-policy-agent/gatekeeper/v3)
	mkdir -p "$tmp/crds"
	cp "$src"/manifest_staging/charts/gatekeeper/crds/*.yaml "$tmp/crds/"
	chmod 0644 "$tmp"/crds/*.yaml
	rm -rf "$gk"
	mv "$tmp" "$gk"
fi
echo "e2e-tools: $gk/manager: Gatekeeper $GATEKEEPER_VERSION, $(find "$gk/crds" -name '*.yaml' | wc -l) CRDs"

# Kueue's manager, all its CRDs, its webhook configurations and its default
# Configuration, from the module whose CRDs the tests install (CRD_MODULES).
kq=bin/kueue-$KUEUE_VERSION
check_pin tools/kueue sigs.k8s.io/kueue "$KUEUE_VERSION"
if [ -x "$kq/manager" ] && [ -d "$kq/crds" ] && [ -f "$kq/webhooks.yaml" ] && [ -f "$kq/controller_manager_config.yaml" ]; then
	echo "e2e-tools: $kq/manager, crds/ and configuration already there"
else
	echo "e2e-tools: building Kueue $KUEUE_VERSION into $kq (several minutes the first time on 2 cores)" >&2
	mkdir -p bin
	tmp=$(mktemp -d "bin/.kueue-$KUEUE_VERSION.XXXXXX")
	chmod 0755 "$tmp"
	(cd tools/kueue && $GO build -trimpath \
		-ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
		-o "../../$tmp/manager" sigs.k8s.io/kueue/cmd/kueue)
	src=$(cd tools/kueue && $GO list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
	mkdir -p "$tmp/crds"
	install -m 0644 "$src"/config/components/crd/bases/*.yaml "$tmp/crds/"
	install -m 0644 "$src/config/components/webhook/manifests.yaml" "$tmp/webhooks.yaml"
	install -m 0644 "$src/config/components/manager/controller_manager_config.yaml" "$tmp/controller_manager_config.yaml"
	rm -rf "$kq"
	mv "$tmp" "$kq"
fi
echo "e2e-tools: $kq/manager: Kueue $KUEUE_VERSION, $(find "$kq/crds" -name '*.yaml' | wc -l) CRDs"
# cluster-autoscaler's ProvisioningRequest CRD, for the tests of Kueue's
# provisioning admission check: from the autoscaler apis module at the
# version Kueue's go.mod requires (tools/kueue's module graph pins it).
prq="$kq/autoscaler/autoscaling.x-k8s.io_provisioningrequests.yaml"
if [ ! -f "$prq" ]; then
	ca=$(cd tools/kueue && $GO list -m -f '{{.Dir}}' k8s.io/autoscaler/cluster-autoscaler/apis)
	mkdir -p "$kq/autoscaler"
	install -m 0644 "$ca/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml" "$prq"
fi
echo "e2e-tools: $prq: $(cd tools/kueue && $GO list -m k8s.io/autoscaler/cluster-autoscaler/apis)"

# Flux's source-controller and kustomize-controller, and all their CRDs,
# from the modules whose API accelc renders with (accelc's go.mod requires
# source-controller/api and kustomize-controller/api at the same version).
fx=bin/flux-$FLUX_VERSION
check_pin . github.com/fluxcd/source-controller/api "$FLUX_VERSION"
check_pin . github.com/fluxcd/kustomize-controller/api "$FLUX_VERSION"
check_pin tools/flux github.com/fluxcd/source-controller "$FLUX_VERSION"
check_pin tools/flux github.com/fluxcd/kustomize-controller "$FLUX_VERSION"
if [ -x "$fx/source-controller" ] && [ -x "$fx/kustomize-controller" ] && [ -d "$fx/crds" ]; then
	echo "e2e-tools: $fx/source-controller, kustomize-controller and crds/ already there"
else
	echo "e2e-tools: building Flux's source-controller and kustomize-controller $FLUX_VERSION into $fx (about 10 minutes the first time on 2 cores)" >&2
	mkdir -p bin
	tmp=$(mktemp -d "bin/.flux-$FLUX_VERSION.XXXXXX")
	chmod 0755 "$tmp"
	mkdir -p "$tmp/crds"
	for c in source-controller kustomize-controller; do
		(cd tools/flux && $GO build -trimpath -ldflags "-s -w" -o "../../$tmp/$c" "github.com/fluxcd/$c")
		src=$(cd tools/flux && $GO list -m -f '{{.Dir}}' "github.com/fluxcd/$c")
		install -m 0644 "$src"/config/crd/bases/*.yaml "$tmp/crds/"
	done
	rm -rf "$fx"
	mv "$tmp" "$fx"
fi
echo "e2e-tools: $fx: source-controller and kustomize-controller $FLUX_VERSION, $(find "$fx/crds" -name '*.yaml' | wc -l) CRDs"

# Node Feature Discovery's nfd-master, from the module whose CRDs and
# validator the tests use.
nfd=bin/nfd-$NFD_VERSION
check_pin tools/nfd sigs.k8s.io/node-feature-discovery "$NFD_VERSION"
if [ -x "$nfd/nfd-master" ]; then
	echo "e2e-tools: $nfd/nfd-master already built"
else
	echo "e2e-tools: building nfd-master $NFD_VERSION into $nfd (a minute or two the first time)" >&2
	mkdir -p bin
	tmp=$(mktemp -d "bin/.nfd-$NFD_VERSION.XXXXXX")
	chmod 0755 "$tmp"
	(cd tools/nfd && $GO build -trimpath -ldflags "-s -w -X sigs.k8s.io/node-feature-discovery/pkg/version.version=$NFD_VERSION" \
		-o "../../$tmp/nfd-master" sigs.k8s.io/node-feature-discovery/cmd/nfd-master)
	rm -rf "$nfd"
	mv "$tmp" "$nfd"
fi
echo "e2e-tools: $nfd/nfd-master: Node Feature Discovery $NFD_VERSION"

# KWOK's kwok and the Stages it plays, from its own module: nodes are
# initialised and renew their leases, bound pods become Running, a Job's
# pods succeed after the delay their pod-complete annotation asks for
# (general/pod-complete; a few seconds when none), and deleted pods go.
KWOK_STAGES="node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml pod/fast/pod-ready.yaml pod/general/pod-complete.yaml pod/fast/pod-delete.yaml"
kw=bin/kwok-$KWOK_VERSION
check_pin tools/kwok sigs.k8s.io/kwok "$KWOK_VERSION"
if [ -x "$kw/kwok" ] && [ -d "$kw/stages" ]; then
	echo "e2e-tools: $kw/kwok and stages/ already there"
else
	echo "e2e-tools: building kwok $KWOK_VERSION into $kw (a minute or two the first time)" >&2
	mkdir -p bin
	tmp=$(mktemp -d "bin/.kwok-$KWOK_VERSION.XXXXXX")
	chmod 0755 "$tmp"
	(cd tools/kwok && $GO build -trimpath -ldflags "-s -w" -o "../../$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok)
	src=$(cd tools/kwok && $GO list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	mkdir -p "$tmp/stages"
	for f in $KWOK_STAGES; do
		install -m 0644 "$src/kustomize/stage/$f" "$tmp/stages/$(basename "$f")"
	done
	rm -rf "$kw"
	mv "$tmp" "$kw"
fi
echo "e2e-tools: $kw/kwok: KWOK $KWOK_VERSION, $(find "$kw/stages" -name '*.yaml' | wc -l) Stages"

# The other API groups' CRDs; the directory's name changes with the list.
key=$(printf '%s\n' "${CRD_MODULES[@]}" | sha256sum | cut -c1-12)
crds=bin/e2e-crds-$key
if [ -d "$crds" ]; then
	echo "e2e-tools: $crds already there"
else
	tmp=$(mktemp -d "bin/.e2e-crds.XXXXXX")
	chmod 0755 "$tmp"
	for entry in "${CRD_MODULES[@]}"; do
		read -r mod files <<<"$entry"
		# Outside any module, so that no go.mod changes; the checksum
		# database verifies the zip.
		dir=$(cd "$tmp" && GOFLAGS=-mod=mod $GO mod download -json "$mod" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
		if [ -z "$dir" ]; then
			echo "e2e-tools: the module proxy did not give $mod" >&2
			exit 1
		fi
		for f in $files; do
			install -m 0644 "$dir/$f" "$tmp/$(basename "$f")"
		done
		echo "e2e-tools: $mod: $files"
	done
	rm -rf "$crds"
	mv "$tmp" "$crds"
fi
# Stale CRD folders from other pins go.
for d in bin/e2e-crds-*; do
	[ "$d" = "$crds" ] || rm -rf "$d"
done
echo "e2e-tools: $crds: $(find "$crds" -name '*.yaml' | wc -l) CRD files"
