#!/usr/bin/env python3
"""Summarises one device-check run (scripts/device-check.sh) against the issues' targets.

Reads from the work folder WORK whatever the run produced (a missing part shows as n/a):
  STOPPED.txt, steps.log     why the check stopped early; the steps it skipped or that timed out
  runtime-info.json          interference-microbench --info: our CUDA/cuBLASLt versions, NCCL found where
  microbench-headline.json   Google Benchmark JSON of interference-microbench --ib-cases=headline (gemm
                             bf16 tn/nn, copy sm/ce), microbench-rest.json the other cases  (issue 3)
  torch-before.json, torch-after.json   scripts/torch_ceilings.py right before and right after the
                             headline cases, with PyTorch's own versions: the ratios are to their mean,
                             both are kept, and their difference is reported as drift     (issues 3, 19)
  cv-<name>/results.json     20 s exclusive phases: CV of sample time, latency         (issue 3)
  gpu-tests.json             GoogleTest JSON of ib_cuda_gpu_tests
  modes-<mode>/results.json  --suite quick --mode timeslice, mps (first call), streams, mig (second)  (issue 4)
  collective-<mode>/results.json   two allreduce ranks beside a gemm, timeslice, mps, mig  (issue 35)
  probe.out                  probe --json                                              (issue 5)
  sampler-<w>-hz<h>-<i>/results.json   telemetry at 10 Hz vs off                       (issue 5)
  vet/vet.json, sustain/sustain.json   vet against the baseline, the sustained-load test (issue 5)
Writes WORK/summary.json and WORK/summary.md (Markdown tables) and prints the tables.
The checks only compare figures the harness computed with the issues' targets; they define nothing.
Result files of both schemas are read: stats.sample_cv (2.0) or stats.cv (1.0), samples.counted (2.0)
or samples.in_window (1.0).
"""
import json
import os
import statistics
import sys

TARGETS = {"gemm_bf16_vs_torch": 0.97, "copy_sm_vs_torch": 0.95, "cv_max": 0.005,
           # issue 4: two time-sliced identical GEMMs each at 0.40-0.60 of their alone throughput;
           # two copies under MPS: the sum of their bandwidths within 10% of the alone bandwidth
           "timeslice_gemm_share": (0.40, 0.60), "mps_copy_sum": (0.90, 1.10),
           # issue 5: the telemetry sampler at 10 Hz perturbs gemm and copy by at most 0.5%
           "sampler_perturbation_max": 0.005}
CV_RUNS = ("gemm-bf16-exclusive", "copy-sm-exclusive", "latency-half-load-exclusive")


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


def bench_error(micro, prefix):
    for b in (micro or {}).get("benchmarks", []):
        if b.get("name", "").startswith(prefix) and b.get("error_occurred"):
            return b.get("error_message")
    return None


def label_of(b):
    """The microbenchmark case's label (its params, what it resolved, notes) as a dict, or {}."""
    try:
        return json.loads((b or {}).get("label") or "{}")
    except ValueError:
        return {}


def read_text(path):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def cv(xs):
    if len(xs) < 2:
        return None
    m = statistics.mean(xs)
    return statistics.stdev(xs) / m if m > 0 else None


def exclusive_phase(results):
    """The exclusive phase of the first tenant of the first run, or None."""
    for run in (results or {}).get("runs", []):
        for t in run.get("tenants", []):
            ph = (t.get("phases") or {}).get("exclusive")
            if ph:
                return run, t, ph
    return None


def cv_figures(results):
    found = exclusive_phase(results)
    if not found:
        return None
    run, tenant, ph = found
    stats = ph.get("stats") or {}
    sample_cv = stats.get("sample_cv", stats.get("cv"))  # schema 2.0 renamed cv to sample_cv
    out = {"status": run.get("status"), "message": run.get("message"), "verdict": tenant.get("verdict"),
           "samples": stats.get("n"), "cv_sample_time": sample_cv, "median_sample_s": stats.get("median"),
           "work_per_sample": tenant.get("work_per_sample"), "warnings": tenant.get("warnings")}
    samples = ph.get("samples") or {}
    durs = samples.get("duration_s") or []
    inw = samples.get("counted", samples.get("in_window")) or [True] * len(durs)  # 2.0: counted
    counted = [d for d, w in zip(durs, inw) if w]
    if counted:
        out["cv_recomputed_from_samples"] = cv(counted)
        wps = (tenant.get("work_per_sample") or {}).get("value")
        if wps:
            out["throughput_per_s"] = wps * len(counted) / sum(counted)
    lat = ph.get("latency")
    if lat:
        out["latency_p50_ms"] = lat["p50"] * 1e3 if lat.get("p50") is not None else None
        out["latency_p99_ms"] = lat["p99"] * 1e3 if lat.get("p99") is not None else None
    if ph.get("counters"):
        out["counters"] = ph["counters"]
    return out


