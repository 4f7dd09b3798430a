#!/usr/bin/env bash
# One night of interference-bench on this node (docs/nightly.md): the nightly suite, recorded in the
# history database, rendered as one HTML page, then compared with the last 7 nights.
#
#   scripts/nightly.sh [STATE_DIR]      (default /var/lib/interference-bench)
#
# Environment: IB_BIN (default: interference-bench on PATH), IB_BACKEND (cuda), IB_DEVICE (0),
# IB_WINDOW (7). Exit code: the documented codes (README.md, "Exit codes"): 2, 3, 70 or 130 from the
# run as they are; otherwise the run's and the comparison's codes combined by precedence 4, 1, 5, 0
# (a regression against history is 1, like a failed verdict).
set -uo pipefail

state=${1:-/var/lib/interference-bench}
bin=${IB_BIN:-interference-bench}
night=$(date -u +%Y%m%d-%H%M%S)
out="$state/runs/$night-device${IB_DEVICE:-0}"
db="$state/history.db"
mkdir -p "$state/runs" || exit 3

"$bin" --suite nightly --backend "${IB_BACKEND:-cuda}" --device "${IB_DEVICE:-0}" --out "$out" \
  --history "$db" --html "$out/report.html"
run_rc=$?
case $run_rc in
  2|3|70|130) exit "$run_rc" ;;  # nothing (or nothing complete) to compare
esac

# `compare` is being written in parallel (issue 13); it leaves tonight's own run out of the window.
"$bin" compare "$out/results.json" --against-history "$db" --window "${IB_WINDOW:-7}"
compare_rc=$?

# Precedence 4, 1, 5, 0; a comparison that could not run (2, 3, 70) is reported as it is.
for code in 4 1 5; do
  if [ "$run_rc" -eq "$code" ] || [ "$compare_rc" -eq "$code" ]; then exit "$code"; fi
done
[ "$compare_rc" -eq 0 ] && exit 0
exit "$compare_rc"
