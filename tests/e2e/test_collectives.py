"""Collectives whose ranks are processes (docs/design.md section 13, issue 35), on the host stand-in: a tenant with
`ranks` runs one worker process per rank, placed on its own CPUs, its ranks meet through the harness's
rendezvous (gloo's store on the worker protocol) and run gloo collectives over loopback TCP; a sample is the
slowest rank's, every rank's duration and arrival are kept, and the straggler is the rank that arrived last. The
runner fixture asserts that no process is left."""
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, load_results, scenario, wait_for

pytestmark = pytest.mark.skipif(
    "built without gloo" in subprocess.run([BINARY, "list", "workloads"], capture_output=True, text=True).stdout,
    reason="built without gloo (libgloo-dev)")


def collective(name="ar", op="allreduce", kib=4096, ranks=2, **params):
    return {"name": name, "role": "victim", "workload": "host-collective",
            "params": {"op": op, "kib": kib, **params}, "ranks": ranks,
            "rank_placements": [{"cpus": [r % os.cpu_count()]} for r in range(ranks)]}


IDLE = {"name": "n", "role": "aggressor", "workload": "host-idle", "params": {"sample_ms": 1.0}}


def ar_agg_amplification(res):
    return next(a for a in res["aggregates"] if a["scenario"] == "coll" and a["tenant"] == "ar")["amplification"]


def rank_worker_pids(runner, rank):
    """This runner's live worker processes (runner.leftover_processes: by its tag) that run `--rank RANK`."""
    found = []
    for pid in runner.leftover_processes():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"worker" in argv and b"--rank" in argv and argv[argv.index(b"--rank") + 1] == str(rank).encode():
            found.append(pid)
    return found


@pytest.mark.parametrize("op", ["allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast"])
def test_each_collective_runs_its_ranks_as_processes_and_keeps_every_ranks_durations(runner, tmp_path, op):
    # Set-up checks every output element (a wrong rendezvous or layout fails the tenant): a run that ends
    # ok is a collective that computed the right thing on both ranks.
    doc = scenario("coll", [collective(op=op, kib=256), IDLE], duration=0.6, warmup=0.2)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                   "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    run = load_results(out)["runs"][0]
    assert run["status"] == "ok", run["message"]
    ar = run["tenants"][0]
    for phase in ("exclusive", "colocated"):
        p = ar["phases"][phase]
        ranks = p["samples"]["rank_duration_s"]
        assert len(ranks) == 2 and len(ranks[0]) == len(ranks[1]) == len(p["samples"]["duration_s"]) > 0
        # the sample is the slowest rank's
        assert p["samples"]["duration_s"] == [max(a, b) for a, b in zip(*ranks)]
        # every rank's arrival, on one clock: the sample starts at the first; the straggler is the rank that
        # arrived last in the most counted samples (the lower rank on an exact tie), with that share
        arrivals = p["samples"]["rank_start_ns"]
        assert len(arrivals) == 2 and p["samples"]["start_ns"] == [min(a, b) for a, b in zip(*arrivals)]
        counted = [k for k, c in enumerate(p["samples"]["counted"]) if c]
        last_one = sum(1 for k in counted if arrivals[1][k] > arrivals[0][k])
        rank, most = (1, last_one) if last_one > len(counted) - last_one else (0, len(counted) - last_one)
        assert p["ranks"] == {"count": 2, "straggler_rank": rank, "straggler_share": pytest.approx(most / len(counted))}
    assert ar["work_per_sample"] == {"value": 256 * 1024, "unit": "B"}
    # Each sample's longest single collective (rank 0's), which the stall margin is judged on: within the
    # sample, and a figure per sample, never summed into the phase's counters.
    p = ar["phases"]["colocated"]
    longest = p["samples"]["counters"]["longest_collective_s"]
    assert all(0 < l <= d for l, d in zip(longest, p["samples"]["duration_s"])), (longest, p["samples"]["duration_s"])
    assert "longest_collective_s" not in p.get("counters", {})
    logs = sorted(f.name for f in (out / "logs").iterdir())
    assert any(n.endswith("-ar-rank0.log") for n in logs) and any(n.endswith("-ar-rank1.log") for n in logs)


