"""The Slurm deployment (deploy/slurm, deploy/ib-task.sh) on a REAL single-node Slurm: munged, slurmctld
and slurmd from Debian's packages (scripts/install-deps.sh), started by the test in its temp folder with a
slurm.conf of their own (free ports, a private munge socket, no cgroups, no accounting), stopped after it
whatever happens. A fleet of 3 array tasks runs on the one node (one after another: each task takes the
node exclusively), task 1 made to fail (a file run-args.1 in the fleet folder gives it a host-fault
scenario whose worker exits: the run exits 4), then the merge, which Slurm starts only after all of them
(afterany) and which says the fleet failed (exit 1). One run across nodes (ib-nodes.sbatch) runs as two
and as four tasks of the one node, and on two Slurm nodes of this machine (two slurmd, `slurmd -N`), or is
skipped with slurmd's or slurmctld's own words where this machine's slurmd cannot run twice.

The daemons take a private cluster name, ports that were free, and files under this test's temp folder
only, so the test can run beside the others (it is neither serial nor a measurement).
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, SOURCE_DIR, compute, fault, scenario, wait_for

DEPLOY = SOURCE_DIR / "deploy"
SUBMIT = DEPLOY / "slurm" / "ib-submit.sh"
TASK_SH = DEPLOY / "ib-task.sh"
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "sinfo", "squeue", "scancel")
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "DEADLINE",
            "BOOT_FAIL"}
# What each task runs: one host tenant alone (mode exclusive: a baseline, no verdict to decide), so a
# task's exit code is 0 whatever else the machine runs; the test is about the deployment, not a figure.
SOLO = scenario("solo", [compute("solo")], mode="exclusive", duration=0.5, warmup=0.05)
BROKEN = scenario("broken", [fault("bad", "exit", at_sample=20, at_block=1, at_ms=40)], mode="exclusive", duration=0.5,
                  warmup=0.02)


GLOO = "built without gloo" not in subprocess.run([BINARY, "list", "workloads"], capture_output=True, text=True,
                                                   timeout=30, stdin=subprocess.DEVNULL).stdout


def run_args(scenario_file, rounds=2):
    return ["--backend", "host", "--scenario", str(scenario_file), "--rounds", str(rounds), "--until", "fixed",
            *LENIENT]


HOST = socket.gethostname().split(".")[0]  # `hostname -s`: slurmd's node name
# What each node of the test's Slurm declares: four tasks of one job fit on one node (Cluster).
NODE_CPUS = max(4, os.cpu_count())


def which(name):
    return shutil.which(name, path=SBIN_PATH)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def end_with_parent():
    """In the child before exec: SIGTERM when the test process dies (killed by CTest's timeout, say),
    so no daemon outlives it."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def parse_iso(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def processes_with(marker):
    """Live (not zombie) processes whose environment holds `marker` (bytes)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            comm = (proc / "comm").read_text().strip()
        except OSError:
            continue
        if marker in environ and state != "Z":
            found.append((int(proc.name), comm))
    return found


class Cluster:
    """A Slurm of this test: its files, its environment, its daemons. One slurmd per node name, each started
    as `slurmd -D -N NAME` with a port, spool, pid and log file of its own (%n in slurm.conf), all on this
    machine at 127.0.0.1. Each node is declared with at least NODE_CPUS CPUs: slurmd reports what slurm.conf
    says (SlurmdParameters=config_overrides), not the cores it finds, so a job of four tasks fits on one
    node of a 2-core machine (the tasks share its cores; nothing here measures)."""

    def __init__(self, root, env, nodes=(HOST,)):
        self.root = root
        self.nodes = list(nodes)
        self.conf = root / "slurm.conf"
        self.env = {k: v for k, v in env.items() if not k.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_",
                                                                      "SQUEUE_", "SINFO_", "SCANCEL_"))}
        self.env.update(SLURM_CONF=str(self.conf), PATH=SBIN_PATH)
        self.daemons = {}
        self.munge_socket = root / "munge" / "munge.socket"

    def cmd(self, *args, check=True, timeout=30):
        r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=self.env, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            pytest.fail(f"{' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
        return r

    def start_daemon(self, name, args, program=None):
        log = open(self.root / "log" / f"{name}.out", "w")
        self.daemons[name] = subprocess.Popen([which(program or name), *args], stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, env=self.env, cwd=self.root,
                                              preexec_fn=end_with_parent)
        log.close()

    def daemon_log(self, name):
        texts = []
        for p in (self.root / "log").glob(f"{name}*"):
            texts.append(f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:])
        return "\n".join(texts)

    def start(self):
        for d in ("munge", "state", "spool", "log"):
            (self.root / d).mkdir(mode=0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o400)
        m = self.root / "munge"
        # -f: the temp folder's parents are not open to all, which munged would otherwise refuse.
        self.start_daemon("munged", ["-F", "-f", f"--socket={self.munge_socket}", f"--key-file={key}",
                                     f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
                                     f"--seed-file={m / 'munged.seed'}"])
        wait_for(self.munge_socket.exists, timeout=15, process=self.daemons["munged"])
        r = self.root
        ports = []  # slurmctld's, then one per node
        while len(ports) < 1 + len(self.nodes):
            port = free_port()
            if port not in ports:
                ports.append(port)
        for name in self.nodes:
            (r / "spool" / name).mkdir(mode=0o700)
        self.conf.write_text("\n".join([
            f"ClusterName=ib{uuid.uuid4().hex[:10]}",
            # Addresses given: the host name need not resolve.
            f"SlurmctldHost={HOST}(127.0.0.1)",
            f"SlurmctldPort={ports[0]}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool' / '%n'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.%n.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd.%n.log'}",
            "SlurmdParameters=config_overrides",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "ReturnToService=2",
            "KillWait=5",
            *[f"NodeName={name} NodeAddr=127.0.0.1 Port={port} CPUs={NODE_CPUS} RealMemory=500 State=UNKNOWN"
              for name, port in zip(self.nodes, ports[1:])],
            "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            ""]))
        self.start_daemon("slurmctld", ["-D", "-c"])
        for name in self.nodes:
            self.start_daemon(f"slurmd.{name}", ["-D", "-N", name], program="slurmd")

    def last_error(self, name):
        """A daemon's own last word on what went wrong: its last fatal line, else its last error line."""
        lines = []
        for f in (self.root / "log" / f"{name}.out", self.root / "log" / f"{name}.log"):
            if f.exists():
                lines += f.read_text(errors="replace").splitlines()
        for word in ("fatal", "error"):
            found = [line.strip() for line in lines if word in line]
            if found:
                return found[-1]
        return "(nothing in its log)"

    def wait_idle(self, refusal_skips=False):
        """Until every node is idle. A daemon that exits first fails the test; where `refusal_skips`, a slurmd or
        slurmctld that exits, or a node that is not idle within 30 s, skips it instead, with that daemon's own
        words: this machine's Slurm cannot run these nodes (the one-node fixture, with the same slurm.conf but
        for the node lines, still fails on any mistake of the test's own)."""
        exited = []

        def idle():
            exited[:] = [name for name, p in self.daemons.items() if p.poll() is not None]
            if exited:
                return True
            r = self.cmd("sinfo", "-h", "-N", "-o", "%N %t", check=False, timeout=10)
            return r.returncode == 0 and set(r.stdout.splitlines()) >= {f"{name} idle" for name in self.nodes}
        try:
            wait_for(idle, timeout=30)
        except pytest.fail.Exception:  # not idle in time, every daemon still running
            if not refusal_skips:
                raise
            states = self.cmd("sinfo", "-h", "-N", "-o", "%N %T %E", check=False, timeout=10).stdout.strip()
            pytest.skip(f"{len(self.nodes)} slurmd on one machine: not all idle within 30 s (sinfo: "
                        f"{'; '.join(states.splitlines())}); slurmctld: {self.last_error('slurmctld')}")
        for name in exited:
            code = self.daemons[name].returncode
            if refusal_skips and name != "munged":
                what = f"slurmd -D -N {name[len('slurmd.'):]}" if name.startswith("slurmd.") else "slurmctld -D"
                pytest.skip(f"{len(self.nodes)} slurmd on one machine: `{what}` exited ({code}): "
                            f"{self.last_error(name)}")
            pytest.fail(f"{name} exited ({code}) before the nodes were idle:\n{self.daemon_log(name)}")

    def jobs(self, job_id):
        """scontrol's records of a job (an array: one per task), as dicts."""
        r = self.cmd("scontrol", "-o", "show", "job", job_id, check=False)
        records = []
        for line in r.stdout.splitlines():
            fields = {}
            for token in line.split():
                if "=" in token:
                    k, v = token.split("=", 1)
                    fields.setdefault(k, v)
            if fields:
                records.append(fields)
        return records

    def stop(self):
        """Cancels every job, stops the daemons (SIGTERM, then SIGKILL); says what it had to kill."""
        problems = []
        if self.daemons.get("slurmctld") and self.daemons["slurmctld"].poll() is None:
            self.cmd("scancel", "--user", str(os.getuid()), check=False, timeout=10)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                r = self.cmd("squeue", "-h", "-o", "%i %T", check=False, timeout=10)
                if r.returncode != 0 or not r.stdout.strip():
                    break
                time.sleep(0.2)
            else:
                problems.append(f"jobs still listed after scancel: {r.stdout.strip()}")
        for name in [*(f"slurmd.{n}" for n in self.nodes), "slurmctld", "munged"]:
            p = self.daemons.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                problems.append(f"{name} did not end on SIGTERM: killed")
                p.kill()
                p.wait(timeout=10)
        # Anything started under this cluster (slurmstepd, job processes) carries its SLURM_CONF.
        marker = f"SLURM_CONF={self.conf}\0".encode()
        deadline = time.monotonic() + 10
        while processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid, comm in processes_with(marker):
            problems.append(f"process {pid} ({comm}) of the cluster was left: killed")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return problems


def started_cluster(runner, tmp_path, nodes=(HOST,), refusal_skips=False):
    """The fixtures' body: a Cluster of `nodes` started, yielded, stopped, nothing of it left."""
    missing = [d for d in DAEMONS + CLIENTS if which(d) is None]
    if missing:
        pytest.skip(f"Slurm/munge not installed ({', '.join(missing)} missing; scripts/install-deps.sh installs "
                    "slurm-wlm and munge)")
    if os.geteuid() != 0:
        pytest.skip("a Slurm of the test needs root (slurmd starts jobs as their user)")
    cluster = Cluster(tmp_path / "slurm", runner.env, nodes)
    (tmp_path / "slurm").mkdir()
    problems = []
    try:
        cluster.start()
        cluster.wait_idle(refusal_skips)
        yield cluster
    finally:
        problems = cluster.stop()
    for name, p in cluster.daemons.items():
        assert p.poll() is not None, f"{name} is still running"
    assert processes_with(f"SLURM_CONF={cluster.conf}\0".encode()) == []
    assert problems == [], problems


@pytest.fixture
def slurm(runner, tmp_path):
    """A single-node Slurm: this machine is node HOST."""
    yield from started_cluster(runner, tmp_path)


# Two Slurm nodes on this one machine: two slurmd, `slurmd -N HOST` and `slurmd -N HOST-2`. The job's first
# node name is the address ib-nodes.sbatch's node 0 listens on, so it is HOST, which must resolve; Slurm
# itself reaches each slurmd at its NodeAddr (127.0.0.1) and port. (Not "localhost" and HOST: with localhost
# the first node, slurmctld 22.05 exits on "fatal: Duplicated NodeHostName HOST in config file".)
TWO_NODES = (HOST, f"{HOST}-2")


@pytest.fixture
def two_slurmd(runner, tmp_path):
    """A Slurm of two nodes on this machine, or the test skipped with what refused it: a slurmd built
    without --enable-multiple-slurmd may not start, or start and never register as a node of its own."""
    try:
        socket.getaddrinfo(HOST, None)
    except socket.gaierror as e:
        pytest.skip(f"this machine's name {HOST} does not resolve ({e}): ib-nodes.sbatch's node 0 listens on the "
                    "job's first node name")
    yield from started_cluster(runner, tmp_path, TWO_NODES, refusal_skips=True)


def wait_job_ended(slurm, job, timeout=80):
    """Until Slurm says the job ended (any terminal state); the queue and the daemons' log on a timeout."""
    def ended():
        jobs = slurm.jobs(job)
        return bool(jobs) and jobs[0]["JobState"] in TERMINAL
    try:
        wait_for(ended, timeout=timeout)
    except BaseException:
        print(slurm.cmd("squeue", check=False).stdout, slurm.daemon_log("slurm"))
        raise


def read_task(task_dir):
    return json.loads((task_dir / "task.json").read_text())


def merge_available():
    r = subprocess.run([BINARY, "merge", "--help"], capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    return r.returncode == 0


def test_fleet_of_three_tasks_then_the_merge(slurm, runner, tmp_path):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    # Task 1's own run arguments: a scenario whose one worker exits in its first block (exit 4).
    (fleet / "run-args.1").write_text("\n".join(run_args(runner.write_json("broken.json", BROKEN))) + "\n")
    args = run_args(runner.write_json("solo.json", SOLO))
    env = dict(slurm.env, IB_BINARY=BINARY)
    r = subprocess.run([str(SUBMIT), "--fleet-dir", str(fleet), "--partition", "test", "--nodes", HOST,
                        "--tasks", "3", "--gpus", "0", "--time", "5", "--", *args],
                       capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert set(out) == {"fleet_dir", "array_job", "merge_job"}, r.stdout
    assert Path(out["fleet_dir"]) == fleet
    array_job, merge_job = out["array_job"], out["merge_job"]
    assert (fleet / "expected-nodes.txt").read_text() == f"{HOST}\n"
    assert (fleet / "run-args").read_text().splitlines() == args

    # The merge waits on the array (afterany) while any task is not done.
    first = slurm.jobs(merge_job)
    assert first and first[0]["Dependency"].startswith(f"afterany:{array_job}"), first

    wait_job_ended(slurm, merge_job)

    tasks = slurm.jobs(array_job)
    assert sorted(int(t["ArrayTaskId"]) for t in tasks) == [0, 1, 2], tasks
    exits = {int(t["ArrayTaskId"]): t["ExitCode"] for t in tasks}
    assert exits[1] == "4:0", exits
    assert exits[0] == exits[2] == "0:0", exits
    merge = slurm.jobs(merge_job)[0]

    ended = []
    for i in range(3):
        d = fleet / "tasks" / f"{HOST}.{i}"
        t = read_task(d)
        assert list(t) == ["task_schema", "scheduler", "node", "job_id", "array_job_id", "task_index",
                           "results_dir", "exit_code", "started", "ended"]
        assert t["task_schema"] == 1 and t["scheduler"] == "slurm" and t["node"] == HOST
        assert t["task_index"] == i and t["array_job_id"] == array_job and t["job_id"].isdigit()
        assert t["results_dir"] == "results" and t["exit_code"] == int(exits[i].split(":")[0])
        assert parse_iso(t["started"]) <= parse_iso(t["ended"])
        ended.append(parse_iso(t["ended"]))
        assert (d / "results" / "results.json").is_file(), i
        assert (fleet / "logs" / f"{HOST}.{i}.out").is_file()
    assert json.loads((fleet / "tasks" / f"{HOST}.1" / "results" / "results.json").read_text())["summary"][
        "exit_code"] == 4

    # The merge started after every task had ended: by the merge's own clock line, and by Slurm's record.
    log = (fleet / "logs" / "merge.out").read_text()
    started = [line.split()[2] for line in log.splitlines() if line.startswith("ib-merge: started ")]
    assert len(started) == 1, log
    assert parse_iso(started[0]) >= max(ended), (started, ended)
    assert merge["StartTime"] >= max(t["EndTime"] for t in tasks), (merge, tasks)

    if merge_available():
        assert merge["ExitCode"] == "1:0", log
        doc = json.loads((fleet / "fleet" / "fleet.json").read_text())
        assert doc["summary"]["exit_code"] == 1
        members = doc["members"] if "members" in doc else doc["nodes"]  # the fleet schema names them members
        by_index = {n["task_index"]: n for n in members}
        assert sorted(by_index) == [0, 1, 2], members
        assert all(n["node"] == HOST and n["scheduler"] == "slurm" and n["array_job_id"] == array_job
                   for n in members), members
        assert doc["summary"]["expected_nodes"] == 1 and doc["summary"]["expected_tasks"] == 3
        assert doc["summary"]["missing_nodes"] == [] and doc["summary"]["missing_tasks"] == []
        assert by_index[1]["status"] == "workload_error", by_index[1]
        assert by_index[0]["status"] == by_index[2]["status"] == "ok", (by_index[0], by_index[2])
        for name in ("fleet.md", "fleet.junit.xml", "fleet.prom"):
            assert (fleet / "fleet" / name).is_file(), name
    else:  # the binary has no merge yet: the merge job ran, in order, and said so
        assert merge["JobState"] == "FAILED" and merge["ExitCode"] != "0:0", merge

    assert not any(j["JobState"] not in TERMINAL for j in slurm.jobs(array_job) + slurm.jobs(merge_job))
    # Nothing of the jobs is left running, only the daemons (the fixture stops them, then checks again).
    daemons = {p.pid for p in slurm.daemons.values()}
    wait_for(lambda: [pid for pid in runner.leftover_processes() if pid not in daemons] == [], timeout=15)


def test_scancel_reaches_the_run_which_keeps_its_results(slurm, runner, tmp_path):
    # Slurm's SIGTERM (scancel; the time limit does the same) goes to every process of the task: the
    # wrapper passes it on as well, the run ends its block, writes its results and exits 130; the merge,
    # which afterany still starts, counts the task as interrupted.
    fleet = tmp_path / "fleet"
    long_solo = runner.write_json("long.json", dict(SOLO, duration_s=3.0))
    # --pin: the task is its own single-index array job, held to the node with --nodelist.
    r = subprocess.run([str(SUBMIT), "--fleet-dir", str(fleet), "--nodes", HOST, "--pin", "--gpus", "0", "--",
                        *run_args(long_solo, 10)],
                       capture_output=True, text=True, env=dict(slurm.env, IB_BINARY=BINARY), timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    out = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    task_dir = fleet / "tasks" / f"{HOST}.0"
    wait_for(lambda: (task_dir / "results" / "logs").is_dir(), timeout=30)
    time.sleep(1.0)  # into its first blocks
    assert read_task(task_dir)["exit_code"] is None
    slurm.cmd("scancel", out["array_job"])

    def done(job):
        jobs = slurm.jobs(job)
        return bool(jobs) and all(j["JobState"] in TERMINAL for j in jobs)
    wait_for(lambda: done(out["merge_job"]), timeout=40)
    t = read_task(task_dir)
    assert t["exit_code"] == 130, (t, (fleet / "logs" / f"{HOST}.0.out").read_text())
    assert (task_dir / "results" / "results.json").is_file()
    assert slurm.jobs(out["array_job"])[0]["JobState"] == "CANCELLED"
    merge = slurm.jobs(out["merge_job"])[0]
    if merge_available():
        assert merge["ExitCode"] == "1:0"
        doc = json.loads((fleet / "fleet" / "fleet.json").read_text())
        members = doc["members"] if "members" in doc else doc["nodes"]
        assert [(m["task_index"], m["status"]) for m in members] == [(0, "interrupted")], members


def test_task_wrapper_records_an_interrupted_run_and_refuses_a_second(runner, tmp_path):
    # The wrapper alone (no Slurm): Kubernetes' facts, SIGTERM passed on to the run, which keeps its partial
    # results and exits 130; task.json says so; the same task folder is not written again.
    fleet = tmp_path / "fleet"
    env = {k: v for k, v in runner.env.items() if not k.startswith("SLURM")}
    env.update(NODE_NAME="node-a", JOB_COMPLETION_INDEX="3", JOB_NAME='nightly-"1"', IB_BINARY=BINARY)
    long_solo = dict(SOLO, duration_s=2.0)
    args = [str(TASK_SH), "--fleet-dir", str(fleet), "--", *run_args(runner.write_json("solo.json", long_solo), 4)]
    task_dir = fleet / "tasks" / "node-a.3"
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: (task_dir / "task.json").exists() and (task_dir / "results").is_dir(), timeout=20,
                 process=p)
        before = read_task(task_dir)
        assert before["exit_code"] is None and before["ended"] is None
        assert before["scheduler"] == "kubernetes" and before["job_id"] == 'nightly-"1"'
        assert before["task_index"] == 3 and before["array_job_id"] is None and before["node"] == "node-a"
        time.sleep(1.0)  # into the run's first blocks (what is interrupted is a measurement under way)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    after = read_task(task_dir)
    assert after["exit_code"] == 130 and parse_iso(after["ended"]) >= parse_iso(after["started"])
    assert {k: v for k, v in after.items() if k not in ("exit_code", "ended")} == \
        {k: v for k, v in before.items() if k not in ("exit_code", "ended")}
    assert (task_dir / "results" / "results.json").is_file()
    assert not list(task_dir.glob(".task.json.*"))

    again = subprocess.run(args, capture_output=True, text=True, env=env, timeout=30, stdin=subprocess.DEVNULL)
    assert again.returncode == 2
    assert len(again.stderr.strip().splitlines()) == 1 and "already holds a task.json" in again.stderr
    assert read_task(task_dir) == after

    # A node without the binary: recorded as one that cannot run the task (3), not left missing.
    r = subprocess.run([str(TASK_SH), "--fleet-dir", str(fleet), "--binary", str(tmp_path / "absent"), "--"],
                       capture_output=True, text=True, env=dict(env, NODE_NAME="node-b"), timeout=30,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 3 and "not an executable file" in r.stderr
    t = read_task(fleet / "tasks" / "node-b.3")
    assert t["exit_code"] == 3 and t["ended"] is not None


def test_sharing_modes_reach_the_request_and_the_run(tmp_path):
    # No Slurm needed: what ib-submit.sh would ask sbatch for (--dry-run), and what ib-nightly.sbatch (a
    # bash script) makes of IB_SHARING, with a stand-in binary that writes down its arguments.
    def dry(*args):
        r = subprocess.run([str(SUBMIT), "--dry-run", "--nodes", "n1,n2", *args], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        return r.returncode, [line for line in r.stderr.splitlines() if line.startswith("sbatch ")], r.stdout
    rc, calls, out = dry("--gpus", "2")
    assert rc == 0 and len(calls) == 2 and "--array=0-1" in calls[0] and "--gres=gpu:2" in calls[0], calls
    assert "--dependency=afterany:DRYRUN0" in calls[1] and "--gres" not in calls[1], calls
    assert out.splitlines()[1:] == ["array_job=DRYRUN0", "merge_job=DRYRUN1"], out
    rc, calls, _ = dry("--sharing", "mps")
    assert rc == 0 and "--gres=mps:100" in calls[0] and "gpu:" not in calls[0], calls
    rc, calls, _ = dry("--sharing", "shard", "--share", "4")
    assert rc == 0 and "--gres=shard:4" in calls[0] and "gpu:" not in calls[0], calls
    rc, calls, out = dry("--pin", "--tasks", "3", "--gpus", "0")
    assert rc == 0 and [c for c in calls if "--nodelist=" in c] == calls[:3], calls
    assert all(f"--array={i} --nodelist=n{i % 2 + 1} " in calls[i] for i in range(3)), calls
    assert "--dependency=afterany:DRYRUN0:DRYRUN1:DRYRUN2" in calls[3] and "--gres" not in calls[0], calls
    for bad in (["--sharing", "mig"], ["--gpus", "x"], ["--share", "5"], ["--tasks", "0"], ["--", "--out", "x"]):
        rc, _, _ = dry(*bad)
        assert rc == 2, bad

    stub = tmp_path / "stub"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$STUB_ARGS"\nexit 0\n')
    stub.chmod(0o755)
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "run-args").write_text("--suite\nquick\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "JOB_", "KUBERNETES"))}
    env.update(IB_DEPLOY_DIR=str(DEPLOY), IB_BINARY=str(stub), NODE_NAME="n1", CUDA_MPS_PIPE_DIRECTORY="/run/mps")
    for i, (sharing, added) in enumerate([("exclusive", []), ("mps", ["--mode", "mps", "--mps-pipe-dir", "/run/mps"]),
                                          ("shard", ["--mode", "timeslice"])]):
        record = tmp_path / f"args.{i}"
        r = subprocess.run(["bash", str(DEPLOY / "slurm" / "ib-nightly.sbatch"), str(fleet)], capture_output=True,
                           text=True, timeout=30, stdin=subprocess.DEVNULL,
                           env=dict(env, IB_SHARING=sharing, STUB_ARGS=str(record), JOB_COMPLETION_INDEX=str(i)))
        assert r.returncode == 0, r.stderr
        assert record.read_text().splitlines() == ["run", "--out", str(fleet / "tasks" / f"n1.{i}" / "results"),
                                                   "--suite", "quick", *added], sharing
    r = subprocess.run(["bash", str(DEPLOY / "slurm" / "ib-nightly.sbatch"), str(fleet)], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL, env=dict(env, IB_SHARING="mig"))
    assert r.returncode == 2 and "IB_SHARING" in r.stderr


@pytest.mark.long  # the four-task test below runs the same script with more tasks in the short suite
def test_a_run_across_two_tasks_of_one_job_has_one_conductor_and_one_results_file(slurm, runner, tmp_path):
    # The test's Slurm has this one machine as its one node: the two "nodes" of the run are two tasks of one
    # job here (--ntasks-per-node=2), each its own harness. Two Slurm nodes (two slurmd of this machine) are
    # test_two_slurm_nodes_of_one_machine_run_one_collective.
    two = scenario("two", [{**compute("first"), "placement": {"node": 0, "cpus": [0]}},
                           {**compute("second"), "placement": {"node": 1, "cpus": [1 % os.cpu_count()]}}],
                   duration=0.6, warmup=0.1)
    out = tmp_path / "run"
    env = dict(slurm.env, IB_BINARY=BINARY, IB_CONDUCTOR_PORT=str(free_port()))
    r = subprocess.run([which("sbatch"), "--parsable", "--ntasks=2", "--ntasks-per-node=2", "--partition", "test",
                        "--time", "5", "--output", str(tmp_path / "job.out"), "--chdir", str(tmp_path),
                        str(DEPLOY / "slurm" / "ib-nodes.sbatch"), str(out), *run_args(runner.write_json("two.json", two))],
                       capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]

    wait_job_ended(slurm, job)
    log = (tmp_path / "job.out").read_text()
    assert slurm.jobs(job)[0]["ExitCode"] in ("0:0", "1:0", "5:0"), log
    res = json.loads((out / "results.json").read_text())
    assert [n["node_rank"] for n in res["meta"]["nodes"]] == [1], res["meta"]
    assert res["meta"]["scheduler"]["kind"] == "slurm" and res["runs"][0]["status"] == "ok", res["runs"][0]["message"]
    assert "clock offset" in log, log
    # node 1's worker logged in node 1's folder
    assert any("second" in p.name for p in (tmp_path / "run-node-1" / "logs").iterdir())


def allreduce(ranks):
    """A gloo allreduce tenant whose rank R is placed on node R (the harness of Slurm task R), on core R mod
    the machine's cores; a host-idle tenant beside it on node 0."""
    return [{"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 256}, "ranks": ranks,
             "rank_placements": [{"node": r, "cpus": [r % os.cpu_count()]} for r in range(ranks)]},
            {"name": "n", "workload": "host-idle", "params": {"sample_ms": 1.0}}]


def submit_nodes_job(slurm, runner, tmp_path, doc, *sbatch_args):
    """sbatch ib-nodes.sbatch OUT_DIR (tmp_path/run) with the scenario `doc`; the job's id once it ended."""
    env = dict(slurm.env, IB_BINARY=BINARY, IB_CONDUCTOR_PORT=str(free_port()))
    r = subprocess.run([which("sbatch"), "--parsable", *sbatch_args, "--partition", "test", "--time", "5",
                        "--chdir", str(tmp_path), str(DEPLOY / "slurm" / "ib-nodes.sbatch"), str(tmp_path / "run"),
                        *run_args(runner.write_json("s.json", doc))],
                       capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    wait_job_ended(slurm, job)
    return job


def assert_collective_ran_on_every_node(tmp_path, ranks, log):
    """One results.json (node 0's) naming nodes 1..ranks-1, the run ok, every rank's durations kept (the
    sample the slowest rank's), rank R's worker logged in node R's folder and no other."""
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [n["node_rank"] for n in res["meta"]["nodes"]] == list(range(1, ranks)), res["meta"]
    assert res["meta"]["scheduler"]["kind"] == "slurm", res["meta"]["scheduler"]
    run = res["runs"][0]
    assert run["status"] == "ok", run["message"]
    ar = next(t for t in run["tenants"] if t["name"] == "ar")
    for phase in ("exclusive", "colocated"):
        p = ar["phases"][phase]
        durations = p["samples"]["rank_duration_s"]
        assert len(durations) == ranks and all(len(d) == len(p["samples"]["duration_s"]) > 0 for d in durations)
        assert p["samples"]["duration_s"] == [max(each) for each in zip(*durations)]
        assert p["ranks"]["count"] == ranks
    folders = [tmp_path / "run"] + [tmp_path / f"run-node-{r}" for r in range(1, ranks)]
    for r in range(1, ranks):  # node 0 measured each node's clock: each joined
        assert any(f"node {r} (" in line and "clock offset" in line for line in log.splitlines()), log
    for r, folder in enumerate(folders):
        logs = [f.name for f in (folder / "logs").iterdir()]
        assert [n for n in logs if "-ar-rank" in n and n.endswith(".log")] == [
            n for n in logs if n.endswith(f"-ar-rank{r}.log")] != [], (r, logs)


@pytest.mark.skipif(not GLOO, reason="built without gloo (libgloo-dev)")
def test_four_tasks_of_one_job_run_one_collective_with_a_rank_on_each(slurm, runner, tmp_path):
    # srun -n 4 on the one node (docs/design.md section 13, "a real local Slurm"): ib-nodes.sbatch starts four
    # tasks, each a harness (node rank SLURM_PROCID), node 0 conducts; the collective's rank R is placed on
    # node R, so each rank is a worker started by a different task, and the four meet through node 0.
    job = submit_nodes_job(slurm, runner, tmp_path, scenario("four", allreduce(4), duration=0.6, warmup=0.1),
                           "--ntasks=4", "--ntasks-per-node=4")
    log = (tmp_path / f"ib-nodes.{job}.out").read_text()  # the script's own --output
    record = slurm.jobs(job)[0]
    assert record["ExitCode"] in ("0:0", "1:0", "5:0"), log
    assert record["NumTasks"] == "4" and record["NumNodes"] == "1", record
    assert "command not found" not in log, log
    # Each task asked for its share of the node's CPUs, unbound (not the one CPU a step's task gets untold).
    assert f"ib-nodes: 4 tasks, {NODE_CPUS // 4} CPUs each (srun --cpus-per-task {NODE_CPUS // 4} --cpu-bind=none)" in log, log
    assert_collective_ran_on_every_node(tmp_path, 4, log)


@pytest.mark.skipif(not GLOO, reason="built without gloo (libgloo-dev)")
def test_two_slurm_nodes_of_one_machine_run_one_collective(two_slurmd, runner, tmp_path):
    # srun -N 2 --ntasks-per-node=1: two slurmd of this machine (two_slurmd: -N HOST, -N HOST-2, each its own
    # port and spool), one task and one harness on each, the 2-rank allreduce across them.
    job = submit_nodes_job(two_slurmd, runner, tmp_path, scenario("two", allreduce(2), duration=0.6, warmup=0.1),
                           "--nodes=2", "--ntasks-per-node=1")
    log = (tmp_path / f"ib-nodes.{job}.out").read_text()
    record = two_slurmd.jobs(job)[0]
    assert record["ExitCode"] in ("0:0", "1:0", "5:0"), log
    assert record["NumNodes"] == "2" and record["NumTasks"] == "2", record
    assert f"ib-nodes: 2 tasks, {NODE_CPUS} CPUs each (srun --cpus-per-task {NODE_CPUS} --cpu-bind=none)" in log, log
    # each slurmd launched one task of the job's step
    for name in TWO_NODES:
        slurmd_log = (two_slurmd.root / "log" / f"slurmd.{name}.log").read_text()
        assert slurmd_log.count(f"launch task StepId={job}.0 ") == 1, (name, slurmd_log[-3000:])
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["meta"]["scheduler"]["node"] == TWO_NODES[0], res["meta"]["scheduler"]
    assert_collective_ran_on_every_node(tmp_path, 2, log)
