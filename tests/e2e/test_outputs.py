"""Nightly outputs on one recorded host run: meta.devices, --junit, --prometheus, `report` re-rendering
from a saved results.json, and `compare BASE NEW` on recorded results edited in Python."""
import copy
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from conftest import LENIENT, Runner, compute, load_results, scenario

MARKUP_NAME = 'v<&"x'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One host run with two tenants, its JUnit and Prometheus files; (runner, out folder, results)."""
    tmp = tmp_path_factory.mktemp("recorded")
    runner = Runner(tmp)
    # Small samples (n=64: hundreds per phase) so that every phase has the 72 a P95 needs on a loaded machine.
    doc = scenario("pair", [{**compute("victim"), "role": "victim"}, {**compute("aggressor"), "role": "aggressor"}],
                   duration=2.0)
    f = runner.write_json("s.json", doc)
    out = tmp / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, "--resamples", "200",
                   "--junit", tmp / "junit.xml", "--prometheus", tmp / "metrics.prom", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    assert runner.leftover_processes() == []
    res = load_results(out)
    for a in res["aggregates"]:  # what the comparisons below need: a P95 from every phase
        assert min(a["metrics"]["n"].values()) >= 72, a["metrics"]["n"]
    return runner, out, res


def write(runner, name, doc):
    return runner.write_json(name, json.dumps(doc))


# ---------------------------------------------------------------- meta.devices

def cpu_model():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return None


def test_a_host_run_records_the_host_as_its_device(recorded):
    _, out, res = recorded
    assert res["schema_version"] == "2.9"
    devices = res["meta"]["devices"]
    assert len(devices) == 1
    d = devices[0]
    assert d["kind"] == "host"
    assert d["node"] == socket.gethostname() == res["meta"]["host"]["hostname"]
    assert d["cores"]["online"] == os.sysconf("SC_NPROCESSORS_ONLN")
    assert d["cores"]["usable"] == len(os.sched_getaffinity(0))
    mem_kb = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal:"))
    assert d["memory_total_bytes"] == mem_kb * 1024
    if cpu_model():
        assert d["name"] == cpu_model()
    assert d["uuid"] is None and d["driver_version"] is None
    assert f"Device: host CPU {d['name']}" in (out / "summary.md").read_text()


# ---------------------------------------------------------------- --junit

def junit_counts(path):
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "passed": 0}
    names = []
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            counts["tests"] += 1
            names.append(case.name)
            kinds = [type(r) for r in case.result]
            if Failure in kinds:
                counts["failures"] += 1
            elif Error in kinds:
                counts["errors"] += 1
            elif Skipped in kinds:
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    return counts, names


def expected_counts(summary):
    return {"tests": summary["tenants"], "failures": summary["failed"], "errors": summary["errors"],
            "skipped": summary["inconclusive"] + summary["waived"], "passed": summary["passed"] + summary["baseline"]}


def test_run_junit_has_one_testcase_per_verdict_counted_as_the_summary(recorded):
    runner, out, res = recorded
    counts, names = junit_counts(runner.tmp / "junit.xml")
    assert counts == expected_counts(res["summary"])
    assert sorted(names) == sorted(f"{a['tenant']} ({a['workload']})" for a in res["aggregates"])


def test_junit_failures_carry_metric_value_threshold_and_reason(recorded, tmp_path):
    runner, out, res = recorded
    doc = copy.deepcopy(res)
    agg = doc["aggregates"][0]
    agg["verdict"] = "fail"
    agg["verdict_reason"] = "the whole CI lies above the cutoff"
    doc["aggregates"][1]["verdict"] = "inconclusive"
    doc["aggregates"][1]["verdict_reason"] = "CI straddles the cutoff"
    doc["summary"].update(passed=0, failed=1, inconclusive=1, baseline=0, waived=0, errors=0)
    src = write(runner, "edited/results.json", doc)
    junit = tmp_path / "j.xml"
    r = runner.run("report", src, "--junit", junit)
    assert r.returncode == 0, r.stderr
    assert junit_counts(junit)[0] == expected_counts(doc["summary"])
    cases = [c for s in JUnitXml.fromfile(str(junit)) for c in s]
    failure = next(x for x in cases[0].result if isinstance(x, Failure))
    assert "p95_slowdown" in failure.message and "against cutoff 0.4" in failure.message
    assert "the whole CI lies above the cutoff" in failure.message
    assert "threshold: 0.4" in failure.text and "value: " in failure.text
    skipped = next(x for x in cases[1].result if isinstance(x, Skipped))
    assert skipped.message == "inconclusive: CI straddles the cutoff"


# ---------------------------------------------------------------- --prometheus

LABELS = ("scenario", "mode", "tenant", "workload", "gpu_uuid", "node")


def parse_prometheus(text):
    """{(name, frozenset(labels)): value}, with the format's escapes undone."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, rest = line.split("{", 1)
        labels, i = {}, 0
        while rest[i] != "}":
            eq = rest.index("=", i)
            key = rest[i:eq]
            j, value = eq + 2, ""
            while rest[j] != '"':
                if rest[j] == "\\":
                    value += {"n": "\n", "\\": "\\", '"': '"'}[rest[j + 1]]
                    j += 2
                else:
                    value += rest[j]
                    j += 1
            labels[key] = value
            i = j + 1 + (rest[j + 1] == ",")
        samples[(name, frozenset(labels.items()))] = float(rest[i + 1:].strip())
    return samples


