"""Malformed scenarios: each is refused before anything runs, exit 2, one line naming the file,
the field path and what was expected."""
import json
import shutil
import tempfile
from pathlib import Path

import pytest

GOOD_TENANT = {"workload": "host-compute"}


def doc(**changes):
    d = {"name": "bad", "mode": "timeslice", "warmup_s": 0.1, "duration_s": 0.5,
         "tenants": [dict(GOOD_TENANT), dict(GOOD_TENANT)]}
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return d


def tenants(*ts):
    return doc(tenants=list(ts))


def named(name):
    return tenants({"name": name, **GOOD_TENANT}, GOOD_TENANT)


def nested(levels, inner="1"):
    return "[" * levels + inner + "]" * levels


HUGE = "x" * 1_000_000


@pytest.fixture
def short_tmp():
    path = Path(tempfile.mkdtemp(prefix="ib-"))
    yield path
    shutil.rmtree(path)
RANGE = {"warmup_s": "[0.001, 3600]", "duration_s": "[0.01, 86400]"}

# Inputs an adversarial user tried (issue 11): deep nesting, huge values, duplicate keys, numbers out of
# range or not finite, names that would break file names, Markdown or a terminal.
EXTRA_CASES = [
    ("nested-description", '{"name": "x", "mode": "timeslice", "description": ' + nested(5000) + ', "tenants": []}',
     "description[0][0][0][0][0]...: nested deeper than 32 levels"),
    ("nested-params", '{"name": "x", "mode": "timeslice", "tenants": [{"workload": "host-compute", "params": {"n": '
     + nested(100000) + '}}]}', "tenants[0].params.n[0][0]...: nested deeper than 32 levels"),
    ("nested-top", nested(40), "nested deeper than 32 levels"),
    ("nested-objects", '{"a":' * 40 + '1' + '}' * 40, "nested deeper than 32 levels"),
    ("too-big", '{"name": "x", "description": "' + "y" * (5 << 20) + '"}', "bytes, more than the 4194304 a scenario file may have"),
    ("duplicate-top-key", '{"name": "x", "name": "y", "mode": "timeslice", "tenants": []}', 'key "name" given twice'),
    ("duplicate-tenant-key", '{"name": "x", "mode": "timeslice", "tenants": [{"workload": "host-compute", '
     '"workload": "host-copy"}]}', 'tenants[0]: key "workload" given twice'),
    ("duplicate-param-key", '{"name": "x", "mode": "timeslice", "tenants": [{"workload": "host-compute", '
     '"params": {"n": 64, "n": 128}}]}', 'tenants[0].params: key "n" given twice'),
    ("duplicate-placement-key", '{"name": "x", "mode": "timeslice", "tenants": [{"workload": "host-compute", '
     '"placement": {"cpus": [0], "cpus": [1]}}]}', 'tenants[0].placement: key "cpus" given twice'),
    ("nan-literal", '{"name": "x", "mode": "timeslice", "duration_s": NaN, "tenants": []}', "not valid JSON"),
    ("infinity-literal", '{"name": "x", "mode": "timeslice", "duration_s": Infinity, "tenants": []}', "not valid JSON"),
    ("overflowing-number", '{"name": "x", "mode": "timeslice", "duration_s": 1e400, "tenants": []}',
     "not a usable JSON number: [json.exception.out_of_range.406] number overflow parsing '1e400'"),
    ("duration-tiny", doc(duration_s=1e-300), "duration_s: expected a number in [0.01, 86400], got number 1e-300"),
    ("duration-huge", doc(duration_s=1e10), "duration_s: expected a number in [0.01, 86400], got number 10000000000"),
    ("duration-just-above", doc(duration_s=86400.5), "duration_s: expected a number in [0.01, 86400]"),
    ("warmup-huge", doc(warmup_s=1e12), "warmup_s: expected a number in [0.001, 3600]"),
    ("warmup-negative", doc(warmup_s=-0.5), "warmup_s: expected a number in [0.001, 3600]"),
    ("warmup-bool", doc(warmup_s=True), "warmup_s: expected a number in [0.001, 3600], got boolean true"),
    ("cutoff-huge", doc(cutoff=1e9), "cutoff: expected a number in [0, 100]"),
    ("cutoff-negative", doc(cutoff=-0.4), "cutoff: expected a number in [0, 100]"),
    ("cutoff-string", doc(cutoff="40%"), 'cutoff: expected a number in [0, 100], got string "40%"'),
    ("repetitions-huge", doc(repetitions=10**20), "repetitions: expected an integer in [1, 1000]"),
    ("repetitions-negative", doc(repetitions=-3), "repetitions: expected an integer in [1, 1000], got number -3"),
    ("device-huge", doc(device=2**63), "device: expected an integer in [0, 63]"),
    ("device-64", doc(device=64), "device: expected an integer in [0, 63], got number 64"),
    ("description-huge", doc(description="d" * 3000), "description: at most 2000 characters, got 3000"),
    ("name-huge", doc(name=HUGE), "name: expected 1-80 characters"),
    ("name-newline", doc(name="a\nb"), "name: expected 1-80 characters"),
    ("name-slash", doc(name="a/b"), "name: expected 1-80 characters"),
    ("name-dotdot", doc(name="../x"), "name: expected 1-80 characters"),
    ("name-81", doc(name="n" * 81), "name: expected 1-80 characters"),
    ("name-ansi", doc(name="\x1b[31mred"), "name: expected 1-80 characters"),
    ("name-empty", doc(name=""), "name: expected 1-80 characters"),
    ("name-array", doc(name=["x"]), "name: expected a string, got array"),
    ("mode-huge", doc(mode=HUGE), "mode: expected one of exclusive"),
    ("mode-null", doc(mode=None) | {"mode": None}, "mode: expected a string, got null"),
    ("mode-all", doc(mode="all"), 'mode: expected one of exclusive, timeslice, mps, mig, streams, got "all"'),
    ("tenant-name-slash", named("a/b"), "tenants[0].name: expected 1-64 characters of letters, digits"),
    ("tenant-name-pipe", named("a|b"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-newline", named("a\nb"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-ansi", named("\x1b[2Jx"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-300", named("t" * 300), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-space", named("my tenant"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-star", named("a*"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-leading-dot", named(".hidden"), "tenants[0].name: expected 1-64 characters"),
    ("tenant-name-number", tenants({"name": 3, **GOOD_TENANT}), "tenants[0].name: expected a string, got number 3"),
    ("tenant-name-huge", named(HUGE), "tenants[0].name: expected 1-64 characters"),
    ("duplicate-default-name", tenants(GOOD_TENANT, {"name": "host-compute#0", **GOOD_TENANT}),
     'tenants[1].name: duplicate tenant name "host-compute#0"'),
    ("workload-huge", tenants({"workload": HUGE}), 'tenants[0].workload: unknown workload "xxxx'),
    ("workload-null", tenants({"workload": None}), "tenants[0].workload: expected a string, got null"),
    ("workload-cuda-on-host", tenants({"workload": "gemm"}), "tenants[0].workload: "),
    ("role-huge", tenants({"role": HUGE, **GOOD_TENANT}), "tenants[0].role: expected one of victim, aggressor"),
    ("param-key-huge", tenants({"workload": "host-compute", "params": {HUGE: 1}}), "unknown parameter of workload"),
    ("param-value-huge", tenants({"workload": "host-fault", "params": {"action": HUGE}}),
     "tenants[0].params.action: expected one of crash"),
    ("param-n-nan-string", tenants({"workload": "host-compute", "params": {"n": "nan"}}), "tenants[0].params.n: expected integer"),
    ("param-n-bool", tenants({"workload": "host-compute", "params": {"n": True}}), "tenants[0].params.n: expected integer"),
    ("param-n-huge", tenants({"workload": "host-compute", "params": {"n": 10**30}}), "tenants[0].params.n: expected integer"),
    ("param-n-negative", tenants({"workload": "host-compute", "params": {"n": -64}}), "tenants[0].params.n: expected integer"),
    ("param-null", tenants({"workload": "host-compute", "params": None}), "tenants[0].params: expected an object"),
    ("param-nested-object", tenants({"workload": "host-compute", "params": {"n": {"v": 64}}}), "tenants[0].params.n: expected integer"),
    ("cpus-string", tenants({"placement": {"cpus": "0"}, **GOOD_TENANT}), "tenants[0].placement.cpus: expected a non-empty array"),
    ("cpus-huge", tenants({"placement": {"cpus": [2**40]}, **GOOD_TENANT}), "tenants[0].placement.cpus[0]: expected an integer"),
    ("cpus-fraction", tenants({"placement": {"cpus": [0.5]}, **GOOD_TENANT}), "tenants[0].placement.cpus[0]: expected an integer"),
    ("cpus-nested", tenants({"placement": {"cpus": [[0]]}, **GOOD_TENANT}), "tenants[0].placement.cpus[0]: expected an integer"),
    ("mig-instance-negative", dict(doc(mode="mig"), tenants=[{"placement": {"mig_instance": -1}, **GOOD_TENANT}]),
     "tenants[0].placement.mig_instance: expected an integer in [0, 63]"),
    ("mig-instance-huge", dict(doc(mode="mig"), tenants=[{"placement": {"mig_instance": 10**12}, **GOOD_TENANT}]),
     "tenants[0].placement.mig_instance: expected an integer in [0, 63]"),
    ("mig-profile-huge", dict(doc(mode="mig"), tenants=[{"placement": {"mig_profile": HUGE}, **GOOD_TENANT}]),
     'tenants[0].placement.mig_profile: expected a MIG profile name like "1g.18gb"'),
    ("mig-profile-number", dict(doc(mode="mig"), tenants=[{"placement": {"mig_profile": 1}, **GOOD_TENANT}]),
     "tenants[0].placement.mig_profile: expected a string"),
    ("mps-percentage-101", dict(doc(mode="mps"), tenants=[{"placement": {"mps_active_thread_percentage": 101}, **GOOD_TENANT}]),
     "tenants[0].placement.mps_active_thread_percentage: expected an integer in [1, 100], got number 101"),
    ("mps-limit-zero", dict(doc(mode="mps"), tenants=[{"placement": {"mps_pinned_mem_limit": "0G"}, **GOOD_TENANT}]),
     "tenants[0].placement.mps_pinned_mem_limit: expected a size"),
    ("mps-limit-newline", dict(doc(mode="mps"), tenants=[{"placement": {"mps_pinned_mem_limit": "8G\nX=1"}, **GOOD_TENANT}]),
     "tenants[0].placement.mps_pinned_mem_limit: expected a size"),
    ("tenants-string", doc(tenants="host-compute"), "tenants: expected an array of tenants, got string"),
    ("tenants-null", doc(tenants=[None]), "tenants[0]: expected an object (a tenant), got null"),
    ("tenants-1000", doc(tenants=[GOOD_TENANT] * 1000), "tenants: at most 64 tenants, got 1000"),
    ("empty-file", "", "not valid JSON"),
    ("only-whitespace", "   \n  ", "not valid JSON"),
    ("trailing-garbage", json.dumps(doc()) + " x", "not valid JSON"),
    ("two-documents", json.dumps(doc()) + json.dumps(doc()), "not valid JSON"),
    ("binary", "\x00\x01\x02", "not valid JSON"),
    ("bad-utf8-string", b'{"name": "\xff\xfe", "mode": "timeslice", "tenants": []}', "not valid JSON"),
    ("comment", '{"name": "x", /* c */ "mode": "timeslice", "tenants": []}', "not valid JSON"),
    ("single-quotes", "{'name': 'x'}", "not valid JSON"),
    ("number-document", "42", "expected a JSON object (a scenario), got number"),
    ("string-document", '"scenario"', "expected a JSON object (a scenario), got string"),
    ("null-document", "null", "expected a JSON object (a scenario), got null"),
]


CASES = [
    # (id, document or raw text, expected "<path>: <message>" part of the line)
    ("not-json", '{"name": "x", ', "not valid JSON"),
    ("array", "[1, 2]", "expected a JSON object (a scenario), got array"),
    ("missing-name", doc(name=None), "name: required key is missing"),
    ("name-number", doc(name=7), "name: expected a string, got number 7"),
    ("name-spaces", doc(name="a b"), "name: expected 1-80 characters"),
    ("unknown-key", doc(duraton_s=3), "duraton_s: unknown key (expected one of: name, description, mode"),
    ("missing-mode", doc(mode=None), "mode: required key is missing"),
    ("unknown-mode", doc(mode="shared"), 'mode: expected one of exclusive, timeslice, mps, mig, streams, got "shared"'),
    ("mode-number", doc(mode=1), "mode: expected a string"),
    ("device-negative", doc(device=-1), "device: expected an integer in [0, 63], got number -1"),
    ("device-string", doc(device="0"), 'device: expected an integer in [0, 63], got string "0"'),
    ("warmup-zero", doc(warmup_s=0), "warmup_s: expected a number in [0.001, 3600], got number 0"),
    ("duration-negative", doc(duration_s=-1), "duration_s: expected a number in [0.01, 86400], got number -1"),
    ("duration-string", doc(duration_s="10"), 'duration_s: expected a number in [0.01, 86400], got string "10"'),
    ("repetitions-zero", doc(repetitions=0), "repetitions: expected an integer in [1, 1000], got number 0"),
    ("repetitions-fraction", doc(repetitions=1.5), "repetitions: expected an integer in [1, 1000], got number 1.5"),
    ("cutoff-zero", doc(cutoff=0), "cutoff: expected a number > 0"),
    ("description-number", doc(description=3), "description: expected a string"),
    ("missing-tenants", doc(tenants=None), "tenants: required key is missing"),
    ("tenants-object", doc(tenants={}), "tenants: expected an array of tenants, got object"),
    ("tenants-empty", doc(tenants=[]), "tenants: expected at least one tenant, got an empty list"),
    ("too-many-tenants", doc(tenants=[GOOD_TENANT] * 65), "tenants: at most 64 tenants, got 65"),
    ("tenant-string", tenants("host-compute"), 'tenants[0]: expected an object (a tenant), got string'),
    ("tenant-no-workload", tenants(GOOD_TENANT, {"params": {}}), "tenants[1].workload: required key is missing"),
    ("unknown-workload", tenants(GOOD_TENANT, {"workload": "gemmm"}),
     'tenants[1].workload: unknown workload "gemmm" (known: '),
    ("tenant-unknown-key", tenants({"workload": "host-compute", "params_": {}}), "tenants[0].params_: unknown key"),
    ("params-array", tenants({"workload": "host-compute", "params": [1]}),
     "tenants[0].params: expected an object of parameters, got array"),
    ("unknown-param", tenants({"workload": "host-compute", "params": {"size": 3}}),
     "tenants[0].params.size: unknown parameter of workload 'host-compute' (known: n, reps)"),
    ("param-out-of-range", tenants({"workload": "host-compute", "params": {"n": 5000}}),
     "tenants[0].params.n: expected integer in [16, 2048], got 5000"),
    ("param-wrong-type", tenants({"workload": "host-copy", "params": {"mib": "64"}}),
     'tenants[0].params.mib: expected integer in [1, 16384], got "64"'),
    ("param-float-for-int", tenants({"workload": "host-copy", "params": {"reps": 1.5}}),
     "tenants[0].params.reps: expected integer in [1, 1000], got 1.5"),
    # Issue 20: it passed validation and failed in the worker (exit 4, not 2).
    ("count-file-suffix", tenants({"workload": "host-fault", "params": {"count_file": "/tmp/counts"}}),
     'tenants[0].params.count_file: expected empty, or a file name ending in .ib-fault-count, got "/tmp/counts"'),
    ("param-bad-choice", tenants({"workload": "host-fault", "params": {"action": "explode"}}),
     'tenants[0].params.action: expected one of crash, segfault, hang, exit, throw, none, got "explode"'),
    ("duplicate-names", tenants({"name": "x", **GOOD_TENANT}, {"name": "x", **GOOD_TENANT}),
     'tenants[1].name: duplicate tenant name "x"'),
    # Issue 20: names that differ only in characters the log file names write '_' shared one log, and the
    # valid scenario exited 4 with nothing measured.
    ("names-one-log-plus", tenants({"name": "a+b", **GOOD_TENANT}, {"name": "a_b", **GOOD_TENANT}),
     'tenants[1].name: "a_b" and tenants[0] "a+b" have one log file name ("a_b")'),
    ("names-one-log-hash", tenants({"name": "t#1", **GOOD_TENANT}, {"name": "t+1", **GOOD_TENANT}),
     'tenants[1].name: "t+1" and tenants[0] "t#1" have one log file name ("t_1")'),
    ("empty-name", tenants({"name": "", **GOOD_TENANT}), 'tenants[0].name: expected 1-64 characters of letters, digits'),
    ("bad-role", tenants({"role": "bystander", **GOOD_TENANT}),
     'tenants[0].role: expected one of victim, aggressor, got "bystander"'),
    ("placement-list", tenants({"placement": [0], **GOOD_TENANT}), "tenants[0].placement: expected an object"),
    ("placement-unknown", tenants({"placement": {"gpu": 1}, **GOOD_TENANT}), "tenants[0].placement.gpu: unknown key"),
    ("cpus-empty", tenants({"placement": {"cpus": []}, **GOOD_TENANT}),
     "tenants[0].placement.cpus: expected a non-empty array of CPU numbers"),
    ("cpus-missing-cpu", tenants({"placement": {"cpus": [0, 1000]}, **GOOD_TENANT}),
     "tenants[0].placement.cpus[1]: impossible placement: CPU 1000 is not available here"),
    ("cpus-negative", tenants({"placement": {"cpus": [-1]}, **GOOD_TENANT}),
     "tenants[0].placement.cpus[0]: expected an integer in [0, 1023], got number -1"),
    ("mig-in-timeslice", tenants({"placement": {"mig_instance": 0}, **GOOD_TENANT}),
     "tenants[0].placement.mig_instance: only valid with mode mig (mode is timeslice)"),
    ("mps-in-timeslice", tenants({"placement": {"mps_active_thread_percentage": 50}, **GOOD_TENANT}),
     "tenants[0].placement.mps_active_thread_percentage: only valid with mode mps (mode is timeslice)"),
    ("mig-same-instance", dict(doc(mode="mig"), tenants=[{"placement": {"mig_instance": 0}, **GOOD_TENANT},
                                                          {"placement": {"mig_instance": 0}, **GOOD_TENANT}]),
     "tenants[1].placement.mig_instance: impossible placement: MIG instance 0 is already taken by tenants[0]"),
    ("mig-bad-profile", dict(doc(mode="mig"), tenants=[{"placement": {"mig_profile": "big"}, **GOOD_TENANT}]),
     'tenants[0].placement.mig_profile: expected a MIG profile name like "1g.18gb", got "big"'),
    ("mig-both", dict(doc(mode="mig"), tenants=[{"placement": {"mig_profile": "1g.18gb", "mig_instance": 1},
                                                 **GOOD_TENANT}]),
     "tenants[0].placement: give either mig_instance or mig_profile, not both"),
    ("mps-percentage-zero", dict(doc(mode="mps"),
                                 tenants=[{"placement": {"mps_active_thread_percentage": 0}, **GOOD_TENANT}]),
     "tenants[0].placement.mps_active_thread_percentage: expected an integer in [1, 100], got number 0"),
    ("mps-bad-limit", dict(doc(mode="mps"), tenants=[{"placement": {"mps_pinned_mem_limit": "8GB"}, **GOOD_TENANT}]),
     'tenants[0].placement.mps_pinned_mem_limit: expected a size like "512M" or "8G", got "8GB"'),
] + EXTRA_CASES


@pytest.mark.parametrize("case_id,document,expected", CASES, ids=[c[0] for c in CASES])
def test_malformed_scenario_is_refused(runner, tmp_path, short_tmp, case_id, document, expected):
    path = short_tmp / f"{case_id}.json"  # a short path: the whole line must stay within 200 characters
    if isinstance(document, bytes):
        path.write_bytes(document)
    else:
        path.write_text(document if isinstance(document, str) else json.dumps(document))
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", path, "--out", out)
    assert r.returncode == 2, r.stderr
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, r.stderr[:300]
    lines = r.stderr.splitlines()
    assert len(lines[0]) <= 200 and "\x1b" not in lines[0], lines[0]
    assert lines[0].startswith(f"interference-bench: {path}: "), lines[0]
    assert expected in lines[0], lines[0]
    assert not out.exists(), "nothing may run before validation passes"


def test_there_are_at_least_120_cases():
    assert len(CASES) >= 120


def test_a_malformed_scenario_in_a_suite_stops_the_whole_suite(runner, tmp_path):
    good = {"name": "good", "mode": "exclusive", "warmup_s": 0.1, "duration_s": 0.2, "tenants": [GOOD_TENANT]}
    runner.suite("mixed", [good, doc(duration_s=0)])
    r = runner.run("--backend", "host", "--suite", "mixed", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "s1.json: duration_s: expected a number in [0.01, 86400]" in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_malformed_suite_file_is_refused(runner, tmp_path):
    runner.suite("ok", [])
    runner.write_json("scenarios/suites/broken.json", {"name": "broken", "scenarios": {"tpu": []}})
    r = runner.run("--backend", "host", "--suite", "broken", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "broken.json: scenarios.tpu: unknown key" in r.stderr


def test_scenarios_whose_names_share_a_log_file_name_are_refused(runner, tmp_path):
    a = {"name": "s+1", "mode": "exclusive", "warmup_s": 0.1, "duration_s": 0.2, "tenants": [GOOD_TENANT]}
    runner.suite("clash", [a, dict(a, name="s_1")])
    r = runner.run("--backend", "host", "--suite", "clash", "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert 's1.json: name: "s_1" shares its log file name "s_1" with "s+1" (s0.json)' in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_suite_is_named_even_beside_a_broken_one(runner, tmp_path):
    # Issue 20: `--suite nosuch` named an unrelated broken suite file in the same folder.
    runner.suite("ok", [])
    runner.write_json("scenarios/suites/broken.json", {"name": "broken", "scenarios": {"tpu": []}})
    r = runner.run("--backend", "host", "--suite", "nosuch", "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith('interference-bench: --suite: unknown suite "nosuch" (known: broken, ok;'), r.stderr
    assert "tpu" not in r.stderr