def gpu_test_figures(gt):
    """Counts of the GoogleTest JSON report: passed, failed (with names), skipped."""
    if not gt:
        return None
    out = {"tests": gt.get("tests"), "failures": gt.get("failures"), "passed": 0, "skipped": 0, "failed": []}
    for suite in gt.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = suite.get("name", "") + "." + t.get("name", "")
            if t.get("failures"):
                out["failed"].append({"test": name, "message": (t["failures"][0].get("failure") or "")[:300]})
            elif t.get("result") == "SKIPPED":
                out["skipped"] += 1
            else:
                out["passed"] += 1
    return out


def phase_throughput(tenant, phase):
    ph = (tenant.get("phases") or {}).get(phase) or {}
    return (ph.get("throughput") or {}).get("value")


def mode_figures(results):
    """Per mode and scenario: each tenant's colocated throughput over its alone throughput (the share
    it kept), the P95 slowdown and verdict the harness computed; and the issue's two checks."""
    if not results:
        return None
    runs = []
    for run in results.get("runs", []):
        tenants = []
        for t in run.get("tenants", []):
            alone, coloc = phase_throughput(t, "alone"), phase_throughput(t, "colocated")
            p95 = ((t.get("metrics") or {}).get("p95_slowdown") or {}).get("value")
            tenants.append({"name": t.get("name"), "workload": t.get("workload"), "verdict": t.get("verdict"),
                            "alone": alone, "colocated": coloc,
                            "share": coloc / alone if alone and coloc is not None else None,
                            "p95_slowdown": p95, "basis": (t.get("metrics") or {}).get("basis")})
        runs.append({"scenario": run.get("scenario"), "mode": run.get("mode"), "status": run.get("status"),
                     "message": run.get("message"), "tenants": tenants})
    checks = {}
    for r in runs:
        shares = [t["share"] for t in r["tenants"]]
        if r["scenario"] == "gemm+gemm" and r["mode"] == "timeslice" and shares and None not in shares:
            lo, hi = TARGETS["timeslice_gemm_share"]
            checks["timeslice_gemm_gemm_shares"] = {"value": shares, "ok": all(lo <= x <= hi for x in shares),
                                                    "target": f"each in [{lo}, {hi}]"}
        if r["scenario"] == "copy+copy" and r["mode"] == "mps":
            alones = [t["alone"] for t in r["tenants"]]
            colocs = [t["colocated"] for t in r["tenants"]]
            if alones and None not in alones and None not in colocs:
                total = sum(colocs) / (sum(alones) / len(alones))
                lo, hi = TARGETS["mps_copy_sum"]
                checks["mps_copy_copy_sum_over_alone"] = {"value": total, "shares": shares, "ok": lo <= total <= hi,
                                                          "target": f"in [{lo}, {hi}]"}
    return {"summary": results.get("summary"), "runs": runs, "checks": checks}


def sampler_figures(work):
    """Throughput with the sampler at 10 Hz over throughput with it off, per workload (runs A B B A);
    the spread between the two runs of the same setting says how much of the difference is noise."""
    out = {}
    for w in ("gemm-bf16", "copy-sm"):
        by_hz = {"10": [], "0": []}
        for i, hz in enumerate(("10", "0", "0", "10"), start=1):
            found = exclusive_phase(load(os.path.join(work, f"sampler-{w}-hz{hz}-{i}", "results.json")))
            thr = ((found[2].get("throughput") or {}).get("value")) if found else None
            if thr:
                by_hz[hz].append(thr)
        if len(by_hz["10"]) == 2 and len(by_hz["0"]) == 2:
            on, off = statistics.mean(by_hz["10"]), statistics.mean(by_hz["0"])
            spread = max(abs(a - b) / statistics.mean((a, b)) for a, b in (by_hz["10"], by_hz["0"]))
            out[w] = {"throughput_hz10": by_hz["10"], "throughput_off": by_hz["0"], "perturbation": 1 - on / off,
                      "same_setting_spread": spread}
        elif by_hz["10"] or by_hz["0"]:
            out[w] = {"throughput_hz10": by_hz["10"], "throughput_off": by_hz["0"], "perturbation": None}
    return out or None


