#!/usr/bin/env python3
"""Ceilings measured with PyTorch on the same GPU, for the ratios in scripts/device-check.sh.

bf16 matmul 8192^3 (2*8192^3 FLOP per product) and a device-to-device copy of a 1 GiB tensor (bytes
counted read + written, as the `copy` workload counts them), like for like with the bench's headline
cases (interference-microbench --ib-headline-plan; --print-plan prints this script's, and
tests/e2e/test_device_summary.py checks that the two agree): inputs uniform in [-1, 1) as the gemm
workload fills them, a warm-up of at least 0.5 s and 3 event pairs, then as many event pairs as the
bench times (100 for the matmul, 50 for the copy), each holding as many ops back to back as one bench
sample (1 product; 8 copies), recorded on an idle stream as the bench records them; the figure is total
work over total event time, the bench's statistic (the median pair is kept beside it). device-check.sh
runs it right before and right after the bench's
headline cases (--label before / after), so that a GPU warming up or throttling shows as the two
figures' difference instead of a bias of the ratio.
Beside the figures: PyTorch's version, the CUDA it was built for, and the cuBLASLt it actually loaded
(its file and cublasLtGetVersion(), read through ctypes from the library in this process), so that
the ratios name both sides' cuBLAS. device-check.sh runs this with the environment it was started
with: PyTorch loads its own libraries, as shipped.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time


# The bench's warm-up (kWarmup, kWarmupSamples in kernels/cuda/microbench.cpp).
WARMUP_S, WARMUP_MIN = 0.5, 3
STATISTIC = "total work / total event time"


def plan(n, copy_mib):
    """What each ceiling times, in the form of interference-microbench --ib-headline-plan."""
    common = {"warmup_s": WARMUP_S, "warmup_min_runs": WARMUP_MIN, "statistic": STATISTIC}
    return {
        "matmul_bf16": {"dtype": "bf16", "m": n, "n": n, "k": n, "ops_per_event_pair": 1, "event_pairs": 100, **common},
        "copy_d2d": {"mib": copy_mib, "ops_per_event_pair": 8, "event_pairs": 50, **common},
    }


def timed(fn, case, torch):
    """Warm-up of at least WARMUP_S seconds and WARMUP_MIN pairs' worth of ops, then case["event_pairs"]
    pairs of events each around case["ops_per_event_pair"] ops. Returns (total time, every pair's time)."""
    ops = case["ops_per_event_pair"]
    start = time.monotonic()
    runs = 0
    while runs < WARMUP_MIN or time.monotonic() - start < WARMUP_S:
        for _ in range(ops):
            fn()
        torch.cuda.synchronize()  # the clock above must see GPU time, not queued launches
        runs += 1
    times = []
    for _ in range(case["event_pairs"]):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(ops):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return sum(times), times


def loaded_library(fragment):
    """The file of the first library in this process whose path contains `fragment`, or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if fragment in path and path.startswith("/"):
                    return path
    except OSError:
        pass
    return None


def versions(torch):
    """PyTorch's own versions, read after it ran a matmul (so its cuBLASLt is loaded)."""
    out = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "cublasLt_path": loaded_library("libcublasLt.so"),
           "cublasLt_version": None, "nccl": None, "cudnn": None}
    if out["cublasLt_path"]:
        try:
            lib = ctypes.CDLL(out["cublasLt_path"])
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            out["cublasLt_version"] = int(lib.cublasLtGetVersion())
        except (OSError, AttributeError) as e:
            out["cublasLt_version"] = f"unknown: {e}"
    try:
        v = torch.cuda.nccl.version()
        out["nccl"] = ".".join(map(str, v)) if isinstance(v, tuple) else v
    except Exception as e:  # noqa: BLE001 - a build without NCCL
        out["nccl"] = f"unknown: {e}"
    try:
        out["cudnn"] = torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="where to write the figures (JSON); required unless --print-plan")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--copy-mib", type=int, default=1024)
    ap.add_argument("--label", default="", help="before / after: where in the device check it ran")
    ap.add_argument("--print-plan", action="store_true", help="print what each ceiling times (JSON) and exit")
    args = ap.parse_args()
    cases = plan(args.n, args.copy_mib)
    if args.print_plan:
        print(json.dumps(cases, indent=2))
        return 0
    if not args.out:
        ap.error("--out is required")
    # The environment PyTorch runs in: device-check.sh passes its own, unchanged (no project paths).
    ld_path = os.environ.get("LD_LIBRARY_PATH", "(unset)")
    print(f"torch_ceilings: LD_LIBRARY_PATH={ld_path}", file=sys.stderr)
    try:
        import torch
    except ImportError as e:
        print(f"torch_ceilings: PyTorch not available: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_ceilings: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 3
    dev = torch.device("cuda:0")
    torch.manual_seed(0)
    n = args.n
    # uniform [-1, 1), as the gemm workload's fill_input (data-dependent power draws differ with the values)
    a = torch.empty(n, n, device=dev, dtype=torch.bfloat16).uniform_(-1.0, 1.0)
    b = torch.empty(n, n, device=dev, dtype=torch.bfloat16).uniform_(-1.0, 1.0)
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    mm_case = cases["matmul_bf16"]
    mm_total, mm_all = timed(lambda: torch.matmul(a, b, out=c), mm_case, torch)
    flop = 2.0 * n * n * n * mm_case["ops_per_event_pair"] * mm_case["event_pairs"]
    del a, b, c

    elems = args.copy_mib * (1 << 20) // 4
    src = torch.rand(elems, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    cp_case = cases["copy_d2d"]
    cp_total, cp_all = timed(lambda: dst.copy_(src), cp_case, torch)
    nbytes = 2.0 * elems * 4 * cp_case["ops_per_event_pair"] * cp_case["event_pairs"]
    assert torch.equal(dst, src), "copy check failed"

    result = {
        "device": torch.cuda.get_device_name(0),
        **versions(torch),
        "ld_library_path": ld_path,
        "matmul_bf16": {"n": n, **mm_case, "total_s": mm_total, "median_pair_s": statistics.median(mm_all),
                        "tflops": flop / mm_total / 1e12, "times_s": mm_all},
        "copy_d2d": {**cp_case, "total_s": cp_total, "median_pair_s": statistics.median(cp_all),
                     "gbps_read_plus_written": nbytes / cp_total / 1e9,
                     "gbps_one_direction": nbytes / 2 / cp_total / 1e9, "times_s": cp_all},
        "label": args.label,
        "method": "inputs uniform [-1, 1); warm-up >= %.1f s and >= %d pairs; CUDA events around the bench's ops "
                  "per pair on an idle stream; %s" % (WARMUP_S, WARMUP_MIN, STATISTIC),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"torch bf16 matmul {n}^3: {result['matmul_bf16']['tflops']:.1f} TFLOP/s; "
          f"d2d copy {args.copy_mib} MiB: {result['copy_d2d']['gbps_read_plus_written']:.0f} GB/s read+written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
