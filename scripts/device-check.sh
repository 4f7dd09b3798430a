#!/usr/bin/env bash
# The device check: every figure the issues ask to be measured on the H200, in one device call.
#
# A session has 15 minutes of device time in all (starts and idle time included), so a call of under
# 10 minutes (DEADLINE_S=560; give the call timeout_s 600) brings back, in this order of value, what
# the first look at a GPU needs; a second PART brings the rest, as the one call of a later session (one call
# of ~10 minutes and the machine's start fill a session's 15 minutes). A step that no longer fits its minimum
# before the deadline is skipped and says so. Expected times are the review's (issue 19), not measured:
#
# PART=first (the default; about 400-470 s):
#   1. preflight (~15 s): nvidia-smi's driver version against what CUDA 13 needs (R580 or newer;
#      the toolkit's forward-compatibility libraries are tried first where present), nvidia-smi -L,
#      the carried programs current (source checksums) and starting (else built here from the bundle's
#      prefix), where cuBLAS, cudart and NCCL were found, the versions (interference-microbench --info).
#      Stops at once, with one line in $OUT/STOPPED.txt, when the driver is too old, no GPU is visible
#      or the programs are stale or cannot be made to start: nothing after it could measure anything.
#   2. gemm/copy against PyTorch (~65 s): PyTorch's ceilings right before (torch-before), the bench's
#      headline cases alone (interference-microbench --ib-cases=headline: gemm bf16 8192^3 tn and nn,
#      copy sm and ce; their own JSON, so a later case cannot lose them), PyTorch again right after
#      (torch-after); both PyTorch figures are kept (PyTorch runs with the environment the check was
#      started with: as shipped)
#   3. exclusive CVs (~90 s): 20 s exclusive phases of gemm, copy and latency (sample CVs, latency
#      P50/P99 at 50% load)
#   4. time-slicing and MPS quick pairs (~70-90 s and ~90-130 s): --suite quick --mode timeslice, then
#      --mode mps, 3 s phases, 10 fixed rounds (their blocks in results.json)
#   5. selftest --backend cuda (<= 90 s)
# PART=second (about 400-500 s): the preflight, then the other microbench cases (--ib-cases=rest),
#   ib_cuda_gpu_tests with IB_REQUIRE_GPU=1, probe --json, two ranks of one NCCL allreduce on GPU 0 beside a
#   gemm, time-sliced and under MPS (scenarios/device/allreduce-two-ranks-gemm.json, 3 s phases, 3 rounds;
#   waived in NCCL's words before NCCL 2.30), a PyTorch training loop as a command tenant
#   beside gemm, time-sliced and under MPS (scripts/torch_tenant.py; skipped without PyTorch with CUDA;
#   6 s phases, 6 rounds, ~2 x 60-100 s), the MIG facts (nvidia-smi mig -lgip, read
#   only; --mode mig of the quick suite, waived with its reason on a GPU not in MIG mode), --mode streams,
#   the telemetry sampler's cost (10 Hz vs off, ABBA), baseline + vet --budget 60, and sustain with what
#   is left (at most 120 s, at least 30 s).
# PART=mig (about 180-560 s): the preflight, the GPU co-location matrix (issue 50: gemm, copy, latency and h2d,
#   every pair one time-sliced run, 2 s phases, 4 fixed rounds, --budget 200: about 10 x 12 s), then, only where
#   GPU 0 is already in MIG mode, else skipped with what nvidia-smi says: nvidia-smi mig -lgipp (read only), then mig-sweep of the quick gemm+copy pair
#   over every valid two-instance layout (3 s phases, 4 rounds, --budget 360: the layouts that do not fit
#   are listed as skipped); its instances are made and destroyed by the sweep's runs, pre-existing ones
#   are never touched. Then two ranks of one NCCL allreduce, each on a MIG instance of its own, beside a
#   gemm on a third (three of the smallest profile, made and destroyed by the run; NCCL 2.31 or later,
#   waived in NCCL's words before).
# Every step's files reach $OUT before the next step starts (BEFORE_STEP=CMD runs CMD NAME OUT first:
# the rehearsal looks there). After every step that ran interference-bench, whatever its exit (a step
# killed by its timeout never got to clean up), `interference-bench cleanup` undoes what the killed run's
# journal says it left (MIG instances it made, its MPS daemon) and every MPS process started during the
# check is stopped, so that no step measures beside what an earlier one left (NAME-cleanup.log).
#
# Programs: .device-bundle/ (scripts/device-bundle.sh, run right before the call; device run with
# carry [".device-bundle"]). Its files are checked against BUNDLE.sha256 and the checkout's sources
# against SOURCES.sha256: a stale bundle stops the check (REBUILD=1 builds here instead, 2-5 minutes
# of the call; ALLOW_STALE_BUNDLE=1 uses it anyway and says so). Without a bundle, the programs of
# BUILD_DIR (default build/) are used when built, else REBUILD=1 builds them.
# The project's programs run with LD_LIBRARY_PATH = the bundle's lib/ and whatever folders hold the
# CUDA libraries they link (found in the toolkit and the image's Python wheels); the script's own
# environment is never changed, so PyTorch runs as it was installed.
#
# Output: everything is written into WORK (default /tmp/device-check); after every step $OUT gets
# (renamed into place, so a call stopped at its limit still brings back the last complete copy):
#   steps.log, preflight.json (versions, libraries, GPUs), summary.json, summary.md (the table so
#   far), device-check-logs.tar.gz (all of WORK), and STOPPED.txt when the check stopped early.
# Usage: OUT=/some/dir scripts/device-check.sh   (PART=first|second|mig, BUNDLE=, BUILD_DIR=, WORK=, DEADLINE_S=,
#        REBUILD=1, ALLOW_STALE_BUNDLE=1, CMAKE= (default cmake), CUDA_COMPAT_DIR= (default /usr/local/cuda/compat),
#        NVIDIA_SMI= (default nvidia-smi), REHEARSE_ALL=1: on a machine where CUDA sees no GPU, go on
#        past the preflight anyway so that every step's plumbing runs (tests/e2e/test_device_check.py);
#        rehearsal only: MAX_STEP_S= caps every step's timeout, KILL_AFTER= (default 10 s))
# Exit: 0 when it ran to the end (whatever the figures), 3 when it stopped in the preflight.
# Never changes GPU settings; the private MPS daemon of the modes step is the harness's and is quit by
# it; the check reports any MPS process still running at the end and stops it.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/device-check-out}"
WORK="${WORK:-/tmp/device-check}"
PART="${PART:-first}"
BUNDLE="${BUNDLE:-$ROOT/.device-bundle}"
BUILD="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-$(nproc)}"
CUDA_COMPAT_DIR="${CUDA_COMPAT_DIR:-/usr/local/cuda/compat}"
NVIDIA_SMI="${NVIDIA_SMI:-nvidia-smi}"
MIN_DRIVER_MAJOR=580   # CUDA 13.0 needs driver R580 or newer
KILL_AFTER="${KILL_AFTER:-10}"   # a step that ignores SIGTERM is killed this long after its timeout
MAX_STEP_S="${MAX_STEP_S:-}"     # rehearsal: no step's timeout above this
DEADLINE_S="${DEADLINE_S:-560}"
CMAKE="${CMAKE:-cmake}"
rm -rf "$WORK"
mkdir -p "$WORK" "$OUT"
rm -f "$OUT/STOPPED.txt"
START=$(date +%s)
PROJECT_LD=""   # LD_LIBRARY_PATH of the project's programs only (see penv_refresh)
PENV=()
elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( DEADLINE_S - $(elapsed) )); }
step() { echo "[device-check +$(elapsed)s] $*" | tee -a "$WORK/steps.log"; }
penv_refresh() {
  PENV=(env "LD_LIBRARY_PATH=$PROJECT_LD${LD_LIBRARY_PATH:+${PROJECT_LD:+:}$LD_LIBRARY_PATH}"
        "INTERFERENCE_BENCH_SCENARIOS=$ROOT/scenarios")   # the compiled-in path is the build machine's
}
penv_refresh
add_project_lib() { PROJECT_LD="$1${PROJECT_LD:+:$PROJECT_LD}"; penv_refresh; }
json_get() {  # FILE PYTHON-EXPRESSION over j: prints it, or nothing when the file or key is missing
  python3 -c 'import json,sys
try:
    j = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print("" if v is None else v)
except Exception:
    pass' "$1" "$2"
}
# Copies into $OUT under a temporary name, then renames: a call stopped mid-copy keeps the last copy.
put() { cp "$1" "$OUT/$2.tmp" 2>/dev/null && mv -f "$OUT/$2.tmp" "$OUT/$2"; }
publish() {  # the step log, the preflight record, the summary so far and all of WORK, into $OUT
  put "$WORK/steps.log" steps.log
  [ -f "$WORK/runtime-info.json" ] && put "$WORK/runtime-info.json" preflight.json
  timeout --kill-after=5 30 python3 "$ROOT/scripts/device_summary.py" "$WORK" > "$WORK/summary-stdout.log" 2>&1
  put "$WORK/summary.json" summary.json
  put "$WORK/summary.md" summary.md
  local tmp="$OUT/device-check-logs.tar.gz.tmp"
  tar -czf "$tmp" -C "$(dirname "$WORK")" "$(basename "$WORK")" 2>/dev/null
  # The device tool brings back files of at most 16 MiB: past 15 MiB, leave the workers' logs out.
  if [ -f "$tmp" ] && [ "$(stat -c %s "$tmp")" -gt 15728640 ]; then
    tar -czf "$tmp" --exclude='*/logs' -C "$(dirname "$WORK")" "$(basename "$WORK")" 2>/dev/null
    grep -q "left out the workers' logs" "$WORK/steps.log" \
      || echo "device-check-logs.tar.gz over 15 MiB: left out the workers' logs (*/logs)" >> "$WORK/steps.log"
  fi
  [ -f "$tmp" ] && mv -f "$tmp" "$OUT/device-check-logs.tar.gz"
}
# The MPS processes this check's programs started: they inherit IB_DEVICE_CHECK_ID (a daemon keeps the
# environment it was started with), so a daemon of anyone else on the machine (another user, a test running
# beside the rehearsal) is never counted nor stopped.
export IB_DEVICE_CHECK_ID="$$-$(date +%s%N)"
mps_pids() {
  local p
  for p in $(pgrep -f 'nvidia-cuda-mps-(control|server)'); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "IB_DEVICE_CHECK_ID=$IB_DEVICE_CHECK_ID" && echo "$p"
  done | sort
}
mps_pids > "$WORK/mps-before.txt"   # a daemon that was already there is not ours to stop
stop_left_over_mps() {
  local left_over
  left_over=$(mps_pids | comm -13 "$WORK/mps-before.txt" - | tr '\n' ' ')
  if [ -n "${left_over// /}" ]; then
    step "MPS processes started during the check and still running: $left_over (stopping them)"
    echo "left over: $left_over" > "$WORK/mps-left-over.txt"
    kill $left_over 2>/dev/null
    # Gone before the next step starts: a bounded wait, then SIGKILL for what ignored SIGTERM.
    local i
    for i in $(seq 50); do
      [ -z "$(mps_pids | comm -13 "$WORK/mps-before.txt" -)" ] && break
      sleep 0.1
    done
    left_over=$(mps_pids | comm -13 "$WORK/mps-before.txt" - | tr '\n' ' ')
    [ -n "${left_over// /}" ] && kill -9 $left_over 2>/dev/null
  else
    echo "none (before the check: $(tr '\n' ' ' < "$WORK/mps-before.txt"))" > "$WORK/mps-left-over.txt"
  fi
}
# stop REASON: one clear line (stdout, steps.log, $OUT/STOPPED.txt), what there is into $OUT, exit 3.
stop() {
  step "STOPPED: $*"
  echo "$*" > "$WORK/STOPPED.txt"
  stop_left_over_mps
  publish
  put "$WORK/STOPPED.txt" STOPPED.txt
  echo "device-check stopped after $(elapsed) s: $*"
  exit 3
}

