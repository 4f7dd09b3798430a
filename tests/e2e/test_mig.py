"""Mode mig against the project's fake NVML (tests/fakes/fake_nvml.cpp): instance enumeration,
one MIG UUID per tenant, the exclusive phase from the largest instance or a baseline file, MIG
disabled, NVML missing, impossible placements, and --mig-create destroying exactly what it made."""
import json
import os
import signal

import pytest

from conftest import LENIENT, compute, fault, load_results, scenario, wait_for

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")

INSTANCES = [
    {"gi": 1, "ci": 0, "profile": "3g.71gb", "uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000001", "sm": 60,
     "memory_mb": 71424, "slot": 0},
    {"gi": 2, "ci": 0, "profile": "2g.35gb", "uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000002", "sm": 32,
     "memory_mb": 35584, "slot": 1},
    {"gi": 5, "ci": 0, "profile": "1g.18gb", "uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000005", "sm": 16,
     "memory_mb": 17664, "slot": 2},
    {"gi": 6, "ci": 0, "profile": "1g.18gb", "uuid": "MIG-aaaaaaaa-0000-0000-0000-000000000006", "sm": 16,
     "memory_mb": 17664, "slot": 3},
]
PROFILES = [
    {"name": "1g.18gb", "id": 19, "slices": 1, "sm": 16, "memory_mb": 17664, "capacity": 7},
    {"name": "2g.35gb", "id": 14, "slices": 2, "sm": 32, "memory_mb": 35584, "capacity": 3},
    {"name": "3g.71gb", "id": 9, "slices": 3, "sm": 60, "memory_mb": 71424, "capacity": 2},
    {"name": "7g.141gb", "id": 0, "slices": 7, "sm": 132, "memory_mb": 143360, "capacity": 1},
]


def gpu(mig_current=1, mig_pending=1, instances=INSTANCES, supported=True):
    return {"name": "NVIDIA H200", "uuid": "GPU-11111111-2222-3333-4444-555555555555", "compute_mode": 0,
            "sm": 132, "memory_mb": 143771,
            "mig": {"supported": supported, "current": mig_current, "pending": mig_pending, "max_devices": 7,
                    "slices": 7},
            "instances": instances, "profiles": PROFILES}


@pytest.fixture
def nvml(runner, tmp_path):
    if not FAKE_NVML:
        pytest.skip("FAKE_NVML_LIB not set (run through ctest)")

    def configure(*devices, **extra):
        cfg = runner.write_json("nvml.json", {"devices": list(devices), **extra})
        runner.env["INTERFERENCE_BENCH_NVML"] = FAKE_NVML
        runner.env["FAKE_NVML_CONFIG"] = str(cfg)
        runner.env["FAKE_NVML_STATE"] = str(tmp_path / "nvml-state.jsonl")
        return tmp_path / "nvml-state.jsonl"
    return configure


def test_each_tenant_gets_its_own_mig_instance(runner, tmp_path, nvml):
    nvml(gpu())
    b = compute("b")
    b["placement"] = {"mig_profile": "1g.18gb"}
    c = compute("c")
    c["placement"] = {"mig_instance": 1}
    f = runner.write_json("s.json", scenario("mig3", [compute("a"), b, c], mode="mig", duration=0.8))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode in (0, 1, 5), r.stderr
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["status"] == "ok" and run["mode"] == "mig"
    cfg = run["mode_config"]
    assert [i["uuid"] for i in cfg["mig"]["instances"]] == [i["uuid"] for i in INSTANCES]
    assert cfg["mig"]["instances"][0] == {"index": 0, "gpu_instance_id": 1, "compute_instance_id": 0,
                                          "profile": "3g.71gb", "uuid": INSTANCES[0]["uuid"], "sm_count": 60,
                                          "memory_bytes": 71424 * 2 ** 20}
    # c asked for instance 1, b for a 1g.18gb (the first free one: index 2), a gets the first free one left (0).
    expected = {"a": INSTANCES[0]["uuid"], "b": INSTANCES[2]["uuid"], "c": INSTANCES[1]["uuid"]}
    assert cfg["mig"]["assignment"] == expected
    seen = set()
    for t in run["tenants"]:
        for phase in ("alone", "colocated"):
            env = t["phases"][phase]["worker"]["env"]
            assert env.pop("CUDA_MPS_PIPE_DIRECTORY").endswith("/no-mps")  # no MPS client on MIG
            assert env == {"CUDA_VISIBLE_DEVICES": expected[t["name"]]}
            assert t["phases"][phase]["source"] == "measured"
        seen.add(t["phases"]["colocated"]["worker"]["env"]["CUDA_VISIBLE_DEVICES"])
        # No whole GPU in MIG mode: the exclusive phase ran on the largest instance, and says so.
        assert t["phases"]["exclusive"]["source"] == "largest_mig_instance"
        assert t["phases"]["exclusive"]["worker"]["env"]["CUDA_VISIBLE_DEVICES"] == INSTANCES[0]["uuid"]
    assert len(seen) == 3
    assert "largest MIG instance 3g.71gb" in cfg["exclusive_source"] and "not a whole GPU" in cfg["exclusive_source"]
    # and the summary a reader sees says so too
    assert f"- mig3 (mig): exclusive phase from {cfg['exclusive_source']}" in (tmp_path / "out" / "summary.md").read_text()
    assert cfg["device"]["mig_mode"] == {"current": True, "pending": True}


