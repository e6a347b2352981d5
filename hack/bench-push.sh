#!/usr/bin/env bash
# Times `accelc push` of hetero-prod rendered against a generated 5,000-node
# inventory to the CNCF distribution registry on 127.0.0.1, beside `crane
# append` of the same tree tarred the same way (GNU tar, sorted, no owners,
# zero times), each into a fresh repository so every blob is uploaded.
# Best of 5 after a first (cold) run.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

go run ./hack/gennodes -n 5000 > "$work/nodes.json"
bin/accelc render examples/clusters/hetero-prod --inventory "$work/nodes.json" --output-dir "$work/out" > /dev/null 2>&1
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/out" -cf - . | gzip -n > "$work/tree.tgz"
echo "tree: $(find "$work/out" -type f | wc -l) files, $(du -sh "$work/out" | cut -f1); tarball $(du -h "$work/tree.tgz" | cut -f1)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s/data}}\nhttp: {addr: 127.0.0.1:%s}\n' "$work" "$port" > "$work/config.yml"
docker-registry serve "$work/config.yml" > "$work/registry.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/v2/" > /dev/null && break; sleep 0.1; done

measure() { # label, command with REPO in it
  local label=$1; shift
  local best=""
  for i in 1 2 3 4 5 6; do
    local cmd=${*//REPO/127.0.0.1:$port/$label-$i}
    local start end
    start=$(date +%s.%N); eval "$cmd" > /dev/null 2>&1; end=$(date +%s.%N)
    local secs; secs=$(echo "$end - $start" | bc)
    if [ "$i" = 1 ]; then printf '%-14s cold %.3fs\n' "$label" "$secs"; continue; fi
    if [ -z "$best" ] || [ "$(echo "$secs < $best" | bc)" = 1 ]; then best=$secs; fi
  done
  printf '%-14s warm %.3fs (best of 5)\n' "$label" "$best"
}
measure accelc-push "bin/accelc push $work/out oci://REPO:v1 --created 2026-11-20T09:30:00Z"
measure crane-append "bin/crane append -f $work/tree.tgz -t REPO:v1"
