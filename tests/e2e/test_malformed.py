"""Malformed scenarios: each is refused before anything runs, exit 2, one line naming the file,
the field path and what was expected."""
import json

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
    ("warmup-zero", doc(warmup_s=0), "warmup_s: expected a number > 0, got number 0"),
    ("duration-negative", doc(duration_s=-1), "duration_s: expected a number > 0, got number -1"),
    ("duration-string", doc(duration_s="10"), 'duration_s: expected a number > 0, got string "10"'),
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
    ("param-bad-choice", tenants({"workload": "host-fault", "params": {"action": "explode"}}),
     'tenants[0].params.action: expected one of crash, segfault, hang, exit, throw, none, got "explode"'),
    ("duplicate-names", tenants({"name": "x", **GOOD_TENANT}, {"name": "x", **GOOD_TENANT}),
     'tenants[1].name: duplicate tenant name "x"'),
    ("empty-name", tenants({"name": "", **GOOD_TENANT}), "tenants[0].name: expected a non-empty string"),
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
]


@pytest.mark.parametrize("case_id,document,expected", CASES, ids=[c[0] for c in CASES])
def test_malformed_scenario_is_refused(runner, tmp_path, case_id, document, expected):
    path = runner.write_json(f"{case_id}.json", document)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", path, "--out", out)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"interference-bench: {path}: "), lines[0]
    assert expected in lines[0], lines[0]
    assert not out.exists(), "nothing may run before validation passes"


def test_there_are_at_least_30_cases():
    assert len(CASES) >= 30


def test_a_malformed_scenario_in_a_suite_stops_the_whole_suite(runner, tmp_path):
    good = {"name": "good", "mode": "exclusive", "warmup_s": 0.1, "duration_s": 0.2, "tenants": [GOOD_TENANT]}
    runner.suite("mixed", [good, doc(duration_s=0)])
    r = runner.run("--backend", "host", "--suite", "mixed", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "s1.json: duration_s: expected a number > 0" in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_malformed_suite_file_is_refused(runner, tmp_path):
    runner.suite("ok", [])
    runner.write_json("scenarios/suites/broken.json", {"name": "broken", "scenarios": {"tpu": []}})
    r = runner.run("--backend", "host", "--suite", "broken", "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "broken.json: scenarios.tpu: unknown key" in r.stderr
