"""Runs across nodes (DESIGN.md section 13, issue 36): one harness per node, node 0 conducts. Here the nodes are
harnesses on this machine that reach their conductor over loopback TCP; node 1 runs in its own time namespace
(`unshare --time`), so its CLOCK_MONOTONIC reads 1000 s ahead of the conductor's, a known answer for the clock
offset and for putting its workers' samples on the conductor's timeline. The runner fixture asserts that no
process is left (the node's workers carry the runner's tag too)."""
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, load_results, scenario, wait_for

TOKEN = "test-run-36"
OFFSET_S = 1000  # node 1's CLOCK_MONOTONIC ahead of the conductor's


def can_unshare_time():
    if not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "--time", "--fork", "--monotonic", str(OFFSET_S), "true"], capture_output=True)
    return r.returncode == 0


UNSHARE_TIME = can_unshare_time()
GLOO = "built without gloo" not in subprocess.run([BINARY, "list", "workloads"], capture_output=True, text=True).stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(runner, tmp_path, port, rank=1, nodes=2, token=TOKEN, time_offset=False, *extra):
    argv = [BINARY, "run", "--nodes", str(nodes), "--node-rank", str(rank), "--conductor", f"127.0.0.1:{port}",
            "--token", token, "--out", str(tmp_path / f"node{rank}"), "--join-timeout", "30", *extra]
    if time_offset:
        argv = ["unshare", "--time", "--fork", "--monotonic", str(OFFSET_S), *argv]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=runner.env,
                            stdin=subprocess.DEVNULL)


def conduct(runner, tmp_path, port, doc, *extra, nodes=2, join_timeout="30"):
    return runner.run("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", tmp_path / "out",
                      "--nodes", str(nodes), "--node-rank", "0", "--conductor", f"127.0.0.1:{port}", "--token", TOKEN,
                      "--join-timeout", join_timeout, *LENIENT, *extra, timeout=180)


def compute(name, node, cpu):
    return {"name": name, "workload": "host-compute", "params": {"n": 64, "reps": 4},
            "placement": {"node": node, "cpus": [cpu]}}


@pytest.mark.skipif(not UNSHARE_TIME, reason="no time namespaces here (unshare --time)")
def test_a_tenant_on_node_1_is_measured_on_the_conductors_timeline(runner, tmp_path):
    port = free_port()
    node = start_node(runner, tmp_path, port, time_offset=True)
    doc = scenario("two-nodes", [compute("here", 0, 0), compute("there", 1, 1 % os.cpu_count())])
    r = conduct(runner, tmp_path, port, doc)
    node_out, node_err = node.communicate(timeout=60)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    assert node.returncode == 0, node_err
    res = load_results(tmp_path / "out")
    assert res["schema_version"] == "2.5"
    [n1] = res["meta"]["nodes"]
    assert n1["node_rank"] == 1 and n1["host"]
    # The known answer: node 1's clock reads OFFSET_S ahead, so the conductor's = node's - OFFSET_S, and the
    # estimate is within its stated uncertainty (half the chosen exchange's round trip).
    assert abs(n1["clock_offset_ns"] + OFFSET_S * 10**9) <= n1["clock_uncertainty_ns"] + 1000, n1
    assert 0 <= n1["clock_uncertainty_ns"] < 50_000_000
    assert "node 1" in r.stderr and "clock offset" in r.stderr
    run = res["runs"][0]
    assert run["status"] == "ok", run["message"]
    here, there = (next(t for t in run["tenants"] if t["name"] == name) for name in ("here", "there"))
    # Its samples counted beside the tenant on node 0: they lie in the conductor's overlap window, which they
    # would miss by 1000 s unmoved.
    col = there["phases"]["colocated"]["samples"]
    assert sum(col["counted"]) > 0, col["counted"]
    here_start = here["phases"]["colocated"]["samples"]["start_ns"]
    assert abs(col["start_ns"][0] - here_start[0]) < 5 * 10**9, (col["start_ns"][0], here_start[0])
    assert there["verdict"] in ("pass", "fail", "inconclusive")
    # Its worker ran on node 1: the log is in node 1's --out folder, not the conductor's.
    assert any("there" in p.name for p in (tmp_path / "node1" / "logs").iterdir())
    assert not any("there" in p.name for p in (tmp_path / "out" / "logs").iterdir())


