"""The one rule for every file a command writes (core/output_paths.h, docs/reliability.md): an output
never replaces a device, FIFO, socket or folder, one of the command's inputs, another of its outputs,
or (without --force) a file outside its own output folder. Each refusal is exit 2, one line naming the
option and the path, before anything is measured or made."""
import os
import stat

import pytest

from conftest import LENIENT, compute, scenario


def quick(runner):
    return runner.write_json("s.json", scenario("q", [compute("a", n=16, reps=1)], mode="exclusive", duration=0.2,
                                                warmup=0.02))


def refused(r, option, path, why):
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"interference-bench: {option} {path}") and why in lines[0], lines
    return lines[0]


def test_an_output_onto_a_fifo_or_socket_is_refused_and_the_node_stays(runner, tmp_path):
    # The sweep's --prometheus /dev/full turned the device into a regular file; a FIFO and a socket made
    # for the test stand in for device nodes (a failing test must not replace /dev/full on the machine).
    import socket
    fifo, sock_path = tmp_path / "fifo", tmp_path / "sock"
    os.mkfifo(fifo)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        for option, path, kind in (("--prometheus", fifo, "a FIFO"), ("--junit", sock_path, "a socket"),
                                   ("--html", tmp_path, "a folder")):
            r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", tmp_path / "out",
                           option, path, "--force")
            refused(r, option, path, f"is {kind}, not a regular file")
            assert not (tmp_path / "out").exists(), "refused before the output folder was made"
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        sock.close()


@pytest.mark.parametrize("option,name", [("--junit", "results.json"), ("--html", "summary.md")])
def test_an_output_onto_the_runs_own_results_is_refused(runner, tmp_path, option, name):
    out = tmp_path / "out"
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", out, option, out / name)
    refused(r, option, out / name, "is also the file of --out")
    assert not out.exists()


def test_an_output_onto_the_scenario_it_reads_is_refused_even_with_force(runner, tmp_path):
    f = quick(runner)
    before = f.read_bytes()
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--prometheus", f,
                   "--force")
    refused(r, "--prometheus", f, "is also this command's input (--scenario)")
    assert f.read_bytes() == before


def test_two_outputs_of_one_file_are_refused(runner, tmp_path):
    same = tmp_path / "both"
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", tmp_path / "out",
                   "--junit", same, "--prometheus", same)
    refused(r, "--prometheus", same, "is also the file of --junit")


def test_an_existing_output_file_is_replaced_only_with_force(runner, tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text("yesterday's")
    args = [*LENIENT, "--backend", "host", "--scenario", quick(runner), "--junit", junit]
    r = runner.run(*args, "--out", tmp_path / "o1")
    refused(r, "--junit", junit, "exists and is not in this command's output folder (--force replaces it)")
    assert junit.read_text() == "yesterday's" and not (tmp_path / "o1").exists()
    r = runner.run(*args, "--out", tmp_path / "o2", "--force")
    assert r.returncode in (0, 5), r.stdout + r.stderr
    assert junit.read_text().startswith("<?xml")


def test_report_never_writes_over_the_results_it_reads_and_replaces_only_with_force(runner, tmp_path):
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", tmp_path / "out")
    assert r.returncode in (0, 5), r.stdout + r.stderr
    results = tmp_path / "out" / "results.json"
    before = results.read_bytes()
    r = runner.run("report", results, "--junit", results, "--force")
    refused(r, "--junit", results, "is also this command's input (RESULTS)")
    assert results.read_bytes() == before
    prom = tmp_path / "metrics.prom"
    prom.write_text("old")
    r = runner.run("report", results, "--prometheus", prom)
    refused(r, "--prometheus", prom, "exists and is not in this command's output folder")
    assert prom.read_text() == "old"
    r = runner.run("report", results, "--prometheus", prom, "--force")
    assert r.returncode == 0, r.stderr
    assert "interference_bench" in prom.read_text()


EMPTY_VALUES = [["--out", ""], ["--suite", ""], ["--html", ""], ["--junit", ""], ["--history", ""],
                ["--prometheus", ""], ["--baseline", ""], ["report", "r.json", "--junit", ""],
                ["vet", "--out", ""], ["sustain", "--history", ""], ["baseline", "--out", ""],
                ["compare", "a.json", "--against-history", ""], ["cleanup", "--state-dir", ""]]


def test_an_empty_path_or_name_is_refused_in_one_line(runner, tmp_path):
    # `--suite ''` ran the whole quick suite and `--junit ''` was ignored without a word.
    for args in EMPTY_VALUES:
        option = args[-2]
        cmd = args if args[0] in ("report", "vet", "sustain", "baseline", "compare", "cleanup") else \
            ["--backend", "host", "--out", str(tmp_path / "out"), *args] if option != "--out" else ["--backend", "host", *args]
        r = runner.run(*cmd)
        assert r.returncode == 2, (args, r.stdout + r.stderr)
        assert r.stderr == f"interference-bench: {option}: expected a path or name, got an empty string\n", (args, r.stderr)
        assert not (tmp_path / "out").exists()


def test_a_results_file_without_runs_is_refused_by_every_reader(runner, tmp_path):
    # Issue 20: a run stopped before its first scenario ended (a full disk, a signal) leaves a
    # schema-valid results.json with runs: [], which `report` accepted with exit 0.
    import json
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", tmp_path / "out")
    assert r.returncode in (0, 5), r.stdout + r.stderr
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    doc["runs"], doc["aggregates"] = [], []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(doc))
    for args in (["report", empty, "--junit", tmp_path / "j.xml"],
                 ["compare", tmp_path / "out" / "results.json", empty]):
        r = runner.run(*args)
        assert r.returncode == 2, (args, r.stdout + r.stderr)
        assert f"{empty}: runs: no runs: nothing was measured in this file" in r.stderr, r.stderr
    assert not (tmp_path / "j.xml").exists()


IMPOSSIBLE = [("duration_s", -1.0, "duration_s[0]: -1 is not a sample's duration"),
              ("duration_s", 0.0, "duration_s[0]: 0 is not a sample's duration"),
              ("duration_s", 1e308, "duration_s[0]: 1e+308 is not a sample's duration"),
              ("start_ns", -3, "start_ns[0]: -3 is before the clock's zero"),
              ("block", 999, "block[0]: 999 is not one of the run's")]


def test_saved_results_with_impossible_measurements_are_refused(runner, tmp_path):
    # Issue 20: impossible values were read without complaint (compare exited 5, or 1 with
    # "throughput -100%"; report exited 0). Now: exit 2, one line naming the file and the field.
    import json
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", quick(runner), "--out", tmp_path / "out")
    assert r.returncode in (0, 5), r.stdout + r.stderr
    for field, value, says in IMPOSSIBLE:
        doc = json.loads((tmp_path / "out" / "results.json").read_text())
        doc["runs"][0]["tenants"][0]["phases"]["exclusive"]["samples"][field][0] = value
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(doc))
        for args in (["report", bad, "--junit", tmp_path / "j.xml"], ["compare", tmp_path / "out" / "results.json", bad]):
            r = runner.run(*args)
            assert r.returncode == 2, (field, args, r.stdout + r.stderr)
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and f"runs[0].tenants[0].phases.exclusive.samples.{says}" in lines[0], r.stderr
            assert str(bad) in lines[0]
        assert not (tmp_path / "j.xml").exists()
