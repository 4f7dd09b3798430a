"""Telemetry beside every phase, from the fake NVML's scripted series: readings stored per phase,
each workload sample flagged throttled (never dropped), time per reason, and the warning."""
import os

import pytest

from conftest import LENIENT, compute, load_results, scenario

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
pytestmark = pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")


def device(reading):
    return {"name": "NVIDIA H200", "uuid": "GPU-1", "compute_mode": 0, "telemetry": [reading]}


def run_with(runner, tmp_path, reading, *extra):
    cfg = runner.write_json("nvml.json", {"devices": [device(reading)]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    f = runner.write_json("s.json", scenario("tele", [compute("a"), compute("b")], duration=0.8))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--telemetry-hz", "20", *extra)
    assert r.returncode in (0, 1, 5), r.stderr
    return load_results(tmp_path / "out")


BASE = {"sm_clock": 1980, "max_sm_clock": 1980, "mem_clock": 3201, "power_w": 600.0, "power_limit_w": 700.0,
        "default_power_limit_w": 700.0, "temp_c": 70, "util_gpu": 100, "util_mem": 60, "memory_used_mb": 1000}


def test_thermal_throttling_is_flagged_on_every_sample_and_kept(runner, tmp_path):
    res = run_with(runner, tmp_path, {**BASE, "sm_clock": 1400, "reasons": 0x40, "temp_c": 92})
    assert res["meta"]["telemetry"]["hz"] == 20 and res["meta"]["telemetry"]["source"] == FAKE_NVML
    for t in res["runs"][0]["tenants"]:
        for name in ("exclusive", "colocated"):
            ph = t["phases"][name]
            tele = ph["telemetry"]
            assert tele["error"] is None and tele["readings"] >= 5
            series = tele["series"]
            assert len(series["t_ns"]) == tele["readings"]
            assert set(series["clock_event_reasons"]) == {0x40} and set(series["temperature_c"]) == {92}
            assert set(series["util_gpu_pct"]) == {100}
            flags = ph["samples"]["throttled"]
            assert len(flags) == len(ph["samples"]["duration_s"])
            thr = tele["throttle"]
            assert thr["throttled_samples"] == thr["samples"] == ph["stats"]["n"], "flagged, never dropped"
            assert thr["throttled_fraction"] == 1.0
            assert thr["time_per_reason"]["HwThermalSlowdown"]["seconds"] > 0
            assert thr["time_per_reason"]["SwPowerCap"]["seconds"] == 0
        assert any("ran throttled (reasons seen: HwThermalSlowdown)" in w for w in t["warnings"])


def test_power_capped_at_full_clock_is_not_throttled(runner, tmp_path):
    res = run_with(runner, tmp_path, {**BASE, "sm_clock": 1940, "reasons": 0x4, "power_w": 699.0})
    for t in res["runs"][0]["tenants"]:
        thr = t["phases"]["colocated"]["telemetry"]["throttle"]
        assert thr["throttled_samples"] == 0 and thr["throttled_fraction"] == 0
        assert thr["time_per_reason"]["SwPowerCap"]["seconds"] > 0
        assert not any("throttled" in w for w in t["warnings"])


def test_no_raw_keeps_the_summary_not_the_series(runner, tmp_path):
    res = run_with(runner, tmp_path, dict(BASE, reasons=0), "--no-raw")
    tele = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["telemetry"]
    assert "series" not in tele and tele["throttle"]["throttled_fraction"] == 0


def test_telemetry_off_by_default_on_the_host_backend_and_unavailable_is_said(runner, tmp_path):
    f = runner.write_json("s.json", scenario("plain", [compute("a")], mode="exclusive", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "a")
    res = load_results(tmp_path / "a")
    assert res["meta"]["telemetry"] == {"hz": 0}
    assert "telemetry" not in res["runs"][0]["tenants"][0]["phases"]["exclusive"]
    runner.env["INTERFERENCE_BENCH_NVML"] = "/nonexistent/libnvidia-ml.so.1"
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "b", "--telemetry-hz", "10")
    assert r.returncode == 0 and "no telemetry (NVML not available" in r.stderr
    assert load_results(tmp_path / "b")["meta"]["telemetry"]["source"].startswith("unavailable: NVML not available")


def test_utilisation_on_a_gpu_in_mig_mode_is_recorded_as_unsupported(runner, tmp_path):
    # NVML does not report utilisation on MIG-enabled GPUs: the column is null and the phase says why.
    cfg = runner.write_json("nvml.json", {"devices": [dict(device(BASE), mig={"supported": True, "current": 1,
                                                                                "pending": 1})]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    f = runner.write_json("s.json", scenario("tele", [compute("a")], mode="exclusive", duration=0.6))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--telemetry-hz", "20")
    assert r.returncode in (0, 1, 5), r.stderr
    tel = load_results(tmp_path / "out")["runs"][0]["tenants"][0]["phases"]["exclusive"]["telemetry"]
    assert tel["readings"] > 0
    assert any(n.startswith("utilization: nvmlDeviceGetUtilizationRates") for n in tel["unsupported"]), tel["unsupported"]
    assert set(tel["series"]["util_gpu_pct"]) == {None}
    assert all(c is not None for c in tel["series"]["sm_clock_mhz"])


def test_a_fully_reporting_gpu_has_nothing_unsupported(runner, tmp_path):
    doc = run_with(runner, tmp_path, BASE)
    assert doc["runs"][0]["tenants"][0]["phases"]["exclusive"]["telemetry"]["unsupported"] == []