@pytest.mark.skipif(not GLOO, reason="built without gloo (libgloo-dev)")
def test_a_collective_whose_rank_1_is_on_node_1_runs_across_the_two_harnesses(runner, tmp_path):
    port = free_port()
    node = start_node(runner, tmp_path, port, time_offset=UNSHARE_TIME)
    coll = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 256}, "ranks": 2,
            "rank_placements": [{"node": 0, "cpus": [0]}, {"node": 1, "cpus": [1 % os.cpu_count()]}]}
    idle = {"name": "n", "workload": "host-idle", "params": {"sample_ms": 1.0}}
    r = conduct(runner, tmp_path, port, scenario("coll", [coll, idle]))
    node.communicate(timeout=60)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    assert node.returncode == 0
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["status"] == "ok", run["message"]
    ar = run["tenants"][0]
    for phase in ("exclusive", "colocated"):
        ranks = ar["phases"][phase]["samples"]["rank_duration_s"]
        assert len(ranks) == 2 and len(ranks[0]) == len(ranks[1]) > 0


def test_a_node_that_never_joins_is_named_and_the_run_cannot_start(runner, tmp_path):
    port = free_port()
    doc = scenario("two-nodes", [compute("here", 0, 0), compute("there", 1, 0)])
    r = conduct(runner, tmp_path, port, doc, join_timeout="1")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "node(s) 1 did not join the conductor" in r.stderr and "--join-timeout" in r.stderr


def test_a_stranger_is_refused_and_the_run_goes_on_with_its_node(runner, tmp_path):
    port = free_port()
    node = start_node(runner, tmp_path, port, token="someone-else")  # another run's node: refused at its hello
    doc = scenario("two-nodes", [compute("here", 0, 0), compute("there", 1, 0)])
    run = runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", tmp_path / "out",
                       "--nodes", "2", "--node-rank", "0", "--conductor", f"127.0.0.1:{port}", "--token", TOKEN,
                       "--join-timeout", "30", *LENIENT)
    _, stranger_err = node.communicate(timeout=60)
    assert node.returncode == 3 and "not this run's token" in stranger_err, stranger_err
    ours = start_node(runner, tmp_path, port)
    out, err = run.communicate(timeout=120)
    ours.communicate(timeout=60)
    assert run.returncode in (0, 1, 5), err
    assert ours.returncode == 0
    assert "refused a connection" in err and "not this run's token" in err


def test_a_placement_on_a_node_the_run_does_not_have_is_bad_input(runner, tmp_path):
    doc = scenario("two-nodes", [compute("here", 0, 0), compute("there", 2, 0)])
    r = conduct(runner, tmp_path, free_port(), doc, join_timeout="1")
    assert r.returncode == 2 and "placed on node 2" in r.stderr, r.stderr
    r = runner.run("--backend", "host", "--scenario", runner.write_json("s1.json", doc), "--out", tmp_path / "o1", *LENIENT)
    assert r.returncode == 2 and "which needs --nodes" in r.stderr, r.stderr


def test_node_options_are_checked_in_one_line(runner, tmp_path):
    env = {k: v for k, v in runner.env.items() if k not in ("SLURM_NODEID", "JOB_COMPLETION_INDEX", "RANK", "MASTER_ADDR",
                                                             "SLURM_JOB_ID")}
    runner.env = env
    for args, says in [(["--nodes", "2", "--conductor", "127.0.0.1:1", "--token", "t"], "needs this node's rank"),
                       (["--nodes", "2", "--node-rank", "0", "--token", "t"], "needs HOST:PORT"),
                       (["--nodes", "2", "--node-rank", "0", "--conductor", "127.0.0.1"], "is not HOST:PORT"),
                       (["--nodes", "2", "--node-rank", "2", "--conductor", "127.0.0.1:1", "--token", "t"], "not one of 0..1"),
                       (["--nodes", "2", "--node-rank", "1", "--conductor", "127.0.0.1:1"], "needs the run's token"),
                       (["--node-rank", "1"], "only with --nodes above 1")]:
        r = runner.run("--backend", "host", "--out", tmp_path / "o", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def children_running_worker(runner, parent):
    """This runner's live worker processes whose parent is `parent`."""
    found = []
    for pid in runner.leftover_processes():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == parent and b"worker" in argv:
            found.append(pid)
    return found


def two_nodes_measuring(runner, tmp_path):
    """A conductor and its node 1 (processes), once node 1 runs its worker of a 20 s scenario."""
    port = free_port()
    node = start_node(runner, tmp_path, port)
    doc = scenario("two-nodes", [compute("here", 0, 0), compute("there", 1, 0)], duration=20.0)
    run = runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", doc), "--out", tmp_path / "out",
                       "--nodes", "2", "--node-rank", "0", "--conductor", f"127.0.0.1:{port}", "--token", TOKEN,
                       "--join-timeout", "30", *LENIENT)
    wait_for(lambda: children_running_worker(runner, node.pid), timeout=60, process=run)
    return node, run


