#!/usr/bin/env bash
# Times `accelc render` of the hetero-prod example against a generated
# 5,000-node inventory (wall time and peak RSS from /usr/bin/time), cold
# (first run) and warm (best of 5), beside `cue export` of the same
# cluster's configuration alone.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go run ./hack/gennodes -n 5000 > "$work/nodes-5000.json"
echo "inventory: 5000 nodes, $(du -h "$work/nodes-5000.json" | cut -f1)"

measure() { # label, command...
  local label=$1; shift
  local best="" rss=""
  for i in 1 2 3 4 5 6; do
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || { cat "$work/stderr"; exit 1; }
    read -r secs kb < "$work/time"
    if [ "$i" = 1 ]; then printf '%-44s cold %6ss  %7s MB\n' "$label" "$secs" "$((kb / 1024))"; continue; fi
    if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; rss=$kb; fi
  done
  printf '%-44s warm %6ss  %7s MB\n' "$label" "$best" "$((rss / 1024))"
}

measure "accelc render (5000 nodes)" bin/accelc render examples/clusters/hetero-prod --inventory "$work/nodes-5000.json" --output-dir "$work/out"
measure "accelc vet (5000 nodes)" bin/accelc vet examples/clusters/hetero-prod --inventory "$work/nodes-5000.json"
measure "accelc render (bundled 29-node inventory)" bin/accelc render examples/clusters/hetero-prod --output-dir "$work/out"
(cd examples/clusters && measure "cue export ./hetero-prod (config only)" ../../bin/cue export ./hetero-prod)
# What it would cost to push the inventory through CUE instead of Go (the
# design keeps inventory out of CUE evaluation).
measure "cue export of the 5000-node JSON alone" bin/cue export "$work/nodes-5000.json" --out json