# After a step that ran interference-bench: its journalled GPU state undone and the check's MPS stopped,
# whatever the step's exit (the cleanup's own output in WORK/NAME-cleanup.log).
after_ib_step() {
  local name=$1 rc
  timeout --kill-after=5 60 "${PENV[@]}" "$IB" cleanup > "$WORK/$name-cleanup.log" 2>&1
  rc=$?
  echo "$name cleanup exit $rc" >> "$WORK/steps.log"
  stop_left_over_mps
}

# run_into NAME MIN MAX STDOUT CMD...: CMD under `timeout --kill-after` with at most MAX seconds and
# never past the deadline; skipped when fewer than MIN seconds would be left. stdout and stderr go to
# WORK/NAME.log (stdout alone to STDOUT when given). A step that ran interference-bench is followed by
# after_ib_step. Every step ends with publish.
run_into() {
  local name=$1 min=$2 max=$3 stdout=$4 t rc
  shift 4
  t=$(( $(left) - KILL_AFTER - 2 ))
  if [ "$t" -lt "$min" ]; then
    step "SKIPPED $name: needs ${min} s, $(left) s left before the ${DEADLINE_S} s deadline"
    return 0
  fi
  [ "$t" -gt "$max" ] && t=$max
  [ -n "$MAX_STEP_S" ] && [ "$t" -gt "$MAX_STEP_S" ] && t=$MAX_STEP_S
  [ -n "${BEFORE_STEP:-}" ] && "$BEFORE_STEP" "$name" "$OUT"
  step "$name (timeout ${t} s)"
  echo "\$ $*" > "$WORK/$name.log"
  if [ -n "$stdout" ]; then
    timeout --kill-after="$KILL_AFTER" "$t" "$@" > "$stdout" 2>> "$WORK/$name.log"
  else
    timeout --kill-after="$KILL_AFTER" "$t" "$@" >> "$WORK/$name.log" 2>&1
  fi
  rc=$?
  [ "$rc" -eq 124 ] && step "$name TIMED OUT after ${t} s"
  [ "$rc" -eq 137 ] && step "$name KILLED: still running ${KILL_AFTER} s after its timeout"
  echo "$name exit $rc" | tee -a "$WORK/steps.log"
  local a
  for a in "$@"; do
    if [ -n "$IB" ] && [ "$a" = "$IB" ]; then after_ib_step "$name"; break; fi
  done
  publish
  return 0
}
run() { local n=$1 mn=$2 mx=$3; shift 3; run_into "$n" "$mn" "$mx" "" "$@"; }
runo() { local n=$1 mn=$2 mx=$3; shift 3; run_into "$n" "$mn" "$mx" "$WORK/$n.out" "$@"; }

