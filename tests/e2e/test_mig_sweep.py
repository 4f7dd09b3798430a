"""`mig-sweep` against the fake NVML with H200 profiles and the host backend: each layout's instances made
and destroyed (the fake's operation log), pre-existing instances untouched, the recommendation as a
mig-parted config, the budget, MIG mode off, and SIGTERM / SIGKILL + cleanup mid-sweep."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import BINARY, LENIENT, SOURCE_DIR, compute, load_results, scenario, wait_for

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
TOY_STEP = os.environ.get("IB_TOY_STEP", str(Path(BINARY).parent / "tests" / "ib_toy_step"))
SWEEP_SCHEMA = json.loads((SOURCE_DIR / "reports" / "mig-sweep.schema.json").read_text())
# The H200's GPU instance profiles (placements: the fake's defaults for each slice count, as nvidia-smi
# mig -lgipp lists them on an H100/H200).
H200_PROFILES = [
    {"name": "1g.18gb", "id": 19, "slices": 1, "sm": 16, "memory_mb": 16384, "capacity": 7},
    {"name": "1g.35gb", "id": 15, "slices": 1, "sm": 26, "memory_mb": 32768, "capacity": 4},
    {"name": "2g.35gb", "id": 14, "slices": 2, "sm": 32, "memory_mb": 32768, "capacity": 3},
    {"name": "3g.71gb", "id": 9, "slices": 3, "sm": 60, "memory_mb": 69632, "capacity": 2},
    {"name": "4g.71gb", "id": 5, "slices": 4, "sm": 64, "memory_mb": 69632, "capacity": 1},
    {"name": "7g.141gb", "id": 0, "slices": 7, "sm": 132, "memory_mb": 143360, "capacity": 1},
]
# A 1g.18gb at memory slice 6, which leaves no room for a second 3g.71gb (placements 0-3 and 4-7).
PREEXISTING = {"gi": 13, "ci": 0, "profile": "1g.18gb", "uuid": "MIG-ffffffff-0000-0000-0000-000000000013", "sm": 16,
               "memory_mb": 16384, "slot": 6, "placement": [6, 1]}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mig-sweep creates instances with --mig-create: needs root")


@pytest.fixture
def fake(runner, tmp_path):
    if not FAKE_NVML:
        pytest.skip("FAKE_NVML_LIB not set (run through ctest)")

    def configure(mig_current=1, instances=()):
        dev = {"name": "NVIDIA H200", "uuid": "GPU-11111111-2222-3333-4444-555555555555", "compute_mode": 0,
               "sm": 132, "memory_mb": 143771,
               "mig": {"supported": True, "current": mig_current, "pending": mig_current, "max_devices": 7, "slices": 7},
               "instances": list(instances), "profiles": H200_PROFILES}
        cfg = runner.write_json("nvml.json", {"devices": [dev]})
        runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                          FAKE_NVML_STATE=str(tmp_path / "nvml-state.jsonl"))
        return tmp_path / "nvml-state.jsonl"
    return configure


def read_ops(state):
    return [json.loads(line) for line in state.read_text().splitlines()] if state.exists() else []


def live_created(state):
    """GPU instances the sweep made that are not destroyed."""
    ops = read_ops(state)
    return {o["gi"] for o in ops if o["op"] == "create_gi"} - {o["gi"] for o in ops if o["op"] == "destroy_gi"}


def journalled_creations(runner):
    """MIG instances the runs' journals record as made (with their ids)."""
    return sum(json.loads(line).get("event") == "mig_created"
               for j in runner.journals() for line in j.read_text().splitlines()[1:] if line.startswith("{"))


def two_tenants(runner, duration=0.4):
    return runner.write_json("s.json", scenario("pair", [compute("victim", n=48, reps=2), compute("other", n=48, reps=2)],
                                                mode="mig", duration=duration, warmup=0.05))


def sweep(runner, *args):
    return [BINARY, "mig-sweep", "--backend", "host", *LENIENT, *map(str, args)]


