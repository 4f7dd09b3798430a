#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages interference-bench builds and runs with; --tests adds what its
# tests use. Debian 12 and 13, Ubuntu 22.04 and 24.04 (others: tried, with a warning).
# The CUDA toolkit (nvcc >= 12.0, cuBLAS; NCCL for collectives) is not installed here: the build finds
# nvcc through $CUDACXX, PATH, $CUDAToolkit_ROOT or /usr/local/cuda (cmake/cuda.cmake).
#
# Decisions are made from what dpkg-query (installed) and apt-cache (candidates) say, never from the
# distribution's name: a too old CMake/fmt/CLI11/nlohmann-json is one line with the fix and exit 1; an
# optional package apt cannot provide is one "skipped" line and the rest goes on.
# For tests/e2e/test_install_deps.py: IB_OS_RELEASE (default /etc/os-release), IB_SLURM_CONF_DIRS
# (default "/etc/slurm /etc/slurm-llnl"), IB_CONTAINER_FILES (default "/.dockerenv /run/.containerenv").
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/install-deps.sh [--tests] [--help]

Installs with apt-get (via sudo when not root) what building and running interference-bench needs:
  build-essential cmake ninja-build pkg-config git python3 libcli11-dev nlohmann-json3-dev libfmt-dev
  libpugixml-dev libsqlite3-dev libpcre2-dev libjs-chart.js, and libsqlitecpp-dev and libgloo-dev where
  the distribution has them (without them the build leaves out --history, and the host-collective
  workload is waived).
The build needs CMake >= 3.24, fmt >= 8, CLI11 >= 2.1, nlohmann-json >= 3.10; an older one is an
error that names the fix (exit 1), before anything is installed. A cmake >= 3.24 already on PATH
(e.g. pip install 'cmake>=3.24') is used instead of the distribution's.

  --tests   also the test tools, each optional (a visible "skipped" line when apt cannot provide
            it; the tests that need it skip visibly): GoogleTest, Google Benchmark, python3-pytest,
            python3-jsonschema, python3-junitparser, python3-yaml, python3-pil, Node.js, prometheus, clang and its
            fuzzer runtime, chromium (not Ubuntu's snap stub), slurm-wlm and munge (not on a host
            that already has Slurm), sysbench, pv and mbw (programs measured as your own workload).
  --help    this text.

Packages already installed are left alone; apt-get update runs once, only when something is to be
installed. The last line says what was installed and what was skipped.
EOF
}

tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    -h|--help) usage; exit 0 ;;
    *) printf 'install-deps: unknown option %s\n\n' "$arg" >&2; usage >&2; exit 2 ;;
  esac
done

say() { printf 'install-deps: %s\n' "$*"; }
err() { printf 'install-deps: %s\n' "$*" >&2; }

for tool in apt-get apt-cache dpkg-query; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    err "$tool not found: this script is for Debian and Ubuntu; elsewhere install the packages it names (--help) with your package manager"
    exit 1
  fi
done

# --- The system ---------------------------------------------------------------------------------
os_file=${IB_OS_RELEASE:-/etc/os-release}
[ -n "${IB_OS_RELEASE:-}" ] || [ -r "$os_file" ] || os_file=/usr/lib/os-release
os_id="" os_version="" os_like="" os_pretty=""
if [ -r "$os_file" ]; then
  while IFS='=' read -r key value; do
    value=${value#\"}; value=${value%\"}; value=${value#\'}; value=${value%\'}
    case "$key" in
      ID) os_id=$value ;;
      VERSION_ID) os_version=$value ;;
      ID_LIKE) os_like=$value ;;
      PRETTY_NAME) os_pretty=$value ;;
    esac
  done < "$os_file"
fi
os_name=${os_pretty:-${os_id:-this system}}
case "$os_id:$os_version" in
  debian:12|debian:13|ubuntu:22.04|ubuntu:24.04) ;;
  *) err "warning: $os_name is not one this script knows (Debian 12 or 13, Ubuntu 22.04 or 24.04); trying anyway" ;;
esac
ubuntu_like=0
case " $os_id $os_like " in *" ubuntu "*) ubuntu_like=1 ;; esac

in_container() {
  local f
  for f in ${IB_CONTAINER_FILES-/.dockerenv /run/.containerenv}; do
    [ -e "$f" ] && return 0
  done
  command -v systemd-detect-virt >/dev/null 2>&1 && systemd-detect-virt --container --quiet 2>/dev/null
}

slurm_here=""  # why this host counts as having Slurm already (empty: it does not)
for d in ${IB_SLURM_CONF_DIRS-/etc/slurm /etc/slurm-llnl}; do
  if [ -e "$d/slurm.conf" ]; then slurm_here="$d/slurm.conf exists"; break; fi
