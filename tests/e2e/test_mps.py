"""Mode mps with a fake nvidia-cuda-mps-control first on PATH: private folders, per-client
environment, the alone phase under MPS, the daemon quit on every exit path, and attach-only."""
import json
import os
import signal
from pathlib import Path

import pytest

from conftest import LENIENT, SOURCE_DIR, compute, fault, load_results, scenario, wait_for

FAKES = SOURCE_DIR / "tests" / "fakes" / "bin"


@pytest.fixture
def mps(runner, tmp_path):
    log = tmp_path / "mps.log"
    log.touch()
    runner.env["PATH"] = f"{FAKES}:{os.environ['PATH']}"
    runner.env["FAKE_MPS_LOG"] = str(log)
    return log


def calls(log):
    return [line.split(" pipe=")[0] for line in log.read_text().splitlines()]


def pipe_of(log):
    return log.read_text().splitlines()[0].split(" pipe=")[1].split(" log=")[0]


def daemon_started_with(log):
    """The CUDA_MPS_* variables other than the pipe and log folders that the daemon was started with."""
    return log.read_text().splitlines()[0].split(" other=")[1].strip()


def mps_tenants():
    a = compute("a")
    a["placement"] = {"mps_active_thread_percentage": 50, "mps_pinned_mem_limit": "2G"}
    b = compute("b")
    b["placement"] = {"mps_active_thread_percentage": 30}
    return [a, b]


