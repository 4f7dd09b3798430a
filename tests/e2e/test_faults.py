"""Workers that crash, hang, exit or throw; SIGINT/SIGTERM mid-run. The run goes on, results are
written (and valid), the exit code says what happened, and no worker is left behind."""
import json
import signal
import time

import pytest

from conftest import LENIENT, compute, fault, load_results, scenario, wait_for


def run_suite(runner, tmp_path, docs, *extra, timeout=120):
    runner.suite("faults", docs)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--suite", "faults", "--out", out, *LENIENT, *extra, timeout=timeout)
    return r, load_results(out)


@pytest.mark.parametrize("action,status,check", [
    ("crash", "crashed", lambda w: w["signal"] == signal.SIGABRT and "signal 6" in w["message"]),
    ("segfault", "crashed", lambda w: w["signal"] == signal.SIGSEGV),
    ("exit", "exited", lambda w: w["exit_code"] == 3 and "exit code 3" in w["message"]),
    ("throw", "error", lambda w: w["message"] == "host-fault: injected failure" and w["exit_code"] == 1),
])
def test_failing_worker_is_recorded_and_the_next_scenario_runs(runner, tmp_path, action, status, check):
    # The fault fires 150 ms into the first measured block (by time, so beside a CPU hog too): after at least two
    # 50 ms batches were streamed, at most 75 samples of 2 ms in, and well inside its 0.5 s.
    docs = [scenario("broken", [fault("bad", action, at_sample=65, at_block=1, at_ms=150), compute("good")], duration=1.5,
                     warmup=0.02),
            scenario("after", [compute("a")], mode="exclusive", duration=0.3)]
    r, res = run_suite(runner, tmp_path, docs)
    assert r.returncode == 4, r.stderr
    broken, after = res["runs"]
    assert broken["status"] == "error"
    assert broken["message"].startswith(f"exclusive phase failed: bad {status}: ")
    w = broken["tenants"][0]["phases"]["exclusive"]["worker"]
    assert w["status"] == status and check(w), w
    assert broken["tenants"][0]["verdict"] == "error"
    # The phase it failed in is abandoned; the scenario's later phases never started.
    assert broken["tenants"][1]["phases"]["exclusive"]["worker"]["status"] == "not_run"
    assert broken["tenants"][0]["phases"]["colocated"]["worker"]["status"] == "not_run"
    # Samples it streamed before failing are kept, and not counted: the block failed.
    bad_excl = broken["tenants"][0]["phases"]["exclusive"]
    assert 0 < len(bad_excl["samples"]["duration_s"]) < 100
    assert bad_excl["stats"]["n"] == 0 and not any(bad_excl["samples"]["counted"])
    assert broken["blocks"][-1]["status"] == "failed"
    assert after["status"] == "ok" and after["tenants"][0]["verdict"] == "baseline"
    # The neighbour was never measured: no verdict can be given for it either.
    assert broken["tenants"][1]["verdict"] == "error"
    assert broken["tenants"][1]["verdict_reason"].startswith("not measured: exclusive phase failed: bad " + status)
    assert res["summary"]["errors"] == 2 and res["summary"]["exit_code"] == 4
    assert "**error**" in r.stdout


def test_crash_in_the_colocated_phase_stops_the_neighbour(runner, tmp_path):
    # The bad tenant's blocks in round 0: its exclusive block, then the colocated one (its 2nd): it crashes
    # 40 ms into that one.
    bad = fault("bad", "crash", at_sample=20, at_block=2, at_ms=40)
    docs = [scenario("coloc-crash", [bad, compute("good")], duration=1.0, warmup=0.02)]
    r, res = run_suite(runner, tmp_path, docs)
    assert r.returncode == 4
    run = res["runs"][0]
    assert run["status"] == "error" and "colocated phase failed: bad crashed" in run["message"], run["message"]
    assert [(b["phase"], b["status"]) for b in run["blocks"]][-1] == ("colocated", "failed")
    bad_t, good_t = run["tenants"]
    # Its process crashed before the exclusive phase's later rounds: that phase is incomplete too.
    assert bad_t["phases"]["exclusive"]["worker"]["status"] == "crashed"
    assert bad_t["phases"]["exclusive"]["blocks"]["ran"] == 1
    assert bad_t["phases"]["colocated"]["worker"]["status"] == "crashed"
    assert good_t["phases"]["colocated"]["worker"]["status"] == "stopped"
    # The failed block does not count: nothing counts as co-located, no metrics are made up.
    assert good_t["phases"]["colocated"]["stats"]["n"] == 0
    failed = run["blocks"][-1]["index"]
    samples = good_t["phases"]["colocated"]["samples"]
    in_failed = [c for b, c in zip(samples["block"], samples["counted"]) if b == failed]
    assert in_failed and not any(in_failed), "samples of the failed block are kept, never counted"
    clean = {b["index"] for b in run["blocks"] if b["status"] == "clean"}
    assert all(b in clean for b, c in zip(samples["block"], samples["counted"]) if c)
    assert good_t["phases"]["colocated"]["stats"]["n"] == sum(samples["counted"])
    assert good_t["metrics"] is None and good_t["verdict"] == "error"