def checks_of(doc):
    return [{"id": c.get("id"), "status": c.get("status"), "evidence": c.get("evidence")}
            for c in (doc or {}).get("checks", [])]


MODE_RUNS = ("timeslice", "mps", "streams", "mig")


def merged_microbench(work):
    """The headline and the other microbench cases (two runs of interference-microbench) as one document."""
    docs = [d for d in (load(os.path.join(work, f"microbench-{part}.json")) for part in ("headline", "rest")) if d]
    if not docs:
        return None
    return {"context": docs[0].get("context"), "benchmarks": [b for d in docs for b in d.get("benchmarks", [])]}


def torch_reference(work):
    """PyTorch's ceilings measured right before and right after the bench's headline cases: the reference
    figure is their mean, both are kept, and drift = after / before - 1 (a GPU warming up or throttling)."""
    before, after = (load(os.path.join(work, f"torch-{label}.json")) for label in ("before", "after"))
    present = [d for d in (before, after) if d]
    if not present:
        return None
    ref = dict(present[0])
    for key, unit in (("matmul_bf16", "tflops"), ("copy_d2d", "gbps_read_plus_written")):
        figures = {label: (d or {}).get(key, {}).get(unit) for label, d in (("before", before), ("after", after))}
        known = [v for v in figures.values() if v]
        ref[key] = {unit: statistics.mean(known) if known else None, **figures,
                    "drift": figures["after"] / figures["before"] - 1 if len(known) == 2 else None}
    return ref


def merged_modes(work):
    """The runs of the quick suite under each mode (one results file per mode) as one document."""
    docs = [d for d in (load(os.path.join(work, f"modes-{m}", "results.json")) for m in MODE_RUNS) if d]
    if not docs:
        return None
    return {"summary": None, "runs": [r for d in docs for r in d.get("runs", [])]}


def version_figures(work):
    """Our CUDA runtime/driver and cuBLASLt versions and where the libraries came from, beside
    PyTorch's own (torch-before.json), so a ratio to PyTorch says which cuBLAS each side ran."""
    ours = load(os.path.join(work, "runtime-info.json"))
    torch = torch_reference(work)
    out = {}
    if ours:
        out["ours"] = {k: ours.get(k) for k in ("cuda_runtime_version", "cuda_driver_version", "cublasLt_version",
                                                "loaded_libraries")}
        out["ours"]["nccl"] = (ours.get("nccl") or {}).get("describe")
        out["ours"]["devices"] = ours.get("devices")
    if torch:
        out["torch"] = {k: torch.get(k) for k in ("torch", "torch_cuda", "cublasLt_version", "cublasLt_path", "nccl",
                                                  "cudnn")}
    return out or None


def copy_variant_figures(micro, torch):
    """The copy kernel variants of the microbenchmark (param kernel), each against PyTorch's copy."""
    out = {}
    default = bench(micro, "copy/engine:sm/mib:")
    rows = [("v4 (default)", default)] + [
        (b["name"].split("/kernel:")[1].split("/")[0], b) for b in (micro or {}).get("benchmarks", [])
        if b.get("name", "").startswith("copy/engine:sm/kernel:") and not b.get("error_occurred")]
    ref = ((torch or {}).get("copy_d2d") or {}).get("gbps_read_plus_written")
    for name, b in rows:
        if b and b.get("GB/s"):
            out[name] = {"gbps": b["GB/s"], "vs_torch": b["GB/s"] / ref if ref else None}
    return out or None


