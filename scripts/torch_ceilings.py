#!/usr/bin/env python3
"""Ceilings measured with PyTorch on the same GPU, for the ratios in scripts/device-check.sh.

bf16 matmul 8192^3 on random data (2*8192^3 FLOP per product) and a device-to-device copy of a
1 GiB tensor (bytes counted read + written, as the `copy` workload counts them). Each figure is
timed with CUDA events after a warm-up; the median of the repeats is reported.
"""
import argparse
import json
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--copy-mib", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
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
        "torch": torch.__version__,
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
