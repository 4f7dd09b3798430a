"""Runs across nodes against hostile and unlucky peers (issue 49, docs/reliability.md "Fourth sweep"): every wait of
the node protocol ends at its deadline or at a stop signal (SIGTERM: exit 130 within 2 s, the partial results
written, nothing left running, on node 0 and on node R), and a peer's hostile bytes are one line naming the peer
and the field, never an internal error. The peers are written here: a node (FakeNode) or a conductor
(fake_conductor) that speaks the protocol as far as its case needs and then misbehaves, or the real harness
frozen with SIGSTOP. Each case signals once the peer saw the stage begin (a line read), never after a sleep."""
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, load_results, scenario, wait_for

TOKEN = "test-run-49"
STOP_WITHIN_S = 2.0
GARBAGE = b"\xff\xfe\x1b[2J\x00binary \xc3"  # not UTF-8, a terminal escape, a NUL
GARBAGE_SHOWN = "\\xff\\xfe\\x1b[2J\\x00binary \\xc3"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compute(name, node):
    return {"name": name, "workload": "host-compute", "params": {"n": 64, "reps": 4}, "placement": {"node": node, "cpus": [0]}}


def two_node_scenario(duration=0.6):
    return scenario("two-nodes", [compute("here", 0), compute("there", 1)], duration=duration)


def conductor(runner, tmp_path, port, *extra, duration=0.6):
    return runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", two_node_scenario(duration)),
                        "--out", tmp_path / "out", "--nodes", "2", "--node-rank", "0", "--conductor", f"127.0.0.1:{port}",
                        "--token", TOKEN, "--join-timeout", "30", *LENIENT, *extra)


def node(runner, tmp_path, port, join_timeout="30"):
    argv = [BINARY, "run", "--nodes", "2", "--node-rank", "1", "--conductor", f"127.0.0.1:{port}", "--token", TOKEN,
            "--out", str(tmp_path / "node1"), "--join-timeout", join_timeout]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=runner.env,
                            stdin=subprocess.DEVNULL)