def test_mps_run_gives_each_client_its_environment_and_quits_the_daemon(runner, tmp_path, mps):
    # MPS settings of the user's shell must reach no worker: the harness decides them per phase.
    runner.env.update(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="7", CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=1G",
                      CUDA_MPS_PIPE_DIRECTORY="/tmp/nvidia-mps", CUDA_MPS_CLIENT_PRIORITY="1")
    f = runner.write_json("s.json", scenario("mps-pair", mps_tenants(), mode="mps", duration=1.0))
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, *LENIENT)
    assert r.returncode in (0, 1, 5), r.stderr
    assert calls(mps)[0] == "start" and calls(mps)[-1] == "quit"
    assert set(calls(mps)[1:-1]) == {"get_server_list"}
    pipe = pipe_of(mps)
    assert pipe.startswith("/tmp/ib-run-") and pipe.endswith("/mps1")
    assert not Path(pipe).exists(), "the private temporary folder is removed"
    assert f"log={out}/logs/mps1" in mps.read_text()
    assert daemon_started_with(mps) == "", "the shell's MPS settings would become every server's defaults"
    res = load_results(out)
    run = res["runs"][0]
    assert run["mode"] == "mps" and run["status"] == "ok"
    cfg = run["mode_config"]["mps"]
    assert cfg["pipe_directory"] == pipe and "private" in cfg["daemon"]
    assert "every client" in cfg["fault_propagation"]
    assert f"- mps-pair (mps): {cfg['fault_propagation']}" in (out / "summary.md").read_text()
    a, b = run["tenants"]
    # the exclusive phase runs without MPS: its pipe folder is a private empty one, not a daemon's
    for t in run["tenants"]:
        for ph in t["phases"].values():
            assert "CUDA_MPS_CLIENT_PRIORITY" not in ph["worker"]["env"]
    no_mps = a["phases"]["exclusive"]["worker"]["env"]
    assert list(no_mps) == ["CUDA_MPS_PIPE_DIRECTORY"], no_mps
    assert no_mps["CUDA_MPS_PIPE_DIRECTORY"].startswith("/tmp/ib-run-")
    assert no_mps["CUDA_MPS_PIPE_DIRECTORY"].endswith("/no-mps")
    for phase in ("alone", "colocated"):
        assert a["phases"][phase]["source"] == "measured"
        assert a["phases"][phase]["worker"]["env"] == {
            "CUDA_MPS_PIPE_DIRECTORY": pipe, "CUDA_MPS_LOG_DIRECTORY": f"{out}/logs/mps1",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "50", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=2G"}
        assert b["phases"][phase]["worker"]["env"]["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "30"
        assert "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT" not in b["phases"][phase]["worker"]["env"]
    for t in run["tenants"]:
        m = t["metrics"]
        assert m["partition_cost"] == pytest.approx(
            t["phases"]["alone"]["stats"]["median"] / t["phases"]["exclusive"]["stats"]["median"])
        assert m["interference"] == pytest.approx(
            t["phases"]["colocated"]["stats"]["median"] / t["phases"]["alone"]["stats"]["median"])


# The bad tenant's processes: 1st start the plain one (exclusive blocks), 2nd the MPS client (alone and
# colocated blocks); only the client faults, 40 ms into the block named. Its blocks in round 0: its alone block (its 1st), then the
# colocated one (its 2nd).
@pytest.mark.parametrize("action,at_block,phase,status", [
    ("crash", 2, "colocated", "crashed"),
    ("hang", 1, "alone", "timeout"),
])
def test_daemon_is_quit_when_a_worker_fails(runner, tmp_path, mps, action, at_block, phase, status):
    bad = fault("bad", action, at_sample=10, at_block=at_block, at_ms=40, count_file=str(tmp_path / "starts.ib-fault-count"),
                at_start=2)
    f = runner.write_json("s.json", scenario("mps-fail", [bad, compute("good")], mode="mps", duration=0.5, warmup=0.02))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--timeout-margin", "1.5", *LENIENT)
    assert r.returncode == 4, r.stderr
    assert calls(mps)[0] == "start" and calls(mps)[-1] == "quit"
    res = load_results(tmp_path / "out")
    assert res["runs"][0]["tenants"][0]["phases"][phase]["worker"]["status"] == status
    assert res["runs"][0]["message"].startswith(f"{phase} phase failed: bad {status}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_daemon_is_quit_on_sigint_and_sigterm(runner, tmp_path, mps, sig):
    # Blocks of 1 s: the signal arrives once the MPS clients are being started (after the plain workers).
    runner.suite("sig", [scenario("mps-long", [compute("a"), compute("b")], mode="mps", duration=3, warmup=0.05)])
    out = tmp_path / "out"
    p = runner.popen("--backend", "host", "--suite", "sig", "--out", out)
    wait_for((out / "logs" / "mps-long-mps-r1-mps-a.log").exists, process=p)
    p.send_signal(sig)
    p.communicate(timeout=30)
    assert p.returncode == 130
    assert calls(mps)[0] == "start" and calls(mps)[-1] == "quit"
    assert load_results(out)["runs"][0]["status"] == "interrupted"


def test_a_collectives_ranks_meet_only_the_ranks_of_their_own_worker_set(runner, tmp_path, mps):
    # Issue 35: mode mps keeps two sets of workers alive for the repetition, plain (exclusive blocks) and MPS
    # clients; each set's ranks form their own communicator. The rendezvous was once shared by the two sets, and
    # a rank could read the other set's address (gloo: "Connection refused"). Here that was a race this test
    # passed; test_mig.py's ranks test failed on it every time. Each rank's MPS share is its own placement's.
    if "built without gloo" in runner.run("list", "workloads").stdout:
        pytest.skip("built without gloo (libgloo-dev)")
    ar = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 64}, "ranks": 2,
          "rank_placements": [{"mps_active_thread_percentage": 40}, {"mps_active_thread_percentage": 60}]}
    f = runner.write_json("s.json", scenario("mps-ranks", [ar, compute("g")], mode="mps", duration=0.4))
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    run = load_results(out)["runs"][0]
    assert run["status"] == "ok", run["message"]
    t = next(t for t in run["tenants"] if t["name"] == "ar")
    for phase in ("exclusive", "alone", "colocated"):
        assert len(t["phases"][phase]["samples"]["rank_duration_s"]) == 2, phase
    # each rank's share is its own placement's (the phase records one rank's worker)
    assert t["phases"]["alone"]["worker"]["env"]["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] in ("40", "60")


def test_daemon_that_does_not_answer_is_quit_and_refused(runner, tmp_path, mps):
    runner.env["FAKE_MPS_NO_ANSWER"] = "1"
    f = runner.write_json("s.json", scenario("mute", [compute("a")], mode="mps", duration=0.3))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3
    assert "does not answer" in r.stderr
    assert calls(mps)[0] == "start" and calls(mps)[-1] == "quit"
    # The daemon starts before any worker: nothing ran, so no results file (issue 20: one that holds no
    # run could be taken for an empty pass); the summary says the run stopped.
    assert not (tmp_path / "out" / "results.json").exists()
    assert (tmp_path / "out" / "summary.md").exists()


def test_daemon_that_cannot_start_gives_exit_3(runner, tmp_path, mps):
    runner.env["FAKE_MPS_FAIL_START"] = "1"
    f = runner.write_json("s.json", scenario("nostart", [compute("a")], mode="mps", duration=0.3))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3
    assert "cannot start the MPS control daemon" in r.stderr and "fake: cannot start" in r.stderr
    assert calls(mps) == ["start"], "nothing to quit when it never started"


def test_attach_only_never_starts_or_stops_the_daemon(runner, tmp_path, mps):
    pipe = tmp_path / "existing-pipe"
    pipe.mkdir()
    (pipe / "control").touch()
    f = runner.write_json("s.json", scenario("attach", [compute("a"), compute("b")], mode="mps", duration=0.5))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--mps-pipe-dir", pipe, *LENIENT)
    assert r.returncode in (0, 1, 5), r.stderr
    assert "start" not in calls(mps) and "quit" not in calls(mps)
    assert (pipe / "control").exists(), "the attached daemon keeps running"
    run = load_results(tmp_path / "out")["runs"][0]
    assert "attached" in run["mode_config"]["mps"]["daemon"]
    assert run["tenants"][0]["phases"]["colocated"]["worker"]["env"]["CUDA_MPS_PIPE_DIRECTORY"] == str(pipe)


def test_missing_mps_binary_is_exit_3_before_anything_runs(runner, tmp_path):
    runner.env["PATH"] = "/nonexistent:/usr/bin:/bin"
    if any(Path(d, "nvidia-cuda-mps-control").exists() for d in ("/usr/bin", "/bin")):
        pytest.skip("a real nvidia-cuda-mps-control is installed")
    f = runner.write_json("s.json", scenario("nomps", [compute("a")], mode="mps", duration=0.3))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3
    assert "nvidia-cuda-mps-control is not on PATH" in r.stderr
    assert not (tmp_path / "out").exists()


def test_mps_pipe_dir_needs_mode_mps(runner, tmp_path):
    f = runner.write_json("s.json", scenario("ts", [compute("a")], duration=0.3))
    r = runner.run("--backend", "host", "--scenario", f, "--mps-pipe-dir", tmp_path, "--out", tmp_path / "out")
    assert r.returncode == 2 and "--mps-pipe-dir: only used with mode mps" in r.stderr


FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")


def mps_run_with_gpu_processes(runner, tmp_path, name, *processes, workers_listed=True, runs=False):
    """An MPS run whose fake NVML lists the workers (as a real NVML lists CUDA processes; not with
    workers_listed=False, as a real NVML under MPS, which lists the server), the fake MPS server and
    `processes`, with the GPU side of foreign-load control on (--telemetry-hz on the host). Its blocks, or
    with runs=True the run."""
    servers = tmp_path / f"{name}-servers.pids"
    runner.env["FAKE_MPS_SERVER_PIDS"] = str(servers)
    listed = [{"children": True, "used_mb": 500}] if workers_listed else []
    listed += [{"pid_file": str(servers), "used_mb": 30}, *processes]
    cfg = runner.write_json(f"{name}-nvml.json", {"devices": [{"name": "NVIDIA H200", "processes": listed}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    f = runner.write_json(f"{name}.json", scenario(name, [compute("a"), compute("b")], mode="mps", duration=0.6,
                                                   warmup=0.05))
    out = tmp_path / name
    r = runner.run("--backend", "host", "--telemetry-hz", "20", "--scenario", f, "--out", out, "--max-reruns", "0",
                   *LENIENT)
    assert r.returncode in (0, 1, 5), r.stderr
    assert servers.read_text().split(), "the fake daemon started a server"
    run = load_results(out)["runs"][0]
    return run if runs else run["blocks"]


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_a_tenants_gpu_memory_that_nvml_does_not_list_is_unknown_not_zero(runner, tmp_path, mps):
    # Issue 34 (item 8): under MPS NVML lists the MPS server, not its clients: the tenants' memory is unknown
    # (null), never 0 bytes, which the advice would read as "uses no GPU memory".
    run = mps_run_with_gpu_processes(runner, tmp_path, "server-only", workers_listed=False, runs=True)
    for t in run["tenants"]:
        for phase in ("alone", "colocated"):
            # The writer leaves out what is unknown (it wrote peak_bytes 0 before).
            assert t["phases"][phase].get("gpu_memory") is None, (t["name"], phase, t["phases"][phase]["gpu_memory"])
    # Where NVML lists the workers, their memory is known.
    run = mps_run_with_gpu_processes(runner, tmp_path, "listed", runs=True)
    assert all(t["phases"]["colocated"]["gpu_memory"]["peak_bytes"] == 500 << 20 for t in run["tenants"]), run["tenants"]


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_the_mps_server_is_this_runs_and_a_foreign_gpu_process_still_counts(runner, tmp_path, mps):
    # NVML lists the MPS server as a compute process: it is ours (get_server_list), never a neighbour.
    blocks = mps_run_with_gpu_processes(runner, tmp_path, "server")
    assert blocks and [b["status"] for b in blocks] == ["clean"] * len(blocks), blocks
    assert {b["foreign_load"]["gpu_foreign_processes"] for b in blocks} == {0}
    # A process that is neither a worker nor the server still contaminates every block.
    blocks = mps_run_with_gpu_processes(runner, tmp_path, "foreign", {"pid": 1, "used_mb": 1024})
    assert {b["status"] for b in blocks} == {"excluded"}, blocks
    assert {b["foreign_load"]["gpu_foreign_processes"] for b in blocks} == {1}
    assert "1 GPU compute process(es) that are not this run's" in blocks[0]["reason"]
