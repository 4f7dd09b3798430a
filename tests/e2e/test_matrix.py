"""`matrix` (issue 50, docs/matrix.md) through the binary: every pair of the workloads one run, the cells the
pair runs' own verdicts, the pairs that may share, the packing; bad input, the budget and a stop signal.

The known answer: three CPU-bound workloads pinned to CPU 0 (two host-compute sizes and a host-copy) time-share
one core, so every pair of them, and each beside a copy of itself, is slowed about twofold; a sleeping
neighbour (host-idle) pinned to CPU 1 contends with none of them. By hand: the idle workload shares with
everything and nothing else shares, so the packing is 3 devices (cores) for 4 workloads."""
import json
import signal
import time

import pytest

from conftest import skip_unless_measured

pytestmark = []

HOGS = ["host-compute:n=96:reps=4", "host-copy:mib=16", "host-compute:n=64:reps=8"]
IDLE = "host-idle:sample_ms=8"


def matrix_scenario():
    tenants = [{"name": w, "workload": w.split(":")[0],
                "params": {k: int(v) for k, v in (kv.split("=") for kv in w.split(":")[1:])},
                "placement": {"cpus": [0]}} for w in HOGS]
    tenants.append({"name": "idle", "workload": "host-idle", "params": {"sample_ms": 8}, "placement": {"cpus": [1]}})
    return {"tenants": tenants}


def read(out):
    return json.loads((out / "matrix.json").read_text())


@pytest.fixture(scope="module")
def known_matrix(tmp_path_factory):
    from conftest import Runner
    tmp = tmp_path_factory.mktemp("matrix")
    runner = Runner(tmp)
    spec = runner.write_json("workloads.json", matrix_scenario())
    out = tmp / "m"
    r = runner.run("matrix", "--backend", "host", "--workloads", str(spec), "--duration", "1", "--warmup", "0.2",
                   "--rounds", "4", "--out", str(out), timeout=500)
    yield r, out, read(out)
    assert runner.leftover_processes() == []


def pair_verdicts(out, doc):
    """Each cell's verdict as its pair's own results.json gives it: (victim, aggressor) -> aggregate."""
    got = {}
    for p in doc["pairs"]:
        res = json.loads((out / "pairs" / f"{p['a']}-{p['b']}" / "run" / "results.json").read_text())
        by_tenant = {a["tenant"]: a for a in res["aggregates"]}
        got[(p["a"], p["b"])] = by_tenant[f"w{p['a']}"]
        if p["a"] != p["b"]:  # a diagonal cell is the first of the two copies
            got[(p["b"], p["a"])] = by_tenant[f"w{p['b']}"]
    return got


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_every_cell_is_its_pair_runs_own_verdict_and_may_share_follows(known_matrix):
    r, out, doc = known_matrix
    assert r.returncode in (0, 5), r.stderr[-2000:]
    n = len(doc["workloads"])
    assert n == 4 and len(doc["pairs"]) == 10 and len(doc["cells"]) == 16
    assert "10 runs" in r.stderr  # said before anything ran
    aggregates = pair_verdicts(out, doc)
    for c in doc["cells"]:
        a = aggregates[(c["victim"], c["aggressor"])]
        assert c["verdict"] == a["verdict"], (c, a["verdict_reason"])
        if c["p95_slowdown"] is not None:
            assert c["p95_slowdown"]["value"] == pytest.approx(a["metrics"]["p95_slowdown"]["value"])
    passing = {(c["victim"], c["aggressor"]) for c in doc["cells"] if c["verdict"] == "pass"}
    expected = sorted([a, b] for a in range(n) for b in range(a + 1, n) if (a, b) in passing and (b, a) in passing)
    assert sorted(doc["may_share"]) == expected
    # The packing: one device per pair of a maximum matching of may_share (here at most a star: size <= 1 ...
    # counted by brute force over every set of disjoint pairs), one per other workload.
    best = max_matching_size(n, [tuple(p) for p in doc["may_share"]])
    assert len(doc["packing"]["devices"]) == n - best
    assert sorted(w for d in doc["packing"]["devices"] for w in d) == list(range(n))