def stop_and_time(proc):
    """SIGTERM, then (exit code, seconds to exit, stdout, stderr)."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, time.monotonic() - t0, out, err


def connect(port, timeout=30):
    deadline = time.monotonic() + timeout
    while True:  # the conductor may not listen yet
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def send(f, obj):
    f.write((json.dumps(obj) + "\n").encode())
    f.flush()


class FakeNode(threading.Thread):
    """Node 1 of 2, played by the test. It joins and answers the clock as a node does, except as `how` says:
    silent_clock   says ready, then never answers a clock request (`reached`: the first request read)
    garbage_worker at the first start, connects back with garbage for a worker's hello (`refusal`: the answer)
                   and never starts the worker (`reached`: the refusal read)
    mute_exit      starts the real worker as a node does, then never reports its exit (`reached`: it exited)
    It returns when the conductor closes the connection or says "end" (its worker, if any, killed then)."""

    def __init__(self, runner, tmp_path, port, how):
        super().__init__(daemon=True)
        self.runner, self.tmp, self.port, self.how = runner, tmp_path, port, how
        self.reached = threading.Event()
        self.refusal = None
        self.worker = None

    def run(self):
        with connect(self.port) as s:
            f = s.makefile("rwb")
            send(f, {"type": "hello", "version": 1, "node_rank": 1, "nodes": 2, "token": TOKEN, "host": "fake"})
            assert json.loads(f.readline())["type"] == "welcome"
            send(f, {"type": "ready"})
            try:
                for line in f:
                    if not self.take(f, json.loads(line)):
                        break
            finally:
                if self.worker and self.worker.poll() is None:
                    os.killpg(self.worker.pid, signal.SIGKILL)
                    self.worker.wait()

    def take(self, f, msg):
        if msg["type"] == "clock" and "t1" not in msg:
            if self.how == "silent_clock":
                self.reached.set()
                return True
            t = time.monotonic_ns()
            send(f, {"type": "clock", "t0": msg["t0"], "t1": t, "t2": t})
        elif msg["type"] == "clock_end":
            send(f, {"type": "clock_end"})
        elif msg["type"] == "start" and self.how == "garbage_worker":
            with connect(self.port) as w:
                w.sendall(GARBAGE + b"\n")
                self.refusal = w.makefile("rb").readline()
            self.reached.set()
        elif msg["type"] == "start" and self.how == "mute_exit":
            self.start_worker(msg)
        return msg["type"] != "end"

    def start_worker(self, msg):
        """The worker as a node starts it: connected back with its hello, the connection its stdin and fd 3."""
        back = connect(self.port)
        back.setblocking(True)  # a Python socket with a timeout is O_NONBLOCK: the worker's reads would fail
        back.sendall((json.dumps({"type": "worker", "version": 1, "token": TOKEN, "node_rank": 1, "id": msg["id"]}) + "\n").encode())
        env = {k: v for k, v in self.runner.env.items()
               if not any(k.startswith(u[:-1]) if u.endswith("*") else k == u for u in msg.get("env_unset", []))}
        env.update(e.split("=", 1) for e in msg.get("env", []))
        env["IB_NODE_ADDRESS"] = "127.0.0.1"
        fd = back.fileno()
        with open(self.tmp / msg["log"], "wb") as log:
            self.worker = subprocess.Popen([BINARY, *msg["args"]], stdin=fd, stdout=log, stderr=log, env=env, pass_fds=(3,),
                                           preexec_fn=lambda: os.dup2(fd, 3), start_new_session=True)
        back.close()
        threading.Thread(target=lambda: (self.worker.wait(), self.reached.set()), daemon=True).start()


def assert_interrupted(tmp_path, code, took, err):
    assert code == 130, err
    assert took < STOP_WITHIN_S, (took, err)
    assert "(interrupted)" in (tmp_path / "out" / "summary.md").read_text()


# Node 0: SIGTERM at each stage of a run across nodes, its peer hostile or frozen there: exit 130 within 2 s.

def test_sigterm_while_the_conductor_waits_for_its_nodes_after_refusing_garbage(runner, tmp_path):
    port = free_port()
    run = conductor(runner, tmp_path, port)
    with connect(port) as s:  # a first line of binary, not UTF-8: refused in one line it can read
        s.sendall(GARBAGE + b"\n")
        refusal = json.loads(s.makefile("rb").readline())
    assert refusal == {"type": "refused", "reason": "not a hello: " + GARBAGE_SHOWN}, refusal
    code, took, _, err = stop_and_time(run)
    assert_interrupted(tmp_path, code, took, err)
    assert f"refused a connection: 127.0.0.1:" in err and f": not a hello: {GARBAGE_SHOWN}\n" in err, err
    assert "before a stop signal" in err


def said_clock_failed(tmp_path, peer, err):
    assert "node 1 (fake): clock exchange failed: no answer to clock request 1: a stop signal came" in err, err


def refused_the_garbage_worker(tmp_path, peer, err):
    assert json.loads(peer.refusal) == {"type": "refused", "reason": "not a worker's hello: " + GARBAGE_SHOWN}
    assert "refused a worker's connection from 127.0.0.1:" in err and f"not a worker's hello: {GARBAGE_SHOWN}" in err, err


def wrote_the_finished_blocks(tmp_path, peer, err):
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["blocks"], run["message"]


# The stage the hostile node holds the conductor in: clock (it never answers a clock request), release (it never
# starts its worker, after a connection back of garbage), worker exit (it ran its worker to the end and never
# reports the exit, the last wait before the results are written).
@pytest.mark.parametrize("how,check", [("silent_clock", said_clock_failed), ("garbage_worker", refused_the_garbage_worker),
                                       ("mute_exit", wrote_the_finished_blocks)])
def test_sigterm_while_a_hostile_node_holds_the_conductor(runner, tmp_path, how, check):
    port = free_port()
    run = conductor(runner, tmp_path, port)
    peer = FakeNode(runner, tmp_path, port, how)
    peer.start()
    assert peer.reached.wait(60), how
    code, took, _, err = stop_and_time(run)
    assert_interrupted(tmp_path, code, took, err)
    check(tmp_path, peer, err)
    peer.join(10)


def node_and_its_workers(runner, node_pid):
    """node 1's harness and the workers it started (children carrying the runner's tag)."""
    found = [node_pid]
    for pid in runner.leftover_processes():
        try:
            if int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == node_pid:
                found.append(pid)
        except (OSError, ValueError):
            continue
    return found


def frozen_mid_run(runner, tmp_path, *extra, duration=20.0):
    """A conductor and its real node 1 once node 1 runs its worker; then node 1 and its worker frozen (SIGSTOP)."""
    port = free_port()
    peer = node(runner, tmp_path, port)
    run = conductor(runner, tmp_path, port, *extra, duration=duration)
    wait_for(lambda: len(node_and_its_workers(runner, peer.pid)) > 1, timeout=60, process=run)
    frozen = node_and_its_workers(runner, peer.pid)
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    return peer, run, frozen


def thaw(peer, frozen):
    for pid in frozen:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    _, err = peer.communicate(timeout=60)
    return peer.returncode, err


def test_sigterm_while_a_node_is_frozen_mid_run(runner, tmp_path):
    peer, run, frozen = frozen_mid_run(runner, tmp_path)
    code, took, _, err = stop_and_time(run)
    assert_interrupted(tmp_path, code, took, err)
    node_code, node_err = thaw(peer, frozen)
    assert node_code == 0, node_err  # thawed, it reads "end", kills its worker and ends


# Node 1: SIGTERM at each of its waits: for the welcome (the conductor accepts and never answers), for the
# clock (it welcomes and goes silent), while serving (its worker measuring).

def fake_conductor(port, welcome, reached, done):
    """Listens on `port`, accepts node 1, reads its hello; with `welcome` it welcomes it and reads its ready.
    Then silence until `done`."""
    with socket.create_server(("127.0.0.1", port)) as srv:
        c, _ = srv.accept()
        with c:
            f = c.makefile("rwb")
            f.readline()
            if welcome is not None:
                f.write((json.dumps(welcome) + "\n").encode())
                f.flush()
                f.readline()
            reached.set()
            done.wait(60)


@pytest.mark.parametrize("stage", ["welcome", "clock"])
def test_sigterm_ends_a_nodes_wait_for_a_silent_conductor(runner, tmp_path, stage):
    port = free_port()
    reached, done = threading.Event(), threading.Event()
    welcome = {"type": "welcome", "node_rank": 1} if stage == "clock" else None
    srv = threading.Thread(target=fake_conductor, args=(port, welcome, reached, done), daemon=True)
    srv.start()
    peer = node(runner, tmp_path, port, join_timeout="600")
    assert reached.wait(30)
    code, took, _, err = stop_and_time(peer)
    done.set()
    assert code == 130 and took < STOP_WITHIN_S, (code, took, err)


def test_sigterm_ends_a_node_mid_run_and_its_workers_with_it(runner, tmp_path):
    port = free_port()
    peer = node(runner, tmp_path, port)
    run = conductor(runner, tmp_path, port, duration=20.0)
    wait_for(lambda: len(node_and_its_workers(runner, peer.pid)) > 1, timeout=60, process=run)
    code, took, _, err = stop_and_time(peer)
    assert code == 130 and took < STOP_WITHIN_S, (code, took, err)
    assert len(node_and_its_workers(runner, peer.pid)) == 1, "its worker was killed and reaped with it"
    _, run_err = run.communicate(timeout=60)
    assert run.returncode == 4 and "node 1 (" in run_err and "was lost mid-run" in run_err, run_err


# The deadlines themselves, through the binary.

def test_a_node_whose_conductor_never_answers_gives_up_at_its_join_timeout(runner, tmp_path):
    port = free_port()
    reached, done = threading.Event(), threading.Event()
    threading.Thread(target=fake_conductor, args=(port, None, reached, done), daemon=True).start()
    t0 = time.monotonic()
    r = node(runner, tmp_path, port, join_timeout="1")
    _, err = r.communicate(timeout=30)
    took = time.monotonic() - t0
    done.set()
    assert r.returncode == 3, err
    assert took < 1.0 + STOP_WITHIN_S, took  # its 1 s and the start-up, not twice the timeout
    assert "no answer to the hello from the conductor by the join deadline" in err and len(err.strip().splitlines()) == 1, err


def test_a_welcome_whose_node_rank_is_a_string_is_one_line(runner, tmp_path):
    port = free_port()
    reached, done = threading.Event(), threading.Event()
    welcome = {"type": "welcome", "node_rank": "1\x1b[2J"}
    threading.Thread(target=fake_conductor, args=(port, welcome, reached, done), daemon=True).start()
    r = node(runner, tmp_path, port)
    _, err = r.communicate(timeout=30)
    done.set()
    assert r.returncode == 3, err
    assert 'a welcome whose node_rank is "1\\u001b[2J", not this node\'s 1' in err, err
    assert "\x1b" not in err and len(err.strip().splitlines()) == 1, err


def test_a_node_frozen_mid_block_is_named_when_its_workers_exit_is_overdue(runner, tmp_path):
    # The block's watchdog (its length plus --timeout-margin) kills the frozen node's worker; the node owes the
    # exit within 5 s of the kill, then it is named lost and the run ends with its tenant's error.
    peer, run, frozen = frozen_mid_run(runner, tmp_path, "--timeout-margin", "0.5", duration=1.5)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 4, err
    assert "node 1 (" in err and "was lost mid-run: it did not report the exit of worker" in err and "within 5 s of its kill" in err, err
    there = next(t for t in load_results(tmp_path / "out")["runs"][0]["tenants"] if t["name"] == "there")
    assert there["verdict"] == "error", there["verdict_reason"]
    node_code, node_err = thaw(peer, frozen)
    assert node_code in (0, 4), node_err  # it reads "end" (or the closed connection) and kills its worker


def test_a_results_file_with_a_clock_offset_past_int64_is_one_line(runner, tmp_path):
    from conftest import SOURCE_DIR
    doc = json.loads((SOURCE_DIR / "tests" / "e2e" / "golden" / "results.json").read_text())
    doc["meta"]["nodes"] = [{"node_rank": 1, "host": "b", "clock_offset_ns": 2**63, "clock_uncertainty_ns": 1, "clock_rtt_ns": 2}]
    path = runner.write_json("big/results.json", doc)
    r = runner.run("report", path, "--junit", tmp_path / "j.xml")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "meta.nodes[0].clock_offset_ns" in lines[0] and "out of range" in lines[0], r.stderr
    assert "results.json" in lines[0]


# Where node 0 listens (deploy/slurm/ib-nodes.sbatch, deploy/k8s/nodes-job.yaml).

def conductor_at(runner, tmp_path, host, join_timeout):
    return runner.popen("--backend", "host", "--scenario", runner.write_json("s.json", two_node_scenario()),
                        "--out", tmp_path / "out", "--nodes", "2", "--node-rank", "0", "--conductor", f"{host}:{free_port()}",
                        "--token", TOKEN, "--join-timeout", join_timeout, *LENIENT)


def test_a_conductor_name_that_resolves_only_to_loopback_is_refused_in_one_line(runner, tmp_path):
    # Debian's and Ubuntu's /etc/hosts map the host's name to 127.0.1.1: node 0 would listen where no other host
    # reaches it. `localhost` resolves to loopback everywhere; a literal 127.0.0.1 stays the user's choice.
    run = conductor_at(runner, tmp_path, "localhost", "30")
    _, err = run.communicate(timeout=60)
    assert run.returncode == 3, err
    assert "--conductor localhost:" in err and "(loopback, e.g. /etc/hosts), which the other nodes cannot reach" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_conductor_name_that_does_not_resolve_yet_is_tried_until_the_join_deadline_or_a_stop_signal(runner, tmp_path):
    # Pod 0 of the Kubernetes Job starts before the headless Service publishes its name (.invalid never resolves).
    t0 = time.monotonic()
    run = conductor_at(runner, tmp_path, "ib-nodes-0.invalid", "1")
    _, err = run.communicate(timeout=60)
    assert run.returncode == 3 and time.monotonic() - t0 < 1.0 + STOP_WITHIN_S, err
    assert "ib-nodes-0.invalid does not resolve yet" in err and "did not resolve within --join-timeout" in err, err
    run = conductor_at(runner, tmp_path / "again", "ib-nodes-0.invalid", "600")
    assert "does not resolve yet" in run.stderr.readline()
    code, took, _, err = stop_and_time(run)
    assert code == 130 and took < STOP_WITHIN_S, (code, took, err)