def test_each_rank_of_a_collective_gets_its_own_mig_instance(runner, tmp_path, nvml):
    # Issue 35: a collective's ranks are workers, each on a MIG instance of its own (NCCL 2.31 supports ranks
    # across instances); NCCL sees one GPU, so each is told IB_RANKS_SHARE_GPU=1. Without a baseline the
    # exclusive phase runs every rank on the largest instance. (The host stand-in ignores CUDA's variables: this
    # checks the placement; the NCCL side is CudaSupported.RanksOnMigInstancesNeedNccl231.)
    if "built without gloo" in runner.run("list", "workloads").stdout:
        pytest.skip("built without gloo (libgloo-dev)")
    nvml(gpu())
    ar = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 64}, "ranks": 2,
          "rank_placements": [{"mig_profile": "1g.18gb"}, {"mig_instance": 1}]}
    f = runner.write_json("s.json", scenario("ranks", [ar, compute("g")], mode="mig", duration=0.4))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--rounds", "1",
                   "--until", "fixed")
    assert r.returncode in (0, 1, 5), r.stderr
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["status"] == "ok", run["message"]
    mig = run["mode_config"]["mig"]
    uuid = [i["uuid"] for i in INSTANCES]
    # rank 1 asked for instance 1; rank 0 for the first free 1g.18gb (2); g takes the first left (0).
    assert mig["rank_assignment"] == {"ar": [uuid[2], uuid[1]]}
    assert mig["assignment"] == {"ar": uuid[2], "g": uuid[0]}
    t = next(t for t in run["tenants"] if t["name"] == "ar")
    for phase, on in (("alone", {uuid[2], uuid[1]}), ("colocated", {uuid[2], uuid[1]}), ("exclusive", {uuid[0]})):
        env = t["phases"][phase]["worker"]["env"]
        assert env["CUDA_VISIBLE_DEVICES"] in on and env["IB_RANKS_SHARE_GPU"] == "1", (phase, env)
        assert len(t["phases"][phase]["samples"]["rank_duration_s"]) == 2, phase  # [rank][sample]
    g = next(t for t in run["tenants"] if t["name"] == "g")
    assert "IB_RANKS_SHARE_GPU" not in g["phases"]["colocated"]["worker"]["env"]


def test_exclusive_phase_from_a_baseline_file(runner, tmp_path, nvml):
    doc = scenario("pair", [compute("a"), compute("b")], duration=0.5)
    f = runner.write_json("s.json", doc)
    base = runner.run(*LENIENT, "--backend", "host", "--mode", "exclusive", "--scenario", f, "--out", tmp_path / "base")
    assert base.returncode == 0, base.stderr
    nvml(gpu())
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "mig", "--scenario", f, "--out", tmp_path / "out",
                   "--baseline", tmp_path / "base" / "results.json")
    assert r.returncode in (0, 1, 5), r.stderr
    baseline = load_results(tmp_path / "base")["runs"][0]
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["mode_config"]["exclusive_source"] == f"baseline file {tmp_path / 'base' / 'results.json'}"
    for t, bt in zip(run["tenants"], baseline["tenants"]):
        ex = t["phases"]["exclusive"]
        assert ex["source"] == "baseline"
        assert ex["stats"] == bt["phases"]["exclusive"]["stats"]
        assert ex["samples"]["duration_s"] == bt["phases"]["exclusive"]["samples"]["duration_s"]
        assert t["metrics"]["median_slowdown"] == pytest.approx(
            t["phases"]["colocated"]["stats"]["median"] / bt["phases"]["exclusive"]["stats"]["median"] - 1)