# ---- 1. preflight --------------------------------------------------------------------------------
DRIVER=""
driver_major() { echo "${DRIVER%%.*}"; }
preflight_driver() {
  step "preflight: driver and GPUs (nvidia-smi, read only)"
  command -v "$NVIDIA_SMI" > /dev/null || stop "no nvidia-smi on this machine: no NVIDIA driver, so no GPU to measure"
  timeout --kill-after=5 30 "$NVIDIA_SMI" --query-gpu=index,name,driver_version,memory.total --format=csv,noheader \
    > "$WORK/nvidia-smi-query.txt" 2>&1 \
    || stop "no GPU visible: nvidia-smi --query-gpu failed: $(head -n 1 "$WORK/nvidia-smi-query.txt")"
  timeout --kill-after=5 30 "$NVIDIA_SMI" -L > "$WORK/nvidia-smi-L.txt" 2>&1
  grep -q '^GPU ' "$WORK/nvidia-smi-L.txt" \
    || stop "no GPU visible: nvidia-smi -L lists none ($(head -n 1 "$WORK/nvidia-smi-L.txt"))"
  DRIVER=$(head -n 1 "$WORK/nvidia-smi-query.txt" | awk -F', *' '{print $3}')
  step "driver $DRIVER; $(grep -c '^GPU ' "$WORK/nvidia-smi-L.txt") GPU(s): $(head -n 1 "$WORK/nvidia-smi-L.txt")"
  # Too old and nothing to try: stop before anything else. With the toolkit's forward-compatibility
  # libraries, preflight_cuda tries them once the programs are chosen.
  if [ "$(driver_major)" -lt "$MIN_DRIVER_MAJOR" ] 2>/dev/null && [ ! -e "$CUDA_COMPAT_DIR/libcuda.so.1" ]; then
    stop "driver $DRIVER is older than R$MIN_DRIVER_MAJOR, which CUDA 13 needs, and there are no forward-compatibility libraries at $CUDA_COMPAT_DIR"
  fi
  timeout --kill-after=5 30 "$NVIDIA_SMI" > "$WORK/nvidia-smi.txt" 2>&1
  timeout --kill-after=5 60 "$NVIDIA_SMI" -q > "$WORK/nvidia-smi-q.txt" 2>&1
  publish
}

