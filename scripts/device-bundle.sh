#!/usr/bin/env bash
# Prepares .device-bundle/ (git-ignored) for the device tool's `carry`, so that the device check
# (scripts/device-check.sh) runs what was built and tested here instead of building on the H200, whose
# image has nvcc, CMake and ninja but none of this project's Debian packages.
#
#   .device-bundle/bin/      interference-bench and its CUDA module libinterference-bench-cuda.so (beside
#                            it, where the binary looks), interference-microbench, ib_cuda_gpu_tests (stripped)
#   .device-bundle/lib/      shared libraries they need that the device image does not bring: everything
#                            ldd resolves here except glibc, libstdc++/libgcc and the CUDA toolkit's
#                            libraries. NCCL is not linked at all (allreduce and train-step load it at
#                            run time, kernels/cuda/nccl_api.h): a program that links it is refused here.
#   .device-bundle/prefix/   headers, libraries and CMake package files of every package CMakeLists.txt
#                            finds (CLI11, nlohmann/json, fmt, pugixml, SQLiteCpp and SQLite, GoogleTest,
#                            Google Benchmark) and Debian's Chart.js: the fallback when the carried
#                            programs do not start there (device-check.sh then builds with
#                            -DCMAKE_PREFIX_PATH=.device-bundle/prefix). tests/e2e/test_device_check.py
#                            configures a host-only build from it with the system's paths switched off.
#   .device-bundle/MANIFEST  git sha, date, sizes
#   .device-bundle/SOURCES.sha256  checksums of the files the programs are built from, so that the
#                            device check can tell carried programs built from other sources (stale):
#                            taken before the build and checked again after it (a source edited while
#                            it built fails here, not on the GPU machine)
#   .device-bundle/BUNDLE.sha256   checksums of the bundle's own files (bin/, lib/, SOURCES.sha256,
#                            MANIFEST), verified here once written and again by the device check
#
# Run it right before the device call: it rebuilds the programs (ninja: only what changed) first.
# Usage: scripts/device-bundle.sh        (BUILD_DIR=... another build folder; BUNDLE_DIR=... another
#        bundle folder; NO_BUILD=1 packs what is built without building or checking that it is
#        current: the tests use that, right after ctest's build)
# Then:  device run, carry [".device-bundle"], command "OUT=$OUT scripts/device-check.sh", timeout_s 600.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
B="${BUNDLE_DIR:-$ROOT/.device-bundle}"
ARCH_LIB=/usr/lib/x86_64-linux-gnu

PROGRAMS=("$BUILD/interference-bench" "$BUILD/libinterference-bench-cuda.so" "$BUILD/kernels/cuda/interference-microbench"
          "$BUILD/tests/gpu/ib_cuda_gpu_tests")
# What the programs are built from: every tracked file but documentation, scripts and the Python
# end-to-end tests (they change nothing in the programs). The device has no .git, so the checksums
# travel and are checked there against the files of the checkout. Untracked files are left out (a log
# written into the checkout after bundling must not make the bundle stale); an untracked file that the
# build could compile is refused here instead, so that nothing built goes unchecked.
SOURCE_PATHS=(. ':!docs' ':!*.md' ':!scripts' ':!tests/e2e' ':!.ci' ':!.gitignore')
source_checksums() {
  (cd "$ROOT" && git ls-files -z -- "${SOURCE_PATHS[@]}" | sort -z | xargs -0 sha256sum)
}
untracked_sources=$(cd "$ROOT" && git ls-files -o --exclude-standard -- "${SOURCE_PATHS[@]}" \
  | grep -E '(\.(c|cc|cpp|cu|cuh|h|hpp|cmake|json)|CMakeLists\.txt|CMakePresets\.json)$' || true)
if [ -n "$untracked_sources" ]; then
  echo "device-bundle: untracked files the build may use would not be checked on the device: $(echo $untracked_sources); git add them (or remove them)" >&2
  exit 1