def exclusive_baseline(runner, tmp_path):
    """An exclusive run of two_tenants' scenario (its names and workloads), short: a --baseline file."""
    s = runner.write_json("base.json", scenario("pair", [compute("victim", n=48, reps=2), compute("other", n=48, reps=2)],
                                                mode="exclusive", duration=0.2, warmup=0.05))
    r = runner.run("--backend", "host", "--scenario", s, "--rounds", "1", "--until", "fixed", "--out", tmp_path / "base",
                   *LENIENT)
    assert r.returncode in (0, 5), r.stdout + r.stderr
    return tmp_path / "base" / "results.json"


SM_SCALED = r"""#!/bin/sh
sm=$(grep '"create_ci"' "$FAKE_NVML_STATE" | grep "\"uuid\":\"$CUDA_VISIBLE_DEVICES\"" | sed 's/.*"sm":\([0-9]*\).*/\1/' | tail -n 1)
[ -n "$sm" ] || { echo "no MIG instance $CUDA_VISIBLE_DEVICES" >&2; exit 2; }
exec TOY_STEP --work $((4000000 * 132 / sm))
"""


def sm_scaled_tenant(runner, name):
    """A compute-heavy command tenant on the fake H200: each step's work is 132 / (the SMs of the MIG instance
    CUDA_VISIBLE_DEVICES shows it, from the fake's operation log) times a whole GPU's, as a GEMM's on fewer SMs.
    So a 1g.18gb (16 SMs) is about 8x slower than the 7g.141gb, a 4g.71gb (64 SMs) about 2x."""
    script = runner.write_json(f"{name}.sh", SM_SCALED.replace("TOY_STEP", TOY_STEP))
    return {"name": name, "role": "victim", "command": {"argv": ["/bin/sh", str(script)], "metric": "heartbeat"}}


def test_each_layout_makes_and_destroys_exactly_its_instances_and_the_recommendation_is_a_mig_parted_config(
        runner, tmp_path, fake):
    state = fake(instances=[PREEXISTING])
    layouts = runner.write_json("layouts.txt", "# three layouts for two tenants\n3g.71gb,3g.71gb\n4g.71gb, 2g.35gb\n"
                                               "1g.18gb,4g.71gb\n")
    out = tmp_path / "out"
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner), "--layouts", layouts, "--rounds", "2",
                             "--out", out), capture_output=True, text=True, timeout=300, env=runner.env)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    doc = json.loads((out / "mig-sweep.json").read_text())
    jsonschema.validate(doc, SWEEP_SCHEMA)
    assert [l["name"] for l in doc["layouts"]] == ["3g.71gb,3g.71gb", "4g.71gb,2g.35gb", "1g.18gb,4g.71gb"]
    # The layout the pre-existing instance blocks is skipped before anything is made, with the reason.
    blocked = doc["layouts"][0]
    assert blocked["outcome"] == "skipped_existing", blocked
    assert "beside the pre-existing instances at memory slices 6-6" in blocked["reason"]
    assert [l["outcome"] for l in doc["layouts"][1:]] == ["measured", "measured"], doc["layouts"]
    assert [t["profile"] for t in doc["layouts"][1]["tenants"]] == ["4g.71gb", "2g.35gb"]
    # The yardstick first: the 7g.141gb has no room beside the pre-existing instance, so every tenant alone on
    # the largest instance that fits, 4g.71gb, said so; both layouts' runs read that one run as their baseline.
    y = doc["yardstick"]
    assert (y["source"], y["profile"], y["whole_gpu_largest"], y["outcome"]) == ("largest_instance", "4g.71gb", False,
                                                                                  "measured"), y
    assert "7g.141gb, does not fit beside the pre-existing instances" in y["reason"]
    for l in doc["layouts"][1:]:
        assert load_results(Path(l["results_file"]).parent)["runs"][0]["mode_config"]["exclusive_source"] == \
            f"baseline file {y['baseline_file']}"
    # Per layout: its two instances made where the whole set fits (the 1g.18gb asked for first is not put
    # at 0, where the 4g.71gb has its only placement), then destroyed; the pre-existing one never touched.
    ops = read_ops(state)
    made = [(o["profile"], o["placement"]) for o in ops if o["op"] == "create_gi"]
    assert made == [("4g.71gb", [0, 4]), ("4g.71gb", [0, 4]), ("2g.35gb", [4, 2]), ("1g.18gb", [4, 1]), ("4g.71gb", [0, 4])]
    assert all(o["asked"] for o in ops if o["op"] == "create_gi")
    assert [o["op"] for o in ops[:8]] == ["create_gi", "create_ci", "destroy_ci", "destroy_gi", "create_gi", "create_ci",
                                          "create_gi", "create_ci"]
    assert live_created(state) == set()
    assert PREEXISTING["gi"] not in {o["gi"] for o in ops}
    assert doc["preexisting_instances"] == [f"1g.18gb ({PREEXISTING['uuid']})"]
    # The recommendation, as mig-parted reads it.
    rec = doc["recommendation"]
    cfg = yaml.safe_load((out / "mig-parted.yaml").read_text())
    assert f"# Measured beside pre-existing instances this config leaves out (applying it replaces them): 1g.18gb " \
           f"({PREEXISTING['uuid']})" in (out / "mig-parted.yaml").read_text()
    assert cfg["version"] == "v1"
    [entry] = cfg["mig-configs"]["interference-bench-recommended"]
    assert entry["mig-enabled"] is True and entry["devices"] == [0]
    assert entry["device-filter"] == doc["device"]["pci_device_id"] == "0x233510DE"  # the fake's H200 SXM
    counts = {}
    for p in rec["profiles"]:
        counts[p] = counts.get(p, 0) + 1
    assert entry["mig-devices"] == counts
    md = (out / "mig-sweep.md").read_text()
    assert "kubectl label node" in md and "nvidia.com/mig.config=interference-bench-recommended" in md
    assert "Gres=gpu:" in md
    assert "<script" not in (out / "mig-sweep.html").read_text()


