#!/usr/bin/env bash
# One task of a fleet run (docs/design.md section 10), shared by the Slurm array job and the Kubernetes Indexed
# Job: runs `interference-bench run` into this task's own folder of the fleet directory and records what
# became of it in task.json, which `interference-bench merge` reads.
#
#   ib-task.sh --fleet-dir DIR [--binary PATH] -- RUN_ARGS...
#
# node:  $SLURMD_NODENAME, else $NODE_NAME (Kubernetes downward API: spec.nodeName), else `hostname -s`
# index: $SLURM_ARRAY_TASK_ID, else $JOB_COMPLETION_INDEX, else none; a non-negative integer below 10^9
#        (refused otherwise, exit 2), leading zeros dropped: 007 is task 7 (task.json's "task_index": 7, a
#        JSON number, and the folder <node>.7)
# Task folder: DIR/tasks/<node>.<index> (DIR/tasks/<node> without an index). One that already holds a
# task.json is refused (exit 2): a task never writes over another's results (a requeued task included).
# DIR/tasks/<task>/task.json is written (temp file + mv) before the run with "exit_code": null and
# "ended": null, and again after it with both set. The run's results go to DIR/tasks/<task>/results.
# SIGTERM and SIGINT (Slurm sends SIGTERM at the time limit and on scancel; Kubernetes on pod deletion)
# are passed on to the run, which ends its block, keeps its partial results and exits 130.
# Exits with the run's exit code (0 pass, 1 a verdict failed, 2 bad input, 3 cannot run, 4 a workload
# failed, 5 inconclusive, 130 interrupted); 2 for a wrong invocation of this script itself or a task
# folder already used; 3 (recorded in task.json) when the binary is not on this node.
# Needs bash and coreutils only (no python on the node).
set -uo pipefail

die() { echo "ib-task: $*" >&2; exit 2; }
# A value as it may appear in die's one line: control characters (a line break) as '?', at most 80 characters.
shown() { local s="${1//[[:cntrl:]]/?}"; [ ${#s} -le 80 ] || s="${s:0:77}..."; printf '%s' "$s"; }

fleet_dir="" binary="${IB_BINARY:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --fleet-dir) [ $# -ge 2 ] || die "--fleet-dir needs a value"; fleet_dir="$2"; shift 2 ;;
    --fleet-dir=*) fleet_dir="${1#*=}"; shift ;;
    --binary) [ $# -ge 2 ] || die "--binary needs a value"; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#*=}"; shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) die "unknown option '$1' (usage: ib-task.sh --fleet-dir DIR [--binary PATH] -- RUN_ARGS...)" ;;
  esac
done
[ -n "$fleet_dir" ] || die "--fleet-dir DIR is required"
[ -n "$binary" ] || binary="$(command -v interference-bench || true)"

# A JSON string: " and \ escaped (values with control characters are refused before, below).
json_str() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '"%s"' "$s"
}
json_opt() { if [ -n "$1" ]; then json_str "$1"; else printf 'null'; fi; }
now() {
  local t
  t="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
  case "$t" in *N*) t="$(date -u +%Y-%m-%dT%H:%M:%SZ)" ;; esac  # a date without %N
  printf '%s' "$t"
}

if [ -n "${SLURM_JOB_ID:-}" ]; then
  scheduler=slurm
  job_id="$SLURM_JOB_ID"
  array_job_id="${SLURM_ARRAY_JOB_ID:-}"
elif [ -n "${JOB_COMPLETION_INDEX:-}" ] || [ -n "${KUBERNETES_SERVICE_HOST:-}" ]; then
  scheduler=kubernetes
  job_id="${JOB_NAME:-}"
  array_job_id=""
else
  scheduler=none
  job_id=""
  array_job_id=""
fi
node="${SLURMD_NODENAME:-${NODE_NAME:-$(hostname -s)}}"
index="${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-}}"
# The node name becomes a folder name: only the characters host names are made of.
[[ "$node" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "node name '$(shown "$node")' has characters a host name does not"
if [ -n "$index" ]; then
  [[ "$index" =~ ^[0-9]+$ ]] \
    || die "task index '$(shown "$index")' (SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX) is not a non-negative integer"
  # task.json's "task_index" is a JSON number, which has no leading zeros: 007 is 7 (and 000 is 0).
  index="${index#"${index%%[!0]*}"}"
  index="${index:-0}"
  [ ${#index} -le 9 ] || die "task index '$(shown "$index")' is out of range (at most 999999999)"
fi
for v in "$job_id" "$array_job_id"; do
  case "$v" in *[[:cntrl:]]*) die "a job id holds a control character: refusing to write it into task.json" ;; esac
done

task="$node${index:+.$index}"
task_dir="$fleet_dir/tasks/$task"
[ ! -e "$task_dir/task.json" ] && [ ! -L "$task_dir/task.json" ] \
  || die "$task_dir already holds a task.json (a task never writes over another's results)"
mkdir -p "$task_dir" || die "cannot make $task_dir"

started="$(now)"
write_task() {  # exit_code ended
  local tmp="$task_dir/.task.json.$$"
  if ! {
    printf '{\n'
    printf '  "task_schema": 1,\n'
    printf '  "scheduler": "%s",\n' "$scheduler"
    printf '  "node": %s,\n' "$(json_str "$node")"
    printf '  "job_id": %s,\n' "$(json_opt "$job_id")"
    printf '  "array_job_id": %s,\n' "$(json_opt "$array_job_id")"
    printf '  "task_index": %s,\n' "${index:-null}"
    printf '  "results_dir": "results",\n'
    printf '  "exit_code": %s,\n' "$1"
    printf '  "started": "%s",\n' "$started"
    printf '  "ended": %s\n' "$2"
    printf '}\n'
  } >"$tmp" || ! mv -f "$tmp" "$task_dir/task.json"; then
    rm -f "$tmp"
    die "cannot write $task_dir/task.json"
  fi
}
write_task null null

# A node without the binary cannot run the task: recorded as such (exit 3), not left for the merge to
# find missing.
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
  write_task 3 "\"$(now)\""
  if [ -n "$binary" ]; then
    echo "ib-task: binary '$binary' is not an executable file on $node" >&2
  else
    echo "ib-task: interference-bench is not on PATH on $node (give --binary PATH or set IB_BINARY)" >&2
  fi
  exit 3
fi

echo "ib-task: $scheduler node $node task ${index:-(none)} -> $task_dir/results" >&2
child=""
forward() { [ -n "$child" ] && kill -s "$1" "$child" 2>/dev/null; }
trap 'forward TERM' TERM
trap 'forward INT' INT
# In the background, so that the traps run while it does; `wait` returns early when a trapped signal
# arrives, so it is waited for again until it has really exited.
"$binary" run --out "$task_dir/results" "$@" </dev/null &
child=$!
while kill -0 "$child" 2>/dev/null; do
  wait "$child"
done
wait "$child"  # its saved status (bash keeps it), also when it ended just after a signal cut a wait short
rc=$?
trap - TERM INT
write_task "$rc" "\"$(now)\""
echo "ib-task: run exited $rc" >&2
exit "$rc"