def run_log_figures(work):
    """Why the check stopped (STOPPED.txt) and which steps were skipped or timed out (steps.log)."""
    out = {}
    stopped = read_text(os.path.join(work, "STOPPED.txt"))
    if stopped:
        out["stopped"] = stopped.strip()
    steps = read_text(os.path.join(work, "steps.log")) or ""
    skipped = [l.split("] ", 1)[-1] for l in steps.splitlines() if "] SKIPPED " in l]
    timed_out = [l.split("] ", 1)[-1] for l in steps.splitlines() if " TIMED OUT " in l or "] KILLED" in l]
    if skipped:
        out["skipped_steps"] = skipped
    if timed_out:
        out["timed_out_steps"] = timed_out
    return out


def collective_figures(work):
    """Issue 35: the two ranks of one allreduce beside a gemm (collective-<mode>/results.json): per run its status
    and message (a waiver's reason), and per tenant what mode_figures reports plus the colocated straggler rank."""
    runs = []
    for m in ("timeslice", "mps", "mig"):
        doc = load(os.path.join(work, f"collective-{m}", "results.json"))
        figures = mode_figures(doc)
        if not figures:
            continue
        for run, raw in zip(figures["runs"], doc.get("runs", [])):
            for tn, t in zip(run["tenants"], raw.get("tenants", [])):
                ranks = ((t.get("phases") or {}).get("colocated") or {}).get("ranks") or {}
                tn["straggler_rank"] = ranks.get("straggler_rank")
            runs.append(run)
    return runs


def collective_table(runs):
    md = ["", "two ranks of one allreduce beside a gemm (issue 35; share = colocated / alone throughput):", "",
          "| mode | status | tenant | share | p95 slowdown | verdict | straggler rank | message |",
          "| --- | --- | --- | ---: | ---: | --- | ---: | --- |"]
    for run in runs:
        for tn in run["tenants"] or [{}]:
            share, p95 = tn.get("share"), tn.get("p95_slowdown")
            md.append(f"| {run['mode']} | {run['status']} | {tn.get('name')} | "
                      f"{'n/a' if share is None else format(share, '.3f')} | "
                      f"{'n/a' if p95 is None else format(p95, '.3f')} | {tn.get('verdict')} | "
                      f"{tn.get('straggler_rank')} | {run.get('message') or ''} |")
    return md


