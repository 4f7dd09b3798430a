"""scripts/device_summary.py: the device check's table compares the harness's figures with the issues'
targets. Fed hand-made results with known throughputs, so a wrong ratio, a swapped phase or a check
that passes on missing data fails here rather than on the H200."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY, SOURCE_DIR

spec = importlib.util.spec_from_file_location("device_summary", SOURCE_DIR / "scripts" / "device_summary.py")
ds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ds)


def tenant(name, workload, alone, colocated, p95=0.1, verdict="pass"):
    return {"name": name, "workload": workload, "verdict": verdict,
            "metrics": {"basis": "sample_time", "p95_slowdown": {"value": p95}},
            "phases": {"exclusive": {"throughput": {"value": alone}}, "alone": {"throughput": {"value": alone}},
                       "colocated": {"throughput": {"value": colocated}}}}


def run(scenario, mode, *tenants):
    return {"scenario": scenario, "mode": mode, "status": "ok", "message": "", "tenants": list(tenants)}


def test_mode_checks_use_colocated_over_alone_per_tenant():
    results = {"summary": {}, "runs": [
        run("gemm+gemm", "timeslice", tenant("v", "gemm", 800.0, 400.0), tenant("a", "gemm", 800.0, 360.0)),
        run("copy+copy", "mps", tenant("v", "copy", 4000.0, 2100.0), tenant("a", "copy", 4000.0, 2000.0)),
        run("gemm+gemm", "streams", tenant("v", "gemm", 800.0, 100.0), tenant("a", "gemm", 800.0, 100.0)),
    ]}
    m = ds.mode_figures(results)
    ts = m["checks"]["timeslice_gemm_gemm_shares"]
    assert ts["value"] == [0.5, 0.45] and ts["ok"]
    mps = m["checks"]["mps_copy_copy_sum_over_alone"]
    assert abs(mps["value"] - 4100.0 / 4000.0) < 1e-12 and mps["ok"]
    # streams is reported, not checked against the time-slicing target
    assert len(m["checks"]) == 2
    assert [t["share"] for t in m["runs"][2]["tenants"]] == [0.125, 0.125]


def test_mode_checks_fail_outside_their_ranges():
    results = {"summary": {}, "runs": [
        run("gemm+gemm", "timeslice", tenant("v", "gemm", 800.0, 600.0), tenant("a", "gemm", 800.0, 400.0)),
        run("copy+copy", "mps", tenant("v", "copy", 4000.0, 1000.0), tenant("a", "copy", 4000.0, 2000.0)),
    ]}
    m = ds.mode_figures(results)
    assert not m["checks"]["timeslice_gemm_gemm_shares"]["ok"]  # 0.75 is above 0.60
    assert not m["checks"]["mps_copy_copy_sum_over_alone"]["ok"]  # 0.75 of alone is below 0.90


def test_mode_checks_are_absent_when_a_phase_is_missing():
    broken = tenant("a", "gemm", 800.0, 400.0)
    del broken["phases"]["colocated"]
    m = ds.mode_figures({"summary": {}, "runs": [run("gemm+gemm", "timeslice", tenant("v", "gemm", 800.0, 400.0),
                                                     broken)]})
    assert m["checks"] == {}


def write_results(path, throughput):
    path.mkdir(parents=True)
    doc = {"runs": [{"tenants": [{"phases": {"exclusive": {"throughput": {"value": throughput}}}}]}]}
    (path / "results.json").write_text(json.dumps(doc))


def test_sampler_perturbation_is_one_minus_on_over_off_with_the_same_setting_spread(tmp_path):
    # runs A B B A: 10 Hz gives 990 and 994, off gives 1000 and 998
    for i, (hz, thr) in enumerate((("10", 990.0), ("0", 1000.0), ("0", 998.0), ("10", 994.0)), start=1):
        write_results(tmp_path / f"sampler-gemm-bf16-hz{hz}-{i}", thr)
    s = ds.sampler_figures(str(tmp_path))
    g = s["gemm-bf16"]
    assert abs(g["perturbation"] - (1 - 992.0 / 999.0)) < 1e-12
    assert abs(g["same_setting_spread"] - 4.0 / 992.0) < 1e-12
    assert "copy-sm" not in s


def test_sampler_without_all_four_runs_reports_no_perturbation(tmp_path):
    write_results(tmp_path / "sampler-copy-sm-hz10-1", 100.0)
    s = ds.sampler_figures(str(tmp_path))
    assert s["copy-sm"]["perturbation"] is None


def test_gpu_test_counts(tmp_path):
    gt = {"tests": 3, "failures": 1, "testsuites": [{"name": "CudaGpu", "testsuite": [
        {"name": "Gemm", "result": "COMPLETED"},
        {"name": "Copy", "result": "COMPLETED", "failures": [{"failure": "expected 1 got 0"}]},
        {"name": "Nccl", "result": "SKIPPED"}]}]}
    f = ds.gpu_test_figures(gt)
    assert (f["passed"], f["skipped"]) == (1, 1)
    assert f["failed"] == [{"test": "CudaGpu.Copy", "message": "expected 1 got 0"}]


def test_main_writes_a_table_from_an_empty_work_folder(tmp_path):
    assert ds.main(str(tmp_path)) == 0
    assert json.loads((tmp_path / "summary.json").read_text())["figures"] == {}
    assert "| figure | value | target |" in (tmp_path / "summary.md").read_text()


def exclusive_results(stats, samples, work=100.0):
    return {"runs": [{"status": "ok", "tenants": [{"verdict": "baseline", "work_per_sample": {"value": work},
                                                   "phases": {"exclusive": {"stats": stats, "samples": samples}}}]}]}


def test_cv_figures_read_schema_1_and_2_names():
    durs = [1.0, 2.0, 3.0, 100.0]
    old = ds.cv_figures(exclusive_results({"n": 3, "cv": 0.1}, {"duration_s": durs,
                                                                "in_window": [True, True, True, False]}))
    new = ds.cv_figures(exclusive_results({"n": 3, "sample_cv": 0.1}, {"duration_s": durs,
                                                                       "counted": [True, True, True, False]}))
    for f in (old, new):
        assert f["cv_sample_time"] == 0.1
        assert abs(f["cv_recomputed_from_samples"] - 0.5) < 1e-12  # stdev 1 / mean 2: the 100 s sample is not counted
        assert abs(f["throughput_per_s"] - 300.0 / 6.0) < 1e-12


def bm(name, label=None, **counters):
    return {"name": name, "label": json.dumps(label or {}), **counters}


def test_gemm_layouts_copy_variants_and_versions_against_torch(tmp_path):
    micro = {"benchmarks": [
        bm("gemm/dtype:bf16/k:8192/m:8192/n:8192/manual_time", {"resolved": {"algo": "id=66,tile=1"}}, **{"TFLOP/s": 760.0}),
        bm("gemm/dtype:bf16/k:8192/layout:nn/m:8192/n:8192/manual_time", {"resolved": {"algo": "id=66,tile=2"}},
           **{"TFLOP/s": 780.0}),
        bm("copy/engine:sm/mib:1024/reps:8/manual_time", **{"GB/s": 4000.0}),
        bm("copy/engine:sm/kernel:v8-stream/mib:1024/reps:8/manual_time", **{"GB/s": 4200.0}),
        bm("allreduce/gpus:1/mib:256/manual_time", {"note": "local copy, no communication"}, **{"algbw_GB/s": 2000.0}),
    ]}
    torch = {"torch": "2.11.0+cu130", "torch_cuda": "13.0", "cublasLt_version": 130000, "cublasLt_path": "/x",
             "nccl": "2.27.7", "cudnn": 91000, "matmul_bf16": {"tflops": 800.0},
             "copy_d2d": {"gbps_read_plus_written": 4000.0}}
    info = {"cuda_runtime_version": 13000, "cuda_driver_version": 13000, "cublasLt_version": 130100,
            "loaded_libraries": [], "nccl": {"describe": "NCCL 2.28.9 from /y"}, "devices": {"count": 1}}
    for name, doc in (("microbench-rest.json", micro), ("torch-before.json", torch), ("runtime-info.json", info)):
        (tmp_path / name).write_text(json.dumps(doc))
    assert ds.main(str(tmp_path)) == 0
    f = json.loads((tmp_path / "summary.json").read_text())["figures"]
    assert abs(f["gemm_bf16_vs_torch"] - 0.95) < 1e-12 and abs(f["gemm_bf16_nn_vs_torch"] - 0.975) < 1e-12
    assert f["gemm_bf16_8192_algo"] == "id=66,tile=1" and f["gemm_bf16_nn_8192_algo"] == "id=66,tile=2"
    assert f["copy_sm_vs_torch"] == 1.0  # the default kernel, not the variant listed after it
    assert f["copy_sm_variants"]["v8-stream"] == {"gbps": 4200.0, "vs_torch": 1.05}
    assert f["allreduce_1rank_note"] == "local copy, no communication"
    assert f["versions"]["ours"]["cublasLt_version"] == 130100 and f["versions"]["torch"]["cublasLt_version"] == 130000
    md = (tmp_path / "summary.md").read_text()
    assert "| gemm bf16 nn / torch | 0.975 | PASS (>= 0.97) |" in md
    assert "| gemm bf16 / torch (layout tn, the workload's default) | 0.950 | FAIL (>= 0.97) |" in md
    assert "| v8-stream | 4200 | 1.050 |" in md


def test_a_stop_and_the_skipped_steps_come_first(tmp_path):
    (tmp_path / "STOPPED.txt").write_text("no GPU visible to CUDA: no CUDA GPU found\n")
    (tmp_path / "steps.log").write_text("[device-check +1s] preflight\n[device-check +9s] SKIPPED modes: needs 120 s, "
                                        "80 s left\n[device-check +50s] torch TIMED OUT after 90 s\n")
    assert ds.main(str(tmp_path)) == 0
    f = json.loads((tmp_path / "summary.json").read_text())["figures"]
    assert f["stopped"] == "no GPU visible to CUDA: no CUDA GPU found"
    assert f["skipped_steps"] == ["SKIPPED modes: needs 120 s, 80 s left"]
    assert f["timed_out_steps"] == ["torch TIMED OUT after 90 s"]
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("**The check stopped early: no GPU visible to CUDA: no CUDA GPU found**")


def write_json(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def torch_doc(tflops, gbps):
    return {"torch": "2.9", "matmul_bf16": {"tflops": tflops}, "copy_d2d": {"gbps_read_plus_written": gbps}}


def test_the_torch_reference_is_the_mean_of_before_and_after_with_both_kept(tmp_path):
    write_json(tmp_path / "torch-before.json", torch_doc(700.0, 8000.0))
    write_json(tmp_path / "torch-after.json", torch_doc(690.0, 8100.0))
    ref = ds.torch_reference(str(tmp_path))
    assert ref["matmul_bf16"] == {"tflops": 695.0, "before": 700.0, "after": 690.0, "drift": 690.0 / 700.0 - 1}
    assert ref["copy_d2d"]["gbps_read_plus_written"] == 8050.0 and ref["torch"] == "2.9"
    (tmp_path / "torch-after.json").unlink()  # the call ended before the second measurement
    ref = ds.torch_reference(str(tmp_path))
    assert ref["matmul_bf16"]["tflops"] == 700.0 and ref["matmul_bf16"]["drift"] is None


def test_the_headline_cases_count_even_when_the_rest_never_wrote_its_file(tmp_path):
    head = {"context": {"host_name": "h200"}, "benchmarks": [
        {"name": "gemm/dtype:bf16/k:8192/m:8192/n:8192/manual_time", "TFLOP/s": 680.0},
        {"name": "copy/engine:sm/mib:1024/reps:8/manual_time", "GB/s": 7600.0}]}
    write_json(tmp_path / "microbench-headline.json", head)
    write_json(tmp_path / "torch-before.json", torch_doc(700.0, 8000.0))
    write_json(tmp_path / "modes-timeslice" / "results.json", {"runs": [
        run("gemm+gemm", "timeslice", tenant("v", "gemm", 800.0, 400.0), tenant("a", "gemm", 800.0, 400.0))]})
    write_json(tmp_path / "modes-mps" / "results.json", {"runs": [
        run("copy+copy", "mps", tenant("v", "copy", 4000.0, 2000.0), tenant("a", "copy", 4000.0, 2000.0))]})
    assert ds.main(str(tmp_path)) == 0
    f = json.loads((tmp_path / "summary.json").read_text())["figures"]
    assert abs(f["gemm_bf16_vs_torch"] - 680.0 / 700.0) < 1e-12 and abs(f["copy_sm_vs_torch"] - 0.95) < 1e-12
    assert set(f["modes"]["checks"]) == {"timeslice_gemm_gemm_shares", "mps_copy_copy_sum_over_alone"}


def test_the_torch_ceilings_time_what_the_bench_headline_cases_time():
    """Issue 34 item 3: PyTorch's ceiling and the bench's headline cases must time the same ops per event
    pair, the same count of pairs, the same sizes and dtype, the same warm-up and statistic; a torch that
    times one copy per pair (against the bench's 8) or reports a median would make the ratio favour one side."""
    bench_program = Path(BINARY).parent / "kernels" / "cuda" / "interference-microbench"
    if not bench_program.exists():
        pytest.skip("needs interference-microbench (a CUDA build)")
    bench = json.loads(subprocess.run([str(bench_program), "--ib-headline-plan"], check=True, capture_output=True,
                                      text=True, timeout=60).stdout)
    torch = json.loads(subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "torch_ceilings.py"),
                                       "--print-plan"], check=True, capture_output=True, text=True, timeout=60).stdout)
    same = ("ops_per_event_pair", "event_pairs", "warmup_s", "warmup_min_runs", "statistic")
    gemms = [c for c in bench if c["workload"] == "gemm"]
    copies = [c for c in bench if c["workload"] == "copy"]
    assert len(gemms) == 2 and len(copies) == 2  # tn and nn; engines sm and ce
    mm = torch["matmul_bf16"]
    for c in gemms:
        assert {k: c["params"][k] for k in ("dtype", "m", "n", "k")} == {k: mm[k] for k in ("dtype", "m", "n", "k")}
        assert {k: c[k] for k in same} == {k: mm[k] for k in same}
    cp = torch["copy_d2d"]
    for c in copies:
        assert c["params"]["mib"] == cp["mib"]
        assert {k: c[k] for k in same} == {k: cp[k] for k in same}


