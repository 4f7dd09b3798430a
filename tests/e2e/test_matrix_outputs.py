"""matrix's outputs and nightly side (issue 50): matrix.json against its schema and read back (report, compare),
two matrices compared (the cells that moved beyond --max-regression, the pairs that stopped sharing), a
matrix's cells in the history database, and matrix.html opened in headless Chromium with its cells counted
on a screenshot.

Only the first test measures (a two-workload host matrix with short phases); the rest read matrix.json files
written here, checked against the schema first so that they stay what the writer writes."""
import json
import os
import re
import shutil
import subprocess

import jsonschema
import pytest

from conftest import LENIENT, SOURCE_DIR

MATRIX_SCHEMA = json.loads((SOURCE_DIR / "reports" / "matrix.schema.json").read_text())
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed: the page is not opened")
try:
    from PIL import Image
except ImportError:  # scripts/install-deps.sh --tests installs python3-pil
    Image = None
needs_pil = pytest.mark.skipif(Image is None, reason="python3-pil not installed: the screenshot is not read")

WORKLOADS = ["host-compute", "host-copy", "host-idle", "host-latency"]


def estimate(value, half):
    return {"value": value, "ci_low": value - half, "ci_high": value + half}


def matrix_doc(grid, mode="timeslice", names=WORKLOADS, may_share=(), self_sharing=(), devices=None):
    """A matrix.json as the writer writes one. grid[v][a]: (verdict, value, half), ("predicted", verdict,
    value) or None (a pair that was not measured)."""
    n = len(names)
    cells = []
    for v in range(n):
        for a in range(n):
            g = grid[v][a]
            c = {"victim": v, "aggressor": a, "source": "measured", "p95_slowdown": None, "median_slowdown": None,
                 "verdict": "error", "verdict_reason": "the pair's run failed (exit 4)"}
            if g and g[0] == "predicted":
                c.update(source="predicted", p95_slowdown=estimate(g[2], 0.0), verdict=g[1], verdict_reason="predicted")
            elif g:
                c.update(p95_slowdown=estimate(g[1], g[2]), median_slowdown=g[1] / 2, verdict=g[0],
                         verdict_reason=f"P95 slowdown against the cutoff: {g[0]}")
            cells.append(c)
    pairs = [{"a": a, "b": b, "run": {"outcome": "measured", "reason": "", "exit_code": 0,
                                      "results_file": f"m/pairs/{a}-{b}/results.json", "seconds": 7.5}}
             for a in range(n) for b in range(a, n)]
    packing = None if devices is None else {"devices": devices, "exclusive_devices": n, "saved": n - len(devices),
                                            "costs": [], "exclusive_price_per_hour": None, "packed_price_per_hour": None}
    doc = {"schema_version": "1.0",
           "meta": {"tool": "interference-bench", "command": "matrix", "version": "0.9", "git_sha": "abc",
                    "argv": ["interference-bench", "matrix"], "start_time": "2026-12-01T01:00:00Z", "host": "node7"},
           "backend": "host", "mode": mode, "device": 0, "cutoff": 0.4, "phase_s": 2.0, "rounds": 4, "budget_s": 86400.0,
           "price_exclusive": None, "price_shared": None,
           "workloads": [{"name": w, "workload": w, "tenant": {"workload": w, "params": {}}} for w in names],
           "pairs": pairs, "cells": cells, "may_share": [list(p) for p in may_share], "self_sharing": list(self_sharing),
           "packing": packing, "prediction": None, "interrupted": False, "exit_code": 0}
    jsonschema.validate(doc, MATRIX_SCHEMA)
    return doc


P, F, I = "pass", "fail", "inconclusive"

# compute and copy cannot share; idle shares with everything; latency is undecided beside compute.
BASE_GRID = [[(F, 0.95, 0.05), (F, 0.80, 0.05), (P, 0.02, 0.02), (I, 0.40, 0.10)],
             [(P, 0.10, 0.03), (F, 0.90, 0.05), (P, 0.01, 0.02), (P, 0.05, 0.02)],
             [(P, 0.03, 0.02), (P, 0.04, 0.02), (P, 0.00, 0.02), (P, 0.01, 0.02)],
             [(P, 0.20, 0.05), (P, 0.06, 0.02), (P, 0.02, 0.02), (F, 0.70, 0.05)]]
BASE_SHARE = dict(may_share=[(0, 2), (1, 2), (1, 3), (2, 3)], self_sharing=[2], devices=[[0, 2], [1, 3]])


def write_matrix(runner, name, doc):
    return runner.write_json(f"{name}/matrix.json", doc)