def test_an_exclusive_run_on_one_mig_instance_is_a_baseline_that_says_so(runner, tmp_path, nvml):
    # Issue 34 (item 1): mig-sweep's yardstick is an exclusive run on the GPU's largest MIG instance, which
    # --backend cuda records as source mig_instance; every layout's run must take it as its --baseline, and
    # say where it was measured. (The host backend measures no MIG instance: the file is made to say so.)
    doc = scenario("pair", [compute("a"), compute("b")], duration=0.3)
    f = runner.write_json("s.json", doc)
    base = runner.run(*LENIENT, "--backend", "host", "--mode", "exclusive", "--scenario", f, "--out", tmp_path / "base")
    assert base.returncode == 0, base.stderr
    res = json.loads((tmp_path / "base" / "results.json").read_text())
    note = "one MIG instance, not a whole GPU: GPU 0 is in MIG mode, so CUDA shows a worker CUDA_VISIBLE_DEVICES=MIG-x"
    res["runs"][0]["mode_config"]["exclusive_source"] = note
    for t in res["runs"][0]["tenants"]:
        t["phases"]["exclusive"]["source"] = "mig_instance"
    on_instance = runner.write_json("on-instance.json", res)
    nvml(gpu())
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "mig", "--scenario", f, "--out", tmp_path / "out",
                   "--baseline", on_instance)
    assert r.returncode in (0, 1, 5), r.stderr
    run = load_results(tmp_path / "out")["runs"][0]
    assert run["mode_config"]["exclusive_source"] == f"baseline file {on_instance} (measured on {note})"
    assert all(t["phases"]["exclusive"]["source"] == "baseline" for t in run["tenants"])


def test_baseline_without_the_scenario_is_exit_2(runner, tmp_path, nvml):
    f = runner.write_json("s.json", scenario("other", [compute("x")], mode="exclusive", duration=0.3))
    assert runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "base").returncode == 0
    nvml(gpu())
    g = runner.write_json("g.json", scenario("wanted", [compute("a")], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", g, "--out", tmp_path / "out",
                   "--baseline", tmp_path / "base" / "results.json")
    assert r.returncode == 2
    assert 'no exclusive phase for scenario "wanted" tenant "a"' in r.stderr


def test_a_latency_baseline_keeps_its_latencies_and_its_arrival_rate(runner, tmp_path, nvml):
    # The latency tenant is judged on per-request latency against the baseline's, and its MIG phases
    # offer the baseline's arrival rate.
    lat = {"name": "a", "workload": "host-latency", "params": {"n": 32, "requests": 50}}
    f = runner.write_json("s.json", scenario("pair", [lat, compute("b")], duration=0.8))
    base = runner.run(*LENIENT, "--backend", "host", "--mode", "exclusive", "--scenario", f, "--out", tmp_path / "base")
    assert base.returncode == 0, base.stderr
    nvml(gpu())
    r = runner.run(*LENIENT, "--backend", "host", "--mode", "mig", "--scenario", f, "--out", tmp_path / "out",
                   "--baseline", tmp_path / "base" / "results.json")
    assert r.returncode in (0, 1, 5), r.stderr
    base_a = load_results(tmp_path / "base")["runs"][0]["tenants"][0]
    a = load_results(tmp_path / "out")["runs"][0]["tenants"][0]
    assert a["metrics"]["basis"] == "request_latency"
    assert a["phases"]["exclusive"]["latency"] == base_a["phases"]["exclusive"]["latency"]
    rate = base_a["phases"]["exclusive"]["worker"]["resolved"]["rate"]
    assert a["phases"]["alone"]["worker"]["resolved"]["rate"] == rate
    assert a["phases"]["colocated"]["worker"]["resolved"]["rate"] == rate


def test_a_baseline_of_another_workload_is_exit_2(runner, tmp_path, nvml):
    f = runner.write_json("s.json", scenario("pair", [compute("a")], mode="exclusive", duration=0.3))
    assert runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "base").returncode == 0
    nvml(gpu())
    other = {"name": "a", "workload": "host-latency", "params": {"n": 32, "requests": 20}}
    g = runner.write_json("g.json", scenario("pair", [other], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", g, "--out", tmp_path / "out",
                   "--baseline", tmp_path / "base" / "results.json")
    assert r.returncode == 2
    assert "pair/a ran host-compute there, host-latency here: not comparable" in r.stderr


def test_a_mig_run_is_not_a_baseline(runner, tmp_path, nvml):
    # Its exclusive phase ran on the largest MIG instance: using it as a whole-GPU baseline would
    # silently relabel slowdowns against a slice as slowdowns against a whole card.
    nvml(gpu())
    f = runner.write_json("s.json", scenario("pair", [compute("a"), compute("b")], mode="mig", duration=0.3))
    first = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "first")
    assert first.returncode in (0, 1, 5), first.stderr
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out",
                   "--baseline", tmp_path / "first" / "results.json")
    assert r.returncode == 2
    assert "written by a mig run" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("pending,text", [(0, "pending: disabled"), (1, "pending: enabled, after a GPU reset")])
