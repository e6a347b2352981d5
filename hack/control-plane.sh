#!/usr/bin/env bash
# The control plane that internal/controlplane starts for the end-to-end tests:
# etcd from Debian's etcd-server package, and kube-apiserver, kube-scheduler
# and kube-controller-manager built from the module $K8S_MODULE (tools/e2e
# unless set) into bin/k8s-$K8S_VERSION/, with k8s-validate (Kubernetes' own
# validation, for the escape check) where the module is tools/e2e. Each step
# is skipped when its result is already there, so a second run costs nothing.
#
#   K8S_VERSION=v1.36.3 ./hack/control-plane.sh
#   K8S_VERSION=v1.34.12 K8S_MODULE=tools/e2e-k8s134 ./hack/control-plane.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

: "${K8S_VERSION:?K8S_VERSION is not set (the Makefile sets it)}"
K8S_MODULE=${K8S_MODULE:-tools/e2e}
GO=${GO:-go}
export GOTOOLCHAIN=local

if ! command -v etcd >/dev/null 2>&1; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "control-plane: etcd is not on PATH; install it (apt-get install -y etcd-server) and run again" >&2
		exit 1
	fi
	echo "control-plane: installing etcd (Debian etcd-server)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
fi
echo "control-plane: $(command -v etcd): $(etcd --version | head -n 1)"

# The module pins k8s.io/kubernetes; its version must be the one asked for.
pinned=$(cd "$K8S_MODULE" && $GO list -m -f '{{.Version}}' k8s.io/kubernetes)
if [ "$pinned" != "$K8S_VERSION" ]; then
	echo "control-plane: $K8S_MODULE/go.mod requires k8s.io/kubernetes $pinned, but K8S_VERSION is $K8S_VERSION; change one to match" >&2
	exit 1
fi

dir=bin/k8s-$K8S_VERSION
if [ -x "$dir/kube-apiserver" ] && [ -x "$dir/kube-scheduler" ] && [ -x "$dir/kube-controller-manager" ]; then
	echo "control-plane: $dir/kube-apiserver, kube-scheduler and kube-controller-manager already built"
else
	echo "control-plane: building kube-apiserver, kube-scheduler and kube-controller-manager $K8S_VERSION into $dir (about 12 minutes the first time)" >&2
	minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	mkdir -p bin
	tmp=$(mktemp -d "bin/.k8s-$K8S_VERSION.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	begin=$SECONDS
	(cd "$K8S_MODULE" && $GO build -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
		-o "$root/$tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager)
	# The binaries appear together or not at all.
	mkdir -p "$dir"
	mv "$tmp/kube-apiserver" "$tmp/kube-scheduler" "$tmp/kube-controller-manager" "$dir/"
	echo "control-plane: built $K8S_VERSION in $((SECONDS - begin)) s" >&2
fi
# Kubernetes' own create-time validation as a program (tools/e2e's
# k8s-validate), for the escape check: only objects an API server accepts
# are judged.
if [ "$K8S_MODULE" != tools/e2e ]; then
	: # the escape check runs at tools/e2e's version only
elif [ -x "$dir/k8s-validate" ]; then
	echo "control-plane: $dir/k8s-validate already built"
else
	echo "control-plane: building k8s-validate $K8S_VERSION into $dir" >&2
	tmpv=$(mktemp -d "bin/.k8s-validate.XXXXXX")
	(cd tools/e2e && $GO build -trimpath -o "../../$tmpv/k8s-validate" ./cmd/k8s-validate)
	mv "$tmpv/k8s-validate" "$dir/"
	rm -rf "$tmpv"
fi
"$dir/kube-apiserver" --version