def test_a_node_sigkilled_mid_run_is_named_and_the_run_ends_as_its_tenants_error(runner, tmp_path):
    node, run = two_nodes_measuring(runner, tmp_path)
    node.send_signal(signal.SIGKILL)
    node.wait()
    out, err = run.communicate(timeout=120)
    assert run.returncode == 4, err
    assert "node 1 (" in err and "was lost mid-run" in err, err
    there = next(t for t in load_results(tmp_path / "out")["runs"][0]["tenants"] if t["name"] == "there")
    assert there["verdict"] == "error" and "was lost mid-run" in there["verdict_reason"], there["verdict_reason"]


def test_a_conductor_sigkilled_mid_run_ends_its_nodes_with_nothing_left(runner, tmp_path):
    node, run = two_nodes_measuring(runner, tmp_path)
    run.send_signal(signal.SIGKILL)
    run.wait()
    _, err = node.communicate(timeout=60)
    assert node.returncode == 4, err
    assert "lost its conductor" in err
    wait_for(lambda: runner.leftover_processes() == [], timeout=20)
    r = runner.run("cleanup", "--state-dir", runner.state_dir)  # the conductor's temp folder, named in its journal
    assert r.returncode == 0, r.stdout + r.stderr


def can_make_network_namespaces():
    if not (shutil.which("unshare") and shutil.which("ip")) or os.geteuid() != 0:
        return False
    r = subprocess.run(["unshare", "--net", "--mount", "--fork", "sh", "-c", "mount -t tmpfs ib-test /run && ip netns add probe"],
                       capture_output=True)
    return r.returncode == 0


NETNS = can_make_network_namespaces()

# Two "hosts" on one machine: network namespaces a (10.99.0.1, node 0) and b (10.99.0.2, node 1) joined by a
# veth pair, made inside a network and mount namespace of the test's own (unshare), so no packet can leave it
# and nothing is left once it ends (a tmpfs over /run takes ip's namespace files); node 1 also in a time namespace
# 1000 s ahead.
HOSTS = """set -u
mount -t tmpfs ib-test /run
ip netns add a && ip netns add b
ip link add va type veth peer name vb && ip link set va netns a && ip link set vb netns b
ip -n a addr add 10.99.0.1/24 dev va && ip -n b addr add 10.99.0.2/24 dev vb
for ns in a b; do ip -n $ns link set lo up; done
ip -n a link set va up && ip -n b link set vb up
ip netns exec b unshare --time --fork --monotonic {offset} "$BIN" run --nodes 2 --node-rank 1 \\
  --conductor 10.99.0.1:29500 --token "$TOKEN" --out "$OUT/node1" --join-timeout 30 2>"$OUT/node1.err" &
node=$!
ip netns exec a "$BIN" run --backend host --scenario "$SCENARIO" --out "$OUT/run" --nodes 2 --node-rank 0 \\
  --conductor 10.99.0.1:29500 --token "$TOKEN" --join-timeout 30 --rounds 3 --until fixed \\
  --max-foreign-cpus 64 --max-steal-cpus 64 2>"$OUT/run.err"
echo "conductor=$?"
wait $node
echo "node=$?"
"""


@pytest.mark.skipif(not (NETNS and UNSHARE_TIME and GLOO), reason="needs root, ip, network and time namespaces, gloo")
def test_two_hosts_in_network_namespaces_run_one_collective_on_one_timeline(runner, tmp_path):
    coll = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 256}, "ranks": 2,
            "rank_placements": [{"node": 0, "cpus": [0]}, {"node": 1, "cpus": [1 % os.cpu_count()]}]}
    idle = {"name": "n", "workload": "host-idle", "params": {"sample_ms": 1.0}}
    env = dict(runner.env, BIN=BINARY, TOKEN=TOKEN, OUT=str(tmp_path),
               SCENARIO=str(runner.write_json("s.json", scenario("coll", [coll, idle]))))
    r = subprocess.run(["unshare", "--net", "--mount", "--fork", "bash", "-c", HOSTS.format(offset=OFFSET_S)],
                       capture_output=True, text=True, env=env, timeout=180, stdin=subprocess.DEVNULL)
    codes = dict(line.split("=") for line in r.stdout.split() if "=" in line)
    err = (tmp_path / "run.err").read_text() if (tmp_path / "run.err").exists() else r.stderr
    assert codes.get("conductor") in ("0", "1", "5"), (codes, r.stderr, err)
    assert codes.get("node") == "0", (tmp_path / "node1.err").read_text()
    res = load_results(tmp_path / "run")
    [n1] = res["meta"]["nodes"]
    assert abs(n1["clock_offset_ns"] + OFFSET_S * 10**9) <= n1["clock_uncertainty_ns"] + 1000, n1
    run = res["runs"][0]
    assert run["status"] == "ok", run["message"]
    for phase in ("exclusive", "colocated"):
        ranks = run["tenants"][0]["phases"][phase]["samples"]["rank_duration_s"]
        assert len(ranks) == 2 and len(ranks[0]) == len(ranks[1]) > 0
