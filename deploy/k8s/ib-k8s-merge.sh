#!/usr/bin/env bash
# The Kubernetes merge CronJob's pod (deploy/k8s/merge-cronjob.yaml): merges the newest night on the results
# volume into its fleet report.
#
#   ib-k8s-merge.sh --results-root DIR --expect-tasks N [--expect-nodes FILE] [--max-age-hours H]
#
# Night: $NIGHT when set (a night's folder name under DIR/nights), else the newest folder named
# YYYY-MM-DDTHHMMZ (the nights the nightly CronJob made), which must have been scheduled within the last H
# hours (default 20): an older one means tonight's run never started, which is a failure (exit 1, no
# report), never a re-merge of yesterday. A night whose pods all stayed Pending has no tasks folder: one is
# made, so the merge reports all N tasks missing. An earlier fleet/ of the night (a merge pod replaced
# after a disruption, a merge re-run by hand) is moved to fleet.<n>. Then runs
#   interference-bench merge DIR/nights/<night>/tasks --expect-tasks N [--expect-nodes FILE] --out .../fleet
# and exits with its code (0 all good, 1 a verdict failed or a node is missing, 5 only inconclusive, 2 bad
# input); DIR/nights/LATEST then names the night, when the merge wrote a report.
set -uo pipefail

die() { echo "ib-k8s-merge: $*" >&2; exit 2; }

root="" tasks="" nodes_file="" max_age=20 binary="${IB_BINARY:-/opt/interference-bench/bin/interference-bench}"
while [ $# -gt 0 ]; do
  case "$1" in
    --results-root) [ $# -ge 2 ] || die "--results-root needs a value"; root="$2"; shift 2 ;;
    --expect-tasks) [ $# -ge 2 ] || die "--expect-tasks needs a value"; tasks="$2"; shift 2 ;;
    --expect-nodes) [ $# -ge 2 ] || die "--expect-nodes needs a value"; nodes_file="$2"; shift 2 ;;
    --max-age-hours) [ $# -ge 2 ] || die "--max-age-hours needs a value"; max_age="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1'" ;;
  esac
done
[ -n "$root" ] || die "--results-root DIR is required"
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || die "--expect-tasks N (a positive number) is required"
[[ "$max_age" =~ ^[0-9]+$ ]] || die "--max-age-hours '$max_age' is not a number of hours"
[ -d "$root" ] || die "results root '$root' is not a folder (is the results volume mounted?)"

night="${NIGHT:-}"
if [ -z "$night" ]; then
  newest=""
  for d in "$root"/nights/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9][0-9][0-9]Z; do
    [ -d "$d" ] && newest="${d##*/}"  # the glob expands in sorted order: the last is the newest
  done
  [ -n "$newest" ] || { echo "ib-k8s-merge: no night under $root/nights: the nightly CronJob never ran" >&2; exit 1; }
  stamp="${newest:0:10} ${newest:11:2}:${newest:13:2} UTC"
  started="$(date -u -d "$stamp" +%s)" || die "cannot read the time of night '$newest'"
  age=$(( $(date -u +%s) - started ))
  if [ "$age" -gt $((max_age * 3600)) ]; then
    echo "ib-k8s-merge: the newest night, $newest, is $((age / 3600)) h old (more than $max_age h):" \
         "tonight's run never started (see kubectl get jobs)" >&2
    exit 1
  fi
  night="$newest"
fi
[[ "$night" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "night '$night' is not a plain folder name"
dir="$root/nights/$night"
[ -d "$dir" ] || die "no night '$night' under $root/nights"
mkdir -p "$dir/tasks" || die "cannot make $dir/tasks"
if [ -e "$dir/fleet" ]; then
  n=1
  while [ -e "$dir/fleet.$n" ]; do n=$((n + 1)); done
  mv "$dir/fleet" "$dir/fleet.$n" || die "cannot move the earlier $dir/fleet aside"
  echo "ib-k8s-merge: an earlier fleet report moved to $dir/fleet.$n" >&2
fi

args=(merge "$dir/tasks" --expect-tasks "$tasks")
[ -z "$nodes_file" ] || args+=(--expect-nodes "$nodes_file")
args+=(--out "$dir/fleet")
echo "ib-k8s-merge: $binary ${args[*]}" >&2
"$binary" "${args[@]}" </dev/null
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 5 ]; then
  printf '%s\n' "$night" >"$root/nights/.LATEST.$$" && mv -f "$root/nights/.LATEST.$$" "$root/nights/LATEST"
fi
echo "ib-k8s-merge: merge of $night exited $rc" >&2
exit "$rc"
