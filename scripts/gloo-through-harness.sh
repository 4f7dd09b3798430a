#!/usr/bin/env bash
# Issue 35: what the harness adds to a collective. A 2-rank gloo allreduce of KIB KiB (default 64 MiB) on
# CPUs 0 and 1, measured ROUNDS times alternately outside the harness (ib-gloo-bench: the same gloo call,
# a FileStore rendezvous) and through it (host-collective in mode exclusive: the worker protocol, the
# harness's rendezvous and vote, one allreduce per sample), side by side on one machine. Prints each
# round's two medians (seconds per allreduce, the slowest rank's) and the median ratio through / outside.
# Usage: scripts/gloo-through-harness.sh [ROUNDS] [BUILD_DIR] [KIB]
set -euo pipefail
rounds=${1:-3}
build=${2:-build}
kib=${3:-65536}
for b in "$build/ib-gloo-bench" "$build/interference-bench"; do
  [ -x "$b" ] || { echo "gloo-through-harness: $b is not built (cmake --preset test, with libgloo-dev)" >&2; exit 3; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/s.json" <<JSON
{"name": "gloo-through-harness", "mode": "exclusive", "warmup_s": 1, "duration_s": 6, "tenants": [
  {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": $kib, "reps": 1},
   "ranks": 2, "rank_placements": [{"cpus": [0]}, {"cpus": [1]}]}]}
JSON
ratios=()
for i in $(seq "$rounds"); do
  outside=$("$build/ib-gloo-bench" --kib "$kib" --iterations 30 --warmup 3 |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["median_s"])')
  "$build/interference-bench" --backend host --scenario "$work/s.json" --out "$work/run$i" \
    --rounds 1 --until fixed --max-foreign-cpus 64 --max-steal-cpus 64 > "$work/run$i.log" 2>&1 ||
    { echo "gloo-through-harness: the run failed:" >&2; tail -5 "$work/run$i.log" >&2; exit 1; }
  through=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(r["runs"][0]["tenants"][0]["phases"]["exclusive"]["stats"]["median"])' "$work/run$i/results.json")
  ratio=$(python3 -c "print('%.4f' % ($through / $outside))")
  ratios+=("$ratio")
  printf 'round %d: outside %.6f s, through the harness %.6f s, ratio %s\n' "$i" "$outside" "$through" "$ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END{printf "median ratio (through / outside): %s over %d rounds\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), NR}'