def test_all_enumerates_from_nvmls_profiles_and_the_budget_skips_what_does_not_fit(runner, tmp_path, fake):
    fake()
    out = tmp_path / "out"
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner, duration=0.3), "--rounds", "1", "--budget", "1",
                             "--out", out), capture_output=True, text=True, timeout=300, env=runner.env)
    doc = json.loads((out / "mig-sweep.json").read_text())
    names = [l["name"] for l in doc["layouts"]]
    # Two instances of the H200's profiles that fit together, larger first: 7g.141gb fits with nothing.
    assert "4g.71gb,3g.71gb" in names and "3g.71gb,3g.71gb" in names and "1g.18gb,1g.18gb" in names
    assert not any(n.startswith("7g.141gb") for n in names) and "4g.71gb,4g.71gb" not in names
    # The first entry runs (the time-sliced reference), the budget skips the next (MPS), and the first layout
    # runs all the same (a sweep that measured none would recommend none); the rest are skipped.
    assert [(l["name"], l["outcome"]) for l in doc["references"]] == [("timeslice on 7g.141gb", "measured"),
                                                                      ("mps on 7g.141gb", "skipped_budget")]
    assert doc["layouts"][0]["outcome"] == "measured"
    skipped = [l for l in doc["layouts"] if l["outcome"] == "skipped_budget"]
    assert len(skipped) == len(names) - 1 and all("--budget 1 s" in l["reason"] for l in skipped)
    assert doc["recommendation"]["layout"] == names[0]
    assert r.returncode in (0, 1, 5), r.stderr