def main(work):
    micro = merged_microbench(work)
    torch = torch_reference(work)
    s = {"targets": TARGETS, "figures": {}, "commands": {
        "all": "OUT=$OUT PART=first|second scripts/device-check.sh   (work folder /tmp/device-check, logs in "
               "device-check-logs.tar.gz)",
        "microbench": "interference-microbench --ib-cases=headline|rest --benchmark_out=WORK/microbench-<cases>.json "
                      "--benchmark_out_format=json",
        "torch": "python3 scripts/torch_ceilings.py --label before|after --out WORK/torch-<label>.json",
        "cv": "build/interference-bench --mode exclusive --backend cuda --scenario scenarios/device/<name>.json --duration 20 --out WORK/cv-<name>",
        "modes": "interference-bench --suite quick --backend cuda --mode <mode> --duration 3 --warmup 1 --until fixed "
                 "--out WORK/modes-<mode>",
        "gpu_tests": "IB_REQUIRE_GPU=1 ib_cuda_gpu_tests --gtest_output=json:WORK/gpu-tests.json",
    }}
    f = s["figures"]
    if micro:
        f["device"] = (micro.get("context") or {}).get("host_name")
    f.update(run_log_figures(work))
    g = bench(micro, "gemm/dtype:bf16/k:8192/m:8192/n:8192")
    gnn = bench(micro, "gemm/dtype:bf16/k:8192/layout:nn/m:8192/n:8192")
    c = bench(micro, "copy/engine:sm/mib:")
    if g:
        f["gemm_bf16_8192_tflops"] = g.get("TFLOP/s")
        f["gemm_bf16_8192_algo"] = (label_of(g).get("resolved") or {}).get("algo")
    if gnn:
        f["gemm_bf16_nn_8192_tflops"] = gnn.get("TFLOP/s")
        f["gemm_bf16_nn_8192_algo"] = (label_of(gnn).get("resolved") or {}).get("algo")
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
        elif bench_error(micro, f"gemm/dtype:{dt}/k:8192"):
            f[f"gemm_{dt}_8192_error"] = bench_error(micro, f"gemm/dtype:{dt}/k:8192")
    for d in ("h2d", "d2h"):
        for m in ("pinned", "pageable"):
            b = bench(micro, f"h2d/direction:{d}/memory:{m}/")
            if b:
                f[f"{d}_{m}_gbps"] = b.get("GB/s")
    lat = bench(micro, "latency/load:0.5/mode:open")
    if lat:
        f["latency_open_half_load_microbench"] = {"p50_ms": lat.get("p50_ms"), "p99_ms": lat.get("p99_ms"),
                                                  "req_per_s": lat.get("req/s")}
    sv = bench(micro, "serve")
    if sv:
        f["serve_defaults"] = {"p50_ms": sv.get("p50_ms"), "p99_ms": sv.get("p99_ms"), "req_per_s": sv.get("req/s"),
                               "goodput_per_s": sv.get("slo_met_requests/s")}
    ts = bench(micro, "train-step")
    if ts:
        f["train_step_defaults"] = {"tflops": ts.get("TFLOP/s"), "steps_per_s": ts.get("steps/s"),
                                    "ms_per_step": ts.get("real_time")}
    elif bench_error(micro, "train-step"):
        f["train_step_error"] = bench_error(micro, "train-step")
    ar = bench(micro, "allreduce")
    if ar:
        f["allreduce_1rank_algbw_gbps"] = ar.get("algbw_GB/s")
        f["allreduce_1rank_note"] = label_of(ar).get("note")
    if micro:
        f["microbench_errors"] = {b["name"]: b.get("error_message") for b in micro.get("benchmarks", [])
                                  if b.get("error_occurred")}
    if torch and torch["matmul_bf16"]["tflops"] and torch["copy_d2d"]["gbps_read_plus_written"]:
        f["torch_matmul_bf16_tflops"] = torch["matmul_bf16"]["tflops"]
        f["torch_copy_gbps_read_plus_written"] = torch["copy_d2d"]["gbps_read_plus_written"]
        f["torch_before_after"] = {"matmul_bf16_tflops": torch["matmul_bf16"], "copy_d2d_gbps": torch["copy_d2d"]}
        if g and g.get("TFLOP/s"):
            f["gemm_bf16_vs_torch"] = g["TFLOP/s"] / torch["matmul_bf16"]["tflops"]
        if gnn and gnn.get("TFLOP/s"):
            f["gemm_bf16_nn_vs_torch"] = gnn["TFLOP/s"] / torch["matmul_bf16"]["tflops"]
        if c and c.get("GB/s"):
            f["copy_sm_vs_torch"] = c["GB/s"] / torch["copy_d2d"]["gbps_read_plus_written"]
    variants = copy_variant_figures(micro, torch)
    if variants:
        f["copy_sm_variants"] = variants
    versions = version_figures(work)
    if versions:
        f["versions"] = versions
    for name in CV_RUNS:
        r = cv_figures(load(os.path.join(work, f"cv-{name}", "results.json")))
        if r is not None:
            f[f"cv_{name}"] = r
    gt = gpu_test_figures(load(os.path.join(work, "gpu-tests.json")))
    if gt is not None:
        f["gpu_tests"] = gt
    modes = mode_figures(merged_modes(work))
    if modes is not None:
        f["modes"] = modes
    collectives = collective_figures(work)
    if collectives:
        f["collectives"] = collectives
    sampler = sampler_figures(work)
    if sampler is not None:
        f["sampler"] = sampler
    probe = load(os.path.join(work, "probe.out"))
    if probe is not None:
        f["probe"] = {"pass": probe.get("pass"), "checks": checks_of(probe)}
    vet = load(os.path.join(work, "vet", "vet.json"))
    if vet is not None:
        f["vet"] = {"verdict": vet.get("verdict"), "budget_s": vet.get("budget_s"), "steps": vet.get("steps"),
                    "checks": checks_of(vet), "cost": vet.get("cost")}
    sus = load(os.path.join(work, "sustain", "sustain.json"))
    if sus is not None:
        f["sustain"] = {k: sus.get(k) for k in ("verdict", "evidence", "workload", "throughput_unit",
                                                "window_throughputs", "telemetry_readings")}
    for name in ("mps-left-over.txt", "mps-control-path.txt", "nvidia-smi-L.txt", "libraries.txt"):
        try:
            with open(os.path.join(work, name)) as fh:
                f[name.rsplit(".", 1)[0].replace("-", "_")] = fh.read().strip()
        except OSError:
            pass
    with open(os.path.join(work, "summary.json"), "w") as fh:
        json.dump(s, fh, indent=2)

    rows = []

    def show(label, v, target=None, fmt="{:.3f}", higher_is_better=True):
        txt = "n/a" if v is None else fmt.format(v)
        verdict = ""
        if target is not None and v is not None:
            ok = v >= target if higher_is_better else v <= target
            verdict = ("PASS" if ok else "FAIL") + (" (>= " if higher_is_better else " (<= ") + str(target) + ")"
        rows.append((label, txt, verdict))

    show("gemm bf16 8192^3 TFLOP/s", f.get("gemm_bf16_8192_tflops"), fmt="{:.1f}")
    show("torch matmul bf16 8192^3 TFLOP/s (mean of before and after)", f.get("torch_matmul_bf16_tflops"),
         fmt="{:.1f}")
    tba = f.get("torch_before_after") or {}
    show("torch matmul drift (after / before - 1)", (tba.get("matmul_bf16_tflops") or {}).get("drift"),
         fmt="{:+.4f}")
    show("gemm bf16 / torch (layout tn, the workload's default)", f.get("gemm_bf16_vs_torch"),
         TARGETS["gemm_bf16_vs_torch"])
    show("gemm bf16 nn (PyTorch's layout) TFLOP/s", f.get("gemm_bf16_nn_8192_tflops"), fmt="{:.1f}")
    show("gemm bf16 nn / torch", f.get("gemm_bf16_nn_vs_torch"), TARGETS["gemm_bf16_vs_torch"])
    show("copy sm GB/s (read+written)", f.get("copy_sm_gbps_read_plus_written"), fmt="{:.0f}")
    show("torch d2d copy GB/s (read+written)", f.get("torch_copy_gbps_read_plus_written"), fmt="{:.0f}")
    show("copy sm / torch", f.get("copy_sm_vs_torch"), TARGETS["copy_sm_vs_torch"])
    show("torch copy drift (after / before - 1)", (tba.get("copy_d2d_gbps") or {}).get("drift"), fmt="{:+.4f}")
    show("copy ce GB/s (read+written)", f.get("copy_ce_gbps_read_plus_written"), fmt="{:.0f}")
    for dt in ("fp16", "tf32", "fp32", "fp8"):
        show(f"gemm {dt} 8192^3 TFLOP/s", f.get(f"gemm_{dt}_8192_tflops"), fmt="{:.1f}")
    for name in ("gemm-bf16-exclusive", "copy-sm-exclusive"):
        r = f.get(f"cv_{name}") or {}
        show(f"CV of sample time, 20 s {name} (n={r.get('samples')})", r.get("cv_sample_time"), TARGETS["cv_max"],
             "{:.5f}", higher_is_better=False)
    r = f.get("cv_latency-half-load-exclusive") or {}
    show("latency 50% load, 20 s exclusive: P50 ms", r.get("latency_p50_ms"))
    show("latency 50% load, 20 s exclusive: P99 ms", r.get("latency_p99_ms"))
    l = f.get("latency_open_half_load_microbench") or {}
    show("latency 50% load (microbench): P50 ms", l.get("p50_ms"))
    show("latency 50% load (microbench): P99 ms", l.get("p99_ms"))
    for d in ("h2d", "d2h"):
        for m in ("pinned", "pageable"):
            show(f"{d} {m} GB/s", f.get(f"{d}_{m}_gbps"), fmt="{:.1f}")
    t = f.get("train_step_defaults") or {}
    show("train-step defaults TFLOP/s", t.get("tflops"), fmt="{:.1f}")
    show("train-step defaults steps/s", t.get("steps_per_s"), fmt="{:.1f}")
    sv = f.get("serve_defaults") or {}
    show("serve defaults goodput req/s (<= 10 ms)", sv.get("goodput_per_s"), fmt="{:.0f}")
    show("serve defaults P99 ms", sv.get("p99_ms"))
    md = ["| figure | value | target |", "| --- | ---: | --- |"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    if f.get("stopped"):
        md = [f"**The check stopped early: {f['stopped']}**", ""] + md
    for key, label in (("skipped_steps", "skipped"), ("timed_out_steps", "timed out")):
        if f.get(key):
            md += ["", f"steps {label}:", ""] + [f"- {x}" for x in f[key]]
    if variants:
        md += ["", "copy kernel variants (GB/s read+written; the default stays v4 until these say otherwise):", "",
               "| kernel | GB/s | / torch |", "| --- | ---: | ---: |"]
        for k, v in variants.items():
            md.append(f"| {k} | {v['gbps']:.0f} | {'n/a' if v['vs_torch'] is None else format(v['vs_torch'], '.3f')} |")
    for key in ("gemm_bf16_8192_algo", "gemm_bf16_nn_8192_algo", "allreduce_1rank_note"):
        if f.get(key):
            md.append(f"- {key}: {f[key]}")
    if versions:
        md += ["", "versions (ours, beside PyTorch's):", ""]
        for side, v in versions.items():
            md.append(f"- {side}: " + json.dumps({k: x for k, x in v.items() if k not in ("loaded_libraries", "devices")}))
    if gt:
        md += ["", f"GPU tests: {gt['passed']} passed, {len(gt['failed'])} failed, {gt['skipped']} skipped"]
        md += [f"- FAILED `{x['test']}`: {x['message']}" for x in gt["failed"]]
    if modes:
        md += ["", "quick suite, per mode (share = colocated / alone throughput of the same tenant):", "",
               "| mode | scenario | status | tenant | workload | share | p95 slowdown | verdict |",
               "| --- | --- | --- | --- | --- | ---: | ---: | --- |"]
        for run in modes["runs"]:
            for tn in run["tenants"] or [{}]:
                share, p95 = tn.get("share"), tn.get("p95_slowdown")
                md.append(f"| {run['mode']} | {run['scenario']} | {run['status']} | {tn.get('name')} | "
                          f"{tn.get('workload')} | {'n/a' if share is None else format(share, '.3f')} | "
                          f"{'n/a' if p95 is None else format(p95, '.3f')} | {tn.get('verdict')} |")
        for cid, c in modes["checks"].items():
            md.append(f"- {cid}: {c['value']} — {'PASS' if c['ok'] else 'FAIL'} (target {c['target']})")
    if collectives:
        md += collective_table(collectives)
    if sampler:
        md += ["", "telemetry sampler cost (1 - throughput at 10 Hz / throughput off; target <= "
               f"{TARGETS['sampler_perturbation_max']}):", ""]
        for w, x in sampler.items():
            p = x.get("perturbation")
            verdict = "n/a" if p is None else ("PASS" if p <= TARGETS["sampler_perturbation_max"] else "FAIL")
            md.append(f"- {w}: {'n/a' if p is None else format(p, '.4f')} ({verdict}; spread between runs of the "
                      f"same setting {x.get('same_setting_spread', float('nan')):.4f})")
    for label, key in (("probe", "probe"), ("vet", "vet")):
        if f.get(key):
            head = f"{label}: " + ("verdict " + str(f[key].get("verdict")) if key == "vet" else
                                   "pass " + str(f[key].get("pass")))
            md += ["", head, ""] + [f"- {c['id']}: **{c['status']}** — {c['evidence']}" for c in f[key]["checks"]]
    if f.get("sustain"):
        md += ["", f"sustain: **{f['sustain'].get('verdict')}**", ""] + [f"- {e}" for e in f["sustain"].get("evidence") or []]
    if "mps_left_over" in f:
        md += ["", f"MPS processes left after the check: {f['mps_left_over']}"]
    if f.get("microbench_errors"):
        md += ["", "microbench cases that did not run:", ""] + [f"- `{k}`: {v}" for k, v in f["microbench_errors"].items()]
    text = "\n".join(md) + "\n"
    with open(os.path.join(work, "summary.md"), "w") as fh:
        fh.write(text)
    print("---- device-check summary ----")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("WORK", "/tmp/device-check")))
