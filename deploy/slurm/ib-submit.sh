#!/usr/bin/env bash
# Submits a fleet run to Slurm: a job array (ib-nightly.sbatch, one exclusive node per task) and the
# merge (ib-merge.sbatch) after it with --dependency=afterany (one failing node must not stop the merge).
#
#   ib-submit.sh [OPTIONS] [-- RUN_ARGS...]
#
#   --fleet-dir DIR    the fleet folder, on a file system every node sees (default: a new
#                      ib-fleet/<UTC time> under the current folder); it must not hold a fleet run yet
#   --partition P      the partition (default: Slurm's default one)
#   --nodes N1,N2,...  the nodes expected to report (default: the partition's nodes, `sinfo -h -N -p P -o %N`)
#   --tasks N          array tasks (default: one per node); more tasks than nodes run one after another
#                      on the nodes (how a test on one node runs several tasks); a positive integer of
#                      at most --max-array-size
#   --max-array-size M your cluster's MaxArraySize (`scontrol show config | grep MaxArraySize`; default
#                      1001, Slurm's default: array indices 0..1000); --tasks may be at most M, since
#                      task i is array index i (with --pin too)
#   --pin              one single-index array job per task, held to its node with --nodelist
#                      (task i on node i mod nodes), instead of one array whose tasks Slurm places
#   --gpus N           --gres=gpu:N for each task (default 1; 0: no GRES, e.g. the host backend)
#   --sharing MODE     exclusive (default) | mps (--gres=mps:S, the run attaches to the platform's MPS
#                      daemon) | shard (--gres=shard:S, the run time-slices); Slurm does not let a job
#                      ask for gpu and mps (or shard) together, so --gpus is not used with them
#   --share S          the mps or shard count (default: mps 100, one GPU's worth in the usual
#                      configuration; shard 1)
#   --time T           the time limit of each task (sbatch --time); the run gets SIGTERM at it,
#                      keeps its partial results and exits 130
#   --sbatch-arg ARG   passed to both sbatch calls as is (repeatable: --account, --qos, ...)
#   --binary PATH      interference-bench on the nodes (default: $IB_BINARY, else the one on PATH there)
#   --dry-run          prints the sbatch commands instead of running them
#   RUN_ARGS           the run's arguments (written to FLEET_DIR/run-args, one a line; default
#                      --suite nightly --backend auto). A file FLEET_DIR/run-args.<index> made before
#                      submitting replaces them for that array index. --out (--out X or --out=X) is the
#                      wrapper's and refused; after a `--` in them (your program's argv with
#                      --victim-command) an --out is your program's and passes.
#
# Writes FLEET_DIR/expected-nodes.txt (one node a line) and FLEET_DIR/logs/, then prints
#   fleet_dir=DIR
#   array_job=ID        (one line per job with --pin)
#   merge_job=ID
# Exit: 0 submitted, 2 bad options, 3 Slurm refused a submission (the jobs already submitted are cancelled).
set -euo pipefail

die() { echo "ib-submit: $*" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy_dir="$(cd "$here/.." && pwd)"

fleet_dir="" partition="" nodes="" tasks="" pin=0 gpus=1 sharing=exclusive share="" time_limit=""
max_array=1001
binary="${IB_BINARY:-}" dry_run=0
extra=()
need() { [ $# -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --fleet-dir) need "$@"; fleet_dir="$2"; shift 2 ;;
    --partition) need "$@"; partition="$2"; shift 2 ;;
    --nodes) need "$@"; nodes="$2"; shift 2 ;;
    --tasks) need "$@"; tasks="$2"; shift 2 ;;
    --max-array-size) need "$@"; max_array="$2"; shift 2 ;;
    --pin) pin=1; shift ;;
    --gpus) need "$@"; gpus="$2"; shift 2 ;;
    --sharing) need "$@"; sharing="$2"; shift 2 ;;
    --share) need "$@"; share="$2"; shift 2 ;;
    --time) need "$@"; time_limit="$2"; shift 2 ;;
    --sbatch-arg) need "$@"; extra+=("$2"); shift 2 ;;
    --binary) need "$@"; binary="$2"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
run_args=("$@")

[[ "$gpus" =~ ^[0-9]+$ ]] || die "--gpus '$gpus' is not a count"
case "$sharing" in
  exclusive) [ -z "$share" ] || die "--share is for --sharing mps or shard" ;;
  mps) share="${share:-100}" ;;
  shard) share="${share:-1}" ;;
  *) die "--sharing '$sharing': expected exclusive, mps or shard" ;;
esac
[ -z "$share" ] || [[ "$share" =~ ^[1-9][0-9]*$ ]] || die "--share '$share' is not a positive count"
# A value as it may appear in die's one line: control characters as '?', at most 80 characters.
shown() { local s="${1//[[:cntrl:]]/?}"; [ ${#s} -le 80 ] || s="${s:0:77}..."; printf '%s' "$s"; }
# A count: digits only, no leading zero, at most 9 digits (so that bash's arithmetic cannot wrap).
is_count() { [[ "$1" =~ ^[1-9][0-9]{0,8}$ ]]; }
if ! { is_count "$max_array" && [ "$max_array" -le 4000001 ]; }; then
  die "--max-array-size '$(shown "$max_array")' is not a positive integer of at most 4000001 (Slurm's largest MaxArraySize)"
fi
own=1  # before a `--` in the run's arguments they are the run's; after it, the program's (--victim-command)
for a in "${run_args[@]}"; do
  case "$a" in *$'\n'*) die "a run argument holds a line break" ;; esac
  if [ "$own" = 1 ]; then
    case "$a" in
      --) own=0 ;;
      --out|--out=*) die "run argument '$(shown "$a")': --out is the wrapper's (each task writes FLEET_DIR/tasks/<node>.<index>/results)" ;;
    esac
  fi