def test_the_references_share_one_largest_instance_and_prices_rank_by_stp_per_price(runner, tmp_path, fake):
    state = fake()
    cfg = json.loads(Path(runner.env["FAKE_NVML_CONFIG"]).read_text())
    cfg["devices"][0]["telemetry"] = {"power_w": 650, "power_limit_w": 700, "reasons": 4}  # SwPowerCap
    runner.write_json("nvml.json", cfg)
    mps_log = tmp_path / "mps.log"
    runner.env.update(PATH=f"{SOURCE_DIR / 'tests' / 'fakes' / 'bin'}:{os.environ['PATH']}", FAKE_MPS_LOG=str(mps_log))
    prices = runner.write_json("prices.json", {"7g.141gb": 4.0, "4g.71gb": 2.5, "3g.71gb": 2.0, "2g.35gb": 1.25})
    layouts = runner.write_json("layouts.txt", "4g.71gb,3g.71gb\n2g.35gb,2g.35gb\n")
    out = tmp_path / "out"
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner, duration=0.3), "--layouts", layouts, "--rounds", "1",
                             "--prices", prices, "--out", out), capture_output=True, text=True, timeout=300, env=runner.env)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    doc = json.loads((out / "mig-sweep.json").read_text())
    jsonschema.validate(doc, SWEEP_SCHEMA)
    refs = doc["references"]
    assert [(l["sharing"], l["outcome"], l["price"]) for l in refs] == [("timeslice", "measured", 4.0), ("mps", "measured", 4.0)]
    assert all(t["profile"] == "7g.141gb" for l in refs for t in l["tenants"])
    # One 7g.141gb instance for both references, made first and gone before the layouts' instances.
    ops = read_ops(state)
    gis = [o for o in ops if o["op"] in ("create_gi", "destroy_gi")]
    assert [(o["op"], o.get("profile")) for o in gis[:2]] == [("create_gi", "7g.141gb"), ("destroy_gi", None)]
    big_uuid = next(o["uuid"] for o in ops if o["op"] == "create_ci" and o["gi"] == gis[0]["gi"])
    # The MPS reference's daemon (and so its clients) sees only that instance.
    assert f"visible={big_uuid} " in mps_log.read_text().splitlines()[0]
    assert live_created(state) == set()
    # Prices: a layout costs the sum of its instances; the recommendation weighs STP per price.
    by_name = {l["name"]: l for l in doc["layouts"]}
    assert by_name["4g.71gb,3g.71gb"]["price"] == 4.5 and by_name["2g.35gb,2g.35gb"]["price"] == 2.5
    for l in doc["layouts"] + refs:
        assert l["stp_per_price"] == pytest.approx(l["stp"] / l["price"], rel=1e-9)
        assert l["power"]["median_w"] == 650 and l["power"]["limit_w"] == 700
        assert l["power"]["power_capped_fraction"] == 1.0
    same = [l for l in doc["layouts"] if l["passing"] == max(x["passing"] for x in doc["layouts"])]
    assert doc["recommendation"]["layout"] == max(same, key=lambda l: l["stp_per_price"])["name"]
    md = (out / "mig-sweep.md").read_text()
    assert "## References" in md and "STP per price" in md and "power-capped 100%" in md


@pytest.mark.parametrize("args, says", [
    (["--references", "mig"], "--references mig: \"mig\": timeslice, mps or none was expected"),
    (["--prices", "PRICES"], "prices.json: no price for 3g.71gb"),
])
def test_bad_references_or_a_missing_price_is_one_line_exit_2(runner, tmp_path, fake, args, says):
    state = fake()
    prices = runner.write_json("prices.json", {"7g.141gb": 4.0})
    args = [str(prices) if a == "PRICES" else a for a in args]
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner), "--layouts",
                             runner.write_json("l.txt", "3g.71gb,3g.71gb\n"), *args, "--out", tmp_path / "o"),
                       capture_output=True, text=True, timeout=60, env=runner.env)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert read_ops(state) == []


