"""Rounds of interleaved blocks, foreign-load control, verdicts on the CI, the aggregate over
repetitions and exit code 5, on host workloads."""
import subprocess
import sys

import pytest

from conftest import LENIENT, compute, load_results, scenario


def run(runner, tmp_path, doc, *extra):
    f = runner.write_json("s.json", doc)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, *extra, timeout=180)
    return r, load_results(out)


@pytest.mark.serial
@pytest.mark.measurement
def test_a_cpu_hog_beside_the_workers_contaminates_blocks_never_a_confident_pass(runner, tmp_path):
    # A busy loop pinned to CPU 0 for the whole run, beside a tenant pinned there: every block sees
    # about 0.5-1 CPU of foreign load, far above the default 0.25.
    hog = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"], env=runner.env)
    try:
        doc = scenario("hogged", [compute("a", cpus=[0]), compute("b", cpus=[1])], duration=1.5)
        r, res = run(runner, tmp_path, doc, "--max-reruns", "2")
    finally:
        hog.kill()
        hog.wait()
    assert r.returncode == 5, r.stdout + r.stderr
    blocks = res["runs"][0]["blocks"]
    assert {b["status"] for b in blocks} <= {"contaminated", "excluded"}
    # The first contaminated blocks were re-run (attempts 2 and 3), then no re-run was left.
    assert [b["attempt"] for b in blocks[:3]] == [1, 2, 3]
    assert sum(b["status"] == "contaminated" for b in blocks) == 2
    for b in blocks:
        assert b["foreign_load"]["foreign_cpus"] > 0.25, b
        assert "not this run's" in b["reason"]
    for a in res["aggregates"]:
        assert a["verdict"] == "inconclusive" and "foreign load" in a["verdict_reason"], a
    assert res["summary"]["exit_code"] == 5 and res["summary"]["pass"] is False
    # The terminal says the blocks did not count; summary.md lists each of them.
    assert "block(s) not counted" in r.stdout
    assert "**excluded**" in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.measurement
def test_a_quiet_block_is_clean_and_each_block_records_its_load(runner, tmp_path):
    _, res = run(runner, tmp_path, scenario("plain", [compute("a")], mode="exclusive", duration=0.6), *LENIENT)
    for b in res["runs"][0]["blocks"]:
        assert b["status"] == "clean" and b["attempt"] == 1
        load = b["foreign_load"]
        assert load["seconds"] > 0.15 and load["foreign_cpus"] >= 0 and load["steal_cpus"] >= 0
        # One busy worker on one core: never more than a CPU (and the harness's bit); it keeps at least
        # one CPU busy, all of it when nothing else wants the machine.
        assert load["own_cpus"] < 1.5
        assert load["own_cpus"] + load["foreign_cpus"] > 0.5
        if load["foreign_cpus"] < 0.3:
            assert load["own_cpus"] > 0.5
        assert load["gpu_foreign_processes"] is None  # no GPU on the host backend
    assert res["meta"]["foreign_load_limits"] == {"max_foreign_cpus": 64, "max_steal_cpus": 64, "max_reruns": 2}


def test_rounds_and_order_are_options(runner, tmp_path):
    doc = scenario("two", [compute("a"), compute("b")], duration=0.8)
    _, res = run(runner, tmp_path, doc, *LENIENT, "--rounds", "4", "--until", "fixed", "--round-order", "shuffle", "--seed", "3")
    runinfo = res["runs"][0]
    assert runinfo["rounds"] == 4 and runinfo["round_order"] == "shuffle"
    per_round = {}
    for b in runinfo["blocks"]:
        per_round.setdefault(b["round"], []).append((b["phase"], tuple(b["tenants"])))
    assert sorted(per_round) == [0, 1, 2, 3]
    for blocks in per_round.values():
        assert sorted(blocks) == [("colocated", ("a", "b")), ("exclusive", ("a",)), ("exclusive", ("b",))]


def test_repetitions_are_judged_together_in_one_aggregate(runner, tmp_path):
    doc = scenario("reps", [compute("a"), compute("b")], duration=0.6)
    r, res = run(runner, tmp_path, doc, *LENIENT, "--repeat", "2")
    assert [x["repetition"] for x in res["runs"]] == [1, 2]
    assert [a["tenant"] for a in res["aggregates"]] == ["a", "b"]
    for i, a in enumerate(res["aggregates"]):
        assert a["repetitions"] == 2
        assert a["repetition_verdicts"] == [run_["tenants"][i]["verdict"] for run_ in res["runs"]]
        n = sum(run_["tenants"][i]["metrics"]["n"]["exclusive"] for run_ in res["runs"])
        assert a["metrics"]["n"]["exclusive"] == n, "the aggregate pools every repetition's counted samples"
    verdicts = {a["verdict"] for a in res["aggregates"]}
    expected = 1 if "fail" in verdicts else 5 if "inconclusive" in verdicts else 0
    assert res["summary"]["exit_code"] == r.returncode == expected
    assert res["summary"]["tenants"] == 2, "the summary counts aggregates, not repetitions"


def test_without_a_confidence_interval_nothing_passes(runner, tmp_path):
    # Small samples (thousands per phase even in a sanitizer build) so that the reason is the missing
    # interval, not too few values.
    doc = scenario("noci", [compute("a", n=16, reps=2), compute("b", n=16, reps=2)], duration=0.6)
    r, res = run(runner, tmp_path, doc, *LENIENT, "--resamples", "0")
    assert r.returncode == 5, r.stdout
    for a in res["aggregates"]:
        assert a["verdict"] == "inconclusive" and "no confidence interval" in a["verdict_reason"]


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_selftest_reports_its_known_answers_within_its_budget(runner, tmp_path):
    import json
    import time
    t0 = time.monotonic()
    r = runner.run("selftest", "--backend", "host", "--budget", "30", "--out", tmp_path / "st", timeout=120)
    elapsed = time.monotonic() - t0
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    doc = json.loads((tmp_path / "st" / "selftest.json").read_text())
    assert doc["exit_code"] == r.returncode and doc["budget_s"] == 30
    answers = {k["name"]: k for k in doc["known_answers"]}
    assert set(answers) == {"shared_resource", "idle_neighbour"}
    shared, idle = answers["shared_resource"]["aggregate"], answers["idle_neighbour"]["aggregate"]
    # Whatever the machine's noise: two tenants on one core never pass, an idle neighbour never fails.
    assert shared["verdict"] in ("fail", "inconclusive"), shared
    assert idle["verdict"] in ("pass", "inconclusive"), idle
    if shared["verdict"] == "fail":  # judged on clean blocks: one core shared by two is slower than alone
        assert shared["metrics"]["median_slowdown"] > 0.1
    # The resolution is the idle case's CI bound (none when foreign load left it without a clean block).
    if idle["metrics"] is not None and idle["metrics"]["p95_slowdown"]["ci_high"] is not None:
        e = idle["metrics"]["p95_slowdown"]
        assert doc["resolvable_p95_slowdown"] == max(abs(e["ci_low"]), abs(e["ci_high"]))
    else:
        assert doc["resolvable_p95_slowdown"] is None
    assert "Smallest P95 slowdown this machine resolves now" in r.stdout
    assert elapsed < 30 + 30, "within its budget (plus start-up slack on a loaded machine)"
