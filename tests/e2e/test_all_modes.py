"""--mode all: the scenario under every mode side by side; modes this machine cannot run are waived
with the reason (here: by leaving out the fake MPS daemon or the fake NVML)."""
import os

import pytest

from conftest import LENIENT, SOURCE_DIR, compute, load_results, scenario

FAKES = SOURCE_DIR / "tests" / "fakes" / "bin"
FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")


def test_all_modes_side_by_side_with_unsupported_ones_waived(runner, tmp_path):
    runner.env["PATH"] = "/nonexistent:/usr/bin:/bin"                        # no MPS control daemon
    runner.env["INTERFERENCE_BENCH_NVML"] = "/nonexistent/libnvidia-ml.so.1"  # no NVML: no MIG
    a = compute("a")
    a["placement"] = {"mps_active_thread_percentage": 50}  # kept for mode mps, ignored elsewhere
    f = runner.write_json("s.json", scenario("everything", [a, compute("b")], duration=0.8))
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "all", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode in (0, 1, 5), r.stderr
    runs = load_results(tmp_path / "out")["runs"]
    assert [run["mode"] for run in runs] == ["timeslice", "mps", "mig", "streams"]
    by_mode = {run["mode"]: run for run in runs}
    assert by_mode["mps"]["status"] == "waived" and "nvidia-cuda-mps-control is not on PATH" in by_mode["mps"]["message"]
    assert by_mode["mig"]["status"] == "waived" and "needs NVML" in by_mode["mig"]["message"]
    for mode in ("mps", "mig"):
        assert {t["verdict"] for t in by_mode[mode]["tenants"]} == {"waived"}
    for mode in ("timeslice", "streams"):
        assert by_mode[mode]["status"] == "ok"
        assert {t["verdict"] for t in by_mode[mode]["tenants"]} <= {"pass", "fail", "inconclusive"}
    # The terminal names the waived runs; summary.md has their rows too.
    assert "| everything | mps | a | 1 |" in r.stdout and "everything (mps) rep 1: **waived**" in r.stdout
    assert "| everything | mps | 1/1 | a |" in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_all_modes_run_when_the_machine_has_them(runner, tmp_path):
    from test_mig import gpu
    runner.env["PATH"] = f"{FAKES}:{os.environ['PATH']}"
    runner.env["FAKE_MPS_LOG"] = str(tmp_path / "mps.log")
    cfg = runner.write_json("nvml.json", {"devices": [gpu()]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                      FAKE_NVML_STATE=str(tmp_path / "state.jsonl"))
    f = runner.write_json("s.json", scenario("everything", [compute("a"), compute("b")], duration=0.6))
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "all", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode in (0, 1, 5), r.stderr
    runs = load_results(tmp_path / "out")["runs"]
    assert [(run["mode"], run["status"]) for run in runs] == [
        ("timeslice", "ok"), ("mps", "ok"), ("mig", "ok"), ("streams", "ok")]
    assert (tmp_path / "mps.log").read_text().splitlines()[-1].startswith("quit")


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_a_placement_mig_cannot_give_waives_mig_and_the_other_modes_run(runner, tmp_path):
    from test_mig import INSTANCES, gpu
    runner.env["PATH"] = "/nonexistent:/usr/bin:/bin"  # no MPS control daemon either
    cfg = runner.write_json("nvml.json", {"devices": [gpu()]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                      FAKE_NVML_STATE=str(tmp_path / "state.jsonl"))
    tenants = [compute(f"t{i}") for i in range(len(INSTANCES) + 1)]  # one more tenant than instances
    f = runner.write_json("s.json", scenario("crowd", tenants, duration=0.4))
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "all", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode in (0, 1, 5), r.stderr
    by_mode = {run["mode"]: run for run in load_results(tmp_path / "out")["runs"]}
    assert by_mode["mig"]["status"] == "waived" and by_mode["mig"]["message"].startswith("mode mig: ")
    assert by_mode["timeslice"]["status"] == "ok" and by_mode["streams"]["status"] == "ok"


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_a_bad_baseline_is_bad_input_even_with_mode_all(runner, tmp_path):
    # Only a placement MIG cannot give waives mig; a wrong --baseline is the user's error: exit 2,
    # not a run where every mode is waived and nothing was measured.
    from test_mig import gpu
    cfg = runner.write_json("nvml.json", {"devices": [gpu()]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                      FAKE_NVML_STATE=str(tmp_path / "state.jsonl"))
    bad = runner.write_json("bad.json", {"meta": {}, "runs": []})
    f = runner.write_json("s.json", scenario("pair", [compute("a"), compute("b")], duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "all", "--scenario", f, "--out", tmp_path / "out",
                   "--baseline", bad)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--baseline" in r.stderr
