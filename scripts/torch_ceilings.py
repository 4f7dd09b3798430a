#!/usr/bin/env python3
"""Ceilings measured with PyTorch on the same GPU, for the ratios in scripts/device-check.sh.

bf16 matmul 8192^3 (2*8192^3 FLOP per product) and a device-to-device copy of a 1 GiB tensor (bytes
counted read + written, as the `copy` workload counts them), like for like with the bench's cases:
inputs uniform in [-1, 1) as the gemm workload fills them, a warm-up of at least 0.5 s (and 5 runs) as
interference-microbench gives each case, then at least 100 timed products (copies), each timed with
CUDA events; the median is reported. device-check.sh runs it right before and right after the bench's
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


WARMUP_S, WARMUP_MIN = 0.5, 5


def timed(fn, repeats, torch):
    """Warm-up of at least WARMUP_S seconds and WARMUP_MIN runs, then `repeats` runs, each timed."""
    start = time.monotonic()
    runs = 0
    while runs < WARMUP_MIN or time.monotonic() - start < WARMUP_S:
        fn()
        runs += 1
        if runs % 8 == 0:
            torch.cuda.synchronize()  # the clock above must see GPU time, not queued launches
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times), times


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
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--copy-mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--label", default="", help="before / after: where in the device check it ran")
    args = ap.parse_args()
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
    mm_s, mm_all = timed(lambda: torch.matmul(a, b, out=c), args.repeats, torch)
    flop = 2.0 * n * n * n
    del a, b, c

    elems = args.copy_mib * (1 << 20) // 4
    src = torch.rand(elems, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    cp_s, cp_all = timed(lambda: dst.copy_(src), args.repeats, torch)
    nbytes = 2.0 * elems * 4
    assert torch.equal(dst, src), "copy check failed"

    result = {
        "device": torch.cuda.get_device_name(0),
        **versions(torch),
        "ld_library_path": ld_path,
        "matmul_bf16": {"n": n, "median_s": mm_s, "tflops": flop / mm_s / 1e12, "times_s": mm_all},
        "copy_d2d": {"mib": args.copy_mib, "median_s": cp_s, "gbps_read_plus_written": nbytes / cp_s / 1e9,
                     "gbps_one_direction": nbytes / 2 / cp_s / 1e9, "times_s": cp_all},
        "label": args.label,
        "method": "inputs uniform [-1, 1); warm-up >= %.1f s and >= %d runs; CUDA events, median of %d repeats"
                  % (WARMUP_S, WARMUP_MIN, args.repeats),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"torch bf16 matmul {n}^3: {result['matmul_bf16']['tflops']:.1f} TFLOP/s; "
          f"d2d copy {args.copy_mib} MiB: {result['copy_d2d']['gbps_read_plus_written']:.0f} GB/s read+written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