def promtool_check(path):
    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool is not installed (Debian package prometheus): exposition format not checked")
    with open(path) as f:
        r = subprocess.run([promtool, "check", "metrics"], stdin=f, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    # promtool's linter speaks up on problems it does not fail (e.g. a missing HELP).
    assert r.stdout.strip() == "" and r.stderr.strip() == "", r.stdout + r.stderr


def tenant_key(res, scenario_name, mode, tenant, workload):
    return {"scenario": scenario_name, "mode": mode, "tenant": tenant, "workload": workload, "gpu_uuid": "",
            "node": res["meta"]["host"]["hostname"]}


def check_prometheus_values(res, samples):
    for a in res["aggregates"]:
        key = tenant_key(res, a["scenario"], a["mode"], a["tenant"], a["workload"])
        if a["metrics"]:
            assert samples[("interference_bench_p95_slowdown", frozenset(key.items()))] == a["metrics"]["p95_slowdown"]["value"]
            assert samples[("interference_bench_median_slowdown", frozenset(key.items()))] == a["metrics"]["median_slowdown"]
        for word in ("pass", "fail", "inconclusive", "baseline", "waived", "error"):
            v = samples[("interference_bench_verdict", frozenset({**key, "verdict": word}.items()))]
            assert v == (1.0 if word == a["verdict"] else 0.0)
    for run in res["runs"]:
        for t in run["tenants"]:
            for phase in ("exclusive", "colocated"):
                p = t["phases"][phase]
                key = {**tenant_key(res, run["scenario"], run["mode"], t["name"], t["workload"]),
                       "repetition": str(run["repetition"]), "phase": phase}
                assert samples[("interference_bench_throughput", frozenset(key.items()))] == p["throughput"]["value"]
                got = samples.get(("interference_bench_window_cv", frozenset(key.items())))
                assert got == p["window_cv"]  # None (no sample) where the JSON has null


def test_run_prometheus_is_valid_and_equals_the_json(recorded):
    runner, out, res = recorded
    path = runner.tmp / "metrics.prom"
    text = path.read_text()
    for family in ("p95_slowdown", "median_slowdown", "throughput", "window_cv", "throttled_fraction", "verdict"):
        assert f"# HELP interference_bench_{family} " in text
        assert f"# TYPE interference_bench_{family} gauge" in text
    check_prometheus_values(res, parse_prometheus(text))
    promtool_check(path)


# ---------------------------------------------------------------- report

def rename_tenant(doc, old, new):
    for run in doc["runs"]:
        for t in run["tenants"]:
            if t["name"] == old:
                t["name"] = new
        for b in run["blocks"]:
            b["tenants"] = [new if x == old else x for x in b["tenants"]]
    for a in doc["aggregates"]:
        if a["tenant"] == old:
            a["tenant"] = new


def test_report_rerenders_and_markup_in_a_name_survives(recorded, tmp_path):
    runner, out, res = recorded
    doc = copy.deepcopy(res)
    rename_tenant(doc, "victim", MARKUP_NAME)
    src = write(runner, "markup/results.json", doc)
    junit, prom = tmp_path / "r.xml", tmp_path / "r.prom"
    r = runner.run("report", src, "--junit", junit, "--prometheus", prom)
    assert r.returncode == 0, r.stdout + r.stderr
    counts, names = junit_counts(junit)
    assert counts == expected_counts(doc["summary"])
    assert f"{MARKUP_NAME} (host-compute)" in names
    text = prom.read_text()
    assert 'tenant="v<&\\"x"' in text
    check_prometheus_values(doc, parse_prometheus(text))
    promtool_check(prom)


def test_report_of_the_unedited_file_equals_what_the_run_wrote(recorded, tmp_path):
    runner, out, res = recorded
    junit, prom = tmp_path / "r.xml", tmp_path / "r.prom"
    r = runner.run("report", out / "results.json", "--junit", junit, "--prometheus", prom)
    assert r.returncode == 0, r.stderr
    assert junit.read_text() == (runner.tmp / "junit.xml").read_text()
    assert prom.read_text() == (runner.tmp / "metrics.prom").read_text()


def test_report_refuses_bad_input_with_one_line(recorded, tmp_path):
    runner, out, res = recorded
    r = runner.run("report", out / "results.json")
    assert r.returncode == 2 and "--junit" in r.stderr
    bad = write(runner, "bad/results.json", {**res, "schema_version": "3.0"})
    r = runner.run("report", bad, "--junit", tmp_path / "x.xml")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and f"{bad}: schema_version" in r.stderr, r.stderr
    assert not (tmp_path / "x.xml").exists()


# ---------------------------------------------------------------- compare

SAMPLE_ARRAYS = ("start_ns", "duration_s", "block", "in_window", "counted", "outlier", "coverage", "throttled")


def steady(doc):
    """Each measured phase's durations replaced by its median times 1.0000 .. 1.0009 (repeating), keeping
    its blocks and flags: a recorded file whose CIs are narrow on any machine, so that a change of 5 points
    is resolved. (Every resampled slowdown then lies within 0.1% of the recorded medians' ratio, so a
    file against itself stays within 5 points for any ratio below 25.)"""
    doc = copy.deepcopy(doc)
    for run in doc["runs"]:
        for t in run["tenants"]:
            for phase in t["phases"].values():
                s = phase.get("samples")
                if not s or not s["duration_s"]:
                    continue
                d = sorted(s["duration_s"])
                median = d[len(d) // 2]
                s["duration_s"] = [median * (1 + 0.0001 * (i % 10)) for i in range(len(d))]
    return doc


def slower_victim(doc, factor=1.5):
    """A copy of `doc` whose victim's colocated samples all take `factor` times as long."""
    doc = copy.deepcopy(doc)
    for run in doc["runs"]:
        for t in run["tenants"]:
            if t["name"] == "victim":
                s = t["phases"]["colocated"]["samples"]
                s["duration_s"] = [d * factor for d in s["duration_s"]]
    return doc


def compare(runner, base, new, *extra):
    return runner.run("compare", base, new, *extra)


def test_compare_a_recorded_file_against_itself(recorded):
    runner, out, res = recorded
    # The file as recorded: its own noise on both sides, so judged against a threshold far above it.
    r = compare(runner, out / "results.json", out / "results.json", "--max-regression", "100")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "victim" in r.stdout and "aggressor" in r.stdout
    steady_file = write(runner, "steady/results.json", steady(res))
    r = compare(runner, steady_file, steady_file, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.loads(r.stdout)
    assert [t["verdict"] for t in j["tenants"]] == ["same", "same"]
    assert j["summary"] == {"better": 0, "same": 2, "worse": 0, "inconclusive": 0, "exit_code": 0}
    assert j["max_regression"] == 0.05
    for t in j["tenants"]:
        assert t["metrics"]["p95_slowdown"]["change"] == 0.0
        assert t["metrics"]["p95_slowdown"]["ci_low"] >= -0.05 and t["metrics"]["p95_slowdown"]["ci_high"] <= 0.05


def test_compare_a_slower_victim_is_worse_and_named(recorded):
    runner, out, res = recorded
    base = steady(res)
    new = slower_victim(base)
    b, n = write(runner, "slow/base.json", base), write(runner, "slow/new.json", new)
    r = compare(runner, b, n)
    assert r.returncode == 1, r.stdout + r.stderr
    worse_lines = [l for l in r.stderr.splitlines() if "worse" in l]
    assert len(worse_lines) == 1 and "tenant victim" in worse_lines[0], r.stderr
    assert "| victim |" in r.stdout and "**worse**" in r.stdout
    j = json.loads(compare(runner, b, n, "--json").stdout)
    victim = next(t for t in j["tenants"] if t["tenant"] == "victim")
    assert victim["verdict"] == "worse"
    # +50% colocated time: the P95 slowdown rises by exactly half of (1 + BASE's).
    p95 = victim["metrics"]["p95_slowdown"]
    assert abs(p95["change"] - 0.5 * (1 + p95["base"])) < 1e-9 * (1 + p95["base"])
    assert next(t for t in j["tenants"] if t["tenant"] == "aggressor")["verdict"] == "same"


def test_compare_refuses_another_schema_major_and_unreadable_files(recorded):
    runner, out, res = recorded
    other = write(runner, "major/results.json", {**res, "schema_version": "3.0"})
    r = compare(runner, out / "results.json", other)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and f'{other}: schema_version: "3.0"' in r.stderr, r.stderr
    older_minor = copy.deepcopy(res)
    older_minor["schema_version"] = "2.0"
    del older_minor["meta"]["devices"]
    r = compare(runner, write(runner, "minor/results.json", older_minor), out / "results.json", "--max-regression", "100")
    assert r.returncode == 0, r.stderr
    no_raw = copy.deepcopy(res)
    no_raw["meta"]["raw_samples"] = False
    for run in no_raw["runs"]:
        for t in run["tenants"]:
            for phase in t["phases"].values():
                phase.pop("samples", None)
    no_raw_file = write(runner, "noraw/results.json", no_raw)
    r = compare(runner, out / "results.json", no_raw_file)
    assert r.returncode == 2 and f"{no_raw_file}: meta.raw_samples: false" in r.stderr, r.stderr
    junk = runner.write_json("junk/results.json", "not json")
    r = compare(runner, junk, out / "results.json")
    assert r.returncode == 2 and str(junk) in r.stderr
    r = compare(runner, runner.tmp / "missing.json", out / "results.json")
    assert r.returncode == 2 and "cannot open" in r.stderr


def truncate_samples(tenant, keep):
    for phase in tenant["phases"].values():
        s = phase.get("samples")
        if s:
            for key in SAMPLE_ARRAYS:
                if key in s:
                    s[key] = s[key][:keep]


def test_compare_too_few_samples_is_inconclusive(recorded):
    runner, out, res = recorded
    base = steady(res)
    new = copy.deepcopy(base)
    for run in new["runs"]:
        for t in run["tenants"]:
            if t["name"] == "victim":
                truncate_samples(t, 30)
    r = compare(runner, write(runner, "short/base.json", base), write(runner, "short/new.json", new), "--json")
    assert r.returncode == 5, r.stdout + r.stderr
    j = json.loads(r.stdout)
    victim = next(t for t in j["tenants"] if t["tenant"] == "victim")
    assert victim["verdict"] == "inconclusive"
    assert "fewer than 72" in victim["metrics"]["p95_slowdown"]["reason"]


def test_compare_lists_unmatched_tenants(recorded):
    runner, out, res = recorded
    base = steady(res)
    new = copy.deepcopy(base)
    for run in new["runs"]:
        for t in run["tenants"]:
            if t["name"] == "aggressor":
                t["params"]["n"] = 65
    r = compare(runner, write(runner, "unmatched/base.json", base), write(runner, "unmatched/new.json", new))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "- only in BASE: pair (timeslice), aggressor" in r.stdout
    assert "- only in NEW: pair (timeslice), aggressor" in r.stdout
    assert '"n":65' in r.stdout


# ---------------------------------------------------------------- sustain --junit

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
READING = {"sm_clock": 1980, "max_sm_clock": 1980, "mem_clock": 3201, "power_w": 600.0, "power_limit_w": 700.0,
           "default_power_limit_w": 700.0, "temp_c": 60, "reasons": 0, "util_gpu": 0, "util_mem": 0,
           "memory_used_mb": 500}


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
@pytest.mark.parametrize("reading,outcome,code", [
    (READING, "passed", 0),
    (dict(READING, reasons=0x40, sm_clock=1300, temp_c=93), "failures", 1),  # thermal slowdown
])
def test_sustain_junit_has_its_verdict(runner, tmp_path, reading, outcome, code):
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "uuid": "GPU-1", "telemetry": [reading]}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    junit = tmp_path / "sustain.xml"
    r = runner.run("sustain", "--backend", "host", *LENIENT, "--duration", "3", "--telemetry-hz", "20",
                   "--out", tmp_path / "sus", "--junit", junit)
    assert r.returncode == code, r.stdout + r.stderr
    counts, names = junit_counts(junit)
    assert names == ["sustained_load"]
    assert counts["tests"] == 1 and counts[outcome] == 1
    report = json.loads((tmp_path / "sus" / "sustain.json").read_text())
    case = next(c for s in JUnitXml.fromfile(str(junit)) for c in s)
    for line in report["evidence"]:
        assert line in case.system_out


def test_compare_against_history_pools_the_recorded_nights(recorded, tmp_path):
    runner, out, res = recorded
    db = tmp_path / "history.db"
    doc = scenario("pair", [{**compute("victim"), "role": "victim"}, {**compute("aggressor"), "role": "aggressor"}],
                   duration=1.0)
    f = runner.write_json("night.json", doc)
    nights = []
    for k in range(2):  # two nights recorded; their files then made steady in place (the history names them)
        night = tmp_path / f"night{k}"
        r = runner.run("--backend", "host", "--scenario", f, "--out", night, "--resamples", "0", "--history", db,
                       *LENIENT)
        assert r.returncode in (0, 1, 5), r.stderr
        nights.append(night / "results.json")
        (night / "results.json").write_text(json.dumps(steady(json.loads((night / "results.json").read_text()))))
    # Night-to-night variation is part of what the pooled BASE resamples: so that the known answers
    # hold on a loaded machine, the second night's file is made the first's.
    nights[1].write_text(nights[0].read_text())
    same = write(runner, "tonight/same.json", json.loads(nights[0].read_text()))
    r = runner.run("compare", same, "--against-history", db, "--window", "7", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.loads(r.stdout)
    assert j["base"].startswith(str(db)) and [t["verdict"] for t in j["tenants"]] == ["same", "same"]
    # The victim +50% against both nights: worse, named; the aggressor unchanged.
    slow = slower_victim(json.loads(nights[1].read_text()))
    r = runner.run("compare", write(runner, "tonight/slow.json", slow), "--against-history", db)
    assert r.returncode == 1, r.stdout + r.stderr
    assert [l for l in r.stderr.splitlines() if "worse" in l and "tenant victim" in l]
    # A night whose file is gone is skipped with a note; no usable night at all is inconclusive (5).
    nights[0].unlink()
    nights[1].unlink()
    r = runner.run("compare", same, "--against-history", db)
    assert r.returncode == 5, r.stdout + r.stderr
    assert "skipped a recorded run" in r.stderr and "nothing to judge against" in r.stderr
    # Usage: NEW alone with --against-history, BASE and NEW without.
    assert runner.run("compare", same, same, "--against-history", db).returncode == 2
    assert runner.run("compare", same).returncode == 2
