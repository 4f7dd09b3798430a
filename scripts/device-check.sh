#!/usr/bin/env bash
# The one device check for an H200 (issue 3, "Measured on the H200"), within 8 minutes:
#   1. build (or reuse a carried build dir), 2. ctest -L gpu, 3. interference-microbench,
#   4. PyTorch ceilings (8192^3 bf16 matmul, 1 GiB D2D copy), 5. 20 s exclusive phases of gemm,
#   copy and latency through interference-bench (sample-time CV), 6. ratios and a summary table.
# Everything lands under $OUT (logs, JSON, summary.json). Never changes GPU settings.
# Usage: OUT=/some/dir scripts/device-check.sh      (BUILD_DIR=... to use another build dir)
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/device-check-out}"
BUILD="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
mkdir -p "$OUT"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
step() { echo "[device-check +$(elapsed)s] $*" | tee -a "$OUT/steps.log"; }

step "GPU state (read only)"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
git -C "$ROOT" rev-parse HEAD > "$OUT/git-sha.txt" 2>/dev/null

step "configure + build in $BUILD"
if [ ! -f "$BUILD/build.ninja" ]; then
  timeout 120 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    > "$OUT/configure.log" 2>&1 || step "configure FAILED (see configure.log)"
fi
timeout 240 cmake --build "$BUILD" -j "$JOBS" --target interference-microbench ib_cuda_gpu_tests ib_cuda_unit_tests \
  > "$OUT/build-cuda.log" 2>&1 || step "CUDA targets build FAILED (see build-cuda.log)"
timeout 120 cmake --build "$BUILD" -j "$JOBS" --target interference-bench > "$OUT/build-bench.log" 2>&1 \
  || step "interference-bench build FAILED (CV phases will be skipped; see build-bench.log)"

step "ctest -L gpu"
timeout 150 ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 120 > "$OUT/ctest-gpu.log" 2>&1
echo "ctest -L gpu exit $?" | tee -a "$OUT/steps.log"
tail -n 15 "$OUT/ctest-gpu.log"

MB="$BUILD/kernels/cuda/interference-microbench"
step "interference-microbench"
timeout 150 "$MB" --benchmark_out="$OUT/microbench.json" --benchmark_out_format=json > "$OUT/microbench.txt" 2>&1
echo "microbench exit $?" | tee -a "$OUT/steps.log"

step "PyTorch ceilings"
timeout 90 python3 "$ROOT/scripts/torch_ceilings.py" --out "$OUT/torch_ceilings.json" > "$OUT/torch.txt" 2>&1
echo "torch exit $?" | tee -a "$OUT/steps.log"

IB="$BUILD/interference-bench"
if [ -x "$IB" ]; then
  for s in gemm-bf16-exclusive copy-sm-exclusive latency-half-load-exclusive; do
    if [ "$(elapsed)" -gt 400 ]; then step "skipping $s: time budget"; continue; fi
    step "20 s exclusive phase: $s"
    timeout 60 "$IB" --mode exclusive --backend cuda --scenario "$ROOT/scenarios/device/$s.json" --duration 20 \
      --out "$OUT/cv-$s.json" > "$OUT/cv-$s.log" 2>&1
    echo "$s exit $?" | tee -a "$OUT/steps.log"
  done
else
  step "no $IB: CV phases skipped"
fi

step "summary"
python3 "$ROOT/scripts/device_summary.py" "$OUT"
cat "$OUT/microbench.txt" | tail -n 25
step "done"
