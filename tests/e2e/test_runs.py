"""Normal runs on host workloads: phases, overlap window, statistics recomputed from the raw
samples, verdicts, outputs and exit codes."""
import json
import os

import pytest

from conftest import LENIENT, compute, fault, load_results, percentile, scenario



def run_ok(runner, tmp_path, doc, *extra, expect=(0, 1, 5)):
    f = runner.write_json("s.json", doc)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, *extra)
    assert r.returncode in expect, r.stdout + r.stderr
    return r, load_results(out), out


def check_blocks_abba(run, names):
    """Round 1 runs each tenant's exclusive block then the colocated one; round 2 the reverse; round 3 as 1."""
    first = [("exclusive", (n,)) for n in names] + [("colocated", tuple(names))]
    expected = [(k, ph, ts) for k, order in enumerate([first, first[::-1], first]) for ph, ts in order]
    got = [(b["round"], b["phase"], tuple(b["tenants"])) for b in run["blocks"]]
    assert got == expected
    assert [b["index"] for b in run["blocks"]] == list(range(len(expected)))


def overlap_window(run, block):
    """The overlap window of a colocated block recomputed from the tenants' first and last sample times."""
    starts, ends = [], []
    for t in run["tenants"]:
        s = t["phases"]["colocated"]["samples"]
        mine = [(a, a + round(d * 1e9)) for a, d, b in zip(s["start_ns"], s["duration_s"], s["block"]) if b == block]
        starts.append(min(a for a, _ in mine))
        ends.append(max(e for _, e in mine))
    return max(starts), min(ends)


def verdict_from_ci(est, cutoff=0.40):
    if est["ci_high"] <= cutoff:
        return "pass"
    return "fail" if est["ci_low"] > cutoff else "inconclusive"


