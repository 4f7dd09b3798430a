#!/usr/bin/env bash
# The one device check for an H200 (issue 3, "Measured on the H200"), within 8 minutes, in order of
# priority for the issue's figures:
#   1. build (or reuse a carried build dir)          2. interference-microbench (every workload alone)
#   3. PyTorch ceilings (8192^3 bf16, 1 GiB D2D)     4. 20 s exclusive phases of gemm and copy (sample CV)
#   5. ctest -L gpu (correctness of every workload)  6. 20 s exclusive phase of latency at 50% load
#   7. if time remains: --suite quick --backend cuda --mode timeslice --duration 5
#   8. summary (scripts/device_summary.py): ratios, CVs, latency, h2d, train-step, serve goodput.
# Each step runs under a timeout that also respects the overall deadline; a step that does not fit is
# skipped and says so. Never changes GPU settings.
#
# Output: the device tool brings back at most 8 files, at most 2 folders deep, names [A-Za-z0-9._-].
# So everything is written into a work folder outside $OUT (WORK, default /tmp/device-check) and at
# the end exactly three files are copied into $OUT:
#   summary.json, summary.md (the table), device-check-logs.tar.gz (every log and result JSON of WORK).
# Usage: OUT=/some/dir scripts/device-check.sh    (BUILD_DIR=..., WORK=..., DEADLINE_S=... to override)
#
# PART selects the measurement (one device call each, 8 minutes at most):
#   PART=workloads (default)  issue 3: the steps above.
#   PART=modes                issue 4: nvidia-smi -L and the MIG mode NVML reports (probe), then
#                             --suite quick under exclusive, timeslice, mps (when nvidia-cuda-mps-control
#                             exists; else recorded) and streams.
#   PART=vet                  issue 5: probe --json, a 120 s sustain, a baseline and a 60 s vet against
#                             it, and the sampler's cost: gemm and copy with telemetry at 10 Hz vs off,
#                             alternated twice.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/device-check-out}"
WORK="${WORK:-/tmp/device-check}"
BUILD="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
DEADLINE_S="${DEADLINE_S:-450}"  # leaves ~30 s of the 8 minutes for the summary and the tarball
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( DEADLINE_S - $(elapsed) )); }
step() { echo "[device-check +$(elapsed)s] $*" | tee -a "$WORK/steps.log"; }
# limit MAX [RESERVE]: a timeout of at most MAX seconds that still leaves RESERVE seconds (default 0)
# before the deadline; prints 0 when less than 10 s would be left.
limit() {
  local max=$1 reserve=${2:-0} l
  l=$(( $(left) - reserve ))
  if [ "$l" -lt 10 ]; then echo 0; elif [ "$l" -lt "$max" ]; then echo "$l"; else echo "$max"; fi
}
# run NAME MAX RESERVE CMD...: runs CMD under `limit MAX RESERVE`, output in WORK/NAME.log.
run() {
  local name=$1 max=$2 reserve=$3 t rc
  shift 3
  t=$(limit "$max" "$reserve")
  if [ "$t" -eq 0 ]; then step "SKIPPED $name: not enough time left before the ${DEADLINE_S} s deadline"; return 0; fi
  step "$name (timeout ${t} s)"
  timeout "$t" "$@" > "$WORK/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq 124 ] && step "$name TIMED OUT after ${t} s"
  echo "$name exit $rc" | tee -a "$WORK/steps.log"
  return 0
}

step "GPU state (read only)"
nvidia-smi > "$WORK/nvidia-smi.txt" 2>&1
nvidia-smi -q > "$WORK/nvidia-smi-q.txt" 2>&1
git -C "$ROOT" rev-parse HEAD > "$WORK/git-sha.txt" 2>/dev/null
git -C "$ROOT" status --short > "$WORK/git-status.txt" 2>/dev/null

if [ ! -f "$BUILD/build.ninja" ]; then
  run configure 120 300 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
fi
run build 240 150 cmake --build "$BUILD" -j "$JOBS" --target interference-microbench ib_cuda_gpu_tests interference-bench

PART="${PART:-workloads}"
IB="$BUILD/interference-bench"

if [ "$PART" = "workloads" ]; then
MB="$BUILD/kernels/cuda/interference-microbench"
if [ -x "$MB" ]; then
  run microbench 150 120 "$MB" --benchmark_out="$WORK/microbench.json" --benchmark_out_format=json
