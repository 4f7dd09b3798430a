"""scripts/device_summary.py: the device check's table compares the harness's figures with the issues'
targets. Fed hand-made results with known throughputs, so a wrong ratio, a swapped phase or a check
that passes on missing data fails here rather than on the H200."""
import importlib.util
import json

from conftest import SOURCE_DIR

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
