#!/usr/bin/env bash
# Installs the Debian packages interference-bench builds and tests with.
# The CUDA toolkit (nvcc, cuBLAS, NCCL) is expected at /usr/local/cuda and is not installed here.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  libpugixml-dev prometheus python3 python3-jsonschema python3-pytest python3-junitparser
  libsqlitecpp-dev libsqlite3-dev  # --history DB (reports/history.cpp)
  libpcre2-dev                     # command tenants: the stdout metric's named-group regex (kernels/command)
  libjs-chart.js                   # inlined into the HTML report at build time (cmake/embed_chartjs.cmake)
  chromium                         # tests only: opens the HTML report headless (skipped, visibly, without it)
  python3-yaml nodejs              # tests only: deploy/k8s/lint.py, and the manifests' schema check (tests/k8s, npm)
  slurm-wlm munge                  # tests only: a real single-node Slurm for deploy/slurm (skipped, visibly, without it)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
