"""`merge --force` replaces an earlier fleet report only with a complete new one (issue 37, item 3): every
input is read and checked before anything in --out changes, the new files are written beside the old ones
and renamed over them together, and an input inside --out is refused. Self-contained: the nodes are
hand-written vet reports (no run needed)."""
import json
import subprocess

from conftest import BINARY

FLEET_FILES = ["fleet.json", "fleet.md", "fleet.junit.xml", "fleet.prom", "fleet.html"]


def vet_report(host):
    return {"schema_version": "1.1", "kind": "vet", "start_time": "2026-12-02T01:00:00Z", "host": host, "device": 0,
            "backend": "host", "budget_s": 60, "steps": {}, "baseline": "", "verdict": "pass",
            "checks": [{"id": "memory_total", "title": "Memory", "status": "pass", "evidence": "141 GiB of 141",
                        "threshold": ">= 95%", "source": "seed 001"}],
            "cost": None, "stability_results": "", "sustain_results": "", "interrupted": False}


def nodes(root, names):
    for n in names:
        (root / n).mkdir(parents=True)
        (root / n / "vet.json").write_text(json.dumps(vet_report(n)))
    return root


def merge(*args):
    return subprocess.run([BINARY, "merge", *map(str, args)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def report_bytes(out):
    return {f: (out / f).read_bytes() for f in FLEET_FILES}


def earlier_report(tmp_path):
    inputs = nodes(tmp_path / "in", ["gpu-a", "gpu-b"])
    out = tmp_path / "rep"
    r = merge(inputs, "--out", out)
    assert r.returncode == 0, r.stderr
    return inputs, out, report_bytes(out)


def one_line_exit_2(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    return lines[0]


def test_a_bad_input_leaves_the_earlier_report_byte_for_byte(tmp_path):
    inputs, out, before = earlier_report(tmp_path)
    (tmp_path / "bad.txt").write_text("a b\n")
    for args in (["/nonexistent"], [inputs, "--expect-nodes", tmp_path / "bad.txt"], [tmp_path / "nowhere", inputs]):
        r = merge(*args, "--out", out, "--force")
        one_line_exit_2(r)
        assert report_bytes(out) == before, args
        assert sorted(p.name for p in out.iterdir() if p.name != ".interference-bench.lock") == sorted(FLEET_FILES)


def test_force_replaces_the_report_with_the_new_one(tmp_path):
    inputs, out, before = earlier_report(tmp_path)
    nodes(inputs, ["gpu-c"])
    assert merge(inputs, "--out", out, "--force").returncode == 0
    doc = json.loads((out / "fleet.json").read_text())
    assert sorted(m["node"] for m in doc["members"]) == ["gpu-a", "gpu-b", "gpu-c"]
    # No temporary is left beside the report.
    assert sorted(p.name for p in out.iterdir() if p.name != ".interference-bench.lock") == sorted(FLEET_FILES)


def test_an_input_inside_out_is_refused_and_nothing_is_deleted(tmp_path):
    inputs, out, before = earlier_report(tmp_path)
    (out / "kept").mkdir()
    (out / "kept" / "vet.json").write_text(json.dumps(vet_report("gpu-z")))
    (tmp_path / "nodes.txt").write_text("gpu-a\n")
    (out / "nodes.txt").write_text("gpu-a\n")
    for args in ([out / "fleet.json"], [inputs, out], [inputs, out / "kept"], [inputs, out / "kept" / "vet.json"],
                 [inputs, "--expect-nodes", out / "nodes.txt"], [inputs, f"{out}/../rep/kept"]):
        line = one_line_exit_2(merge(*args, "--out", out, "--force"))
        assert "inside --out" in line, line
        assert report_bytes(out) == before, args
        assert (out / "kept" / "vet.json").exists()
