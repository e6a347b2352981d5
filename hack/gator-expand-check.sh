#!/usr/bin/env bash
# Runs Gatekeeper's own `gator expand` over every example's rendered
# mutators and ExpansionTemplates with each workload fixture that names
# its profile only by label, and checks the pod it yields carries what the
# validation requires: the profile annotation and a node selector (one
# type) or required node affinity (several) on the type label. (accelc test runs the same expander in-process and
# validates the result; this is the CLI, as a user would run it.)
set -euo pipefail
cd "$(dirname "$0")/.."
gator=${GATOR:-bin/gator}
accelc=${ACCELC:-bin/accelc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checked=0
for dir in examples/clusters/*/; do
  [ -f "$dir/admission/cases.yaml" ] || continue
  name=$(basename "$dir")
  "$accelc" render "$dir" --output-dir "$work/$name/out" > /dev/null 2>&1
  for fixture in "$dir"/admission/pods/*.yaml; do
    grep -q '^kind: \(Deployment\|StatefulSet\|Job\|Notebook\|PyTorchJob\)$' "$fixture" || continue
    grep -q 'accelerator.opendatahub.io/profile:' "$fixture" || continue
    grep -q 'opendatahub.io/hardware-profile-name' "$fixture" && continue
    in="$work/$name/in"; rm -rf "$in"; mkdir -p "$in"
    cp "$work/$name/out"/mutations/*.yaml "$work/$name/out"/policies/expansiontemplate-*.yaml "$in"/
    rm -f "$in"/kustomization.yaml
    ns=$(sed -n 's/^  namespace: *//p' "$fixture" | head -1)
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" > "$in/namespace.yaml"
    cp "$fixture" "$in/"
    "$gator" expand --filename "$in" --format yaml > "$work/pod.yaml"
    if ! grep -q 'opendatahub.io/hardware-profile-name:' "$work/pod.yaml"; then
      echo "FAIL - gator expand $fixture: the pod lacks opendatahub.io/hardware-profile-name"; cat "$work/pod.yaml"; exit 1
    fi
    # One type: a node selector on the type label; several: required
    # node affinity on it.
    if ! grep -A8 -E '^ *nodeSelector:' "$work/pod.yaml" | grep -qE '^ +accelerator.opendatahub.io/type: ' &&
      ! { grep -q 'requiredDuringSchedulingIgnoredDuringExecution:' "$work/pod.yaml" && grep -q 'key: accelerator.opendatahub.io/type' "$work/pod.yaml"; }; then
      echo "FAIL - gator expand $fixture: the pod has neither a node selector nor required node affinity on accelerator.opendatahub.io/type"; cat "$work/pod.yaml"; exit 1
    fi
    echo "ok	gator expand $fixture"
    checked=$((checked + 1))
  done
done
[ "$checked" -gt 0 ] || { echo "FAIL - no label-only workload fixture to expand"; exit 1; }