def test_timeslice_run_has_rounds_blocks_and_consistent_statistics(runner, tmp_path):
    doc = scenario("pair", [{**compute("victim"), "role": "victim"}, {**compute("aggressor"), "role": "aggressor"}],
                   duration=1.5)
    r, res, out = run_ok(runner, tmp_path, doc, *LENIENT)
    assert res["meta"]["backend"] == "host"
    assert res["meta"]["argv"][1:3] == ["--backend", "host"]
    assert len(res["runs"]) == 1
    run = res["runs"][0]
    assert run["status"] == "ok" and run["mode"] == "timeslice"
    assert run["rounds"] == 3 and run["round_order"] == "abba"
    check_blocks_abba(run, ["victim", "aggressor"])
    assert all(b["status"] == "clean" for b in run["blocks"])
    assert 0 <= run["barrier_skew_s"] < 0.5
    for b in run["blocks"]:
        if b["phase"] == "colocated":
            assert (b["overlap_window_ns"]["start"], b["overlap_window_ns"]["end"]) == overlap_window(run, b["index"])
    assert run["system"]["vs_exclusive"]["stp"] is not None and run["system"]["vs_alone"]["antt"] is not None
    for t in run["tenants"]:
        ph = t["phases"]
        assert ph["alone"]["source"] == "exclusive" and "samples" not in ph["alone"]
        assert ph["alone"]["stats"] == ph["exclusive"]["stats"]
        excl, col = ph["exclusive"]["samples"], ph["colocated"]["samples"]
        assert all(excl["in_window"]) and all(excl["counted"]), "every exclusive sample of a clean block counts"
        assert {run["blocks"][b]["phase"] for b in excl["block"]} == {"exclusive"}
        assert ph["exclusive"]["blocks"] == {"ran": 3, "counted": 3}
        counted = []
        for s, d, b, w, c in zip(col["start_ns"], col["duration_s"], col["block"], col["in_window"], col["counted"]):
            win = run["blocks"][b]["overlap_window_ns"]
            assert run["blocks"][b]["phase"] == "colocated"
            assert bool(w) == (s >= win["start"] and s + round(d * 1e9) <= win["end"])
            assert c == w
            if w:
                counted.append(d)
        assert ph["colocated"]["stats"]["n"] == len(counted) >= 72
        assert ph["exclusive"]["stats"]["n"] == len(excl["duration_s"]) >= 72
        # Statistics and the metrics recomputed independently from the raw samples.
        e = excl["duration_s"]
        assert abs(ph["exclusive"]["stats"]["p95"] - percentile(e, 95)) < 1e-12
        assert abs(ph["colocated"]["stats"]["p95"] - percentile(counted, 95)) < 1e-12
        m = t["metrics"]
        assert abs(m["p95_slowdown"]["value"] - (percentile(counted, 95) / percentile(e, 95) - 1)) < 1e-9
        assert abs(m["median_slowdown"] - (percentile(counted, 50) / percentile(e, 50) - 1)) < 1e-9
        assert m["partition_cost"] == 1.0
        assert m["n"] == {"exclusive": len(e), "colocated": len(counted)}
        assert m["p95_slowdown"]["ci_low"] <= m["p95_slowdown"]["value"] <= m["p95_slowdown"]["ci_high"]
        cov = [c for c, w in zip(col["coverage"], col["counted"]) if w]
        assert all(0 <= c <= 1 for c in cov)
        assert abs(m["coverage"]["mean"] - sum(cov) / len(cov)) < 1e-9
        work = t["work_per_sample"]
        assert work == {"value": 2 * 64 ** 3 * 4, "unit": "FLOP"}
        tput = ph["colocated"]["throughput"]
        assert tput["unit"] == "FLOP/s"
        assert abs(tput["value"] - work["value"] * len(counted) / sum(counted)) / tput["value"] < 1e-9
        assert t["verdict"] == verdict_from_ci(m["p95_slowdown"])
    # One repetition: each aggregate is its tenant's run estimate and verdict exactly (same samples, same
    # seed), and the summary counts the aggregates.
    assert [(a["tenant"], a["verdict"]) for a in res["aggregates"]] == [(t["name"], t["verdict"]) for t in run["tenants"]]
    for a, t in zip(res["aggregates"], run["tenants"]):
        assert a["metrics"]["p95_slowdown"] == t["metrics"]["p95_slowdown"]
    verdicts = [a["verdict"] for a in res["aggregates"]]
    assert res["summary"]["pass"] == all(v == "pass" for v in verdicts)
    assert res["summary"]["exit_code"] == r.returncode
    assert r.returncode == (1 if "fail" in verdicts else 5 if "inconclusive" in verdicts else 0)
    # The terminal summary: one row per tenant with the verdict; summary.md has those rows, each
    # repetition's and every warning.
    summary = (out / "summary.md").read_text()
    for t in run["tenants"]:
        assert f"| pair | timeslice | {t['name']} | 1 |" in r.stdout
        assert f"**{t['verdict']}**" in r.stdout
        assert f"| pair | timeslice | 1/1 | {t['name']} |" in summary
        for w in t["warnings"]:
            assert w in summary
    for line in summary.splitlines():
        if line.startswith("| pair | timeslice |") and "1/1" not in line:
            assert line in r.stdout
    # Not a terminal: no progress line (no carriage returns).
    assert "\r" not in r.stderr


