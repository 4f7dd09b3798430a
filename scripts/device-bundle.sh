#!/usr/bin/env bash
# Prepares .device-bundle/ (git-ignored) for the device tool's `carry`, so that the device check
# (scripts/device-check.sh) runs what was built and tested here instead of building on the H200, whose
# image has nvcc, CMake and ninja but none of this project's Debian packages.
#
#   .device-bundle/bin/      interference-bench, interference-microbench, ib_cuda_gpu_tests (stripped)
#   .device-bundle/lib/      shared libraries they need that the device image does not bring: everything
#                            ldd resolves here except glibc, libstdc++/libgcc, the CUDA toolkit's
#                            libraries and NCCL (218 MB; the device check finds the device's own copy)
#   .device-bundle/prefix/   headers, static libraries and CMake package files of CLI11, nlohmann/json,
#                            GoogleTest, Google Benchmark and SQLite: the fallback when the carried
#                            programs do not start there (device-check.sh then builds with
#                            -DCMAKE_PREFIX_PATH=.device-bundle/prefix)
#   .device-bundle/MANIFEST  git sha, date, sizes
#   .device-bundle/SOURCES.sha256  checksums of the files the programs are built from, so that the
#                            device check can tell carried programs built from other sources (stale)
#
# Usage: scripts/device-bundle.sh        (BUILD_DIR=... another build folder; BUNDLE_DIR=... another
#        bundle folder; NO_BUILD=1 packs what is built without building: the tests use that)
# Then:  device run, carry [".device-bundle"], command "OUT=$OUT scripts/device-check.sh".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
B="${BUNDLE_DIR:-$ROOT/.device-bundle}"
ARCH_LIB=/usr/lib/x86_64-linux-gnu

if [ "${NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$BUILD" --target interference-bench interference-microbench ib_cuda_gpu_tests
fi

rm -rf "$B"
mkdir -p "$B/bin" "$B/lib" "$B/prefix/include" "$B/prefix/lib/x86_64-linux-gnu/cmake" "$B/prefix/share/cmake"
PROGRAMS=("$BUILD/interference-bench" "$BUILD/kernels/cuda/interference-microbench" "$BUILD/tests/gpu/ib_cuda_gpu_tests")
for p in "${PROGRAMS[@]}"; do
  strip -o "$B/bin/$(basename "$p")" "$p"
done

# Libraries the device provides itself (or must: the driver's libcuda), by soname prefix.
provided='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libnccl)'
for p in "${PROGRAMS[@]}"; do
  ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  if ! [[ "$soname" =~ $provided ]]; then cp -L "$path" "$B/lib/$soname"; fi
done

# The fallback build's dependencies, in the same layout as under /usr so that the packages' CMake files
# (which locate their prefix relative to themselves) work from there.
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/gtest /usr/include/gmock /usr/include/benchmark \
      /usr/include/sqlite3.h /usr/include/sqlite3ext.h "$B/prefix/include/"
cp -P $ARCH_LIB/libgtest*.a $ARCH_LIB/libgmock*.a $ARCH_LIB/libbenchmark* $ARCH_LIB/libsqlite3.so* \
      "$B/prefix/lib/x86_64-linux-gnu/"
cp -r $ARCH_LIB/cmake/GTest $ARCH_LIB/cmake/benchmark "$B/prefix/lib/x86_64-linux-gnu/cmake/"
cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$B/prefix/share/cmake/"

# What the programs are built from: every tracked file but documentation, scripts and the Python
# end-to-end tests (they change nothing in the programs). The device has no .git, so the checksums
# travel and are checked there against the files of the checkout.
(cd "$ROOT" && git ls-files -z -- . ':!docs' ':!*.md' ':!scripts' ':!tests/e2e' ':!.ci' ':!.gitignore' \
  | sort -z | xargs -0 sha256sum) > "$B/SOURCES.sha256"

{
  echo "git $(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "CUDA code: $(grep -o -- '--generate-code=[^ ]*' "$BUILD/build.ninja" | sort -u | tr '\n' ' ')"
  (cd "$B" && find bin lib -type f -printf '%p %s\n' | sort)
} > "$B/MANIFEST"
cat "$B/MANIFEST"
du -sh "$B"