@pytest.mark.measurement
def test_a_small_host_matrix_writes_what_its_schema_says_records_its_cells_and_reads_back(runner, tmp_path):
    db = tmp_path / "history.db"
    out = tmp_path / "m"
    r = runner.run("matrix", *LENIENT, "--backend", "host", "--workloads", "host-compute:n=32:reps=2,host-idle",
                   "--cpus", "0", "--duration", "0.15", "--warmup", "0.02", "--rounds", "2", "--out", out,
                   "--history", db, timeout=300)
    doc = json.loads((out / "matrix.json").read_text())
    jsonschema.validate(doc, MATRIX_SCHEMA)
    assert r.returncode == doc["exit_code"], r.stderr
    assert "history" not in r.stderr, r.stderr
    assert len(doc["cells"]) == 4 and len(doc["pairs"]) == 3
    # The reader gives back what the writer wrote: the page rendered from matrix.json is matrix.html.
    page = tmp_path / "again.html"
    rep = runner.run("report", out / "matrix.json", "--html", page)
    assert rep.returncode == 0, rep.stderr
    assert page.read_text() == (out / "matrix.html").read_text()
    # One history row per cell under scenario "matrix", after one line for the matrix's packing.
    h = runner.run("history", db, "--scenario", "matrix")
    assert h.returncode == 0, h.stderr
    lines = h.stdout.splitlines()
    devices = len(doc["packing"]["devices"]) if doc["packing"] else "n/a"
    assert re.search(rf"  run 1  \S+  matrix/timeslice  packing {devices} devices for 2 workloads$", lines[0]), lines
    names = [w["name"] for w in doc["workloads"]]
    assert len(lines) == 5
    for line, c in zip(lines[1:], doc["cells"]):
        assert f"  matrix/timeslice  {names[c['victim']]} beside {names[c['aggressor']]} (" in line, line
        assert line.endswith("  " + c["verdict"]), (line, c)
        if c["p95_slowdown"]:
            assert f"p95 {c['p95_slowdown']['value'] * 100:+.1f}%" in line, (line, c)
    # A matrix compared with itself: every cell matched, nothing worse, no pair stopped sharing.
    cmp = runner.run("compare", out / "matrix.json", out / "matrix.json", "--json")
    assert cmp.returncode in (0, 5), cmp.stderr
    j = json.loads(cmp.stdout)
    assert len(j["cells"]) == 4 and j["summary"]["worse"] == 0 and j["stopped_sharing"] == []


def test_compare_names_the_cell_that_got_worse_and_the_pair_that_stopped_sharing(runner, tmp_path):
    base = write_matrix(runner, "base", matrix_doc(BASE_GRID, **BASE_SHARE))
    grid = [row[:] for row in BASE_GRID]
    grid[2][1] = (F, 0.60, 0.05)  # idle beside copy: +56 points, now fails
    new = write_matrix(runner, "new", matrix_doc(grid, may_share=[(0, 2), (1, 3), (2, 3)], self_sharing=[2],
                                                 devices=[[0, 2], [1, 3]]))
    r = runner.run("compare", base, new)
    assert r.returncode == 1, r.stderr
    assert "| host-idle | host-copy | +4.0% [+2.0%, +6.0%] pass | +60.0% [+55.0%, +65.0%] fail | +56.0 [" in r.stdout
    assert "- stopped sharing: host-copy + host-idle — NEW: host-copy beside host-idle: pass (+1.0%); host-idle beside " \
           "host-copy: fail (+60.0%)" in r.stdout, r.stdout
    assert "Packing: 2 devices for 4 workloads in BASE, 2 devices for 4 workloads in NEW." in r.stdout
    worse = [ln for ln in r.stderr.splitlines() if "compare: worse:" in ln]
    assert len(worse) == 1 and "host-idle beside host-copy: p95_slowdown +56.0 points" in worse[0], r.stderr
    j = json.loads(runner.run("compare", base, new, "--json").stdout)
    assert j["kind"] == "matrix_comparison" and j["summary"]["worse"] == 1 and j["summary"]["exit_code"] == 1
    moved = [c for c in j["cells"] if c["verdict"] != "same"]
    assert [(c["victim"], c["aggressor"]) for c in moved if c["verdict"] == "worse"] == [("host-idle", "host-copy")]
    assert j["stopped_sharing"] == [{"a": "host-copy", "b": "host-idle", "decided": True,
                                     "reason": "host-copy beside host-idle: pass (+1.0%); host-idle beside host-copy: fail (+60.0%)"}]
    # Unchanged, with a bound wider than any cell's combined interval: every cell the same, exit 0.
    same = runner.run("compare", base, base, "--max-regression", "0.2")
    assert same.returncode == 0, same.stdout
    assert "**0 better, 16 same, 0 worse, 0 inconclusive; 0 pairs stopped sharing, 0 started** — exit code 0" in same.stdout


