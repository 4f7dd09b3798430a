#!/usr/bin/env bash
# The device check: every figure the issues ask to be measured on the H200, in one device call.
#
# A session has 15 minutes of device time in all (starts and idle time included), so the default,
# PART=all, fits one call of under 10 minutes (DEADLINE_S=560; give the call timeout_s 600) and runs
# its steps in order of priority; a step that no longer fits before the deadline is skipped and says
# so, and the sustained-load test shrinks to the time left (at most 120 s).
#
#   1. preflight: nvidia-smi (read only), the programs start, libraries found (below)
#   2. gpu-tests: ib_cuda_gpu_tests (correctness of every CUDA workload against a reference)
#   3. probe --json (issue 5)
#   4. modes: --suite quick --mode all: exclusive, timeslice, mps, streams side by side, mig waived
#      with the reason (issue 4)
#   5. sampler: gemm and copy with telemetry at 10 Hz vs off, in the order ABBA (issue 5)
#   6. baseline, then vet --budget 60 against it (issue 5)
#   7. sustain: the sustained-load test, up to 120 s (issue 5)
#   8. workloads (if time is left): interference-microbench and the PyTorch ceilings (issue 3)
#   9. summary (scripts/device_summary.py): the issues' checks with their targets, as a table
# PART=workloads, modes or vet runs only that issue's steps (issue 3: microbench, PyTorch ceilings,
# 20 s CVs, gpu tests, latency at 50% load).
#
# Programs: with .device-bundle/ carried (scripts/device-bundle.sh; device run with carry
# [".device-bundle"]), the programs built and tested on the CPU machine are used. Libraries they
# link that the bundle does not hold (NCCL, cuBLAS) are looked up in the CUDA toolkit's folders and in
# the NVIDIA wheels of the image's Python. If the programs still do not start, the project is built
# there with -DCMAKE_PREFIX_PATH=.device-bundle/prefix (headers and CMake files of the Debian
# packages). Without a bundle the build folder BUILD_DIR (default build/) is used or configured.
#
# Output: the device tool brings back at most 8 files, flat names. Everything is written into a work
# folder outside $OUT (WORK, default /tmp/device-check) and at the end three files go into $OUT:
#   summary.json, summary.md (the table), device-check-logs.tar.gz (every log and result of WORK).
# Usage: OUT=/some/dir scripts/device-check.sh   (PART=, BUNDLE=, BUILD_DIR=, WORK=, DEADLINE_S=,
#        ALLOW_STALE_BUNDLE=1 to use carried programs built from other sources)
# Never changes GPU settings; the private MPS daemon of the modes step is the harness's and is quit by
# it; the check reports any MPS process still running at the end and stops it.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/device-check-out}"
WORK="${WORK:-/tmp/device-check}"
PART="${PART:-all}"
BUNDLE="${BUNDLE:-$ROOT/.device-bundle}"
BUILD="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
if [ "$PART" = all ]; then DEADLINE_S="${DEADLINE_S:-560}"; else DEADLINE_S="${DEADLINE_S:-450}"; fi
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
# run NAME MAX RESERVE CMD...: runs CMD under `limit MAX RESERVE`; stdout and stderr in WORK/NAME.log.
# runo NAME MAX RESERVE CMD...: the same with stdout alone in WORK/NAME.out (JSON on stdout).
run_into() {
  local name=$1 max=$2 reserve=$3 stdout=$4 t rc
  shift 4
  t=$(limit "$max" "$reserve")
  if [ "$t" -eq 0 ]; then step "SKIPPED $name: not enough time left before the ${DEADLINE_S} s deadline"; return 0; fi
  step "$name (timeout ${t} s)"
  echo "\$ $*" > "$WORK/$name.log"
  if [ -n "$stdout" ]; then
    timeout "$t" "$@" > "$stdout" 2>> "$WORK/$name.log"
  else
    timeout "$t" "$@" >> "$WORK/$name.log" 2>&1
  fi
  rc=$?
  [ "$rc" -eq 124 ] && step "$name TIMED OUT after ${t} s"
  echo "$name exit $rc" | tee -a "$WORK/steps.log"
  return 0
}
run() { local n=$1 m=$2 r=$3; shift 3; run_into "$n" "$m" "$r" "" "$@"; }
runo() { local n=$1 m=$2 r=$3; shift 3; run_into "$n" "$m" "$r" "$WORK/$n.out" "$@"; }