else
  step "no $MB: microbenchmark skipped (see build.log)"
fi

run torch 90 90 python3 "$ROOT/scripts/torch_ceilings.py" --out "$WORK/torch_ceilings.json"

IB="$BUILD/interference-bench"
cv_phase() {  # NAME: 20 s exclusive phase of scenarios/device/NAME.json into the folder WORK/cv-NAME
  if [ -x "$IB" ]; then
    run "cv-$1" 60 "$2" "$IB" --mode exclusive --backend cuda --scenario "$ROOT/scenarios/device/$1.json" \
      --duration 20 --out "$WORK/cv-$1"
  else
    step "no $IB: cv-$1 skipped (see build.log)"
  fi
}
cv_phase gemm-bf16-exclusive 0
cv_phase copy-sm-exclusive 0

GT="$BUILD/tests/gpu/ib_cuda_gpu_tests"
if [ -f "$BUILD/CTestTestfile.cmake" ]; then
  run ctest-gpu 150 0 ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 120
  tail -n 15 "$WORK/ctest-gpu.log" 2>/dev/null
fi
[ -x "$GT" ] || step "note: $GT missing (see build.log)"

cv_phase latency-half-load-exclusive 0

if [ -x "$IB" ] && [ "$(left)" -ge 120 ]; then
  run quick-timeslice 150 0 "$IB" --suite quick --backend cuda --mode timeslice --duration 5 --warmup 1 \
    --out "$WORK/quick-timeslice"
else
  step "SKIPPED quick-timeslice: needs 120 s, $(left) s left (or no interference-bench)"
fi

elif [ "$PART" = "modes" ]; then
  nvidia-smi -L > "$WORK/nvidia-smi-L.txt" 2>&1
  run probe 30 0 "$IB" probe --json --idle-window 2
  for mode in exclusive timeslice mps streams; do
    if [ "$mode" = mps ] && ! command -v nvidia-cuda-mps-control > /dev/null; then
      step "mode mps: nvidia-cuda-mps-control is not on this machine" | tee "$WORK/quick-mps.log"
      continue
    fi
    run "quick-$mode" 150 0 "$IB" --suite quick --backend cuda --mode "$mode" --duration 3 --warmup 1 \
      --out "$WORK/quick-$mode"
  done
elif [ "$PART" = "vet" ]; then
  run probe 30 0 "$IB" probe --json --idle-window 5
  run sustain 170 0 "$IB" sustain --duration 120 --out "$WORK/sustain"
  run baseline 60 0 "$IB" baseline --duration 8 --out "$WORK/baseline.json"
  run vet 110 0 "$IB" vet --budget 60 --baseline "$WORK/baseline.json" --out "$WORK/vet"
  for rep in 1 2; do
    for hz in 10 0; do
      run "sampler-hz$hz-rep$rep" 60 0 "$IB" --mode exclusive --backend cuda --telemetry-hz "$hz" \
        --scenario "$ROOT/scenarios/device/gemm-bf16-exclusive.json" --duration 10 --warmup 2 \
        --out "$WORK/sampler-gemm-hz$hz-rep$rep"
      run "sampler-copy-hz$hz-rep$rep" 60 0 "$IB" --mode exclusive --backend cuda --telemetry-hz "$hz" \
        --scenario "$ROOT/scenarios/device/copy-sm-exclusive.json" --duration 10 --warmup 2 \
        --out "$WORK/sampler-copy-hz$hz-rep$rep"
    done
  done
else
  step "unknown PART=$PART (workloads, modes or vet)"
fi

step "summary"
python3 "$ROOT/scripts/device_summary.py" "$WORK" > "$WORK/summary-stdout.log" 2>&1
cat "$WORK/summary-stdout.log"
step "done; packing logs"
# Exactly three files into $OUT (the device tool's limits: 8 files, flat names).
cp "$WORK/summary.json" "$OUT/summary.json" 2>/dev/null || echo '{"error": "device_summary.py wrote no summary.json"}' > "$OUT/summary.json"
cp "$WORK/summary.md" "$OUT/summary.md" 2>/dev/null || cp "$WORK/summary-stdout.log" "$OUT/summary.md"
tar -czf "$OUT/device-check-logs.tar.gz" -C "$(dirname "$WORK")" "$(basename "$WORK")"
ls -la "$OUT"
echo "[device-check +$(elapsed)s] finished"
