"""--history DB (SQLite) and the history command; --html and report --html, opened in headless Chromium.

The database is written after results.json and never costs the run its results: a damaged file is one
line on stderr naming it, and the run exits with its own code (3 when that was 0)."""
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import LENIENT, compute, load_results, scenario

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed: the page is not opened")


def run_pair(runner, tmp_path, out, *extra, name="pair", duration=0.6):
    f = runner.write_json(f"{name}.json", scenario(name, [compute("victim"), compute("aggressor")], duration=duration))
    return runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / out, *extra)


def own_code(results):
    return results["summary"]["exit_code"]


def test_runs_are_recorded_and_history_prints_one_line_per_run_per_tenant(runner, tmp_path):
    db = tmp_path / "history.db"
    for out in ("n1", "n2"):
        r = run_pair(runner, tmp_path, out, "--history", db)
        assert r.returncode == own_code(load_results(tmp_path / out)), r.stderr
        assert "history" not in r.stderr, r.stderr
    h = runner.run("history", db)
    assert h.returncode == 0, h.stderr
    lines = h.stdout.splitlines()
    assert len(lines) == 4
    res = load_results(tmp_path / "n2")
    victim = next(a for a in res["aggregates"] if a["tenant"] == "victim")
    p95 = victim["metrics"]["p95_slowdown"]
    last_victim = [ln for ln in lines if " victim (host-compute) " in ln][-1]
    assert re.search(r"  pair/timeslice  victim \(host-compute\)  p95 [+-]\d+\.\d% \[[+-]\d+\.\d%, [+-]\d+\.\d%\]", last_victim)
    assert f"p95 {p95['value'] * 100:+.1f}%" in last_victim, (last_victim, p95)
    assert last_victim.endswith("  " + victim["verdict"])
    one = runner.run("history", db, "--tenant", "victim", "--last", "1")
    assert one.stdout.splitlines() == [last_victim]
    j = json.loads(runner.run("history", db, "--scenario", "pair", "--json").stdout)
    assert [(x["run_id"], x["tenant"]) for x in j] == [(1, "victim"), (1, "aggressor"), (2, "victim"), (2, "aggressor")]
    assert j[2]["p95_ci"] == [p95["ci_low"], p95["ci_high"]]
    assert j[2]["results_file"] == str(tmp_path / "n2" / "results.json")
    assert j[2]["params"] == '{"n":64,"reps":4}'
    assert j[2]["per_repetition"][0]["throughput_unit"] == "FLOP/s"


def test_a_garbage_history_file_is_one_line_and_the_results_stay_written(runner, tmp_path):
    db = tmp_path / "history.db"
    garbage = bytes(range(256)) * 64
    db.write_bytes(garbage)
    r = run_pair(runner, tmp_path, "out", "--history", db)
    res = load_results(tmp_path / "out")  # whole and valid against the schema
    assert res["summary"]["runs"] == 1 and len(res["aggregates"]) == 2
    assert (tmp_path / "out" / "summary.md").exists()
    errors = [ln for ln in r.stderr.splitlines() if "history" in ln]
    assert len(errors) == 1, r.stderr
    assert str(db) in errors[0] and "not a history database" in errors[0]
    assert str(tmp_path / "out" / "results.json") in errors[0]
    assert r.returncode == (own_code(res) or 3), (r.returncode, own_code(res))
    assert db.read_bytes() == garbage
    h = runner.run("history", db)
    assert h.returncode == 2 and len(h.stderr.splitlines()) == 1 and str(db) in h.stderr


def test_history_of_a_file_that_is_not_there_is_bad_input(runner, tmp_path):
    h = runner.run("history", tmp_path / "none.db")
    assert h.returncode == 2
    assert h.stderr.strip() == f"interference-bench: history: {tmp_path / 'none.db'}: history database: no such file"
    assert not (tmp_path / "none.db").exists()