def test_mig_disabled_is_exit_3_with_what_an_administrator_does(runner, tmp_path, nvml, pending, text):
    nvml(gpu(mig_current=0, mig_pending=pending, instances=[]))
    f = runner.write_json("s.json", scenario("m", [compute("a")], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3
    line = r.stderr.strip()
    assert "MIG mode is disabled on GPU 0 (NVIDIA H200) (current: disabled, " + text in line
    assert "nvidia-smi -i 0 -mig 1" in line and "never changes MIG mode" in line
    assert not (tmp_path / "out").exists()


def test_gpu_without_mig_support_and_no_instances(runner, tmp_path, nvml):
    nvml(gpu(supported=False, instances=[]))
    f = runner.write_json("s.json", scenario("m", [compute("a")], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3 and "does not support MIG" in r.stderr
    nvml(gpu(instances=[]))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3 and "no MIG instances exist" in r.stderr


def test_nvml_init_failure_is_exit_3(runner, tmp_path, nvml):
    nvml(gpu(), init="NVML_ERROR_DRIVER_NOT_LOADED")
    f = runner.write_json("s.json", scenario("m", [compute("a")], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 3 and "mode mig needs NVML" in r.stderr and "nvmlInit" in r.stderr


def test_impossible_mig_placements_are_exit_2(runner, tmp_path, nvml):
    nvml(gpu())
    too_many = [compute(n) for n in "abcde"]
    bad_index = compute("a")
    bad_index["placement"] = {"mig_instance": 9}
    bad_profile = compute("a")
    bad_profile["placement"] = {"mig_profile": "4g.71gb"}
    ranks = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce", "kib": 64}, "ranks": 2,
             "rank_placements": [{"mig_instance": 2}, {"mig_instance": 2}]}
    for tenants, message in ((too_many, "tenants[4].placement: impossible placement: 5 workers"),
                             ([ranks], "tenants[0].rank_placements[1].mig_instance: impossible placement: MIG instance "
                                       "2 is already rank 0"),
                             ([bad_index], "tenants[0].placement.mig_instance: impossible placement: there is no "
                                           "MIG instance 9"),
                             ([bad_profile], "tenants[0].placement.mig_profile: impossible placement: no free MIG "
                                             "instance of profile 4g.71gb")):
        f = runner.write_json("s.json", scenario("m", tenants, mode="mig", duration=0.3))
        r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out")
        assert r.returncode == 2, r.stderr
        assert message in r.stderr
        assert not (tmp_path / "out").exists()


def read_ops(state):
    return [json.loads(line) for line in state.read_text().splitlines()] if state.exists() else []


@pytest.mark.skipif(os.geteuid() != 0, reason="--mig-create needs root")
def test_mig_create_destroys_exactly_its_instances_even_when_a_worker_crashes(runner, tmp_path, nvml):
    state = nvml(gpu(instances=INSTANCES[:1]))
    # Starts: 1 its process on its own instance (alone, colocated), 2 the one on the largest (exclusive).
    bad = fault("bad", "crash", at_sample=30, count_file=str(tmp_path / "starts.ib-fault-count"), at_start=1)
    f = runner.write_json("s.json", scenario("made", [bad, compute("good")], mode="mig", duration=0.5, warmup=0.02))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--mig-create",
                   "1g.18gb,2g.35gb")
    assert r.returncode == 4, r.stderr
    ops = read_ops(state)
    created = [(o["gi"], o["ci"]) for o in ops if o["op"] == "create_ci"]
    assert [o["op"] for o in ops] == ["create_gi", "create_ci", "create_gi", "create_ci",
                                      "destroy_ci", "destroy_gi", "destroy_ci", "destroy_gi"]
    destroyed = [(o["gi"], o["ci"]) for o in ops if o["op"] == "destroy_ci"]
    assert sorted(destroyed) == sorted(created)
    assert {o["gi"] for o in ops if o["op"] == "destroy_gi"} == {o["gi"] for o in ops if o["op"] == "create_gi"}
    assert INSTANCES[0]["gi"] not in {o["gi"] for o in ops}, "the instance that was there before is left alone"
    run = load_results(tmp_path / "out")["runs"][0]
    assert [c["profile"] for c in run["mode_config"]["device"]["mig_created"]] == ["1g.18gb", "2g.35gb"]
    # Issue 34 (item 2): the tenants ran on exactly the instances it made, and the exclusive phase on the
    # largest of those (the 2g.35gb), never on the pre-existing 3g.71gb (larger, and with the lowest id).
    assigned = set(run["mode_config"]["mig"]["assignment"].values())
    made = {o["profile"]: o["uuid"] for o in ops if o["op"] == "create_ci"}
    assert assigned == set(made.values())
    assert INSTANCES[0]["uuid"] not in run["mode_config"]["exclusive_source"]
    assert run["mode_config"]["exclusive_source"].startswith(f"largest MIG instance 2g.35gb ({made['2g.35gb']}")
    assert INSTANCES[0]["uuid"] not in json.dumps(run["mode_config"]["mig"]["assignment"])


@pytest.mark.skipif(os.geteuid() != 0, reason="--mig-create needs root")
@pytest.mark.parametrize("profiles, says, ops", [
    # A set that cannot fit is refused before anything is made.
    ("1g.18gb,3g.71gb,3g.71gb,1g.18gb", "--mig-create 1g.18gb,3g.71gb,3g.71gb,1g.18gb: 8 compute slices in all, but "
     "the GPU has 7. Nothing was created", []),
    # One that fits but whose second creation fails (a race lost): the first is destroyed again.
    ("1g.18gb,2g.35gb", "--mig-create 2g.35gb: nvmlDeviceCreateGpuInstanceWithPlacement: Insufficient resources",
     ["create_gi", "create_ci", "destroy_ci", "destroy_gi"]),
])
def test_mig_create_failure_leaves_nothing_made(runner, tmp_path, nvml, profiles, says, ops):
    dev = gpu(instances=[])
    dev["profiles"] = [dict(p, create_fails=23) if p["name"] == "2g.35gb" else p for p in PROFILES]
    state = nvml(dev)
    f = runner.write_json("s.json", scenario("m", [compute("a")], mode="mig", duration=0.3))
    r = runner.run(*LENIENT, "--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--mig-create", profiles)
    assert r.returncode == 3
    assert says in r.stderr and "\n" not in r.stderr.strip(), r.stderr
    assert [o["op"] for o in read_ops(state)] == ops


@pytest.mark.skipif(os.geteuid() != 0, reason="--mig-create needs root")
def test_mig_create_instances_are_destroyed_on_sigint(runner, tmp_path, nvml):
    state = nvml(gpu(instances=[]))
    runner.suite("sig", [scenario("long", [compute("a")], mode="mig", duration=20, warmup=0.05)])
    out = tmp_path / "out"
    p = runner.popen(*LENIENT, "--backend", "host", "--suite", "sig", "--out", out, "--mig-create", "3g.71gb")
    wait_for((out / "logs" / "long-mig-r1-mig-a.log").exists, process=p)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    assert p.returncode == 130
    assert [o["op"] for o in read_ops(state)] == ["create_gi", "create_ci", "destroy_ci", "destroy_gi"]