# Folders that may hold a CUDA library the programs link but the bundle does not carry: the toolkit's
# and the NVIDIA wheels of the image's Python (nvidia/*/lib: cu13/lib for cuBLAS 13, nccl/lib).
lib_candidates() {
  local d py
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64; do
    [ -d "$d" ] && echo "$d"
  done
  py=$(command -v python3)
  for d in ${py:+$(dirname "$py")/../lib/python3*/site-packages/nvidia/*/lib} \
           "$HOME"/.local/lib/python3*/site-packages/nvidia/*/lib /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
           /usr/lib/python3/dist-packages/nvidia/*/lib /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib; do
    [ -d "$d" ] && echo "$d"
  done
}
# resolve_libs PROGRAM...: adds to PROJECT_LD the folder of each library ldd cannot find, and records
# in WORK/libraries.txt where every CUDA library of the programs comes from.
resolve_libs() {
  local p lib d found
  for p in "$@"; do
    [ -x "$p" ] || continue
    for lib in $("${PENV[@]}" ldd "$p" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
      found=""
      for d in $(lib_candidates); do
        if [ -e "$d/$lib" ]; then found=$d; break; fi
      done
      if [ -n "$found" ]; then
        add_project_lib "$found"
        echo "$(basename "$p"): $lib from $found (added to the programs' LD_LIBRARY_PATH)" >> "$WORK/libraries.txt"
      else
        echo "$(basename "$p"): $lib NOT FOUND on this machine" >> "$WORK/libraries.txt"
      fi
    done
    "${PENV[@]}" ldd "$p" 2>/dev/null | awk -v p="$(basename "$p")" '/libcu|libnccl/ {print p ": " $1 " => " $3}' \
      >> "$WORK/libraries.txt"
  done
  ldconfig -p 2>/dev/null | grep -E 'libnccl|libcublas|libcudart|libcuda\.' > "$WORK/ldconfig-cuda.txt"
}

IB="" MB="" GT=""
build_here() {
  local prefix=""
  [ -d "$BUNDLE/prefix" ] && prefix="$BUNDLE/prefix"
  BUILD="$ROOT/build-device"
  step "building here into $BUILD (2-5 minutes)${prefix:+, the packages from $prefix}"
  if [ ! -f "$BUILD/build.ninja" ]; then
    run configure 60 120 "$CMAKE" -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DIB_BUILD_TESTS=ON -DIB_BUILD_BENCHMARKS=ON ${prefix:+"-DCMAKE_PREFIX_PATH=$prefix"}
  fi
  [ -f "$BUILD/build.ninja" ] || stop "the build here could not be configured: $(tail -n 1 "$WORK/configure.log" 2>/dev/null)"
  run build 120 360 "$CMAKE" --build "$BUILD" -j "$JOBS" --target interference-microbench ib_cuda_gpu_tests interference-bench interference-bench-cuda
  [ -x "$BUILD/interference-bench" ] || stop "the build here failed: $(tail -n 1 "$WORK/build.log" 2>/dev/null)"
  # a build against the bundle's prefix links its Google Benchmark: find it at run time too
  [ -n "$prefix" ] && add_project_lib "$prefix/lib/x86_64-linux-gnu"
  IB="$BUILD/interference-bench"; MB="$BUILD/kernels/cuda/interference-microbench"; GT="$BUILD/tests/gpu/ib_cuda_gpu_tests"
}
# The carried programs, when their files are intact and were built from this checkout's sources.
choose_programs() {
  if [ -x "$BUNDLE/bin/interference-bench" ]; then
    [ -f "$BUNDLE/MANIFEST" ] && cp "$BUNDLE/MANIFEST" "$WORK/bundle-MANIFEST.txt"
    if ! (cd "$BUNDLE" && sha256sum --quiet -c BUNDLE.sha256) > "$WORK/bundle-files.txt" 2>&1; then
      stop "the bundle's own files do not match its BUNDLE.sha256 (see bundle-files.txt): rerun scripts/device-bundle.sh"
    fi
    if ! (cd "$ROOT" && sha256sum --quiet -c "$BUNDLE/SOURCES.sha256") > "$WORK/bundle-sources.txt" 2>&1; then
      local n
      n=$(grep -c ": FAILED" "$WORK/bundle-sources.txt")
      step "the carried programs were built from other sources ($n files differ, see bundle-sources.txt)"
      if [ "${REBUILD:-0}" = 1 ]; then build_here; return; fi
      [ "${ALLOW_STALE_BUNDLE:-0}" = 1 ] \
        || stop "stale bundle: built from other sources ($n files differ); rerun scripts/device-bundle.sh right before the call (REBUILD=1 builds here instead, ALLOW_STALE_BUNDLE=1 uses it anyway)"
      step "ALLOW_STALE_BUNDLE=1: using them anyway; the figures are of the bundle's sources (bundle-MANIFEST.txt)"
    fi
    IB="$BUNDLE/bin/interference-bench"; MB="$BUNDLE/bin/interference-microbench"; GT="$BUNDLE/bin/ib_cuda_gpu_tests"
    add_project_lib "$BUNDLE/lib"
    step "using the carried programs ($(head -n 1 "$BUNDLE/MANIFEST" 2>/dev/null))"
  elif [ "${REBUILD:-0}" = 1 ]; then
    build_here
  elif [ -x "$BUILD/interference-bench" ]; then
    IB="$BUILD/interference-bench"; MB="$BUILD/kernels/cuda/interference-microbench"; GT="$BUILD/tests/gpu/ib_cuda_gpu_tests"
    step "no bundle: using the programs in $BUILD"
  else
    stop "no programs: carry .device-bundle (scripts/device-bundle.sh here, carry [\".device-bundle\"]) or set REBUILD=1 to build on this machine"
  fi
}

# The CUDA runtime's view (interference-microbench --info): versions, libraries, NCCL, GPUs.
runtime_info() {
  [ -x "$MB" ] || { step "no $MB: no runtime record; relying on nvidia-smi"; return 1; }
  timeout --kill-after=5 60 "${PENV[@]}" "$MB" --info > "$WORK/runtime-info.json" 2> "$WORK/runtime-info.log"
  local rc=$?
  {
    echo "NCCL (loaded at run time, only by allreduce and train-step with gpus > 1): $(json_get "$WORK/runtime-info.json" 'j["nccl"]["describe"]')"
    echo "CUDA libraries loaded by interference-microbench: $(json_get "$WORK/runtime-info.json" '" ".join(j["loaded_libraries"])')"
  } >> "$WORK/libraries.txt"
  return $rc
}
preflight_cuda() {
  if [ "$(driver_major)" -lt "$MIN_DRIVER_MAJOR" ] 2>/dev/null; then
    step "driver $DRIVER is older than R$MIN_DRIVER_MAJOR (CUDA 13): trying the toolkit's forward-compatibility libraries in $CUDA_COMPAT_DIR"
    add_project_lib "$CUDA_COMPAT_DIR"
    runtime_info
    [ "$(json_get "$WORK/runtime-info.json" 'j["devices"]["count"]')" -ge 1 ] 2>/dev/null \
      || stop "driver $DRIVER is older than R$MIN_DRIVER_MAJOR, which CUDA 13 needs, and the forward-compatibility libraries in $CUDA_COMPAT_DIR did not help: $(json_get "$WORK/runtime-info.json" 'j["devices"].get("reason")')$(tail -n 1 "$WORK/runtime-info.log" 2>/dev/null)"
    step "forward compatibility works: CUDA driver API $(json_get "$WORK/runtime-info.json" 'j["cuda_driver_version"]') through $CUDA_COMPAT_DIR"
  else
    runtime_info || return 0
  fi
  local n
  n=$(json_get "$WORK/runtime-info.json" 'j["devices"]["count"]')
  [ -n "$n" ] || stop "interference-microbench --info failed: $(tail -n 1 "$WORK/runtime-info.log")"
  if [ "$n" -lt 1 ]; then
    local why
    why="no GPU visible to CUDA: $(json_get "$WORK/runtime-info.json" 'j["devices"]["reason"]')"
    [ "${REHEARSE_ALL:-0}" = 1 ] || stop "$why"
    step "REHEARSE_ALL=1: $why; going on, so that every step runs (and fails fast)"
    return 0
  fi
  step "CUDA sees $n GPU(s); runtime $(json_get "$WORK/runtime-info.json" 'j["cuda_runtime_version"]'), driver API $(json_get "$WORK/runtime-info.json" 'j["cuda_driver_version"]'), cuBLASLt $(json_get "$WORK/runtime-info.json" 'j["cublasLt_version"]'); $(json_get "$WORK/runtime-info.json" 'j["nccl"]["describe"]')"
}
preflight_programs() {
  choose_programs
  # The CUDA module, beside the binary: loaded only for a CUDA backend, so --version cannot tell whether
  # its libraries resolve here; ldd does.
  local module="$(dirname "$IB")/libinterference-bench-cuda.so"
  resolve_libs "$IB" "$MB" "$GT" "$module"
  echo "the programs' environment: ${PENV[*]}" >> "$WORK/steps.log"
  if { ! "${PENV[@]}" "$IB" --version > "$WORK/version.txt" 2>&1 \
       || "${PENV[@]}" ldd "$module" 2>&1 | grep "not found" >> "$WORK/version.txt"; } \
     && [ "$IB" = "$BUNDLE/bin/interference-bench" ]; then
    # The carried programs do not start (a library this image lacks): build them here instead.
    step "the carried interference-bench does not start here ($(tail -n 1 "$WORK/version.txt")): building it here"
    build_here
    module="$(dirname "$IB")/libinterference-bench-cuda.so"
    resolve_libs "$IB" "$MB" "$GT" "$module"
  fi
  "${PENV[@]}" "$IB" --version > "$WORK/version.txt" 2>&1 \
    || stop "interference-bench does not start here: $(tail -n 2 "$WORK/version.txt" | tr '\n' ' ')"
  if [ -x "$GT" ]; then
    "${PENV[@]}" "$GT" --gtest_list_tests > "$WORK/gpu-tests-list.txt" 2>&1 \
      || step "ib_cuda_gpu_tests does not start here: $(tail -n 1 "$WORK/gpu-tests-list.txt")"
  fi
  [ -f "$WORK/libraries.txt" ] && cat "$WORK/libraries.txt"
  publish
}

# ---- the steps -----------------------------------------------------------------------------------
microbench() {  # CASES (headline or rest) into WORK/microbench-CASES.json
  if [ -x "$MB" ]; then
    run "microbench-$1" 20 150 "${PENV[@]}" "$MB" --ib-cases="$1" --benchmark_out="$WORK/microbench-$1.json" \
      --benchmark_out_format=json
  else
    step "no $MB: microbenchmark ($1) skipped"
  fi
}
# PyTorch as installed: the script's own environment, which the check never changed.
torch_ceilings() { run "torch-$1" 15 60 python3 "$ROOT/scripts/torch_ceilings.py" --label "$1" --out "$WORK/torch-$1.json"; }
against_torch() {  # the bench's headline cases between two PyTorch measurements
  torch_ceilings before
  microbench headline
  torch_ceilings after
}
cv_phase() {  # NAME: 20 s exclusive phase of scenarios/device/NAME.json
  run "cv-$1" 35 60 "${PENV[@]}" "$IB" --mode exclusive --backend cuda --scenario "$ROOT/scenarios/device/$1.json" \
    --duration 20 --out "$WORK/cv-$1"
}
exclusive_cvs() {
  cv_phase gemm-bf16-exclusive
  cv_phase copy-sm-exclusive
  cv_phase latency-half-load-exclusive
}
gpu_tests() {
  if [ -x "$GT" ]; then
    # IB_REQUIRE_GPU=1: on the H200 a missing GPU or a waived must-run workload fails, not skips.
    run gpu-tests 40 150 "${PENV[@]}" IB_REQUIRE_GPU=1 "$GT" --gtest_output="json:$WORK/gpu-tests.json"
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]' "$WORK/gpu-tests.log" | tail -n 12
  else
    step "no $GT: gpu tests skipped"
  fi
}
quick_mode() {  # MODE MIN MAX: the quick suite under one mode, 3 s phases, 10 fixed rounds
  run "modes-$1" "$2" "$3" "${PENV[@]}" "$IB" --suite quick --backend cuda --mode "$1" --duration 3 --warmup 1 \
    --until fixed --out "$WORK/modes-$1"
}
shared_pairs() {  # time-slicing, then MPS (the private daemon is the harness's, quit by it)
  command -v nvidia-cuda-mps-control > "$WORK/mps-control-path.txt" 2>&1 \
    || echo "nvidia-cuda-mps-control is not on PATH: mps is waived" > "$WORK/mps-control-path.txt"
  quick_mode timeslice 60 130
  quick_mode mps 70 180
}
collectives() {  # issue 35: two ranks of one allreduce on GPU 0 beside a gemm, time-sliced then under MPS; NCCL
  # 2.30+ allows several ranks per GPU (the tool sets NCCL_MULTI_RANK_GPU_ENABLE=1), older is waived in NCCL's words
  for m in timeslice mps; do
    run "collective-$m" 30 120 "${PENV[@]}" "$IB" --backend cuda --mode "$m" \
      --scenario "$ROOT/scenarios/device/allreduce-two-ranks-gemm.json" --rounds 3 --until fixed --out "$WORK/collective-$m"
  done
}
mig_facts() {  # read only: the GPU instance profiles, and mode mig's own view (waived when MIG is off)
  timeout --kill-after=5 30 "$NVIDIA_SMI" mig -lgip > "$WORK/nvidia-smi-mig-lgip.txt" 2>&1
  quick_mode mig 20 120
}
mig_sweep() {  # PART=mig: only where the GPU is already in MIG mode (the check never changes MIG mode)
  timeout --kill-after=5 30 "$NVIDIA_SMI" --query-gpu=mig.mode.current --format=csv,noheader -i 0 \
    > "$WORK/mig-mode.txt" 2>&1
  if ! grep -qi '^enabled' "$WORK/mig-mode.txt"; then
    step "SKIPPED mig-sweep: GPU 0 is not in MIG mode (nvidia-smi says: $(head -n 1 "$WORK/mig-mode.txt"))"
    return 0
  fi
  timeout --kill-after=5 30 "$NVIDIA_SMI" mig -lgipp > "$WORK/nvidia-smi-mig-lgipp.txt" 2>&1
  run mig-sweep 60 420 "${PENV[@]}" "$IB" mig-sweep --backend cuda --scenario "$ROOT/scenarios/cuda/quick-gemm-copy.json" \
    --duration 3 --rounds 4 --budget 360 --out "$WORK/mig-sweep"
  collective_mig
}
collective_mig() {  # issue 35: the allreduce's two ranks each on a MIG instance, the gemm on a third, all three of
  # the GPU's smallest profile, made and destroyed by the run (--mig-create); NCCL 2.31+, older is waived in its words
  local profile
  timeout --kill-after=5 30 "$NVIDIA_SMI" mig -lgip > "$WORK/nvidia-smi-mig-lgip.txt" 2>&1
  profile=$(grep -o 'MIG [0-9]g\.[0-9]*gb ' "$WORK/nvidia-smi-mig-lgip.txt" | head -n 1 | awk '{print $2}')
  if [ -z "$profile" ]; then
    step "SKIPPED collective-mig: nvidia-smi mig -lgip names no profile ($(head -n 1 "$WORK/nvidia-smi-mig-lgip.txt"))"
    return 0
  fi
  run collective-mig 30 150 "${PENV[@]}" "$IB" --backend cuda --mode mig --mig-create "$profile,$profile,$profile" \
    --scenario "$ROOT/scenarios/device/allreduce-two-ranks-gemm.json" --rounds 3 --until fixed --out "$WORK/collective-mig"
}
gpu_matrix() {  # issue 50: which of four CUDA workloads may share the GPU time-sliced (10 pair runs)
  run gpu-matrix 60 240 "${PENV[@]}" "$IB" matrix --backend cuda --mode timeslice \
    --workloads "gemm:reps=16,copy:reps=48,latency:mode=open:rate=10000:requests=500,h2d" \
    --duration 2 --warmup 1 --rounds 4 --budget 200 --out "$WORK/gpu-matrix"
}
selftest() {  # only when this build of interference-bench has the subcommand
  local help opts=()
  help=$("${PENV[@]}" "$IB" --help 2>&1)
  if ! grep -qw selftest <<< "$help"; then
    step "SKIPPED selftest: interference-bench has no selftest subcommand (--help does not list it)"
    return 0
  fi
  help=$("${PENV[@]}" "$IB" selftest --help 2>&1)
  grep -q -- '--backend' <<< "$help" && opts+=(--backend cuda)
  grep -q -- '--out' <<< "$help" && opts+=(--out "$WORK/selftest")
  run selftest 20 90 "${PENV[@]}" "$IB" selftest "${opts[@]}"
}
probe() { runo probe 15 30 "${PENV[@]}" "$IB" probe --json --idle-window 5; }
torch_tenant() {  # a PyTorch loop as a command tenant beside gemm, time-sliced then under MPS (issue 22)
  if ! timeout 60 python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
      > "$WORK/torch-tenant-check.txt" 2>&1; then
    step "SKIPPED torch-tenant: no PyTorch with CUDA here ($(tail -n 1 "$WORK/torch-tenant-check.txt"))"
    return 0
  fi
  # PyTorch runs with the environment the check was started with, not the harness's library path.
  python3 "$ROOT/scripts/device_scenarios.py" torch-tenant --root "$ROOT" --ld-library-path "${LD_LIBRARY_PATH:-}" \
    --out "$WORK/torch-tenant.json"
  local m
  for m in timeslice mps; do
    run "torch-tenant-$m" 40 110 "${PENV[@]}" "$IB" --backend cuda --mode "$m" --scenario "$WORK/torch-tenant.json" \
      --rounds 6 --until fixed --out "$WORK/torch-tenant-$m"
  done
}
sampler() {  # gemm and copy, telemetry at 10 Hz (A) vs off (B), in the order A B B A
  local rep=0 hz w
  if [ "$(left)" -lt 100 ]; then step "SKIPPED sampler: the 8 runs need about 90 s, $(left) s left"; return 0; fi
  for hz in 10 0 0 10; do
    rep=$((rep + 1))
    for w in gemm-bf16 copy-sm; do
      run "sampler-$w-hz$hz-$rep" 12 25 "${PENV[@]}" "$IB" --mode exclusive --backend cuda --telemetry-hz "$hz" \
        --scenario "$ROOT/scenarios/device/$w-exclusive.json" --duration 4 --warmup 1 --out "$WORK/sampler-$w-hz$hz-$rep"
    done
  done
}
vet() {  # baseline: 5 workloads x (2 s warm-up + 4 s) plus start-up; vet without one if it failed
  run baseline 60 90 "${PENV[@]}" "$IB" baseline --duration 4 --out "$WORK/baseline.json"
  if [ -s "$WORK/baseline.json" ]; then
    run vet 60 100 "${PENV[@]}" "$IB" vet --budget 60 --baseline "$WORK/baseline.json" --out "$WORK/vet"
  else
    step "no baseline file: vet runs without the P95 comparison"
    run vet 60 100 "${PENV[@]}" "$IB" vet --budget 60 --out "$WORK/vet"
  fi
}
sustain() {  # what is left, at most 120 s, never under 30 s (the verdict needs windows)
  local d=120 l
  l=$(( $(left) - 25 - KILL_AFTER ))
  [ "$l" -lt "$d" ] && d=$l
  if [ "$d" -lt 30 ]; then step "SKIPPED sustain: $(left) s left"; return 0; fi
  echo "$d" > "$WORK/sustain-duration.txt"
  run sustain 30 $((d + 25)) "${PENV[@]}" "$IB" sustain --duration "$d" --out "$WORK/sustain"
}

# ---- order of value ------------------------------------------------------------------------------
step "device check, PART=$PART, deadline ${DEADLINE_S} s"
case "$PART" in first|second|mig) ;; *) stop "unknown PART=$PART (first, second or mig)" ;; esac
git -C "$ROOT" rev-parse HEAD > "$WORK/git-sha.txt" 2>/dev/null
preflight_driver
preflight_programs
preflight_cuda
publish
case "$PART" in
  first) against_torch; exclusive_cvs; shared_pairs; selftest ;;
  second) microbench rest; gpu_tests; probe; collectives; torch_tenant; mig_facts; quick_mode streams 60 130; sampler; vet; sustain ;;
  mig) gpu_matrix; mig_sweep ;;
esac

# ---- leave nothing running -----------------------------------------------------------------------
stop_left_over_mps
step "done"
publish
cat "$WORK/summary-stdout.log"
ls -la "$OUT"
echo "[device-check +$(elapsed)s] finished"