# ---- 1. preflight --------------------------------------------------------------------------------
step "GPU state (read only)"
nvidia-smi > "$WORK/nvidia-smi.txt" 2>&1
nvidia-smi -L > "$WORK/nvidia-smi-L.txt" 2>&1
nvidia-smi -q > "$WORK/nvidia-smi-q.txt" 2>&1
cat "$WORK/nvidia-smi-L.txt"
git -C "$ROOT" rev-parse HEAD > "$WORK/git-sha.txt" 2>/dev/null
git -C "$ROOT" status --short > "$WORK/git-status.txt" 2>/dev/null
[ -f "$BUNDLE/MANIFEST" ] && cp "$BUNDLE/MANIFEST" "$WORK/bundle-MANIFEST.txt"
export INTERFERENCE_BENCH_SCENARIOS="$ROOT/scenarios"   # the compiled-in path is the CPU machine's
mps_pids() { pgrep -f 'nvidia-cuda-mps-(control|server)' | sort; }
mps_pids > "$WORK/mps-before.txt"   # a daemon that was already there is not ours to stop

# Folders where the device may keep a library the programs link but the bundle does not carry.
lib_candidates() {
  local d sp
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && echo "$d"
  done
  sp=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
  if [ -n "$sp" ]; then for d in "$sp"/nvidia/*/lib; do [ -d "$d" ] && echo "$d"; done; fi
}
# resolve_libs PROGRAM...: adds to LD_LIBRARY_PATH the folder of each library ldd cannot find.
resolve_libs() {
  local p lib d found
  for p in "$@"; do
    [ -x "$p" ] || continue
    for lib in $(ldd "$p" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
      found=""
      for d in $(lib_candidates); do
        if [ -e "$d/$lib" ]; then found=$d; break; fi
      done
      if [ -n "$found" ]; then
        export LD_LIBRARY_PATH="$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        echo "$(basename "$p"): $lib from $found" >> "$WORK/libraries.txt"
      else
        echo "$(basename "$p"): $lib NOT FOUND on this machine" >> "$WORK/libraries.txt"
      fi
    done
  done
}
programs_start() { "$IB" --version > "$WORK/version.txt" 2>&1; }

# Carried programs built from other sources than this checkout's would measure other code: then build
# here instead (ALLOW_STALE_BUNDLE=1 uses them anyway, and says so).
bundle_current() {
  [ -f "$BUNDLE/SOURCES.sha256" ] || { echo "no SOURCES.sha256 in the bundle" > "$WORK/bundle-sources.txt"; return 1; }
  (cd "$ROOT" && sha256sum --quiet -c "$BUNDLE/SOURCES.sha256") > "$WORK/bundle-sources.txt" 2>&1
}
if [ -x "$BUNDLE/bin/interference-bench" ] && ! bundle_current; then
  step "the carried programs were built from other sources ($(grep -c ": FAILED" "$WORK/bundle-sources.txt") files differ, see bundle-sources.txt): rerun scripts/device-bundle.sh before the call"
  if [ "${ALLOW_STALE_BUNDLE:-0}" != 1 ]; then
    step "building here instead (ALLOW_STALE_BUNDLE=1 would use them anyway)"
    BUILD="$ROOT/build-device"
    export CMAKE_PREFIX_PATH="$BUNDLE/prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    STALE_BUNDLE=1
  fi
fi
if [ -x "$BUNDLE/bin/interference-bench" ] && [ -z "${STALE_BUNDLE:-}" ]; then
  IB="$BUNDLE/bin/interference-bench"; MB="$BUNDLE/bin/interference-microbench"; GT="$BUNDLE/bin/ib_cuda_gpu_tests"
  export LD_LIBRARY_PATH="$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  resolve_libs "$IB" "$MB" "$GT"
  if programs_start; then
    step "using the carried programs ($(cat "$WORK/version.txt"))"
  else
    step "the carried programs do not start here: $(tail -n 2 "$WORK/version.txt" | tr '\n' ' '); building here"
    BUILD="$ROOT/build-device"
    export CMAKE_PREFIX_PATH="$BUNDLE/prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    unset IB
  fi
fi
if [ -z "${IB:-}" ]; then
  # a build with the bundle's prefix links its Google Benchmark: find it at run time too
  [ -d "$BUNDLE/prefix/lib/x86_64-linux-gnu" ] && export LD_LIBRARY_PATH="$BUNDLE/prefix/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if [ ! -f "$BUILD/build.ninja" ]; then
    # NCCL: the toolkit's, else the image's Python wheel (nvidia/nccl/{include,lib}) through NCCL_HOME.
    nccl_lib=$(for d in $(lib_candidates); do ls "$d"/libnccl.so* 2>/dev/null; done | head -n 1)
    [ -n "$nccl_lib" ] && export NCCL_HOME="${NCCL_HOME:-$(dirname "$(dirname "$nccl_lib")")}"
    run configure 120 300 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90
  fi
  run build 300 150 cmake --build "$BUILD" -j "$JOBS" --target interference-microbench ib_cuda_gpu_tests interference-bench
  IB="$BUILD/interference-bench"; MB="$BUILD/kernels/cuda/interference-microbench"; GT="$BUILD/tests/gpu/ib_cuda_gpu_tests"
  resolve_libs "$IB" "$MB" "$GT"
  programs_start || step "interference-bench does not start: $(tail -n 2 "$WORK/version.txt" | tr '\n' ' ')"
fi
[ -f "$WORK/libraries.txt" ] && cat "$WORK/libraries.txt"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >> "$WORK/steps.log"

# ---- the steps -----------------------------------------------------------------------------------
gpu_tests() {
  if [ -x "$GT" ]; then
    # IB_REQUIRE_GPU=1: on the H200 a missing GPU or a waived must-run workload fails, not skips.
    run gpu-tests 150 "${1:-0}" env IB_REQUIRE_GPU=1 "$GT" --gtest_output="json:$WORK/gpu-tests.json"
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' "$WORK/gpu-tests.log" | tail -n 12
  else
    step "no $GT: gpu tests skipped"
  fi
}
probe() { runo probe 30 "${1:-0}" "$IB" probe --json --idle-window "${2:-5}"; }
modes() {  # the quick suite under every mode, side by side (mig is waived on a GPU not in MIG mode)
  command -v nvidia-cuda-mps-control > "$WORK/mps-control-path.txt" 2>&1 \
    || echo "nvidia-cuda-mps-control is not on PATH: mps is waived" > "$WORK/mps-control-path.txt"
  run modes 270 "${1:-0}" "$IB" --suite quick --backend cuda --mode all --duration 3 --warmup 1 --out "$WORK/modes"
}
sampler() {  # gemm and copy, telemetry at 10 Hz (A) vs off (B), in the order A B B A
  local rep=0 hz w
  for hz in 10 0 0 10; do
    rep=$((rep + 1))
    for w in gemm-bf16 copy-sm; do
      run "sampler-$w-hz$hz-$rep" 25 "${1:-0}" "$IB" --mode exclusive --backend cuda --telemetry-hz "$hz" \
        --scenario "$ROOT/scenarios/device/$w-exclusive.json" --duration 4 --warmup 1 --out "$WORK/sampler-$w-hz$hz-$rep"
    done
  done
}
vet() {  # baseline: 5 workloads x (2 s warm-up + 4 s) plus start-up; vet without one if it failed
  run baseline 90 "${1:-0}" "$IB" baseline --duration 4 --out "$WORK/baseline.json"
  if [ -s "$WORK/baseline.json" ]; then
    run vet 100 "${1:-0}" "$IB" vet --budget 60 --baseline "$WORK/baseline.json" --out "$WORK/vet"
  else
    step "no baseline file: vet runs without the P95 comparison"
    run vet 100 "${1:-0}" "$IB" vet --budget 60 --out "$WORK/vet"
  fi
}
sustain() {  # DURATION: shrunk to the time left, never under 30 s (the verdict needs windows)
  local d=$1 l
  l=$(( $(left) - 25 ))
  [ "$l" -lt "$d" ] && d=$l
  if [ "$d" -lt 30 ]; then step "SKIPPED sustain: $(left) s left"; return 0; fi
  echo "$d" > "$WORK/sustain-duration.txt"
  run sustain $((d + 25)) 0 "$IB" sustain --duration "$d" --out "$WORK/sustain"
}
workloads() {
  if [ -x "$MB" ]; then
    run microbench 150 "${1:-0}" "$MB" --benchmark_out="$WORK/microbench.json" --benchmark_out_format=json
  else
    step "no $MB: microbenchmark skipped"
  fi
  run torch 90 "${1:-0}" python3 "$ROOT/scripts/torch_ceilings.py" --out "$WORK/torch_ceilings.json"
}
cv_phase() {  # NAME RESERVE: 20 s exclusive phase of scenarios/device/NAME.json
  run "cv-$1" 60 "$2" "$IB" --mode exclusive --backend cuda --scenario "$ROOT/scenarios/device/$1.json" \
    --duration 20 --out "$WORK/cv-$1"
}

case "$PART" in
  all)
    gpu_tests 440
    probe 420 2
    modes 170
    sampler 150
    vet 100
    sustain 120
    [ "$(left)" -ge 150 ] && workloads 0 || step "SKIPPED workloads (microbench, PyTorch ceilings): $(left) s left"
    ;;
  workloads)
    workloads 240
    cv_phase gemm-bf16-exclusive 150
    cv_phase copy-sm-exclusive 90
    gpu_tests 30
    cv_phase latency-half-load-exclusive 0
    ;;
  modes)
    probe 300 2
    gpu_tests 260
    modes 0
    ;;
  vet)
    probe 400 5
    sampler 300
    vet 150
    sustain 120
    ;;
  *) step "unknown PART=$PART (all, workloads, modes or vet)" ;;
esac

# ---- leave nothing running -----------------------------------------------------------------------
left_over=$(mps_pids | comm -13 "$WORK/mps-before.txt" - | tr '\n' ' ')
if [ -n "$left_over" ]; then
  step "MPS processes started during the check and still running: $left_over (stopping them)"
  echo "left over: $left_over" > "$WORK/mps-left-over.txt"
  kill $left_over 2>/dev/null
else
  echo "none (before the check: $(tr '\n' ' ' < "$WORK/mps-before.txt"))" > "$WORK/mps-left-over.txt"
fi

step "summary"
python3 "$ROOT/scripts/device_summary.py" "$WORK" > "$WORK/summary-stdout.log" 2>&1
cat "$WORK/summary-stdout.log"
step "done; packing logs"
cp "$WORK/summary.json" "$OUT/summary.json" 2>/dev/null || echo '{"error": "device_summary.py wrote no summary.json"}' > "$OUT/summary.json"
cp "$WORK/summary.md" "$OUT/summary.md" 2>/dev/null || cp "$WORK/summary-stdout.log" "$OUT/summary.md"
tar -czf "$OUT/device-check-logs.tar.gz" -C "$(dirname "$WORK")" "$(basename "$WORK")"
ls -la "$OUT"
echo "[device-check +$(elapsed)s] finished"
