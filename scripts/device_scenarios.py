#!/usr/bin/env python3
"""The scenarios scripts/device-check.sh writes at run time (those it ships are in scenarios/device/ and
scenarios/cuda/). Kept here, not in the shell script, so that tests/e2e/test_cli.py can hold them to the
sample-length rule every shipped scenario meets: under time-slicing a sample of about one time slice
measures the slice, not the slowdown, so a GEMM sample is at least 16 products of 8192^3 (~25 ms on an
H200) and the PyTorch tenant's sample at least 32 of its ~1 ms steps.

  device_scenarios.py torch-tenant --root ROOT --ld-library-path LD --out FILE
"""
import argparse
import json
import sys

# Steps of scripts/torch_tenant.py per heartbeat (one sample): ~1 ms each on an H200.
TORCH_STEPS_PER_SAMPLE = 32
# The gemm aggressor's products per sample: the shipped scenarios' rule (16 x 8192^3).
GEMM_PARAMS = {"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192, "reps": 16}


def torch_tenant(root, ld_library_path):
    """A PyTorch training loop (a command tenant) beside a gemm aggressor, run time-sliced and under MPS."""
    argv = ["python3", root + "/scripts/torch_tenant.py", "--steps-per-sample", str(TORCH_STEPS_PER_SAMPLE)]
    return {"name": "torch-tenant", "mode": "timeslice", "warmup_s": 3, "duration_s": 6,
            "tenants": [{"name": "train", "role": "victim",
                         "command": {"argv": argv, "env": {"LD_LIBRARY_PATH": ld_library_path},
                                     "ready_timeout_s": 90, "work_unit": "sample"}},
                        {"name": "gemm", "role": "aggressor", "workload": "gemm", "params": GEMM_PARAMS}]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["torch-tenant"])
    ap.add_argument("--root", required=True, help="the checkout the device check runs from")
    ap.add_argument("--ld-library-path", default="", help="PyTorch's own library path, passed unchanged")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.out, "w") as f:
        json.dump(torch_tenant(a.root, a.ld_library_path), f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