def test_hanging_worker_is_killed_by_the_watchdog(runner, tmp_path):
    docs = [scenario("hang", [fault("stuck", "hang", at_sample=40, at_block=1, at_ms=100)], mode="exclusive", duration=0.5, warmup=0.02),
            scenario("after", [compute("a")], mode="exclusive", duration=0.3)]
    t0 = time.monotonic()
    r, res = run_suite(runner, tmp_path, docs, "--timeout-margin", "1.5", "--rounds", "1")
    elapsed = time.monotonic() - t0
    assert r.returncode == 4
    w = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["worker"]
    assert w["status"] == "timeout" and w["signal"] == signal.SIGKILL
    assert "no end of its block within 0.5" in w["message"]  # one tenant, one round: a 0.5 s block
    assert res["runs"][1]["status"] == "ok"
    assert elapsed < 30, "the watchdog must fire after duration + margin, not hang the run"


def test_worker_hanging_in_setup_is_killed_before_the_barrier(runner, tmp_path):
    docs = [scenario("hang-setup", [fault("stuck", "hang", at_sample=0)], mode="exclusive", duration=0.3, warmup=0.1)]
    r, res = run_suite(runner, tmp_path, docs, "--timeout-margin", "1")
    assert r.returncode == 4
    w = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["worker"]
    assert w["status"] == "timeout" and "no ready within" in w["message"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_keeps_finished_results_and_leaves_no_process(runner, tmp_path, sig):
    docs = [scenario("first", [compute("a")], mode="exclusive", duration=0.3, warmup=0.05),
            scenario("second", [compute("b"), compute("c")], duration=30, warmup=0.05),
            scenario("third", [compute("d")], mode="exclusive", duration=0.3, warmup=0.05)]
    runner.suite("sig", docs)
    out = tmp_path / "out"
    p = runner.popen("--backend", "host", "--suite", "sig", "--out", out)

    def first_written_and_second_measuring():
        try:
            runs = json.loads((out / "results.json").read_text())["runs"]
        except (OSError, ValueError):
            return False
        return len(runs) == 1 and (out / "logs" / "second-timeslice-r1-plain-b.log").exists()

    wait_for(first_written_and_second_measuring, process=p)
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 130, stderr
    res = load_results(out)
    assert res["summary"]["interrupted"] is True and res["summary"]["exit_code"] == 130
    assert [r["scenario"] for r in res["runs"]] == ["first", "second"]
    assert res["runs"][0]["status"] == "ok"
    second = res["runs"][1]
    assert second["status"] == "interrupted"
    assert second["tenants"][0]["phases"]["exclusive"]["worker"]["status"] == "interrupted"
    assert "(interrupted)" in stdout
    # The runner fixture asserts that no tagged process is left.


@pytest.mark.parametrize("action,status", [("hang", "timeout"), ("none", "ok")])
def test_nothing_a_worker_started_outlives_it(runner, tmp_path, action, status):
    # The worker forks two children that only wait (holding its pipes). Whether the watchdog kills the
    # worker (hang) or it exits after "end" (none), its process group goes with it.
    docs = [scenario("forks", [fault("parent", action, at_sample=38, at_block=1, at_ms=100, children=2)], mode="exclusive", duration=0.3,
                     warmup=0.02)]
    r, res = run_suite(runner, tmp_path, docs, "--timeout-margin", "1", "--rounds", "1")
    w = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["worker"]
    assert w["status"] == status, w
    assert r.returncode == (4 if action == "hang" else 0), r.stderr
    # SIGKILL is sent before the harness exits; the children may take a moment to be gone.
    wait_for(lambda: runner.leftover_processes() == [], timeout=20)