@pytest.mark.parametrize("what, says", [
    ("layout", "l.txt:1: \"3g.71gb,,3g.71gb\""),
    ("scenario", "tenants[0].params.n: expected integer in [16, 2048], got 5000"),
    ("ranks", "tenants[1].ranks: a layout gives each tenant one MIG instance"),
    # Issue 49: a --baseline without the scenario's exclusive phases was refused only by the first layout's run,
    # after the references' instances had been made.
    ("baseline", "mig-sweep --baseline BASE: no exclusive phase for scenario \"pair\" tenant \"victim\""),
])
def test_a_bad_layout_entry_or_scenario_is_refused_before_anything_is_made(runner, tmp_path, fake, what, says):
    # Issue 37 item 9: both were found inside the first layout's run, after the references had been measured.
    state = fake()
    s = two_tenants(runner)
    if what == "scenario":
        doc = json.loads(s.read_text())
        doc["tenants"][0]["params"]["n"] = 5000
        s = runner.write_json("s.json", doc)
    if what == "ranks":  # a collective's ranks would each need an instance: mode mig places them, a layout does not
        doc = json.loads(s.read_text())
        doc["tenants"][1] = {"name": "ar", "workload": "host-collective", "params": {"op": "allreduce"}, "ranks": 2}
        s = runner.write_json("s.json", doc)
    extra = []
    if what == "baseline":  # an exclusive run of another scenario: a results file, not this scenario's yardstick
        doc = json.loads(s.read_text())
        base = tmp_path / "other-base"
        other = runner.write_json("other.json", {**doc, "name": "other", "mode": "exclusive", "duration_s": 0.2})
        b = runner.run("--backend", "host", "--scenario", other, "--rounds", "1", "--until", "fixed", "--out", base,
                       *LENIENT)
        assert b.returncode in (0, 5), b.stdout + b.stderr
        extra = ["--baseline", base / "results.json"]
        says = says.replace("BASE", str(base / "results.json"))
        state = fake()  # the exclusive run's own NVML calls are not the sweep's
    layouts = runner.write_json("l.txt", "3g.71gb,,3g.71gb\n" if what == "layout" else "3g.71gb,3g.71gb\n")
    r = subprocess.run(sweep(runner, "--scenario", s, "--layouts", layouts, *extra, "--out", tmp_path / "o"),
                       capture_output=True, text=True, timeout=60, env=runner.env)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert read_ops(state) == [] and not (tmp_path / "o").exists()


def test_a_gpu_not_in_mig_mode_is_exit_3_with_what_an_administrator_does(runner, tmp_path, fake):
    state = fake(mig_current=0)
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner), "--out", tmp_path / "out"),
                       capture_output=True, text=True, timeout=60, env=runner.env)
    assert r.returncode == 3
    assert "MIG mode is disabled" in r.stderr and "never changes MIG mode" in r.stderr
    assert read_ops(state) == []