def test_two_runs_at_once_both_land_in_one_history(runner, tmp_path):
    db = tmp_path / "history.db"
    procs = []
    for name in ("a", "b"):
        f = runner.write_json(f"{name}.json", scenario(name, [compute("victim"), compute("aggressor")], duration=0.6))
        procs.append(runner.popen(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / name,
                                  "--history", db))
    for name, p in zip(("a", "b"), procs):
        _, err = p.communicate(timeout=300)
        assert "history" not in err, err
        assert p.returncode == own_code(load_results(tmp_path / name))
    j = json.loads(runner.run("history", db, "--json").stdout)
    assert sorted({x["scenario"] for x in j}) == ["a", "b"] and len(j) == 4


# ---------------------------------------------------------------- HTML


def open_in_chromium(tmp_path, page):
    """The page's DOM after its scripts ran, and the console lines Chromium logged for it."""
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
                        "--dump-dom", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    console = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    return r.stdout, console


def check_every_chart_drawn(dom, console, expected_charts):
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-errors="0"' in body, body
    assert f'data-charts="{expected_charts}"' in body, body
    canvases = re.findall(r"<canvas[^>]*>", dom)
    assert len(canvases) == expected_charts
    assert all('data-drawn="1"' in c for c in canvases), canvases
    assert console == [], console
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", dom, re.I), "the page refers to the network"


@needs_chromium
@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_the_html_report_draws_every_chart_with_telemetry(runner, tmp_path):
    hot = {"sm_clock": 1400, "max_sm_clock": 1980, "mem_clock": 3201, "power_w": 690.0, "power_limit_w": 700.0,
           "default_power_limit_w": 700.0, "temp_c": 91, "util_gpu": 100, "util_mem": 60, "memory_used_mb": 1000,
           "reasons": 0x40}
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "uuid": "GPU-1", "compute_mode": 0,
                                                       "telemetry": [hot]}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    page = tmp_path / "out" / "report.html"
    r = run_pair(runner, tmp_path, "out", "--telemetry-hz", "20", "--html", page)
    res = load_results(tmp_path / "out")
    assert r.returncode == own_code(res), r.stderr
    text = page.read_text()
    assert text.count("<script") == 3
    dom, console = open_in_chromium(tmp_path, page)
    # The P95 chart, and per tenant the CDF, the sample times and the telemetry.
    check_every_chart_drawn(dom, console, 1 + 3 * len(res["runs"][0]["tenants"]))
    assert "Telemetry (shaded: throttled samples" in dom


@needs_chromium
def test_report_renders_a_results_file_and_its_text_is_inert(runner, tmp_path):
    r = run_pair(runner, tmp_path, "out")
    res = load_results(tmp_path / "out")
    evil = '<script>document.body.setAttribute("data-pwned","1")</script><img src=x onerror="document.title=1">'
    res["runs"][0]["tenants"][1]["name"] = evil
    next(a for a in res["aggregates"] if a["tenant"] == "aggressor")["tenant"] = evil
    (tmp_path / "evil.json").write_text(json.dumps(res))
    page = tmp_path / "evil.html"
    rep = runner.run("report", tmp_path / "evil.json", "--html", page)
    assert rep.returncode == 0, rep.stderr
    dom, console = open_in_chromium(tmp_path, page)
    check_every_chart_drawn(dom, console, 1 + 2 * len(res["runs"][0]["tenants"]))
    assert "data-pwned" not in re.search(r"<body([^>]*)>", dom).group(1)
    assert "<img" not in dom
    assert "&lt;script&gt;document.body.setAttribute" in dom  # shown as text, in the table and the headings