def test_a_cell_that_was_not_measured_or_another_mode_is_inconclusive(runner, tmp_path):
    base = write_matrix(runner, "base", matrix_doc(BASE_GRID, **BASE_SHARE))
    grid = [row[:] for row in BASE_GRID]
    grid[3][3] = None
    new = write_matrix(runner, "new", matrix_doc(grid, **BASE_SHARE))
    r = runner.run("compare", base, new, "--max-regression", "0.2")
    assert r.returncode == 5, r.stdout
    assert "- host-latency beside host-latency: inconclusive — not measured in NEW (the pair's run failed (exit 4))" in r.stdout
    mps = write_matrix(runner, "mps", matrix_doc(BASE_GRID, mode="mps", **BASE_SHARE))
    r = runner.run("compare", base, mps)
    assert r.returncode == 5
    assert "different modes (timeslice, mps): no cell is compared" in r.stdout


def test_a_file_that_is_not_a_matrix_beside_one_is_one_line_exit_2(runner, tmp_path):
    base = write_matrix(runner, "base", matrix_doc(BASE_GRID, **BASE_SHARE))
    other = runner.write_json("results.json", {"schema_version": "2.3", "meta": {"tool": "interference-bench"}, "runs": []})
    r = runner.run("compare", other, base)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"interference-bench: {other}: meta.command: missing; not a matrix.json of this "
                                             "version (schema 1.0)"], r.stderr
    r = runner.run("report", base, "--junit", tmp_path / "j.xml")
    assert r.returncode == 2 and "renders --html only" in r.stderr and not (tmp_path / "j.xml").exists()


def half_size(png):
    """The screenshot at half size (a cell is still some 60 x 28 pixels), in RGB."""
    return Image.open(png).convert("RGB").reduce(2)


def colour_changes(img, box):
    """How often the colour changes along the box's second pixel row (above a cell's text)."""
    x0, y0, bw, _ = box
    row = [img.getpixel((x, y0 + 1)) for x in range(x0 + 2, x0 + bw - 2)]
    return sum(1 for a, b in zip(row, row[1:]) if max(abs(p - q) for p, q in zip(a, b)) > 8)


def cell_rectangles(png):
    """The solid coloured rectangles of a screenshot (the heatmap's cells): 4-connected regions of coloured
    pixels (neither the white page nor dark text) whose box is cell-sized and mostly filled."""
    img = half_size(png)
    w, h = img.size
    coloured = bytearray(1 if min(p) < 235 and max(p) > 90 else 0 for p in img.getdata())
    boxes = []
    for start in range(w * h):
        if not coloured[start]:
            continue
        coloured[start] = 0
        stack, area = [start], 0
        x0 = x1 = start % w
        y0 = y1 = start // w
        while stack:
            i = stack.pop()
            area += 1
            x, y = i % w, i // w
            x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
            for j in (i - w, i + w) + ((i - 1,) if x > 0 else ()) + ((i + 1,) if x < w - 1 else ()):
                if 0 <= j < w * h and coloured[j]:
                    coloured[j] = 0
                    stack.append(j)
        bw, bh = x1 - x0 + 1, y1 - y0 + 1
        if 45 <= bw <= 100 and 20 <= bh <= 60 and area >= 0.6 * bw * bh:
            boxes.append((x0, y0, bw, bh))
    return boxes


@needs_chromium
@needs_pil
def test_the_heatmap_opens_in_headless_chromium_with_every_cell_drawn(runner, tmp_path):
    grid = [row[:] for row in BASE_GRID]
    grid[3][0] = None  # not measured: grey
    grid[1][3] = ("predicted", P, 0.05)  # hatched
    # Long names (a list item with its params, as --workloads writes it) must not widen the cells.
    names = ["host-compute:n=128:reps=8", "host-copy:mib=16:passes=2", "host-idle", "host-latency"]
    m = write_matrix(runner, "m", matrix_doc(grid, names=names, **BASE_SHARE))
    page = tmp_path / "heatmap.html"
    r = runner.run("report", m, "--html", page)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert 'data-cells="16"' in text and text.count('<td class="cell') == 16
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//|@import|url\(""", text, re.I), "the page refers elsewhere"
    shot = tmp_path / "heatmap.png"
    c = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={tmp_path / 'chromium-profile'}", "--force-device-scale-factor=1",
                        "--window-size=1100,800", f"--screenshot={shot}", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert c.returncode == 0 and shot.exists(), c.stderr[-2000:]
    boxes = cell_rectangles(shot)
    assert len(boxes) == 16, boxes
    # Four rows of four: the cells line up in a grid.
    assert len({y for _, y, _, _ in boxes}) == 4 and len({x for x, _, _, _ in boxes}) == 4, boxes
    # The predicted cell (row 2, column 4) is hatched, its neighbour plain.
    boxes.sort(key=lambda b: (b[1], b[0]))
    img = half_size(shot)
    assert colour_changes(img, boxes[1 * 4 + 3]) >= 4 and colour_changes(img, boxes[1 * 4 + 2]) == 0, \
        (colour_changes(img, boxes[7]), colour_changes(img, boxes[6]))