def test_a_layout_list_line_that_cannot_be_placed_is_bad_input(runner, tmp_path, fake):
    fake()
    layouts = runner.write_json("layouts.txt", "3g.71gb,2g.35gb\n7g.141gb,1g.18gb\n")
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner), "--layouts", layouts, "--out", tmp_path / "o"),
                       capture_output=True, text=True, timeout=60, env=runner.env)
    assert r.returncode == 2 and "layouts.txt:2:" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_an_interrupted_sweep_leaves_no_instance_it_made(runner, tmp_path, fake, how):
    state = fake(instances=[PREEXISTING])
    out = tmp_path / "out"
    base = exclusive_baseline(runner, tmp_path)  # the yardstick: no instance for it, the first layout's come first
    p = subprocess.Popen(sweep(runner, "--scenario", two_tenants(runner, duration=20), "--layouts",
                               runner.write_json("l.txt", "2g.35gb,2g.35gb\n4g.71gb,2g.35gb\n"), "--rounds", "1",
                               "--baseline", base, "--out", out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=runner.env,
                         start_new_session=True)
    # The first layout's instances exist and the run's journal holds their ids: a kill between NVML's
    # create and the journal's record is a creation cleanup cannot name, which it reports (exit 3).
    wait_for(lambda: len(live_created(state)) == 2 and journalled_creations(runner) == 2, process=p)
    if how == "sigterm":
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        assert p.returncode == 130
        doc = json.loads((out / "mig-sweep.json").read_text())
        assert doc["interrupted"] is True and doc["layouts"][0]["outcome"] == "interrupted"
        assert (doc["yardstick"]["source"], doc["yardstick"]["baseline_file"]) == ("baseline", str(base))
    else:
        os.killpg(p.pid, signal.SIGKILL)  # the sweep and its run: nothing of ours gets to clean up
        p.communicate(timeout=60)
        wait_for(lambda: not runner.leftover_processes())
        assert len(live_created(state)) == 2
        r = runner.run("cleanup")
        assert r.returncode == 0, r.stdout + r.stderr
    assert live_created(state) == set()
    assert PREEXISTING["gi"] not in {o["gi"] for o in read_ops(state)}


def test_every_layout_is_judged_against_one_yardstick_and_a_sweep_ranks_small_and_large_layouts_by_it(
        runner, tmp_path, fake):
    # Issue 34 (item 1). Two compute-heavy tenants whose speed follows their instance's SMs: against each
    # layout's own largest instance 1g.18gb,1g.18gb looked unslowed (STP about 2) and won; against the one
    # yardstick (each tenant alone once on the 7g.141gb) it is about 8x slower, and 4g.71gb,3g.71gb wins.
    state = fake()
    doc_s = scenario("pair", [sm_scaled_tenant(runner, "a"), sm_scaled_tenant(runner, "b")], mode="mig", duration=0.6,
                     warmup=0.05)
    layouts = runner.write_json("layouts.txt", "1g.18gb,1g.18gb\n4g.71gb,3g.71gb\n")
    out = tmp_path / "out"
    r = subprocess.run(sweep(runner, "--scenario", runner.write_json("s.json", doc_s), "--layouts", layouts, "--rounds", "2",
                             "--references", "none", "--out", out), capture_output=True, text=True, timeout=300,
                       env=runner.env)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    doc = json.loads((out / "mig-sweep.json").read_text())
    jsonschema.validate(doc, SWEEP_SCHEMA)
    y = doc["yardstick"]
    assert (y["source"], y["profile"], y["whole_gpu_largest"], y["outcome"]) == ("largest_instance", "7g.141gb", True,
                                                                                  "measured"), y
    ops = read_ops(state)
    assert [o["profile"] for o in ops if o["op"] == "create_gi"][0] == "7g.141gb"
    assert y["uuid"] == next(o["uuid"] for o in ops if o["op"] == "create_ci")
    assert live_created(state) == set()
    # The same exclusive source and figures in both layouts' runs: the yardstick's.
    small, large = doc["layouts"]
    assert (small["outcome"], large["outcome"]) == ("measured", "measured"), doc["layouts"]
    runs = [load_results(Path(l["results_file"]).parent)["runs"][0] for l in (small, large)]
    assert {run["mode_config"]["exclusive_source"] for run in runs} == {f"baseline file {y['baseline_file']}"}
    for name in ("a", "b"):
        ex = [next(t for t in run["tenants"] if t["name"] == name)["phases"]["exclusive"] for run in runs]
        assert ex[0]["source"] == ex[1]["source"] == "baseline"
        assert ex[0]["stats"] == ex[1]["stats"]
    # Ranked by what was measured against it: a 1g.18gb has a quarter of a 4g.71gb's SMs.
    assert large["stp"] > 2 * small["stp"], (large["stp"], small["stp"])
    assert doc["recommendation"]["layout"] == "4g.71gb,3g.71gb"
    assert "against one yardstick: each tenant alone once on one 7g.141gb instance" in (out / "mig-sweep.md").read_text()


def test_without_a_yardstick_no_layout_runs(runner, tmp_path, fake):
    # The largest instance cannot be made (a race lost): no layout is judged against its own largest instance.
    state = fake()
    cfg = json.loads(Path(runner.env["FAKE_NVML_CONFIG"]).read_text())
    next(p for p in cfg["devices"][0]["profiles"] if p["name"] == "7g.141gb")["create_fails"] = 23
    runner.write_json("nvml.json", cfg)
    out = tmp_path / "out"
    r = subprocess.run(sweep(runner, "--scenario", two_tenants(runner), "--layouts",
                             runner.write_json("l.txt", "3g.71gb,3g.71gb\n"), "--references", "none", "--out", out),
                       capture_output=True, text=True, timeout=120, env=runner.env)
    assert r.returncode == 3, r.stdout + r.stderr
    doc = json.loads((out / "mig-sweep.json").read_text())
    jsonschema.validate(doc, SWEEP_SCHEMA)
    assert doc["yardstick"]["outcome"] == "cannot_run"
    [l] = doc["layouts"]
    assert l["outcome"] == "cannot_run" and "no common yardstick" in l["reason"] and "--baseline" in l["reason"], l
    assert not [o for o in read_ops(state) if o["op"] == "create_gi"]
    assert "No common yardstick" in (out / "mig-sweep.md").read_text()