def test_report_of_a_file_that_is_not_results_is_bad_input(runner, tmp_path):
    bad = runner.write_json("bad.json", {"schema_version": "2.0"})
    r = runner.run("report", bad, "--html", tmp_path / "x.html")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and str(bad) in r.stderr
    assert not (tmp_path / "x.html").exists()
    none = runner.run("report", bad)
    assert none.returncode == 2 and "--html" in none.stderr


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
@pytest.mark.long  # a whole vet (its 20 s minimum budget): ctest --preset long
def test_vet_records_its_checklist_in_the_history_and_the_page(runner, tmp_path):
    import sqlite3
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "uuid": "GPU-1", "compute_mode": 0}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    db = tmp_path / "history.db"
    out = tmp_path / "vet"
    r = runner.run("vet", "--backend", "host", *LENIENT, "--budget", "20", "--out", out, "--history", db,
                   "--html", tmp_path / "vet.html", timeout=300)
    assert r.returncode in (0, 1, 5), r.stderr
    assert "history" not in r.stderr, r.stderr
    doc = json.loads((out / "vet.json").read_text())
    with sqlite3.connect(db) as con:
        runs = con.execute("SELECT id, command, verdict, exit_code, results_file FROM runs").fetchall()
        assert len(runs) == 1
        run_id, command, verdict, exit_code, results_file = runs[0]
        assert (command, verdict, exit_code, results_file) == ("vet", doc["verdict"], r.returncode, str(out / "vet.json"))
        checks = con.execute("SELECT check_id, status, evidence FROM checks WHERE run_id = ? ORDER BY rowid",
                             (run_id,)).fetchall()
    assert checks == [(c["id"], c["status"], c["evidence"]) for c in doc["checks"]]
    page = (tmp_path / "vet.html").read_text()
    for c in doc["checks"]:
        assert html.escape(c["evidence"], quote=True).replace("&#x27;", "&#39;") in page


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_sustain_records_its_verdict_and_a_garbage_history_keeps_its_exit_code(runner, tmp_path):
    import sqlite3
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "uuid": "GPU-1", "compute_mode": 0}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    db = tmp_path / "history.db"
    r = runner.run("sustain", "--backend", "host", *LENIENT, "--duration", "1", "--out", tmp_path / "s1", "--history", db)
    doc = json.loads((tmp_path / "s1" / "sustain.json").read_text())
    assert "history" not in r.stderr, r.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT command, verdict, exit_code FROM runs").fetchall() == [("sustain", doc["verdict"], r.returncode)]
        (check_id, evidence), = con.execute("SELECT check_id, evidence FROM checks").fetchall()
    assert check_id == "sustained_load" and evidence == "; ".join(doc["evidence"])
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    r2 = runner.run("sustain", "--backend", "host", *LENIENT, "--duration", "1", "--out", tmp_path / "s2", "--history", bad)
    own = json.loads((tmp_path / "s2" / "sustain.json").read_text())
    errors = [ln for ln in r2.stderr.splitlines() if "history" in ln]
    assert len(errors) == 1 and str(bad) in errors[0] and "not a history database" in errors[0], r2.stderr
    # sustain's own code is 0 on pass or warn, 1 on fail or inconclusive: 0 becomes 3, 1 stays 1
    assert r2.returncode == (3 if own["verdict"] in ("pass", "warn") else 1), (r2.returncode, own["verdict"])
    assert bad.read_bytes() == b"not sqlite at all" * 100


def test_history_never_writes_a_database_it_reads(runner, tmp_path):
    # Issue 20: `history DB` on an unrelated SQLite file added our four tables and switched it to WAL;
    # on an empty file it made a database; on /dev/zero it left /dev/zero-journal behind.
    import sqlite3
    folder = tmp_path / "dbs"
    folder.mkdir()
    theirs = folder / "theirs.db"
    con = sqlite3.connect(theirs)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    con.execute("INSERT INTO notes VALUES (1, 'mine')")
    con.commit()
    con.close()
    empty = folder / "empty.db"
    empty.write_bytes(b"")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for db, why in ((theirs, "not an interference-bench history"), (empty, "not an interference-bench history"),
                    ("/dev/zero", "not a regular file")):
        r = runner.run("history", db)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{db}: history database: {why}" in lines[0], lines
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not os.path.exists("/dev/zero-journal")