fi
SUMS_BEFORE=$(mktemp)
trap 'rm -f "$SUMS_BEFORE"' EXIT
source_checksums > "$SUMS_BEFORE"

if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIB_BUILD_TESTS=ON -DIB_BUILD_BENCHMARKS=ON
  fi
  cmake --build "$BUILD" --target interference-bench interference-bench-cuda interference-microbench ib_cuda_gpu_tests
fi
# A source edited while the programs were built would make them differ from SOURCES.sha256.
if ! source_checksums | cmp -s - "$SUMS_BEFORE"; then
  echo "device-bundle: sources changed while the programs were built; run it again" >&2
  exit 1
fi
# NCCL is loaded at run time; a program that links it would not start where NCCL is elsewhere.
for p in "${PROGRAMS[@]}"; do
  if ldd "$p" | grep -q libnccl; then
    echo "device-bundle: $p links libnccl (it must be loaded at run time, kernels/cuda/nccl_api.h)" >&2
    exit 1
  fi
done

rm -rf "$B"
mkdir -p "$B/bin" "$B/lib" "$B/prefix/include" "$B/prefix/lib/x86_64-linux-gnu/cmake" "$B/prefix/share/cmake"
for p in "${PROGRAMS[@]}"; do
  strip -o "$B/bin/$(basename "$p")" "$p"
done

# Libraries the device provides itself (or must: the driver's libcuda), by soname prefix.
provided='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas)'
for p in "${PROGRAMS[@]}"; do
  ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  if ! [[ "$soname" =~ $provided ]]; then cp -L "$path" "$B/lib/$soname"; fi
done

# The fallback build's dependencies, in the same layout as under /usr so that the packages' CMake files
# (which locate their prefix relative to themselves) work from there.
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/gtest /usr/include/gmock /usr/include/benchmark \
      /usr/include/fmt /usr/include/pugixml.hpp /usr/include/pugiconfig.hpp /usr/include/SQLiteCpp \
      /usr/include/sqlite3.h /usr/include/sqlite3ext.h /usr/include/pcre2.h "$B/prefix/include/"
cp -P $ARCH_LIB/libgtest*.a $ARCH_LIB/libgmock*.a $ARCH_LIB/libbenchmark* $ARCH_LIB/libsqlite3.so* \
      $ARCH_LIB/libfmt.so* $ARCH_LIB/libpugixml.* $ARCH_LIB/libSQLiteCpp.a $ARCH_LIB/libpcre2-8.so* \
      "$B/prefix/lib/x86_64-linux-gnu/"
cp -r $ARCH_LIB/cmake/GTest $ARCH_LIB/cmake/benchmark $ARCH_LIB/cmake/fmt $ARCH_LIB/cmake/pugixml \
      $ARCH_LIB/cmake/SQLiteCpp "$B/prefix/lib/x86_64-linux-gnu/cmake/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$B/prefix/share/cmake/"
mkdir -p "$B/prefix/share/javascript/chart.js"   # inlined into the HTML report (CMakeLists.txt, IB_CHARTJS)
cp /usr/share/javascript/chart.js/chart.min.js "$B/prefix/share/javascript/chart.js/"

cp "$SUMS_BEFORE" "$B/SOURCES.sha256"

{
  echo "git $(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "CUDA code: $(grep -o -- '--generate-code=[^ ]*' "$BUILD/build.ninja" | sort -u | tr '\n' ' ')"
  (cd "$B" && find bin lib -type f -printf '%p %s\n' | sort)
} > "$B/MANIFEST"
# The bundle's own files, checked here at once and again on the device (a partial or changed copy).
(cd "$B" && find bin lib SOURCES.sha256 MANIFEST -type f -print0 | sort -z | xargs -0 sha256sum) > "$B/BUNDLE.sha256"
(cd "$B" && sha256sum --quiet -c BUNDLE.sha256)
(cd "$ROOT" && sha256sum --quiet -c "$B/SOURCES.sha256")
cat "$B/MANIFEST"
du -sh "$B"