@pytest.mark.parametrize("sig, warmup, says", [
    # SIGKILL whenever rank 1 is seen: during the rendezvous or a block, the outcome is the same tenant error.
    (signal.SIGKILL, 0.2, "rank 1: "),
    # SIGSTOP: rank 1 never publishes its address (a 2 s warm-up: the stop lands before it could be ready);
    # rank 0 gives up at gloo's timeout and the error names rank 1 in front; the stopped rank is killed too.
    (signal.SIGSTOP, 2.0, "rank 1 never got ready; rank 0: "),
])
def test_a_rank_killed_or_never_ready_is_the_tenants_error_naming_it_and_nothing_is_left(runner, tmp_path, sig,
                                                                                         warmup, says):
    doc = scenario("coll", [collective(timeout_s=2.0), IDLE], duration=4.0, warmup=warmup)
    out = tmp_path / "out"
    p = runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                     "--rounds", "2", "--until", "fixed", *LENIENT)
    wait_for(lambda: rank_worker_pids(runner, 1), timeout=60, process=p)
    for pid in rank_worker_pids(runner, 1):
        os.kill(pid, sig)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 4, stdout + stderr
    run = load_results(out)["runs"][0]
    assert run["status"] == "error" and says in run["message"], run["message"]


def test_ranks_are_only_for_a_collective_and_need_one_placement_each(runner, tmp_path):
    bad = [({**IDLE, "ranks": 2}, "tenants[0].ranks: \"host-idle\" is not a collective"),
           ({**collective(), "rank_placements": [{"cpus": [0]}]}, "tenants[0].rank_placements: expected an array of 2")]
    for tenant, says in bad:
        r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", scenario("x", [tenant])),
                       "--out", tmp_path / "out")
        assert r.returncode == 2 and says in r.stderr, r.stderr


# ------------------------------------------------------------------ known answers (real processes)

@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.parametrize("neighbour, core, duration", [("hog", 1, 2.5), ("hog", 0, 2.5), ("idle", 1, 4.0)])
def test_the_straggler_is_the_rank_whose_core_a_hog_shares(runner, tmp_path, neighbour, core, duration):
    # docs/scenarios.md's collective example (8 MiB allreduces, each rank writing its input 24 times first, ranks on
    # cores 0 and 1) with a neighbour on one rank's core. A hog slows that rank's own work, so it arrives last
    # at the collective, by tens of milliseconds: named in 82-100% of samples over 6 runs on this VM (median
    # 100%). With its input written once the rank's own work fits in the few milliseconds a woken task runs
    # before it shares its core, and a hog's rank was named in only 45-83%. Beside an idle neighbour (waking 10
    # times a second) neither rank should be named more than chance: 53-64% over 7 runs of ~80 samples. The
    # bound is 80%, not 65%: arrivals are autocorrelated (runs of samples with the same late rank), so a share
    # spreads wider than a coin's and chance alone crossed 65%; what the bound catches is a fixed order, as
    # gloo's one-int allreduce vote gave (rank 1 late in 92-100% of samples with no neighbour at all). The
    # default foreign-load limits: a block someone else's load reached is run again or not counted, since that
    # load makes the rank on its core late as a hog does.
    if os.cpu_count() < 2:
        pytest.skip("needs two CPUs (one per rank)")
    other = ({"name": "n", "role": "aggressor", "workload": "host-compute", "params": {"n": 256}} if neighbour == "hog"
             else {**IDLE, "params": {"sample_ms": 100.0}})
    doc = scenario("coll", [collective(kib=8192, input_passes=24), {**other, "placement": {"cpus": [core]}}],
                   duration=duration, warmup=0.3)
    out = tmp_path / "out"
    # One round: the straggler is a colocated figure, and the exclusive block it also runs is spent time.
    r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                   "--rounds", "1", "--until", "fixed")
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    run = load_results(out)["runs"][0]
    ar = run["tenants"][0]
    colocated = ar["phases"]["colocated"]
    n, enough = sum(colocated["samples"]["counted"]), 60 if neighbour == "idle" else 15
    if "ranks" not in colocated or n < enough:
        dirty = sorted({b["reason"] for b in run["blocks"] if b["status"] != "clean"})
        pytest.skip(f"{n} clean colocated samples, fewer than {enough}: {ar['verdict_reason']}; {dirty[:2]}")
    ranks = colocated["ranks"]
    if neighbour == "hog":
        assert ranks["straggler_rank"] == core and ranks["straggler_share"] >= 0.70, ranks
    else:
        assert ranks["straggler_share"] <= 0.80, ranks


