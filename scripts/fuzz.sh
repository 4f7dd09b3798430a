#!/usr/bin/env bash
# Builds the libFuzzer targets (preset asan: clang with ASan + UBSan; the same tree as the sanitizer tests) and runs each for SECONDS
# (default 60) from its seed corpus in tests/fuzz/corpus/<name>. Exits non-zero on the first finding;
# the input that found it is left in build-asan/findings/. New inputs go to a temporary corpus, so the
# committed seeds are never changed. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for d in tests/fuzz/corpus/*/; do targets+=("fuzz_$(basename "$d")"); done
fi
[ -f build-asan/CMakeCache.txt ] || cmake --preset asan >/dev/null
cmake --build --preset asan --target "${targets[@]}"
mkdir -p build-asan/findings
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  echo "fuzz: $t for ${seconds}s from tests/fuzz/corpus/$name"
  # -timeout: an input that takes more than 10 s is a hang; -rss_limit_mb: one that needs 2 GiB a leak.
  build-asan/tests/fuzz/"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-asan/findings/"$name"- "$work" tests/fuzz/corpus/"$name" 2>&1 | tail -n 12
  rm -rf "$work"
  trap - EXIT
done