done

# The nodes, in order, each once.
if [ -n "$nodes" ]; then
  node_list="$(tr ', ' '\n\n' <<<"$nodes")"
else
  command -v sinfo >/dev/null || die "sinfo is not on PATH (give --nodes)"
  node_list="$(sinfo -h -N ${partition:+-p "$partition"} -o %N)" || die "sinfo failed"
fi
mapfile -t node_arr < <(awk 'NF && !seen[$1]++ {print $1}' <<<"$node_list")
[ ${#node_arr[@]} -gt 0 ] || die "no nodes${partition:+ in partition $partition}"
for n in "${node_arr[@]}"; do [[ "$n" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "node name '$n' is not a host name"; done
tasks="${tasks:-${#node_arr[@]}}"
if ! { is_count "$tasks" && [ "$tasks" -le "$max_array" ]; }; then
  die "--tasks '$(shown "$tasks")' is not a positive integer of at most $max_array (MaxArraySize, --max-array-size: array indices 0..$((max_array - 1)))"
fi

if [ -z "$fleet_dir" ]; then
  fleet_dir="$PWD/ib-fleet/$(date -u +%Y%m%dT%H%M%SZ)"
fi
[ ! -e "$fleet_dir/expected-nodes.txt" ] && [ ! -e "$fleet_dir/tasks" ] \
  || die "$fleet_dir already holds a fleet run (choose a new --fleet-dir)"
if [ "$dry_run" = 0 ]; then
  # tasks/ from the start: a merge after tasks that all failed before writing anything still finds its
  # input, and says that every task is missing (exit 1) rather than that its input is (exit 2).
  mkdir -p "$fleet_dir/logs" "$fleet_dir/tasks"
  fleet_dir="$(cd "$fleet_dir" && pwd)"  # absolute: the jobs start in other folders on other nodes
  printf '%s\n' "${node_arr[@]}" >"$fleet_dir/expected-nodes.txt"
  [ ${#run_args[@]} -eq 0 ] || printf '%s\n' "${run_args[@]}" >"$fleet_dir/run-args"
fi

common=(--parsable --chdir="$fleet_dir" ${partition:+--partition="$partition"} "${extra[@]}")
gres=()
case "$sharing" in
  exclusive) [ "$gpus" = 0 ] || gres=(--gres="gpu:$gpus") ;;
  mps) gres=(--gres="mps:$share") ;;
  shard) gres=(--gres="shard:$share") ;;
esac
task_opts=("${common[@]}" "${gres[@]}" ${time_limit:+--time="$time_limit"} --output="$fleet_dir/logs/%N.%a.out")
export IB_SHARING="$sharing" IB_DEPLOY_DIR="$deploy_dir"
[ -z "$binary" ] || export IB_BINARY="$binary"

submitted=()
submit() {  # prints the job id
  if [ "$dry_run" = 1 ]; then
    printf 'sbatch' >&2; printf ' %q' "$@" >&2; printf '\n' >&2
    echo "DRYRUN$((${#submitted[@]}))"
    return 0
  fi
  local out
  if ! out="$(sbatch "$@")"; then
    [ ${#submitted[@]} -eq 0 ] || scancel "${submitted[@]}" || true
    echo "ib-submit: sbatch refused the job (${submitted[*]:+cancelled ${submitted[*]}})" >&2
    exit 3
  fi
  out="${out%%;*}"  # --parsable: "id" or "id;cluster"
  [[ "$out" =~ ^[0-9]+$ ]] || { echo "ib-submit: sbatch said '$out', not a job id" >&2; exit 3; }
  echo "$out"
}

array_jobs=()
if [ "$pin" = 1 ]; then
  for ((i = 0; i < tasks; i++)); do
    n="${node_arr[$((i % ${#node_arr[@]}))]}"
    id="$(submit "${task_opts[@]}" --array="$i" --nodelist="$n" "$here/ib-nightly.sbatch" "$fleet_dir")"
    submitted+=("$id"); array_jobs+=("$id")
  done
else
  id="$(submit "${task_opts[@]}" --array="0-$((tasks - 1))" "$here/ib-nightly.sbatch" "$fleet_dir")"
  submitted+=("$id"); array_jobs+=("$id")
fi
dependency="afterany$(printf ':%s' "${array_jobs[@]}")"
merge_id="$(submit "${common[@]}" --dependency="$dependency" --output="$fleet_dir/logs/merge.out" \
  "$here/ib-merge.sbatch" "$fleet_dir" "$tasks")"

echo "fleet_dir=$fleet_dir"
for id in "${array_jobs[@]}"; do echo "array_job=$id"; done
echo "merge_job=$merge_id"
