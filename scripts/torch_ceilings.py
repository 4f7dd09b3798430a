#!/usr/bin/env python3
"""Ceilings measured with PyTorch on the same GPU, for the ratios in scripts/device-check.sh.

bf16 matmul 8192^3 on random data (2*8192^3 FLOP per product) and a device-to-device copy of a
1 GiB tensor (bytes counted read + written, as the `copy` workload counts them). Each figure is
timed with CUDA events after a warm-up; the median of the repeats is reported.
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


def timed(fn, warmup, repeats, torch):
    for _ in range(warmup):
        fn()
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
    ap.add_argument("--repeats", type=int, default=30)
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
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    mm_s, mm_all = timed(lambda: torch.matmul(a, b, out=c), 5, args.repeats, torch)
    flop = 2.0 * n * n * n
    del a, b, c

    elems = args.copy_mib * (1 << 20) // 4
    src = torch.rand(elems, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    cp_s, cp_all = timed(lambda: dst.copy_(src), 5, args.repeats, torch)
    nbytes = 2.0 * elems * 4
    assert torch.equal(dst, src), "copy check failed"

    result = {
        "device": torch.cuda.get_device_name(0),
        **versions(torch),
        "ld_library_path": ld_path,
        "matmul_bf16": {"n": n, "median_s": mm_s, "tflops": flop / mm_s / 1e12, "times_s": mm_all},
        "copy_d2d": {"mib": args.copy_mib, "median_s": cp_s, "gbps_read_plus_written": nbytes / cp_s / 1e9,
                     "gbps_one_direction": nbytes / 2 / cp_s / 1e9, "times_s": cp_all},
        "method": "CUDA events, 5 warm-ups, median of %d repeats" % args.repeats,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"torch bf16 matmul {n}^3: {result['matmul_bf16']['tflops']:.1f} TFLOP/s; "
          f"d2d copy {args.copy_mib} MiB: {result['copy_d2d']['gbps_read_plus_written']:.0f} GB/s read+written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
