"""`merge`: many nodes' results into one fleet report (docs/design.md section 10, docs/fleet.md).

A fleet of 200 nodes is made from one real host run: each node's copy gets its own name and a small
jitter on its figures, a few get known stragglers (slow exclusive throughput, high P95 slowdown), a few
are missing, truncated, killed or failed. merge must name exactly those, in under 2 s of CPU time (the timing is its
own test, left out under the sanitizers)."""
import json
import os
import random
import resource
import shutil
import subprocess
from pathlib import Path

import jsonschema
import junitparser
import pytest

from conftest import BINARY, LENIENT, SOURCE_DIR

FLEET_SCHEMA = json.loads((SOURCE_DIR / "reports" / "fleet.schema.json").read_text())
NODES = 200
SLOW = {17, 93, 150}         # exclusive throughput x 0.6
HIGH_P95 = {42, 188}         # P95 slowdown + 0.5
MISSING = {5, 66, 120}       # no folder at all
TRUNCATED = 77               # results.json cut in half
WORKLOAD_ERROR = 130         # task.json says the run exited 4
KILLED = 160                 # task.json without an exit code


def real_run(out):
    """One real host run's results.json (parsed), its verdicts set to pass so the copies start good."""
    proc = subprocess.run([BINARY, "run", "--backend", "host", "--scenario",
                           str(SOURCE_DIR / "scenarios" / "host" / "idle-neighbour.json"), "--duration", "1",
                           "--warmup", "0.2", "--rounds", "2", "--until", "fixed", *LENIENT, "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1, 5), proc.stderr
    doc = json.loads((out / "results.json").read_text())
    for a in doc["aggregates"]:
        a["verdict"] = "pass"
    doc["summary"].update({"pass": True, "exit_code": 0, "inconclusive": 0, "failed": 0})
    return doc


@pytest.fixture(scope="module")
def real_result(tmp_path_factory):
    return real_run(tmp_path_factory.mktemp("real") / "run")


def node(i):
    return f"node-{i:03d}"


def node_copy(base, i, rng):
    """The base result as node i's: its name everywhere, figures jittered, stragglers made."""
    doc = json.loads(json.dumps(base))
    doc["meta"]["host"]["hostname"] = node(i)
    doc["meta"]["scheduler"] = {"kind": "slurm", "job_id": str(1000 + i), "array_job_id": "999", "task_index": i,
                                "node": node(i)}
    for d in doc["meta"]["devices"]:
        d["node"] = node(i)
    for run in doc["runs"]:
        for t in run["tenants"]:
            thr = t["phases"]["exclusive"]["throughput"]
            thr["value"] *= (0.6 if i in SLOW else 1.0) * (1.0 + rng.uniform(-0.01, 0.01))
    for a in doc["aggregates"]:
        e = a["metrics"]["p95_slowdown"]
        shift = (0.5 if i in HIGH_P95 else 0.0) + rng.uniform(-0.01, 0.01)
        for k in ("value", "ci_low", "ci_high"):
            e[k] += shift
    return doc


def task_json(i, exit_code):
    return {"task_schema": 1, "scheduler": "slurm", "node": node(i), "job_id": str(1000 + i), "array_job_id": "999",
            "task_index": i, "results_dir": "results", "exit_code": exit_code, "started": "2026-12-02T01:00:00Z",
            "ended": None if exit_code is None else "2026-12-02T01:05:00Z"}


def make_fleet(root, base):
    """200 task folders as deploy/ib-task.sh leaves them and the expected node list; returns the merge's argv."""
    rng = random.Random(1)
    for i in range(NODES):
        doc = node_copy(base, i, rng)
        if i in MISSING:
            continue
        task = root / "tasks" / f"{node(i)}.{i}"
        (task / "results").mkdir(parents=True)
        code = 4 if i == WORKLOAD_ERROR else None if i == KILLED else 0
        (task / "task.json").write_text(json.dumps(task_json(i, code)))
        text = json.dumps(doc)
        (task / "results" / "results.json").write_text(text[:len(text) // 2] if i == TRUNCATED else text)
    (root / "expected-nodes.txt").write_text("# the partition's GPU nodes\n" + "\n".join(node(i) for i in range(NODES)) + "\n")
    return [BINARY, "merge", str(root / "tasks"), "--expect-nodes", str(root / "expected-nodes.txt"),
            "--expect-tasks", str(NODES), "--out", str(root / "out")]


@pytest.fixture(scope="module")
def fleet(real_result, tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    proc = subprocess.run(make_fleet(root, real_result), capture_output=True, text=True, timeout=60)
    return root, proc


@pytest.fixture(scope="module")
def timed_fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("timed")
    return make_fleet(root, real_run(root / "run"))


@pytest.mark.measurement
def test_merge_of_200_nodes_takes_under_2_s(timed_fleet):
    # Its own CTest, labelled measurement: a sanitizer build's slower parsing is not what is judged. What is
    # judged is the merge's own CPU time (user + system of the child), not the wall clock: on a busy machine
    # (this VM beside three builds took 4.95 s of wall time) the wall clock measures the neighbours.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(timed_fleet, capture_output=True, text=True, timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert proc.returncode == 1, proc.stderr
    assert cpu_s <= 2.0, f"merge of {NODES} nodes took {cpu_s:.2f} s of CPU time"


def test_200_nodes_merge_names_exactly_the_stragglers_and_missing_nodes(fleet):
    root, proc = fleet
    assert proc.returncode == 1, proc.stderr
    doc = json.loads((root / "out" / "fleet.json").read_text())
    jsonschema.validate(doc, FLEET_SCHEMA)
    worse = {(s["node"], s["metric"]) for s in doc["stragglers"] if s["worse"]}
    assert worse == ({(node(i), "exclusive_throughput") for i in SLOW} |
                     {(node(i), "p95_slowdown") for i in HIGH_P95}), doc["stragglers"]
    # Each straggler names its evidence: its value, the group's median, MAD and z.
    for s in doc["stragglers"]:
        assert abs(s["z"]) > 3.5 and s["group_values"] >= 190 and "robust z" in s["evidence"]
    assert doc["summary"]["missing_nodes"] == [node(i) for i in sorted(MISSING)]
    assert doc["summary"]["missing_tasks"] == sorted(MISSING)
    status = {m["name"]: m["status"] for m in doc["members"]}
    assert status[f"{node(TRUNCATED)}.{TRUNCATED}"] == "unreadable"
    assert status[f"{node(WORKLOAD_ERROR)}.{WORKLOAD_ERROR}"] == "workload_error"
    assert status[f"{node(KILLED)}.{KILLED}"] == "unfinished"
    for i in SLOW | HIGH_P95:
        assert status[f"{node(i)}.{i}"] == "straggler"
    bad = SLOW | HIGH_P95 | {TRUNCATED, WORKLOAD_ERROR, KILLED}
    assert all(status[f"{node(i)}.{i}"] == "ok" for i in range(NODES) if i not in bad | MISSING)
    s = doc["summary"]
    assert s["ok"] == NODES - len(MISSING) - len(bad)
    assert s["failed"] == len(bad) + 2 * len(MISSING)  # a missing node and its missing index are both listed
    # The worst GPUs begin with the stragglers.
    assert {w["node"] for w in doc["worst"][:5]} == {node(i) for i in SLOW | HIGH_P95}


def test_fleet_outputs_parse_and_join_with_dcgm_labels(fleet):
    root, proc = fleet
    out = root / "out"
    suites = {s.name: s for s in junitparser.JUnitXml.fromfile(str(out / "fleet.junit.xml"))}
    assert len(suites) == NODES + len(MISSING)  # a suite per member, missing tasks included
    assert suites[f"{node(17)}.17"].failures >= 1
    assert suites[node(5)].failures == 1 and suites["task 5"].failures == 1
    assert suites[f"{node(1)}.1"].failures == 0
    promtool = shutil.which("promtool")
    if promtool:
        check = subprocess.run([promtool, "check", "metrics"], input=(out / "fleet.prom").read_text(),
                               capture_output=True, text=True)
        # The only complaint allowed: dcgm-exporter's own label names (Hostname, UUID, modelName) are not
        # snake_case; they are kept as they are so that a query can join the two.
        problems = [line for line in (check.stdout + check.stderr).splitlines()
                    if line and "label names should be written in 'snake_case' not 'camelCase'" not in line]
        assert not problems, problems
    prom = (out / "fleet.prom").read_text()
    assert f'interference_bench_fleet_member_status{{Hostname="{node(17)}",gpu="",UUID="",modelName="' in prom
    assert 'DCGM_FI_DRIVER_VERSION=""' in prom
    assert "interference_bench_fleet_exit_code 1" in prom
    html = (out / "fleet.html").read_text()
    assert "<script" not in html and html.count("<svg") >= NODES
    md = (out / "fleet.md").read_text()
    assert md.startswith("# interference-bench fleet\n\n**exit code 1**")
    assert proc.stdout.startswith("# interference-bench fleet")
    # One line on stderr per member that is not ok.
    assert f"merge: {node(77)}.77: unreadable:" in proc.stderr


def small_fleet(tmp_path, base, n=5, verdicts=None):
    for i in range(n):
        doc = node_copy(base, i, random.Random(i))
        if verdicts and i in verdicts:
            doc["aggregates"][0]["verdict"] = verdicts[i]
            doc["summary"]["exit_code"] = {"inconclusive": 5, "fail": 1}[verdicts[i]]
        d = tmp_path / "in" / node(i)
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(doc))
    return tmp_path / "in"


def merge(tmp_path, *args):
    return subprocess.run([BINARY, "merge", *map(str, args)], capture_output=True, text=True, timeout=60)


def test_exit_codes_all_good_inconclusive_failed(real_result, tmp_path):
    good = small_fleet(tmp_path / "a", real_result)
    assert merge(tmp_path, good, "--out", tmp_path / "a" / "out").returncode == 0
    inconclusive = small_fleet(tmp_path / "b", real_result, verdicts={2: "inconclusive"})
    proc = merge(tmp_path, inconclusive, "--out", tmp_path / "b" / "out")
    assert proc.returncode == 5, proc.stderr
    assert "node-002.2: inconclusive: victim (host-idle-neighbour, timeslice) is inconclusive" in proc.stderr
    failed = small_fleet(tmp_path / "c", real_result, verdicts={3: "fail"})
    assert merge(tmp_path, failed, "--out", tmp_path / "c" / "out").returncode == 1
    # A node expected but absent turns a good fleet into a failed one.
    (tmp_path / "nodes.txt").write_text("node-000\nnode-009\n")
    proc = merge(tmp_path, good, "--expect-nodes", tmp_path / "nodes.txt", "--out", tmp_path / "d")
    assert proc.returncode == 1
    doc = json.loads((tmp_path / "d" / "fleet.json").read_text())
    assert doc["summary"]["missing_nodes"] == ["node-009"]
    assert [m["expected"] for m in doc["members"] if m["node"] == "node-001"] == [False]


def test_vet_and_sustain_reports_are_a_nodes_platform_checks(real_result, tmp_path):
    d = tmp_path / "in" / "gpu-a"
    d.mkdir(parents=True)
    (d / "vet.json").write_text(json.dumps({
        "schema_version": "1.1", "kind": "vet", "start_time": "2026-12-02T01:00:00Z", "host": "gpu-a", "device": 0,
        "backend": "host", "budget_s": 60, "steps": {}, "baseline": "", "verdict": "fail",
        "checks": [{"id": "memory_total", "title": "Memory", "status": "fail", "evidence": "80 GiB of 141",
                    "threshold": ">= 95%", "source": "seed 001"}],
        "cost": None, "stability_results": "", "sustain_results": "", "interrupted": False}))
    (d / "sustain.json").write_text(json.dumps({"verdict": "inconclusive", "evidence": ["too few readings"],
                                                "host": "gpu-a", "run": ""}))
    proc = merge(tmp_path, tmp_path / "in", "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads((tmp_path / "out" / "fleet.json").read_text())
    [m] = doc["members"]
    assert m["node"] == "gpu-a" and m["status"] == "failed" and "memory_total" in m["detail"]
    assert [c["id"] for c in m["checks"]] == ["sustained_load", "memory_total"]
    suites = list(junitparser.JUnitXml.fromfile(str(tmp_path / "out" / "fleet.junit.xml")))
    assert suites[0].failures == 1 and suites[0].skipped == 1


@pytest.mark.parametrize("args, message", [
    (["nosuch", "--out", "o"], "merge: nosuch: no such file or folder"),
    (["empty", "--out", "o"], "nothing to merge"),
    (["empty", "--expect-nodes", "bad.txt", "--out", "o"], "bad.txt:1: \"a b\" is not a node name"),
    (["empty", "--expect-nodes", "none.txt", "--out", "o"], "--expect-nodes: none.txt: cannot open nodes file"),
])
def test_bad_input_is_exit_2_in_one_line(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.txt").write_text("a b\n")
    proc = subprocess.run([BINARY, "merge", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "o" / "fleet.json").exists()


def test_an_earlier_fleet_report_is_replaced_only_with_force(real_result, tmp_path):
    good = small_fleet(tmp_path, real_result)
    assert merge(tmp_path, good, "--out", tmp_path / "out").returncode == 0
    proc = merge(tmp_path, good, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "--force" in proc.stderr
    assert merge(tmp_path, good, "--out", tmp_path / "out", "--force").returncode == 0


# ------------------------------------------------------------------ issue 37, item 10: merge correctness

def test_one_file_under_three_spellings_is_one_member(real_result, tmp_path):
    good = small_fleet(tmp_path, real_result, n=1)
    f = good / node(0) / "results.json"
    (tmp_path / "x").mkdir()
    (tmp_path / "link.json").symlink_to(f)
    spellings = [f, tmp_path / "in" / "." / node(0) / "results.json", tmp_path / "x" / ".." / "in" / node(0) / "results.json",
                 tmp_path / "link.json"]
    proc = merge(tmp_path, *spellings, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    [m] = json.loads((tmp_path / "out" / "fleet.json").read_text())["members"]
    assert len(m["tenants"]) == len(real_result["aggregates"]) and len(m["files"]) == 1, m


def test_a_task_folder_under_two_paths_is_one_member_per_task(real_result, tmp_path):
    rng = random.Random(1)
    for i in range(3):
        task = tmp_path / "tasks" / f"{node(i)}.{i}"
        (task / "results").mkdir(parents=True)
        (task / "task.json").write_text(json.dumps(task_json(i, 0)))
        (task / "results" / "results.json").write_text(json.dumps(node_copy(real_result, i, rng)))
    # The folder relative to the working directory and as its real path.
    proc = subprocess.run([BINARY, "merge", "tasks", str((tmp_path / "tasks").resolve()), "--expect-tasks", "3", "--out",
                           "out"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out" / "fleet.json").read_text())
    assert sorted(m["task_index"] for m in doc["members"]) == [0, 1, 2], [m["name"] for m in doc["members"]]


@pytest.mark.parametrize("version", ["99.1", "garbage", None, "2.4"])
def test_a_vet_report_of_another_schema_is_unreadable_with_the_reason(tmp_path, version):
    vet = {"kind": "vet", "start_time": "2026-12-02T01:00:00Z", "host": "gpu-a", "device": 0, "backend": "host",
           "budget_s": 60, "steps": {}, "baseline": "", "verdict": "pass", "checks": [], "cost": None,
           "stability_results": "", "sustain_results": "", "interrupted": False}
    if version is not None:
        vet["schema_version"] = version
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "vet.json").write_text(json.dumps(vet))
    proc = merge(tmp_path, tmp_path / "in", "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    [m] = json.loads((tmp_path / "out" / "fleet.json").read_text())["members"]
    assert m["status"] == "unreadable" and "schema_version" in m["detail"], m
    # The same report at this version reads.
    vet["schema_version"] = "1.1"
    (tmp_path / "in" / "vet.json").write_text(json.dumps(vet))
    assert merge(tmp_path, tmp_path / "in", "--out", tmp_path / "out", "--force").returncode == 0


def test_a_nodes_file_that_is_not_utf8_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "nodes.txt").write_bytes(b"gpu-a\ngpu-\xff\xfe\n")
    proc = merge(tmp_path, tmp_path / "empty", "--expect-nodes", tmp_path / "nodes.txt", "--out", tmp_path / "out")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (proc.returncode, proc.stderr)
    assert "--expect-nodes" in proc.stderr and "nodes.txt:2" in proc.stderr and "UTF-8" in proc.stderr
    assert not (tmp_path / "out" / "fleet.json").exists()


@pytest.mark.parametrize("target", ["nowhere", "fifo"])
def test_a_dangling_or_odd_symlink_input_is_exit_2_like_a_missing_one(tmp_path, target):
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    (tmp_path / "results.json").symlink_to(tmp_path / target)
    proc = merge(tmp_path, tmp_path / "results.json", "--out", tmp_path / "out")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (proc.returncode, proc.stderr)
    assert str(tmp_path / "results.json") in proc.stderr
    missing = merge(tmp_path, tmp_path / "nowhere.json", "--out", tmp_path / "out")
    assert missing.returncode == 2