@pytest.mark.serial
@pytest.mark.measurement
def test_two_tenants_time_sliced_on_one_cpu_never_pass(runner, tmp_path):
    # A known answer: both on CPU 0, the OS time-slices them, so each runs at about half speed (a median
    # slowdown near +100%). Samples of about 6 ms, longer than the scheduler's slice, so that sharing the
    # core shows in each sample's time. On a quiet machine the whole CI lies above the cutoff (fail); on a
    # loaded VM whose CPU speed changes between blocks the CI widens across it (inconclusive, measured in
    # docs/measurements/2026-12-01-host-verdicts.md). With the default foreign-load limits another process
    # on CPU 0 (which would slow one phase's blocks and not the other's) makes blocks contaminated, hence
    # excluded or inconclusive, never a pass. What holds on any machine: never a pass; judged on clean
    # blocks the CI reaches above the cutoff and the median is slower than alone; the two tenants use
    # one CPU between them.
    doc = scenario("one-cpu", [compute("a", n=128, cpus=[0]), compute("b", n=128, cpus=[0])], duration=2.0)
    r, res, _ = run_ok(runner, tmp_path, doc, expect=(1, 5))
    for t in res["runs"][0]["tenants"]:
        assert t["verdict"] in ("fail", "inconclusive"), t["verdict_reason"]
        assert t["placement"] == {"cpus": [0]}
        if t["metrics"] is None or t["metrics"]["p95_slowdown"]["ci_high"] is None:
            assert t["verdict"] == "inconclusive"
            continue
        assert t["metrics"]["p95_slowdown"]["ci_high"] > 0.40
        # 2x within one CPU-speed plateau; 1.2x when the exclusive blocks fell on the VM's slow plateau, once
        # (CI run of 9630c8b, 2026-12-05) only 1.02x and once 0.97x (2d50f3f): the size, even the sign, is the
        # plateaus'. The time-sharing itself is asserted below by CPU accounting; this bound only catches phases
        # taken for one another (colocated as the reference: about -0.5), which no plateau seen here reaches.
        assert t["metrics"]["median_slowdown"] > -0.25
    for b in res["runs"][0]["blocks"]:
        if b["phase"] == "colocated":
            assert b["foreign_load"]["own_cpus"] < 1.3, "two busy tenants on one core use one CPU between them"
    assert res["summary"]["pass"] is False and res["summary"]["passed"] == 0


def test_exclusive_mode_measures_the_baseline_only(runner, tmp_path):
    r, res, _ = run_ok(runner, tmp_path, scenario("base", [compute("a"), compute("b")], mode="exclusive", duration=0.5),
                       *LENIENT, expect=(0,))
    for t in res["runs"][0]["tenants"]:
        assert t["verdict"] == "baseline"
        assert t["phases"]["colocated"]["worker"]["status"] == "not_run"
        assert t["phases"]["exclusive"]["stats"]["n"] > 0
        assert t["metrics"] is None
    assert res["summary"]["pass"] is True and res["summary"]["baseline"] == 2


def test_too_few_samples_is_inconclusive_never_pass(runner, tmp_path):
    doc = scenario("short", [compute("a", n=256, reps=4), compute("b", n=256, reps=4)], duration=0.3)
    r, res, _ = run_ok(runner, tmp_path, doc, *LENIENT, expect=(5,))
    for t in res["runs"][0]["tenants"]:
        assert t["verdict"] == "inconclusive"
        assert "at least 72 values" in t["verdict_reason"]
    assert res["summary"]["pass"] is False and res["summary"]["inconclusive"] == 2
    assert res["summary"]["exit_code"] == 5


def test_cli_overrides_and_no_raw(runner, tmp_path):
    doc = scenario("ovr", [compute("a")], mode="exclusive", duration=5, cutoff=0.2, repetitions=1)
    r, res, _ = run_ok(runner, tmp_path, doc, *LENIENT, "--duration", "0.3", "--warmup", "0.1", "--repeat", "2",
                       "--cutoff", "0.5", "--no-raw", expect=(0,))
    assert [run["repetition"] for run in res["runs"]] == [1, 2]
    for run in res["runs"]:
        assert run["duration_s"] == 0.3 and run["warmup_s"] == 0.1 and run["cutoff"] == 0.5
        assert run["repetitions"] == 2
        for t in run["tenants"]:
            for ph in t["phases"].values():
                assert "samples" not in ph
    assert res["meta"]["raw_samples"] is False
    # A phase of about 0.3 s over 3 rounds: each block measured for the 0.1 s it was given.
    for b in res["runs"][0]["blocks"]:
        assert 0.1 <= (b["end_ns"] - b["start_ns"]) / 1e9 < 0.8


