#!/usr/bin/env python3
"""Summarises one device-check run: ratios to the PyTorch ceilings, CVs, latency and h2d figures.

Reads from OUT: microbench.json (Google Benchmark JSON of interference-microbench),
torch_ceilings.json, and cv-*.json (interference-bench results; the sample durations are found
by walking the JSON for arrays named duration_s / durations_s or lists of objects that carry
duration_s). Writes OUT/summary.json and prints a table (the last lines of the run's output).
"""
import json
import math
import os
import statistics
import sys

TARGETS = {"gemm_bf16_vs_torch": 0.97, "copy_sm_vs_torch": 0.95, "cv_max": 0.005}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def bench(micro, prefix):
    for b in (micro or {}).get("benchmarks", []):
        if b.get("name", "").startswith(prefix) and not b.get("error_occurred"):
            return b
    return None


def find_durations(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("duration_s", "durations_s") and isinstance(v, list) and all(isinstance(x, (int, float)) for x in v):
                out.append(v)
            elif k == "samples" and isinstance(v, list) and v and isinstance(v[0], dict) and "duration_s" in v[0]:
                out.append([s["duration_s"] for s in v])
            else:
                find_durations(v, out)
    elif isinstance(node, list):
        for v in node:
            find_durations(v, out)


def cv(xs):
    if len(xs) < 2:
        return None
    m = statistics.mean(xs)
    return statistics.stdev(xs) / m if m > 0 else None


def main(out_dir):
    micro = load(os.path.join(out_dir, "microbench.json"))
    torch = load(os.path.join(out_dir, "torch_ceilings.json"))
    s = {"targets": TARGETS, "figures": {}, "commands": {
        "microbench": "build/kernels/cuda/interference-microbench --benchmark_out=$OUT/microbench.json --benchmark_out_format=json",
        "torch": "python3 scripts/torch_ceilings.py --out $OUT/torch_ceilings.json",
        "cv": "build/interference-bench --mode exclusive --backend cuda --scenario scenarios/device/<name>.json --duration 20 --out $OUT/cv-<name>.json",
    }}
    f = s["figures"]
    g = bench(micro, "gemm/dtype:bf16/k:8192/m:8192/n:8192")
    c = bench(micro, "copy/engine:sm/")
    if g:
        f["gemm_bf16_8192_tflops"] = g.get("TFLOP/s")
    if c:
        f["copy_sm_gbps_read_plus_written"] = c.get("GB/s")
        f["copy_sm_gbps_one_direction"] = c.get("GB/s_1dir")
    ce = bench(micro, "copy/engine:ce/")
    if ce:
        f["copy_ce_gbps_read_plus_written"] = ce.get("GB/s")
    for dt in ("fp16", "tf32", "fp32", "fp8"):
        b = bench(micro, f"gemm/dtype:{dt}/k:8192")
        if b:
            f[f"gemm_{dt}_8192_tflops"] = b.get("TFLOP/s")
    for d in ("h2d", "d2h"):
        for m in ("pinned", "pageable"):
            b = bench(micro, f"h2d/direction:{d}/memory:{m}/")
            if b:
                f[f"{d}_{m}_gbps"] = b.get("GB/s")
    lat = bench(micro, "latency/load:0.5/mode:open")
    if lat:
        f["latency_open_half_load"] = {"p50_ms": lat.get("p50_ms"), "p99_ms": lat.get("p99_ms"), "req_per_s": lat.get("req/s")}
    if torch:
        f["torch_matmul_bf16_tflops"] = torch["matmul_bf16"]["tflops"]
        f["torch_copy_gbps_read_plus_written"] = torch["copy_d2d"]["gbps_read_plus_written"]
        if g:
            f["gemm_bf16_vs_torch"] = g["TFLOP/s"] / torch["matmul_bf16"]["tflops"]
        if c:
            f["copy_sm_vs_torch"] = c["GB/s"] / torch["copy_d2d"]["gbps_read_plus_written"]
    for name in ("gemm-bf16-exclusive", "copy-sm-exclusive", "latency-half-load-exclusive"):
        r = load(os.path.join(out_dir, f"cv-{name}.json"))
        if r is None:
            continue
        durs = []
        find_durations(r, durs)
        if durs:
            longest = max(durs, key=len)
            f[f"cv_{name}"] = {"samples": len(longest), "cv_sample_time": cv(longest)}
    with open(os.path.join(out_dir, "summary.json"), "w") as fh:
        json.dump(s, fh, indent=2)

    def show(key, target=None, fmt="{:.3f}"):
        v = f.get(key)
        if isinstance(v, dict):
            v = v.get("cv_sample_time")
        txt = "n/a" if v is None else fmt.format(v)
        verdict = ""
        if target is not None and v is not None:
            ok = v >= target if key.endswith("vs_torch") else v <= target
            verdict = "PASS" if ok else "FAIL"
        print(f"{key:40s} {txt:>12s} {verdict}")

    print("---- device-check summary ----")
    for k in ("gemm_bf16_8192_tflops", "torch_matmul_bf16_tflops", "copy_sm_gbps_read_plus_written",
              "torch_copy_gbps_read_plus_written", "copy_ce_gbps_read_plus_written", "h2d_pinned_gbps",
              "h2d_pageable_gbps", "d2h_pinned_gbps", "d2h_pageable_gbps"):
        show(k, fmt="{:.1f}")
    show("gemm_bf16_vs_torch", TARGETS["gemm_bf16_vs_torch"])
    show("copy_sm_vs_torch", TARGETS["copy_sm_vs_torch"])
    show("cv_gemm-bf16-exclusive", TARGETS["cv_max"], "{:.4f}")
    show("cv_copy-sm-exclusive", TARGETS["cv_max"], "{:.4f}")
    if "latency_open_half_load" in f:
        l = f["latency_open_half_load"]
        print(f"latency open 50% load: P50 {l['p50_ms']:.3f} ms, P99 {l['p99_ms']:.3f} ms, {l['req_per_s']:.0f} req/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")))
