#!/usr/bin/env bash
# The GitOps loop of a fleet repository, as CI runs it on every push:
# vet, render, test and diff every cluster; on the main branch, push each
# cluster's tree as a Flux OCI artifact, which the cluster's OCIRepository
# (rendered into flux/) follows. The GitHub Actions workflow beside this
# script runs the same steps.
#
#   REGISTRY=oci://ghcr.io/acme/accelc ./ci.sh
#
# Environment:
#   REGISTRY  where artifacts go: oci://HOST/PREFIX (each cluster is PREFIX/<cluster>)
#   FLEET     the folder of cluster folders (default: clusters)
#   BRANCH    the branch being built (default: $GITHUB_REF_NAME, else the checkout's)
#   TAG       the artifact's version (default: 1.0.<commits on the branch>): a
#             semantic version, which the clusters' OCIRepository follows
#             (delivery ref semver); "latest" is added on main
#   SIGN_KEY  a cosign private key to sign each artifact with (accelc push
#             --sign-key); without it, sign keyless afterwards (the GitHub
#             workflow does), or the clusters' verify refuses the artifact
#   ACCELC    the accelc binary (default: accelc on PATH)
set -euo pipefail

: "${REGISTRY:?set REGISTRY=oci://HOST/PREFIX}"
FLEET=${FLEET:-clusters}
ACCELC=${ACCELC:-accelc}
BRANCH=${BRANCH:-${GITHUB_REF_NAME:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo dev)}}
TAG=${TAG:-1.0.$(git rev-list --count HEAD 2>/dev/null || echo 0)}
OUT=${OUT:-out}

clusters=()
for dir in "$FLEET"/*/; do
	dir=${dir%/}
	grep -qs '^cluster:' "$dir"/*.cue && clusters+=("$dir")
done
[ ${#clusters[@]} -gt 0 ] || { echo "ci: no cluster folder under $FLEET" >&2; exit 1; }

echo "== vet"
for dir in "${clusters[@]}"; do "$ACCELC" vet "$dir"; done

echo "== render"
"$ACCELC" render --fleet "$FLEET" -o "$OUT" > /dev/null
# By convention a cluster folder is named after its cluster: the artifact
# is REGISTRY/<name>, and diff finds it by the folder.
for dir in "${clusters[@]}"; do
	[ -f "$OUT/$(basename "$dir")/kustomization.yaml" ] || {
		echo "ci: $dir renders a cluster of another name: name the folder after cluster.name" >&2
		exit 1
	}
done

echo "== test"
for dir in "${clusters[@]}"; do "$ACCELC" test "$dir"; done

echo "== diff against what Flux applies now"
for dir in "${clusters[@]}"; do
	name=$(basename "$dir")
	set +e
	"$ACCELC" diff "$dir" --against "$REGISTRY/$name:latest"
	rc=$?
	set -e
	case $rc in
	0) echo "$name: no changes" ;;
	1) echo "$name: changes above" ;;
	3) echo "$name: nothing published yet (or the registry is unreachable)" ;;
	*) exit "$rc" ;;
	esac
done

if [ "$BRANCH" != "main" ]; then
	echo "== not main ($BRANCH): nothing pushed"
	exit 0
fi
# The clusters follow semantic versions (delivery ref semver): a tag of
# another shape would be pushed and never applied.
[[ $TAG =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || {
	echo "ci: TAG=$TAG is not a version (MAJOR.MINOR.PATCH): the clusters' OCIRepository follows semver and would never apply it" >&2
	exit 1
}
sign=()
[ -n "${SIGN_KEY:-}" ] && sign=(--sign-key "$SIGN_KEY")
echo "== push $TAG"
for tree in "$OUT"/*/; do
	name=$(basename "$tree")
	"$ACCELC" push "$tree" "$REGISTRY/$name:$TAG" --tag latest "${sign[@]}"
done