done
if [ -z "$slurm_here" ] && command -v scontrol >/dev/null 2>&1; then
  slurm_here="scontrol is on PATH ($(command -v scontrol))"
fi

# --- What is wanted -----------------------------------------------------------------------------
run_set=(build-essential cmake ninja-build pkg-config git python3 libcli11-dev nlohmann-json3-dev libfmt-dev
         libpugixml-dev libsqlite3-dev libpcre2-dev libjs-chart.js)
# --history DB (harness/history/history.cpp) and the host collectives' gloo (kernels/host/gloo_collective.cpp); the
# build leaves each out without it
optional=(libsqlitecpp-dev libgloo-dev)
# sysbench, pv, mbw: programs no one here wrote, run as command tenants by tests/e2e/test_own_programs.py
test_set=(libgtest-dev libgmock-dev googletest libbenchmark-dev python3-pytest python3-jsonschema python3-pil
          python3-junitparser python3-yaml nodejs prometheus clang slurm-wlm munge sysbench pv mbw)
# Also with --tests: chromium (a real one, not a snap stub) and clang's fuzzer runtime, resolved below.
[ "$tests" -eq 0 ] || optional+=("${test_set[@]}")

# The build's minimum versions of the version-sensitive requirements, and what to do about an old one.
declare -A min_version=([cmake]=3.24 [libfmt-dev]=8 [libcli11-dev]=2.1 [nlohmann-json3-dev]=3.10)
declare -A label=([cmake]=CMake [libfmt-dev]=fmt [libcli11-dev]=CLI11 [nlohmann-json3-dev]=nlohmann-json)
declare -A fix=(
  [cmake]="install a newer one: pip install 'cmake>=3.24' (or Kitware's APT repository), then run this again"
  [libfmt-dev]="use Debian 12 / Ubuntu 22.04 or newer, or install fmt >= 8 from source, then run this again"
  [libcli11-dev]="use Debian 12 / Ubuntu 22.04 or newer, or install CLI11 >= 2.1 from source, then run this again"
  [nlohmann-json3-dev]="use Debian 12 / Ubuntu 22.04 or newer, or install nlohmann-json >= 3.10 from source, then run this again")

