#!/usr/bin/env bash
# Issue 50: how far `matrix --predict` is from the pairs it predicts. Five host workloads pinned to one core
# (`--cpus 0`), predicted from their profiles (the reporter's ladder, each workload's ladder, its pressure: 4N + 3
# runs) and every one of their N(N+1)/2 = 15 pairs measured as well (--predict-sample 15), so each cell is
# predicted and measured side by side in one run. Prints the table (victim, aggressor, predicted, measured, error in
# points), the mean absolute error with its interval, and the prediction's runs against the full matrix's.
# A benchmark, not a timed test: about 35 runs of 2 phases of DURATION seconds (default 3) each.
# Usage: scripts/matrix-predict-bench.sh [BUILD_DIR] [DURATION] [OUT_DIR] [MATRIX OPTION...]
# Options after the third argument go to `matrix` as they are, e.g. `--max-foreign-cpus 8 --max-steal-cpus 8`
# on a machine that other work loads (else every block there is contaminated; say so beside the figures).
set -euo pipefail
build=${1:-build-host}
duration=${2:-3}
out=${3:-$(mktemp -d)/matrix-predict}
shift $(($# < 3 ? $# : 3))
bin="$build/interference-bench"
[ -x "$bin" ] || { echo "matrix-predict-bench: $bin is not built (cmake --preset host-only)" >&2; exit 3; }
workloads="host-idle,host-compute:n=128:reps=8,host-copy:mib=32,host-latency:n=64:load=0.5,host-compute:n=48:reps=1"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
set +e
"$bin" matrix --backend host --workloads "$workloads" --cpus 0 --predict --predict-sample 15 \
  --duration "$duration" --warmup 0.5 --rounds 2 --out "$out" "$@" >/dev/null
rc=$?
set -e
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); matrix exit code $rc; files in $out"
python3 - "$out/matrix.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
names = [w["name"] for w in m["workloads"]]
p = m["prediction"]
print("| victim | aggressor | predicted | measured | error (points) |")
print("| --- | --- | --- | --- | --- |")
for c in p["checks"]:
    print(f"| {names[c['victim']]} | {names[c['aggressor']]} | {100 * c['predicted']:+.1f}% | {100 * c['measured']:+.1f}% | {c['error_points']:+.1f} |")
e = p.get("error")
if e:
    ci = "" if e.get("ci_low_points") is None else f" (95% CI {e['ci_low_points']:.1f} to {e['ci_high_points']:.1f})"
    print(f"\nmean absolute error {e['mean_abs_error_points']:.1f} points{ci} over {e['cells']} cells; "
          f"bias {e['mean_error_points']:+.1f}, largest {e['max_abs_error_points']:.1f}")
print("pressures:", ", ".join(f"{n} {w.get('pressure')}" for n, w in zip(names, p["workloads"])))
print(f"prediction runs {p['runs']} against the full matrix's {p['full_matrix_runs']} (+{len(p['sampled_pairs'])} measured to check it)")
PY