def test_collectives_report_each_modes_runs_with_the_straggler_and_a_waivers_reason(tmp_path):
    # Issue 35: collective-<mode>/results.json of the device check; a waived mode keeps NCCL's words.
    ar = tenant("ar", "allreduce", 100.0, 40.0, p95=1.5, verdict="fail")
    ar["phases"]["colocated"]["ranks"] = {"count": 2, "straggler_rank": 1, "straggler_share": 0.9}
    write_json(tmp_path / "collective-timeslice" / "results.json",
               {"runs": [run("device-allreduce-two-ranks-gemm", "timeslice", ar, tenant("gemm", "gemm", 900.0, 450.0))]})
    waived = {"scenario": "device-allreduce-two-ranks-gemm", "mode": "mig", "status": "waived",
              "message": "allreduce: ... NCCL 2.30.7 refuses", "tenants": []}
    write_json(tmp_path / "collective-mig" / "results.json", {"runs": [waived]})
    assert ds.main(str(tmp_path)) == 0
    runs = json.loads((tmp_path / "summary.json").read_text())["figures"]["collectives"]
    assert [r["mode"] for r in runs] == ["timeslice", "mig"]
    first = runs[0]["tenants"][0]
    assert first["share"] == 0.4 and first["straggler_rank"] == 1 and first["verdict"] == "fail"
    assert runs[0]["tenants"][1]["straggler_rank"] is None
    md = (tmp_path / "summary.md").read_text()
    assert "| timeslice | ok | ar | 0.400 | 1.500 | fail | 1 |" in md
    assert "| mig | waived | None | n/a | n/a | None | None | allreduce: ... NCCL 2.30.7 refuses |" in md