def test_workload_counters_are_summed_over_counted_samples(runner, tmp_path):
    copy = {"name": "c", "workload": "host-copy", "params": {"mib": 4, "reps": 2}}
    r, res, _ = run_ok(runner, tmp_path, scenario("ctr", [copy, compute("x")], duration=0.6), *LENIENT)
    t = res["runs"][0]["tenants"][0]
    assert t["work_per_sample"] == {"value": 2 * 2 * 4 * 2 ** 20, "unit": "B"}
    for name in ("exclusive", "colocated"):
        ph = t["phases"][name]
        s = ph["samples"]
        column = s["counters"]["bytes_copied"]
        assert len(column) == len(s["duration_s"]) and set(column) == {2 * 4 * 2 ** 20}
        counted = [d for d, w in zip(s["duration_s"], s["in_window"]) if w]
        total = 2 * 4 * 2 ** 20 * len(counted)
        assert ph["counters"]["bytes_copied"]["total"] == total
        assert abs(ph["counters"]["bytes_copied"]["rate_per_s"] - total / sum(counted)) < 1e-6 * total
        # bytes copied per second is exactly half the read+written throughput
        assert abs(ph["counters"]["bytes_copied"]["rate_per_s"] * 2 - ph["throughput"]["value"]) < 1e-6 * total
    assert "counters" not in res["runs"][0]["tenants"][1]["phases"]["exclusive"]


def test_the_bootstrap_is_reproducible_from_the_seed(runner, tmp_path):
    doc = scenario("seed", [compute("a"), compute("b")], duration=1.0)
    f = runner.write_json("s.json", doc)
    runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "o1", "--seed", "7", *LENIENT)
    res = load_results(tmp_path / "o1")
    assert res["meta"]["bootstrap"] == {"seed": 7, "resamples": 1000}
    est = res["runs"][0]["tenants"][1]["metrics"]["p95_slowdown"]
    assert est["seed"] == 8  # seed + tenant index
    assert est["resamples"] == 1000 and est["method"].startswith("paired round bootstrap")
    # Another run with the same seed seeds its bootstraps the same way (same data, same CI: unit-tested).
    runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "o2", "--seed", "7", *LENIENT)
    res2 = load_results(tmp_path / "o2")
    assert [t["metrics"]["p95_slowdown"]["seed"] for t in res2["runs"][0]["tenants"]] == [7, 8]
    assert [a["metrics"]["p95_slowdown"]["seed"] for a in res2["aggregates"]] == [7, 8]


def test_mode_override_applies_to_every_scenario_of_the_suite(runner, tmp_path):
    runner.suite("two", [scenario("one", [compute("a")], duration=0.3), scenario("two", [compute("b")], duration=0.3)])
    r = runner.run("--backend", "host", "--suite", "two", "--mode", "exclusive", "--out", tmp_path / "out", *LENIENT)
    assert r.returncode == 0, r.stderr
    res = load_results(tmp_path / "out")
    assert [run["scenario"] for run in res["runs"]] == ["one", "two"]
    assert {run["mode"] for run in res["runs"]} == {"exclusive"}
    assert res["meta"]["suite"] == "two"


