#!/usr/bin/env bash
# One pod of the Kubernetes nightly Indexed Job (deploy/k8s/nightly-cronjob.yaml): picks the night's folder
# on the results volume, moves an earlier attempt of this index out of the way, then runs deploy/ib-task.sh.
#
#   ib-k8s-task.sh --results-root DIR [--wrapper PATH] -- RUN_ARGS...
#
# Night: $NIGHT when set, else from $JOB_NAME (the downward API label batch.kubernetes.io/job-name). A Job
# the CronJob created is named <cronjob>-<scheduled time in minutes since the epoch>: its night is that
# time in UTC, YYYY-MM-DDTHHMMZ (so the merge CronJob finds the newest night by name) when that time is
# within a day of now. Any other Job, one made by hand (kubectl create job --from=cronjob/ib-nightly NAME)
# included, gets the folder NAME. Fleet dir: DIR/nights/<night>.
# Retries: ib-task.sh refuses a task folder that already holds a task.json, and a retried index (exit 4 or
# 130, or a replacement after a disruption) usually lands on the same node. Earlier attempts of this
# index (any node) are moved to DIR/nights/<night>/attempts/<task>.<n>, so the merge reads the last
# attempt only and the earlier ones stay as evidence. Safe: the Job runs one pod per index at a time
# (podReplacementPolicy: Failed), and the night's folder belongs to this Job alone.
# Exits with ib-task.sh's exit code (the run's); 2 for a wrong invocation or a folder it cannot make.
set -uo pipefail

die() { echo "ib-k8s-task: $*" >&2; exit 2; }

root="" wrapper="${IB_TASK_WRAPPER:-/opt/interference-bench/deploy/ib-task.sh}"
while [ $# -gt 0 ]; do
  case "$1" in
    --results-root) [ $# -ge 2 ] || die "--results-root needs a value"; root="$2"; shift 2 ;;
    --wrapper) [ $# -ge 2 ] || die "--wrapper needs a value"; wrapper="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (usage: ib-k8s-task.sh --results-root DIR [--wrapper PATH] -- RUN_ARGS...)" ;;
  esac
done
[ -n "$root" ] || die "--results-root DIR is required"
[ -d "$root" ] || die "results root '$root' is not a folder (is the results volume mounted?)"
index="${JOB_COMPLETION_INDEX:-}"
[[ "$index" =~ ^[0-9]+$ ]] || die "JOB_COMPLETION_INDEX '$index' is not a number (not an Indexed Job?)"

night="${NIGHT:-}"
if [ -z "$night" ]; then
  job="${JOB_NAME:-}"
  [ -n "$job" ] || die "neither NIGHT nor JOB_NAME is set"
  suffix="${job##*-}"
  night="$job"
  # A number that is a time within a day of now is the CronJob's (its pods start within the
  # startingDeadlineSeconds and activeDeadlineSeconds of it); any other name is a Job's own.
  if [ "$suffix" != "$job" ] && [[ "$suffix" =~ ^[1-9][0-9]{6,9}$ ]]; then
    scheduled=$((suffix * 60)) now_s="$(date -u +%s)"
    if [ $((now_s - scheduled)) -le 86400 ] && [ $((scheduled - now_s)) -le 86400 ]; then
      night="$(date -u -d "@$scheduled" +%Y-%m-%dT%H%MZ)" || die "cannot turn '$suffix' into a date"
    fi
  fi
fi
[[ "$night" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "night '$night' is not a plain folder name"
fleet="$root/nights/$night"
mkdir -p "$fleet/tasks" || die "cannot make $fleet/tasks"

shopt -s nullglob
for earlier in "$fleet/tasks/"*".$index"; do
  if [ ! -d "$earlier" ] || [ -L "$earlier" ]; then continue; fi
  mkdir -p "$fleet/attempts" || die "cannot make $fleet/attempts"
  n=1
  while [ -e "$fleet/attempts/${earlier##*/}.$n" ]; do n=$((n + 1)); done
  mv "$earlier" "$fleet/attempts/${earlier##*/}.$n" || die "cannot move $earlier aside"
  echo "ib-k8s-task: an earlier attempt of index $index moved to $fleet/attempts/${earlier##*/}.$n" >&2
done
shopt -u nullglob

echo "ib-k8s-task: night $night, index $index" >&2
exec "$wrapper" --fleet-dir "$fleet" ${IB_BINARY:+--binary "$IB_BINARY"} -- "$@"
