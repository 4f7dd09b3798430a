"""Golden outputs: one saved, committed results file (tests/e2e/golden/results.json, a short host run) through every
writer a saved file reaches (`report --junit --prometheus --html`, `compare` as Markdown and as JSON), compared byte for
byte with the committed files in tests/e2e/golden/expected/. A change that moves code between files (issue 38) must leave
them as they are; a change that means to alter an output regenerates them (IB_UPDATE_GOLDEN=1) and shows the diff.

Normalised, and only these: the HTML's inlined Chart.js (the build's copy of Debian's libjs-chart.js, not ours) is
replaced by a placeholder; `compare` runs in the golden folder with relative file names, so no path of this machine
enters its output. Everything else is compared as written.
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BINARY, SOURCE_DIR, Runner

GOLDEN = SOURCE_DIR / "tests" / "e2e" / "golden"
EXPECTED = GOLDEN / "expected"
UPDATE = os.environ.get("IB_UPDATE_GOLDEN") == "1"
CHARTJS = re.compile(r"(<script>)/\*!\s*\n?\s*\* Chart\.js.*?(</script>)", re.S)


def check(name, text):
    path = EXPECTED / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing (IB_UPDATE_GOLDEN=1 writes it)"
    assert text == path.read_text(), f"{name} differs from {path}"


def html_available(runner, tmp_path):
    r = runner.run("report", GOLDEN / "results.json", "--html", tmp_path / "probe.html")
    return r.returncode == 0


def test_report_renders_the_golden_file_as_committed(tmp_path):
    runner = Runner(tmp_path)
    junit, prom = tmp_path / "r.xml", tmp_path / "r.prom"
    r = runner.run("report", GOLDEN / "results.json", "--junit", junit, "--prometheus", prom)
    assert r.returncode == 0, r.stderr
    check("report.junit.xml", junit.read_text())
    check("report.prom", prom.read_text())


def test_report_html_of_the_golden_file_is_as_committed(tmp_path):
    runner = Runner(tmp_path)
    if not html_available(runner, tmp_path):
        pytest.skip("this build has no Chart.js: report --html is unavailable")
    html = tmp_path / "r.html"
    r = runner.run("report", GOLDEN / "results.json", "--html", html)
    assert r.returncode == 0, r.stderr
    text, n = CHARTJS.subn(r"\1/* Chart.js (inlined at build time) */\2", html.read_text())
    assert n == 1, "the inlined Chart.js was not found"
    check("report.html", text)


@pytest.mark.parametrize("form", ["markdown", "json"])
def test_compare_of_the_golden_file_with_itself_is_as_committed(tmp_path, form):
    work = tmp_path / "golden"
    work.mkdir()
    shutil.copy(GOLDEN / "results.json", work / "base.json")
    shutil.copy(GOLDEN / "results.json", work / "new.json")
    args = [BINARY, "compare", "base.json", "new.json", *(["--json"] if form == "json" else [])]
    r = subprocess.run(args, capture_output=True, text=True, cwd=work, timeout=120, stdin=subprocess.DEVNULL)
    check(f"compare.{'md' if form == 'markdown' else 'json'}", r.stdout)
    check(f"compare.{form}.stderr", r.stderr)
    check(f"compare.{form}.exit_code", f"{r.returncode}\n")  # the file's verdicts decide it (5: inconclusive)