declare -A installed=() candidate=()
# Records the installed version of each named package that is installed (one dpkg-query call).
query_installed() {
  local name status version
  while IFS=$'\t' read -r name status version; do
    [[ "$status" == *" ok installed" ]] && installed[$name]=$version
  done < <(dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' "$@" 2>/dev/null || true)
}
# Records apt's candidate version of each named package it has one for (one apt-cache call).
query_candidates() {
  local line name="" p
  [ "$#" -gt 0 ] || return 0
  for p in "$@"; do unset "candidate[$p]"; done
  while IFS= read -r line; do
    if [[ "$line" =~ ^([^[:space:]:]+)(:[a-z0-9]+)?:$ ]]; then
      name=${BASH_REMATCH[1]}
    elif [[ -n "$name" && "$line" =~ ^[[:space:]]+Candidate:[[:space:]]+([^[:space:]]+) ]]; then
      [ "${BASH_REMATCH[1]}" = "(none)" ] || candidate[$name]=${BASH_REMATCH[1]}
    fi
  done < <(apt-cache policy "$@" 2>/dev/null || true)
}
# Whether apt has package lists from any repository (a fresh container has none before apt-get update).
lists_present() {
  local sources
  sources=$(apt-cache policy 2>/dev/null || true)
  grep -Eq '^[[:space:]]+-?[0-9]+ [a-z][a-z0-9+.-]*:' <<<"$sources"
}
# Sets $up to the upstream part of a Debian version: "1:14.0-55.7~deb12u1" -> "14.0",
# "3.22.1-1ubuntu1.22.04.2" -> "3.22.1" (no subshell: this runs in loops).
up=""
upstream() {
  local v=$1
  up=""
  [[ "$v" =~ ^[0-9]+:(.*)$ ]] && v=${BASH_REMATCH[1]}
  [[ "$v" =~ ^([0-9]+(\.[0-9]+)*) ]] && up=${BASH_REMATCH[1]}
  return 0
}
version_ge() {  # A >= B, both dotted numbers
  local -a x y
  local i
  IFS=. read -ra x <<<"$1"
  IFS=. read -ra y <<<"$2"
  for ((i = 0; i < ${#x[@]} || i < ${#y[@]}; i++)); do
    if ((10#${x[i]:-0} > 10#${y[i]:-0})); then return 0; fi
    if ((10#${x[i]:-0} < 10#${y[i]:-0})); then return 1; fi
  done
  return 0
}
contains() {  # contains WORD LIST...
  local word=$1 item
  shift
  for item in "$@"; do [ "$word" = "$item" ] && return 0; done
  return 1
}

skipped=()  # names, for the summary
skip() {  # skip PACKAGE(S) REASON
  say "skipped $1: $2"
  skipped+=("$1")
}
# Why a missing optional package matters, for its "skipped" line.
consequence() {
  case "$1" in
    libsqlitecpp-dev) echo "the build leaves out --history (SQLiteCpp); everything else works" ;;
    libgloo-dev) echo "the host-collective workload is waived (gloo); everything else works" ;;
    *) echo "the tests that need it skip visibly" ;;
  esac
}

# A cmake on PATH that is new enough (the distribution's, pip's, Kitware's) is the one the build uses.
path_cmake=""
if command -v cmake >/dev/null 2>&1; then
  path_cmake=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p' || true)
fi
wanted=()
for p in "${run_set[@]}"; do
  if [ "$p" = cmake ] && [ -n "$path_cmake" ] && version_ge "$path_cmake" "${min_version[cmake]}"; then
    continue
  fi
  wanted+=("$p")
done

query_installed "${wanted[@]}" "${optional[@]}" chromium
# Required packages to install: missing, or installed but older than the build needs (an upgrade may
# help once a newer repository is configured; apt-cache decides, after apt-get update).
req_missing=()
for p in "${wanted[@]}"; do
  if [ "$p" = cmake ]; then
    req_missing+=(cmake)   # not on PATH, or too old there
  elif [ -z "${installed[$p]+x}" ]; then
    req_missing+=("$p")
  elif [ -n "${min_version[$p]+x}" ]; then
    upstream "${installed[$p]}"
    version_ge "$up" "${min_version[$p]}" || req_missing+=("$p")
  fi
done
opt_missing=()
for p in "${optional[@]}"; do
  [ -n "${installed[$p]+x}" ] || opt_missing+=("$p")
done

browser_pending=0 rt_pending=0
if [ "$tests" -eq 1 ]; then
  if [ -n "$slurm_here" ] && { contains slurm-wlm "${opt_missing[@]}" || contains munge "${opt_missing[@]}"; }; then
    keep=()
    for p in "${opt_missing[@]}"; do
      [ "$p" = slurm-wlm ] || [ "$p" = munge ] || keep+=("$p")
    done
    opt_missing=("${keep[@]}")
    skip "slurm-wlm munge" "this host already has Slurm ($slurm_here); its configuration and daemons are left alone"
  fi
  [ -n "${installed[chromium]+x}" ] || browser_pending=1
  # clang's fuzzer runtime: libclang-rt-N-dev (N: the major of the clang package's version), or, where
  # there is none (Ubuntu 22.04's clang 14), libclang-common-N-dev, which holds libclang_rt.fuzzer there.
  rt_pending=1
  if [ -n "${installed[clang]+x}" ]; then
    upstream "${installed[clang]}"; n=${up%%.*}
    query_installed "libclang-rt-$n-dev" "libclang-common-$n-dev"
    if [ -n "${installed[libclang-rt-$n-dev]+x}" ]; then
      rt_pending=0
    elif [ -n "${installed[libclang-common-$n-dev]+x}" ] \
         && grep -q 'libclang_rt\.fuzzer' <<<"$(dpkg-query -L "libclang-common-$n-dev" 2>/dev/null || true)"; then
      rt_pending=0
    fi
  fi
fi

# Drops the optional packages apt cannot provide (one line each) and resolves the browser and clang's
# fuzzer runtime against apt's current package lists.
resolve_optional() {
  local p keep=() n="" stub=0 show
  query_candidates "${opt_missing[@]}" clang chromium chromium-browser
  for p in "${opt_missing[@]}"; do
    if [ -n "${candidate[$p]+x}" ]; then keep+=("$p"); else skip "$p" "apt has no $p on $os_name; $(consequence "$p")"; fi
  done
  opt_missing=("${keep[@]}")
  if [ "$browser_pending" -eq 1 ]; then
    browser_pending=0
    for p in chromium chromium-browser; do
      [ -n "${candidate[$p]+x}" ] || continue
      show=$(apt-cache show "$p" 2>/dev/null || true)
      if grep -Eiq '^(Pre-Depends|Depends):.*\bsnapd\b|^Version:.*snap|^Description[^:]*:.*\bsnap\b' <<<"$show"; then
        stub=1
      else
        opt_missing+=("$p"); stub=-1; break
      fi
    done
    if [ "$stub" -eq 1 ]; then
      if in_container; then
        skip chromium "$os_name's chromium packages only install the snap, and snaps do not run in a container; the tests that need a headless browser skip visibly"
      else
        skip chromium "$os_name's chromium packages only install the snap, which this script does not do (sudo snap install chromium, if you want the HTML report's browser test); the tests that need it skip visibly"
      fi
    elif [ "$stub" -eq 0 ]; then
      skip chromium "apt has no chromium on $os_name; the tests that need a headless browser skip visibly"
    fi
  fi
  if [ "$rt_pending" -eq 1 ]; then
    rt_pending=0
    up=""
    if [ -n "${installed[clang]+x}" ]; then upstream "${installed[clang]}";
    elif contains clang "${opt_missing[@]}"; then upstream "${candidate[clang]}"; fi
    n=${up%%.*}
    if [ -z "$n" ]; then
      skip "clang's fuzzer runtime" "apt has no clang on $os_name; the fuzz targets are left out"
    else
      query_candidates "libclang-rt-$n-dev" "libclang-common-$n-dev"
      query_installed "libclang-common-$n-dev"
      if [ -n "${candidate[libclang-rt-$n-dev]+x}" ]; then
        opt_missing+=("libclang-rt-$n-dev")
      elif [ -n "${candidate[libclang-common-$n-dev]+x}" ] && [ -z "${installed[libclang-common-$n-dev]+x}" ]; then
        opt_missing+=("libclang-common-$n-dev")
      else
        skip "libclang-rt-$n-dev" "apt has no fuzzer runtime for clang $n on $os_name (neither libclang-rt-$n-dev nor libclang-common-$n-dev with libclang_rt.fuzzer); the fuzz targets are left out"
      fi
    fi
  fi
}

summary() {  # summary INSTALLED...
  local text
  if [ "$#" -eq 0 ]; then text="nothing to install"; else text="installed $# packages ($*)"; fi
  if [ "${#skipped[@]}" -gt 0 ]; then
    local IFS=','
    text+="; skipped: ${skipped[*]}"
    text=${text//,/, }
  else
    text+="; nothing skipped"
  fi
  [ "$tests" -eq 1 ] || text+=" (the run set; --tests adds the test tools)"
  say "$text"
}

pending() { [ $((${#req_missing[@]} + ${#opt_missing[@]} + browser_pending + rt_pending)) -gt 0 ]; }

if pending && lists_present; then
  resolve_optional   # with the lists there are: no apt-get update for optional packages apt does not have
fi
if ! pending; then
  summary
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    err "not root and no sudo: run this as root, or install sudo"
    exit 1
  fi
  SUDO=(sudo)
fi
apt_get() {
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"
}

apt_get update -qq
resolve_optional

# Required packages: there, and new enough (apt's candidate; for CMake also the one on PATH).
query_candidates "${req_missing[@]}"
unavailable=() errors=0
for p in "${req_missing[@]}"; do
  if [ -z "${candidate[$p]+x}" ]; then
    unavailable+=("$p")
    continue
  fi
  [ -n "${min_version[$p]+x}" ] || continue
  upstream "${candidate[$p]}"; have=$up
  if [ "$p" = cmake ] && [ -n "$path_cmake" ] && version_ge "$path_cmake" "$have"; then have=$path_cmake; fi
  if ! version_ge "$have" "${min_version[$p]}"; then
    err "${label[$p]} $have is older than the ${min_version[$p]} the build needs; ${fix[$p]}"
    errors=1
  fi
done
if [ "${#unavailable[@]}" -gt 0 ]; then
  hint="check /etc/apt/sources.list"
  [ "$ubuntu_like" -eq 0 ] || hint="enable Ubuntu's universe component (sudo add-apt-repository universe)"
  err "apt has no ${unavailable[*]} on $os_name, which the build needs; $hint, then run this again"
  errors=1
fi
[ "$errors" -eq 0 ] || exit 1

all=("${req_missing[@]}" "${opt_missing[@]}")
if [ "${#all[@]}" -eq 0 ]; then
  summary
  exit 0
fi
say "installing ${all[*]}"
done_list=()
if apt_get install -y -qq --no-install-recommends "${all[@]}" >/dev/null; then
  done_list=("${all[@]}")
elif [ "${#opt_missing[@]}" -eq 0 ]; then
  err "apt-get could not install ${req_missing[*]} (its error is above), which the build needs"
  exit 1
else
  # One optional package that apt cannot install must not stop the others.
  say "installing them together failed; now the required ones together, then the optional ones one by one"
  if [ "${#req_missing[@]}" -gt 0 ]; then
    if ! apt_get install -y -qq --no-install-recommends "${req_missing[@]}" >/dev/null; then
      err "apt-get could not install ${req_missing[*]} (its error is above), which the build needs"
      exit 1
    fi
    done_list=("${req_missing[@]}")
  fi
  for p in "${opt_missing[@]}"; do
    if apt_get install -y -qq --no-install-recommends "$p" >/dev/null; then
      done_list+=("$p")
    else
      skip "$p" "apt-get could not install it (its error is above); $(consequence "$p")"
    fi
  done
fi
summary "${done_list[@]}"
