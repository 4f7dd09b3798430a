"""Collectives whose ranks are processes (DESIGN.md section 13, issue 35), on the host stand-in: a tenant with
`ranks` runs one worker process per rank, placed on its own CPUs, its ranks meet through the harness's
rendezvous (gloo's store on the worker protocol) and run gloo collectives over loopback TCP; a sample is the
slowest rank's, every rank's duration is kept. The runner fixture asserts that no process is left."""
import json
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


def rank_worker_pids(tag, rank):
    """The worker processes of this runner that run `--rank RANK`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"IB_TEST_TAG={tag}".encode() in environ and b"worker" in argv and b"--rank" in argv:
            if argv[argv.index(b"--rank") + 1] == str(rank).encode():
                found.append(int(proc.name))
    return found


@pytest.mark.parametrize("op", ["allreduce", "allgather", "alltoall", "broadcast"])
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
        assert p["ranks"]["count"] == 2 and p["ranks"]["straggler_rank"] in (0, 1)
    assert ar["work_per_sample"] == {"value": 256 * 1024, "unit": "B"}
    logs = sorted(f.name for f in (out / "logs").iterdir())
    assert any(n.endswith("-ar-rank0.log") for n in logs) and any(n.endswith("-ar-rank1.log") for n in logs)


def test_a_rank_killed_mid_run_is_the_tenants_error_naming_it_and_nothing_is_left(runner, tmp_path):
    doc = scenario("coll", [collective(timeout_s=5.0), IDLE], duration=20.0, warmup=0.2)
    out = tmp_path / "out"
    p = runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", out,
                     "--rounds", "2", "--until", "fixed", *LENIENT)
    # Killed whenever it is seen: during the rendezvous or a block, the outcome is the same tenant error.
    wait_for(lambda: rank_worker_pids(runner.tag, 1), timeout=60, process=p)
    for pid in rank_worker_pids(runner.tag, 1):
        os.kill(pid, signal.SIGKILL)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 4, stdout + stderr
    run = load_results(out)["runs"][0]
    assert run["status"] == "error"
    assert "rank 1: " in run["message"], run["message"]


def test_ranks_are_only_for_a_collective_and_need_one_placement_each(runner, tmp_path):
    bad = [({**IDLE, "ranks": 2}, "tenants[0].ranks: \"host-idle\" is not a collective"),
           ({**collective(), "rank_placements": [{"cpus": [0]}]}, "tenants[0].rank_placements: expected an array of 2")]
    for tenant, says in bad:
        r = runner.run("--backend", "host", "--scenario", runner.write_json("s.json", scenario("x", [tenant])),
                       "--out", tmp_path / "out")
        assert r.returncode == 2 and says in r.stderr, r.stderr