def test_amplification_sets_the_collective_against_its_shared_rank_alone(runner, tmp_path):
    # "amplification": true adds the scenario's single-rank reference (the rank that shares a CPU with the
    # neighbour, run alone as one rank beside it) after it; the collective's aggregate carries both P95
    # slowdowns and their ratio, and summary.md says it. The known answer is the long test below.
    if os.cpu_count() < 2:
        pytest.skip("needs two CPUs (one per rank)")
    doc = scenario("coll", [{**collective(kib=4096), "amplification": True}, {**IDLE, "placement": {"cpus": [1]}}],
                   duration=0.6, warmup=0.2)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                   "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    res = load_results(out)
    assert [run["scenario"] for run in res["runs"]] == ["coll", "coll.single-rank"]
    assert all(run["status"] == "ok" for run in res["runs"]), [run["message"] for run in res["runs"]]
    one = res["runs"][1]["tenants"][0]
    assert one["name"] == "ar" and one["placement"] == {"cpus": [1]}  # where rank 1 ran
    agg = next(a for a in res["aggregates"] if a["scenario"] == "coll" and a["tenant"] == "ar")
    ref = next(a for a in res["aggregates"] if a["scenario"] == "coll.single-rank" and a["tenant"] == "ar")
    amp = agg["amplification"]
    assert amp["reference_scenario"] == "coll.single-rank" and "amplification" not in ref
    assert amp["collective_p95_slowdown"] == agg["metrics"]["p95_slowdown"]["value"]
    assert amp["single_rank_p95_slowdown"] == ref["metrics"]["p95_slowdown"]["value"]
    if amp["single_rank_p95_slowdown"] < 0.01:
        assert amp["value"] is None
    else:
        assert amp["value"] == pytest.approx(amp["collective_p95_slowdown"] / amp["single_rank_p95_slowdown"])
    assert "amplification" not in next(a for a in res["aggregates"] if a["scenario"] == "coll" and a["tenant"] == "n")
    assert "coll (timeslice), ar: amplification" in (out / "summary.md").read_text()
    rep = runner.run("report", out / "results.json", "--junit", tmp_path / "j.xml")
    assert rep.returncode not in (2, 3, 70), rep.stderr


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
@pytest.mark.parametrize("neighbour", ["hog", "idle"])
def test_a_neighbour_on_one_ranks_core_slows_the_whole_collective(runner, tmp_path, neighbour):
    # A CPU hog on rank 1's core: every collective waits for rank 1, so both ranks' iterations slow (the
    # blast radius is the whole job); an idle neighbour slows nothing. 32 MiB allreduces: each rank's
    # reduction is a burst long enough that the scheduler shares the core with the hog instead of letting
    # the woken rank pre-empt it at once (with 4 MiB the median slowed by ~5%, here by ~40%).
    if os.cpu_count() < 2:
        pytest.skip("needs two CPUs (one per rank)")
    other = {"name": "hog", "role": "aggressor", "workload": "host-compute", "params": {"n": 256},
             "placement": {"cpus": [1]}} if neighbour == "hog" else IDLE
    ar = {**collective(kib=32768), "amplification": True} if neighbour == "hog" else collective(kib=32768)
    doc = scenario("coll", [ar, other], duration=4.0, warmup=0.3)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                   "--rounds", "4", "--until", "fixed", *LENIENT, "--collective-timeout", "0.001", timeout=300)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    res = load_results(out)
    ar = next(a for a in res["aggregates"] if a["tenant"] == "ar")
    m = res["runs"][0]["tenants"][0]["metrics"]
    c = m["collective"]
    assert c["ranks"] == 2 and c["timeout_s"] == 0.001
    # A 1 ms timeout is shorter than any 32 MiB collective here: the margin says the job would have died.
    assert c["stall_margin"] < 1 and c["longest_stall_s"] > 0.001
    if neighbour == "hog":
        assert ar["verdict"] != "pass" and m["median_slowdown"] > 0.2, (ar["verdict_reason"], m["median_slowdown"])
        assert c["blast_radius"] == 2  # both ranks' iterations slowed: one shared core reached the whole job
        # Its reference: rank 1's allreduce alone as one rank beside the hog slows too (it shares the core),
        # so amplification is defined; the figure itself is reported, not asserted (about 1 here).
        amp = ar_agg_amplification(res)
        assert amp["single_rank_p95_slowdown"] > 0.2 and amp["value"] is not None and amp["value"] > 0, amp
    else:
        # Not "pass" asserted: a loopback collective's P95 on a loaded 2-core machine is too noisy for a known
        # answer at this length (it passed in each run here). Nor a blast radius of 0: its threshold is 10% per
        # rank, and a fresh-clone CI (0df286b) measured the idle case's median at +12.5% across this VM's speed
        # plateaus. What separates it from the hog above (median > +20%, both ranks slowed): a median below that.
        assert ar["verdict"] != "fail" and m["median_slowdown"] < 0.20, (ar["verdict_reason"], m["median_slowdown"])
    summary = (out / "summary.md").read_text()
    assert "ar: blast radius" in summary and "that stall would have ended the job" in summary