@pytest.mark.serial
@pytest.mark.measurement
def test_streams_mode_runs_the_colocated_tenants_in_one_process(runner, tmp_path):
    # Samples of 10-20 ms (reps 16), several scheduler slices: two threads sharing a core then each run at
    # half speed in every sample, not only in the tail (at reps 4, 1-7 ms on this VM, a sample often fit in
    # one slice and the median saw no neighbour: median slowdowns of -0.06 to +0.2 in CI-like runs).
    doc = scenario("in-process", [compute("a", n=128, reps=16, cpus=[0]), compute("b", n=128, reps=16, cpus=[0])],
                   mode="streams", duration=3.0)
    # Default foreign-load limits: another process on CPU 0 in some blocks and not others would change
    # the answer, so the known answer is judged only when every block was clean.
    r, res, out = run_ok(runner, tmp_path, doc)
    run = res["runs"][0]
    assert run["mode"] == "streams" and run["status"] == "ok"
    quiet = all(b["status"] == "clean" for b in run["blocks"])
    logs = {t["name"]: t["phases"]["colocated"]["worker"]["log"] for t in run["tenants"]}
    assert logs["a"] == logs["b"] == str(out / "logs" / "in-process-streams-r1-streams-all.log"), "one worker process"
    assert run["tenants"][0]["phases"]["exclusive"]["worker"]["log"] != run["tenants"][1]["phases"]["exclusive"]["worker"]["log"]
    for t in run["tenants"]:
        assert t["phases"]["alone"]["source"] == "exclusive"
        assert t["verdict"] != "pass", "two threads on one core are never within the cutoff"
        if not quiet:
            continue
        # Every colocated block kept its samples: at about half speed, about half the exclusive count
        # (a ratio, so a sanitizer build's slower samples do not matter).
        n_alone, n_colocated = t["phases"]["exclusive"]["stats"]["n"], t["phases"]["colocated"]["stats"]["n"]
        assert n_colocated >= 0.25 * n_alone, (n_colocated, n_alone)
        # Both threads pinned to CPU 0 (per-thread affinity) share one core, so each runs at about half speed
        # (a median slowdown near 1), yet when this VM's CPU speed changed between the exclusive and colocated
        # blocks a CI run saw -0.01 (2d50f3f, 2026-12-05). The pinning is asserted below by CPU accounting (without
        # it the two threads use two CPUs); this bound only catches phases taken for one another (about -0.5).
        assert t["metrics"]["median_slowdown"] > -0.25, t["metrics"]
    for b in run["blocks"]:
        if b["phase"] == "colocated":
            assert b["foreign_load"]["own_cpus"] < 1.3, "the two pinned threads use one CPU between them"
    assert 0 <= run["barrier_skew_s"] < 0.5


def test_streams_mode_a_crash_takes_every_tenant_of_the_process(runner, tmp_path):
    bad = fault("bad", "crash", at_sample=5, at_block=1, count_file=str(tmp_path / "starts.ib-fault-count"), at_start=2)
    doc = scenario("in-process-crash", [bad, compute("good")], mode="streams", duration=1.0, warmup=0.02)
    r, res, _ = run_ok(runner, tmp_path, doc, *LENIENT, expect=(4,))
    run = res["runs"][0]
    assert [t["phases"]["colocated"]["worker"]["status"] for t in run["tenants"]] == ["crashed", "crashed"]
    assert [t["verdict"] for t in run["tenants"]] == ["error", "error"]


def latency(name, **params):
    return {"name": name, "workload": "host-latency", "params": {"n": 32, "requests": 50, **params}}


def test_a_derived_arrival_rate_is_measured_once_and_offered_in_every_phase(runner, tmp_path):
    # host-latency derives its rate from `load` and the service time measured in setup. Calibrating
    # again in the colocated phase (with the neighbour already running) would lower the offered
    # load and hide interference; the harness passes the first phase's rate to the later ones.
    _, doc, _ = run_ok(runner, tmp_path, scenario("lat", [latency("victim"), compute("aggressor")], duration=1.0), *LENIENT)
    t = doc["runs"][0]["tenants"][0]
    rates = [t["phases"][p]["worker"]["resolved"]["rate"] for p in ("exclusive", "colocated")]
    assert rates[0] > 0 and rates[0] == rates[1], rates
    assert t["metrics"]["basis"] == "request_latency"
    # a workload that resolves nothing reports an empty object
    assert doc["runs"][0]["tenants"][1]["phases"]["colocated"]["worker"]["resolved"] == {}


def test_an_explicit_rate_is_offered_unchanged(runner, tmp_path):
    _, doc, _ = run_ok(runner, tmp_path, scenario("lat", [latency("victim", rate=400.0), compute("aggressor")]), *LENIENT)
    t = doc["runs"][0]["tenants"][0]
    assert [t["phases"][p]["worker"]["resolved"]["rate"] for p in ("exclusive", "colocated")] == [400.0, 400.0]
    # 50 requests expected per sample at 400/s: a sample is a 125 ms slice of the arrival schedule
    assert 0.08 < t["phases"]["exclusive"]["stats"]["median"] < 0.25