def max_matching_size(n, edges):
    best = 0
    for mask in range(1 << len(edges)):
        used, count, ok = set(), 0, True
        for i, (a, b) in enumerate(edges):
            if mask >> i & 1:
                ok = ok and a not in used and b not in used
                used |= {a, b}
                count += 1
        if ok:
            best = max(best, count)
    return best


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_the_idle_workload_shares_with_everything_and_the_hogs_with_nothing(known_matrix):
    r, out, doc = known_matrix
    names = [w["name"] for w in doc["workloads"]]
    idle = names.index("idle")
    aggregates = pair_verdicts(out, doc)
    for agg in aggregates.values():
        skip_unless_measured(agg)
    cells = {(c["victim"], c["aggressor"]): c for c in doc["cells"]}
    hogs = [i for i in range(len(names)) if i != idle]
    # On one core two CPU-bound workloads take turns: about twice as slow, never a pass.
    for v in hogs:
        for a in hogs:
            assert cells[(v, a)]["verdict"] != "pass", cells[(v, a)]
    undecided = [k for k, c in cells.items() if (idle in k) and c["verdict"] != "pass"]
    if any(cells[k]["verdict"] == "inconclusive" for k in undecided):
        pytest.skip(f"an idle cell is undecided on this machine: {[cells[k]['verdict_reason'] for k in undecided]}")
    assert undecided == [], [cells[k] for k in undecided]
    assert sorted(doc["may_share"]) == sorted([min(idle, h), max(idle, h)] for h in hogs)
    assert len(doc["packing"]["devices"]) == 3 and doc["packing"]["saved"] == 1  # the hand count


def test_bad_workloads_are_one_line_and_nothing_runs(runner, tmp_path):
    for args, words in [(["--workloads", "host-compute"], "at least two workloads"),
                        (["--workloads", "host-compute,host-compute"], "listed twice"),
                        (["--workloads", "host-compute:n,host-idle"], "KEY=VALUE"),
                        (["--workloads", "host-compute:n=-3,host-idle"], "host-compute:n=-3"),
                        (["--workloads", "no-such-workload,host-idle"], "no-such-workload"),
                        (["--workloads", "host-idle,host-compute", "--mode", "mig"], "mig-sweep"),
                        (["--workloads", "host-idle,host-compute", "--cpus", "x"], "--cpus")]:
        out = tmp_path / f"o{len(words)}"
        r = runner.run("matrix", "--backend", "host", *args, "--out", str(out))
        assert r.returncode == 2, (args, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and words in lines[0], (args, r.stderr)
        assert not (out / "pairs").exists()


def quick(runner, tmp_path, *extra):
    out = tmp_path / "q"
    return out, runner.popen("matrix", "--backend", "host", "--workloads", "host-idle:sample_ms=2,host-idle:sample_ms=3,"
                             "host-idle:sample_ms=4", "--duration", "0.3", "--warmup", "0.05", "--rounds", "2",
                             "--out", str(out), *extra)


def test_the_budget_skips_the_runs_that_would_not_fit_but_never_the_first(runner, tmp_path):
    out, p = quick(runner, tmp_path, "--budget", "1")
    _, err = p.communicate(timeout=300)
    doc = read(out)
    outcomes = [x["run"]["outcome"] for x in doc["pairs"]]
    assert outcomes[0] == "measured" and set(outcomes[1:]) == {"skipped_budget"}, (outcomes, err)
    assert "--budget 1 s" in doc["pairs"][1]["run"]["reason"]
    skipped = [c for c in doc["cells"] if (c["victim"], c["aggressor"]) != (0, 0)]
    assert all(c["verdict"] == "error" and "--budget" in c["verdict_reason"] for c in skipped)
    assert doc["exit_code"] == p.returncode


def test_a_stop_signal_keeps_the_runs_it_finished(runner, tmp_path):
    out, p = quick(runner, tmp_path)
    deadline = time.monotonic() + 240
    # Wait until the first run is in matrix.json (the file is rewritten after every run).
    while time.monotonic() < deadline:
        try:
            if read(out)["pairs"][0]["run"]["outcome"] == "measured":
                break
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    p.communicate(timeout=60)
    assert p.returncode == 130
    assert time.monotonic() - stopped < 10
    doc = read(out)
    assert doc["interrupted"] is True and doc["exit_code"] == 130
    assert doc["pairs"][0]["run"]["outcome"] == "measured"
    assert doc["pairs"][-1]["run"]["outcome"] == "interrupted"
