"""Command tenants (docs/design.md section 11): a user's program measured like one of our workloads, through
the shipped heartbeat clients, its stdout or its wall time; its faults recorded as the tenant's error
with the tail of its output, its whole process group gone. The runner fixture asserts after every test
that no process carrying the test's tag (the program and its children inherit it) is left."""
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, SOURCE_DIR, load_results, scenario, skip_unless_measured, wait_for

TOY = str(SOURCE_DIR / "tests" / "command" / "toy_train.py")
FAULTY = str(SOURCE_DIR / "tests" / "command" / "faulty.py")
ESCAPER = str(SOURCE_DIR / "tests" / "command" / "escaper.py")
TOY_STEP = os.environ.get("IB_TOY_STEP", str(Path(BINARY).parent / "tests" / "ib_toy_step"))
STDOUT_MS = {"stdout": r"took (?P<ms>[0-9.]+) ms"}


def command_tenant(name, argv, metric="heartbeat", role="victim", **extra):
    return {"name": name, "role": role, "command": {"argv": argv, "metric": metric, **extra}}


# About 15 ms of work per step in either toy: longer than the scheduler's slice, so two loops sharing a
# core each run at half speed in every step, not only in the tail.
CPP_WORK = "30000000"


def toy(name, metric, **extra):
    """The toy loop: Python (heartbeat, stdout) or C++ ("cpp": the C++ client; "cpp-wall": one step per
    run, since a Python start-up of 100+ ms per wall sample would need half-minute phases for the 72
    values a P95 verdict needs)."""
    if metric == "cpp":
        return command_tenant(name, [TOY_STEP, "--work", CPP_WORK], **extra)
    if metric == "cpp-wall":
        return command_tenant(name, [TOY_STEP, "--work", CPP_WORK, "--steps", "1"], "wall", **extra)
    argv = [sys.executable, TOY, metric] + (["--steps", "2"] if metric == "wall" else [])
    return command_tenant(name, argv, STDOUT_MS if metric == "stdout" else metric, **extra)


def run(runner, tmp_path, doc, *extra, timeout=240):
    f = runner.write_json("s.json", doc)
    out = tmp_path / "out"
    r = runner.run("--backend", "host", "--scenario", f, "--out", out, *extra, timeout=timeout)
    return r, load_results(out)


def aggregate(res, tenant):
    return next(a for a in res["aggregates"] if a["tenant"] == tenant)


def pinned(tenant, cpu=0):
    return {**tenant, "placement": {"cpus": [cpu]}}


# ------------------------------------------------------------------ known answers (real processes)

@pytest.mark.serial
@pytest.mark.measurement
def test_a_toy_loop_sharing_one_core_with_a_compute_neighbour_fails_near_double(runner, tmp_path):
    # The toy training loop and host-compute pinned to CPU 0: the kernel gives each half the core, so a
    # step takes about twice as long (median slowdown near +100%): a fail. Measured by heartbeat here;
    # the other three ways of measuring it are the long test below.
    toy_loop_beside_a_compute_twin(runner, tmp_path, "heartbeat")


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
@pytest.mark.parametrize("metric", ["stdout", "cpp", "cpp-wall"])
def test_the_toy_loop_fails_near_double_whichever_way_it_is_measured(runner, tmp_path, metric):
    toy_loop_beside_a_compute_twin(runner, tmp_path, metric)


def toy_loop_beside_a_compute_twin(runner, tmp_path, metric):
    duration = 3.0 if metric == "cpp-wall" else 2.0  # a wall run is a step plus a start
    doc = scenario("mine", [pinned(toy("train", metric)),
                            pinned({"name": "twin", "role": "aggressor", "workload": "host-compute",
                                    "params": {"n": 128, "reps": 8}})], duration=duration, warmup=0.5)
    # The default foreign-load limits: a block beside someone else's load on the machine is re-run. A
    # budget of 4 x --duration per phase (up to 40 rounds): on this VM, whose speed switches between
    # plateaus, a shared core's P95 may need more than the default 20 rounds to decide.
    r, res = run(runner, tmp_path, doc, "--until", "decided", "--max-duration", str(4 * duration))
    a = aggregate(res, "train")
    skip_unless_measured(a)  # every block contaminated: the tool says so, and there is nothing to compare
    est = a["metrics"]["p95_slowdown"]
    if a["verdict"] == "inconclusive":
        # Not decided within the budget (CI once saw [+39.8%, +212%] after 20 rounds; a wall run once had
        # 60 colocated values of the 72 a P95 needs): never a pass, and the interval far above no slowdown
        # at all, which is what a broken measurement would give. The exit code follows the precedence
        # 4, 1, 5: the compute twin shares the core too, and when its own verdict is a fail the run's is 1.
        twin_failed = aggregate(res, "twin")["verdict"] == "fail"
        assert r.returncode == (1 if twin_failed else 5), (r.returncode, a["verdict_reason"])
        assert est["value"] > 0.4 and est["ci_low"] > 0.2, (a["verdict_reason"], est)
    else:
        assert a["verdict"] == "fail" and r.returncode == 1, (a["verdict_reason"], r.stdout + r.stderr)
    # Near +100% (this VM, whose speed switches between plateaus, has shown +74% to +143%); far from the
    # idle neighbour's 0.
    assert 0.4 < a["metrics"]["median_slowdown"] < 2.5, a["metrics"]["median_slowdown"]
    t = res["runs"][0]["tenants"][0]
    assert t["workload"] == "command" and t["params"]["metric"] == (STDOUT_MS if metric == "stdout" else
                                                                     "wall" if metric == "cpp-wall" else "heartbeat")
    assert t["work_per_sample"] == {"value": 1.0, "unit": "step"}


@pytest.mark.serial
@pytest.mark.measurement
@pytest.mark.long
def test_the_toy_loop_beside_an_idle_neighbour_is_not_slowed(runner, tmp_path):
    # The same loop beside host-idle on the same core: nothing competes, never a fail.
    doc = scenario("mine-idle", [pinned(toy("train", "heartbeat")),
                                 pinned({"name": "sleeper", "role": "aggressor", "workload": "host-idle",
                                         "params": {"sample_ms": 2.0}})], duration=2.0, warmup=0.5)
    r, res = run(runner, tmp_path, doc, "--until", "decided")
    assert r.returncode in (0, 5), r.stdout + r.stderr
    a = aggregate(res, "train")
    skip_unless_measured(a)  # every block contaminated: no interval to judge (it had no such skip: a TypeError)
    # Never a confident slowdown: the whole interval is never above the cutoff. The median itself is no
    # bound here: this VM's speed plateaus moved it to +24% in one run and +60% in a CI run (verdict
    # inconclusive, its interval across the cutoff), so a fixed bound on it fails by chance.
    assert a["verdict"] in ("pass", "inconclusive"), a["verdict_reason"]
    assert a["metrics"]["p95_slowdown"]["ci_low"] < 0.4, a["metrics"]["p95_slowdown"]


# ------------------------------------------------------------------ mechanics

def test_heartbeat_steps_join_end_to_start_and_carry_their_work(runner, tmp_path):
    # Within a block no step is lost: each step starts where the previous one ended (the client's
    # timestamps); the per-step work comes back as a counter named by work_unit.
    doc = scenario("hb", [toy("train", "heartbeat", work_unit="op"),
                          {"name": "n", "role": "aggressor", "workload": "host-idle", "params": {"sample_ms": 1.0}}],
                   duration=0.6)
    r, res = run(runner, tmp_path, doc, *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    t = res["runs"][0]["tenants"][0]
    ex = t["phases"]["exclusive"]
    assert ex["worker"]["status"] == "ok"
    assert ex["counters"]["op"]["total"] == 300000.0 * ex["stats"]["n"]
    starts, durs = ex["samples"]["start_ns"], ex["samples"]["duration_s"]
    blocks = ex["samples"]["block"]
    joined = [k for k in range(1, len(starts)) if blocks[k] == blocks[k - 1]]
    assert joined, "no two samples in one block"
    for k in joined:
        assert abs(starts[k - 1] + durs[k - 1] * 1e9 - starts[k]) < 2.0, k


@pytest.mark.serial
@pytest.mark.measurement
def test_the_harness_takes_every_step_of_a_fast_loop(runner, tmp_path):
    # Loops that do nothing but report: the heartbeat's own cost. The C++ client's steps must come at
    # >= 10,000 a second (measured here: about 240,000; the Python client's about 80,000) and, for both,
    # no step may be lost: each starts where the previous one of its block ended.
    py = [sys.executable, "-c", "import sys; sys.path.insert(0, %r)\nfrom interference_bench_heartbeat import Heartbeat"
          "\nhb = Heartbeat()\nwhile True: hb.step()" % str(SOURCE_DIR / "clients" / "python")]
    # Exactly --duration (--until fixed, 2 rounds of 125 ms blocks): only the exclusive phase is asserted,
    # and at these rates every second of a phase is a few hundred thousand samples (137 MB of results.json
    # at 1.5 s until decided, most of this test's minute spent validating it; about 12 s now).
    doc = scenario("hb-rate", [command_tenant("cpp", [TOY_STEP, "--work", "0"]), command_tenant("py", py)],
                   duration=0.25, warmup=0.3)
    r, res = run(runner, tmp_path, doc, *LENIENT, "--until", "fixed", "--rounds", "2")
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    for t in res["runs"][0]["tenants"]:
        ex = t["phases"]["exclusive"]
        s = ex["samples"]
        joined = [k for k in range(1, len(s["start_ns"])) if s["block"][k] == s["block"][k - 1]]
        lost = [k for k in joined if abs(s["start_ns"][k - 1] + s["duration_s"][k - 1] * 1e9 - s["start_ns"][k]) > 2.0]
        assert len(joined) > 1000 and not lost, (t["name"], len(joined), lost[:5])
        if t["name"] == "cpp":
            assert ex["throughput"]["value"] >= 10000, ex["throughput"]


@pytest.mark.parametrize("kind,status,says", [
    ("exit-early", "error", "(exit code 3); last output: | faulty.py exit-early starting | giving up after 30 steps"),
    ("never-ready", "error", "did not connect to INTERFERENCE_BENCH_HEARTBEAT within ready_timeout_s 2 s"),
    ("hang", "error", "reported no step for step_timeout_s 1 s (hung?); last output: | faulty.py hang starting | hanging now"),
    ("flood", "error", "(exit code 4); last output: | xxxx"),
    ("malformed", "error", "sent a malformed heartbeat line \"stop it 12\""),
    ("close-socket", "error", "closed the heartbeat connection during a step but runs on"),
    ("fork-children", "error", "(exit code 5); last output: | faulty.py fork-children starting | leaving my children"),
    ("ignore-term", "error", "after its blocks: command \"%s\" ignored SIGTERM for 2 s and was killed" % sys.executable),
])
def test_a_faulty_program_is_the_tenants_error_and_its_group_is_gone(runner, tmp_path, kind, status, says):
    prog = command_tenant("prog", [sys.executable, FAULTY, kind], ready_timeout_s=2, step_timeout_s=1)
    # The flood's 40 MiB must be drained before its exit at step 40: under ASan that outlasted 0.6 s phases
    # (the run ended without the fault); a run ends at the fault, so a longer phase costs nothing otherwise.
    doc = scenario("fault-" + kind, [prog, {"name": "twin", "role": "aggressor", "workload": "host-compute",
                                            "params": {"n": 64, "reps": 4}}], duration=4.0 if kind == "flood" else 0.6)
    r, res = run(runner, tmp_path, doc, *LENIENT)
    assert r.returncode == 4, r.stdout + r.stderr
    t = res["runs"][0]["tenants"][0]
    worker = t["phases"]["exclusive"]["worker"]
    assert worker["status"] == status, worker
    assert says in worker["message"], worker["message"]
    assert t["verdict"] == "error"
    assert "no INTERFERENCE_BENCH" not in r.stderr
    if kind == "flood":  # 40 MiB written: the log keeps 16 MiB and says so; the tail is bounded
        log = Path(worker["log"])
        assert log.stat().st_size < 17 * 2**20
        assert "output beyond 16 MiB is not kept" in log.read_text(errors="replace")
        assert len(worker["message"]) < 6000


# Issue 37 items 5-7: a step the program printed outside [1 ns, 1e6 s] is its error naming the line (1e300 ms
# overflowed the conversion to nanoseconds, undefined behaviour), and its output reaches no terminal raw.
HUGE = "import time\nwhile True:\n    print('took 1e300 ms', flush=True); time.sleep(0.01)\n"
ZERO = "import time\nwhile True:\n    print('took 0.0000000001 s', flush=True); time.sleep(0.01)\n"
RAW = "import sys\nprint('\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m FAKE PASS', flush=True)\nsys.exit(3)\n"


@pytest.mark.parametrize("program, metric, says", [
    (HUGE, {"stdout": r"took (?P<ms>\S+) ms"}, 'printed a step of 1e+297 s, outside [1 ns, 1e6 s]: "took 1e300 ms"'),
    (ZERO, {"stdout": r"took (?P<s>\S+) s"}, 'printed a step of 1e-10 s, outside [1 ns, 1e6 s]: "took 0.0000000001 s"'),
    (RAW, STDOUT_MS, "last output: | \\x1b]0;pwned\\x07\\x1b[2J\\u009b31m FAKE PASS"),
])
def test_a_programs_bad_step_or_raw_output_is_its_error_escaped_and_the_results_stay_readable(runner, tmp_path, program,
                                                                                               metric, says):
    prog = command_tenant("prog", [sys.executable, "-c", program], metric, ready_timeout_s=5, step_timeout_s=2)
    doc = scenario("bad", [prog, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                  "params": {"sample_ms": 1.0}}], duration=0.4)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode == 4, r.stdout + r.stderr
    message = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["worker"]["message"]
    assert says in message, message
    out = tmp_path / "out"
    for text in (r.stdout, r.stderr, (out / "summary.md").read_text()):
        assert "\x1b" not in text and "\u009b" not in text  # no escape sequence reaches a terminal
    rep = runner.run("report", out / "results.json", "--junit", tmp_path / "j.xml", "--html", tmp_path / "r.html")
    assert rep.returncode not in (2, 3, 70), rep.stderr  # its own tools read what the run wrote
    for f in (tmp_path / "j.xml", tmp_path / "r.html"):
        assert "\x1b" not in f.read_text() and "\u009b" not in f.read_text()


@pytest.mark.parametrize("kind,says", [
    ("zero-step", "reported a step of 0 s, outside [1 ns, 1e6 s]"),
    ("overlap", "before the previous one ended"),
    ("huge-work", "for one step (at most 1e15)"),
])
def test_a_heartbeat_programs_bad_step_is_its_error_and_the_results_stay_readable(runner, tmp_path, kind, says):
    # Issue 37 item 5: a step the heartbeat program reports outside the bounds is its error, naming the line;
    # the results the run writes are still ones its own tools read.
    prog = command_tenant("prog", [sys.executable, FAULTY, kind], ready_timeout_s=5, step_timeout_s=2)
    doc = scenario("bad-" + kind, [prog, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                          "params": {"sample_ms": 1.0}}], duration=0.6)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode == 4, r.stdout + r.stderr
    message = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["worker"]["message"]
    assert says in message and "step " in message, message
    rep = runner.run("report", tmp_path / "out" / "results.json", "--junit", tmp_path / "j.xml")
    assert rep.returncode not in (2, 3, 70), rep.stderr


def test_lines_the_step_pattern_gives_up_on_are_named_in_the_results(runner, tmp_path):
    # Issue 37 item 11: a catastrophic pattern gives up on a line (match limit) instead of taking seconds
    # on it; the lines it gave up on are counted per phase, a warning names the tenant, and the step lines
    # around them still read. "(1+)+ ms" on 24 ones and an x backtracks about 2^24 times: over the limit.
    chatty = ("import time\nwhile True:\n    time.sleep(0.01)\n    print('took 11 ms', flush=True)\n"
              "    print('took ' + '1' * 24 + 'x ms', flush=True)\n")
    prog = command_tenant("chatty", [sys.executable, "-c", chatty], {"stdout": r"took (?P<ms>(1+)+) ms"})
    doc = scenario("gave-up", [prog, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                      "params": {"sample_ms": 1.0}}], duration=0.6, warmup=0.1)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    t = res["runs"][0]["tenants"][0]
    for phase in ("exclusive", "alone", "colocated"):
        assert t["phases"][phase]["worker"].get("lines_given_up", 0) >= 1, (phase, t["phases"][phase]["worker"])
        assert t["phases"][phase]["stats"]["n"] >= 1, phase  # the ordinary step lines still read
    assert "pattern_gave_up" in t["warning_kinds"], t["warning_kinds"]
    assert any("match limit" in w for w in t["warnings"]), t["warnings"]
    assert "match limit" in (tmp_path / "out" / "summary.md").read_text()
    rep = runner.run("report", tmp_path / "out" / "results.json", "--junit", tmp_path / "j.xml")
    assert rep.returncode not in (2, 3, 70), rep.stderr


def test_a_wall_tenants_prepare_is_not_in_its_sample(runner, tmp_path):
    # Issue 37 item 13 (a surviving mutant: the clock started before prepare): a 0.3 s prepare, then `true`.
    prog = command_tenant("quick", ["true"], "wall", prepare=["sleep", "0.3"])
    doc = scenario("prep", [prog, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                   "params": {"sample_ms": 1.0}}], duration=1.0, warmup=0.1)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    stats = res["runs"][0]["tenants"][0]["phases"]["exclusive"]["stats"]
    assert stats["n"] >= 1 and stats["max"] < 0.25, stats  # `true` alone takes milliseconds


def test_a_wall_programs_log_is_capped_per_tenant_not_per_start(runner, tmp_path):
    # Issue 37 item 4: 6 MiB of output per start; the cap (16 MiB) held per start, so a short run wrote ~800 MiB.
    loud = "import sys\nsys.stdout.write('x' * (6 << 20) + '\\n')\n"
    prog = command_tenant("loud", [sys.executable, "-c", loud], "wall")
    doc = scenario("loud", [prog, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                   "params": {"sample_ms": 1.0}}], duration=1.0, warmup=0.1)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    t = res["runs"][0]["tenants"][0]
    runs = sum(t["phases"][p]["stats"]["n"] for p in ("exclusive", "colocated")) + 2  # at least one warm-up each
    assert runs >= 4, runs  # more than 16 MiB written in all
    log = Path(t["phases"]["exclusive"]["worker"]["log"])
    assert log.stat().st_size < 17 * 2**20
    assert "output beyond 16 MiB is not kept" in log.read_text(errors="replace")


FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
@pytest.mark.parametrize("busy_calls", [2, -1])
def test_a_paused_programs_gpu_work_is_waited_for_and_a_block_it_ran_into_is_contaminated(runner, tmp_path, busy_calls):
    # Issue 34 item 5: SIGSTOP pauses a stdout program's CPU threads, not its queued kernels. The fake NVML shows
    # our processes busy for the first two polls of per-process utilisation (then idle), or for ever: the release
    # waits for them (gpu_drain_s), and a block they ran into is contaminated, with why.
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "process_utilization": {
        "children": True, "sm_util": 70, "busy_calls": busy_calls}}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    doc = scenario("drain", [toy("train", "stdout"), {"name": "n", "role": "aggressor", "workload": "host-idle",
                                                      "params": {"sample_ms": 1.0}}], duration=0.3, warmup=0.1)
    r, res = run(runner, tmp_path, doc, "--telemetry-hz", "5", "--rounds", "1", "--until", "fixed", "--max-reruns", "0",
                 *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    blocks = res["runs"][0]["blocks"]
    drains = [b["foreign_load"]["gpu_drain_s"] for b in blocks]
    assert all(d is not None for d in drains), drains
    if busy_calls > 0:
        assert drains[0] >= 0.2 and all(b["status"] == "clean" for b in blocks), blocks
        assert all(b["foreign_load"]["gpu_own_busy_processes"] == 0 for b in blocks)
    else:
        for b in blocks:
            assert b["status"] == "excluded" and b["foreign_load"]["gpu_own_busy_processes"] >= 1, b
            # the wait gives up at 2 s; a loaded machine may poll a little later
            assert re.search(r"still ran GPU work 2\.\d s after the previous block ended", b["reason"]), b["reason"]


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
def test_the_advice_uses_the_programs_gpu_memory_and_what_it_declares(runner, tmp_path):
    # The fake NVML lists the program (its PID from the file it writes) with 120,000 of 143,771 MiB and
    # the GPU 20% busy: above 70% of the card (exclusive), under 30% utilisation (data or CPU bound).
    pids = tmp_path / "program.pids"
    cfg = runner.write_json("nvml.json", {"devices": [{"name": "NVIDIA H200", "memory_mb": 143771,
                                                       "processes": [{"pid_file": str(pids), "used_mb": 120000}],
                                                       "telemetry": [{"util_gpu": 20}]}]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg))
    train = toy("train", "heartbeat", env={"IB_PID_FILE": str(pids)}, run_length_h=12, interruptible=True,
                price_per_hour={"exclusive": 4.0, "shared": 1.0})
    doc = scenario("advice", [train, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                      "params": {"sample_ms": 1.0}}], duration=0.6)
    out = tmp_path / "out"
    f = runner.write_json("s.json", doc)
    r = runner.run("--backend", "host", "--telemetry-hz", "20", "--scenario", f, "--out", out, *LENIENT,
                   "--junit", tmp_path / "j.xml", "--prometheus", tmp_path / "m.prom", "--html", tmp_path / "r.html")
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    res = load_results(out)
    ex = res["runs"][0]["tenants"][0]["phases"]["exclusive"]
    assert ex["gpu_memory"] == {"peak_bytes": 120000 << 20, "total_bytes": 143771 << 20}
    advice = aggregate(res, "train")["advice"]
    rules = {rule["id"]: rule for rule in advice["rules"]}
    assert advice["choice"] == "exclusive"
    assert rules["peak_memory_above_70pct"]["holds"] == "yes"
    assert "peak GPU memory 83% of the card" in rules["peak_memory_above_70pct"]["evidence"]
    assert rules["peak_memory_above_70pct"]["source"].startswith("seed 000")
    assert rules["long_or_uninterruptible"]["holds"] == "yes"  # 12 h > 8 h
    assert rules["gpu_utilisation_below_30pct"]["holds"] == "yes"
    assert advice["inputs"]["gpu_util_pct"] == 20 and advice["inputs"]["run_length_h"] == 12
    t_e, t_s = advice["inputs"]["step_exclusive_s"], advice["inputs"]["step_shared_s"]
    assert advice["cost_per_step"] == {"exclusive": pytest.approx(t_e * 4.0 / 3600), "shared": pytest.approx(t_s / 3600)}
    assert aggregate(res, "n").get("advice") is None  # ours get none
    summary = (out / "summary.md").read_text()
    assert "### Advice for your workload" in summary and "| peak_memory_above_70pct | yes | exclusive |" in summary
    assert "advice: exclusive" in (tmp_path / "j.xml").read_text()
    assert 'interference_bench_advice{' in (tmp_path / "m.prom").read_text()
    assert 'choice="exclusive"} 1' in (tmp_path / "m.prom").read_text()
    assert "- advice (advice, train): **exclusive**" in r.stdout
    html = (tmp_path / "r.html").read_text()
    assert "<h2>Advice for train (advice, timeslice): exclusive</h2>" in html
    assert "<td>peak_memory_above_70pct</td><td>yes</td>" in html


@pytest.mark.skipif(not FAKE_NVML, reason="FAKE_NVML_LIB not set (run through ctest)")
@pytest.mark.parametrize("mode", ["mig", "mps"])
def test_the_program_gets_the_placement_of_its_mode(runner, tmp_path, mode):
    # Each start of the program (one per worker set) sees exactly the placement its worker got: the MIG
    # instance's UUID, or the MPS client's pipe and thread percentage (none in the exclusive phase).
    from test_mig import gpu  # the fake NVML's H200 in MIG mode with four instances
    from test_mps import FAKES  # the fake MPS control daemon
    envs = tmp_path / "env.jsonl"
    train = toy("train", "heartbeat", env={"IB_ENV_FILE": str(envs)})
    if mode == "mig":
        cfg = runner.write_json("nvml.json", {"devices": [gpu()]})
        runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                          FAKE_NVML_STATE=str(tmp_path / "nvml-state.jsonl"))
    else:
        runner.env.update(PATH=f"{FAKES}:{os.environ['PATH']}", FAKE_MPS_LOG=str(tmp_path / "mps.log"))
        train["placement"] = {"mps_active_thread_percentage": 40}
    doc = scenario("placed", [train, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                      "params": {"sample_ms": 1.0}}], mode=mode, duration=0.6)
    r, res = run(runner, tmp_path, doc, *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    t = res["runs"][0]["tenants"][0]
    seen = [json.loads(line) for line in envs.read_text().splitlines()]
    expected = {json.dumps(t["phases"][p]["worker"]["env"], sort_keys=True) for p in ("exclusive", "colocated")}
    assert {json.dumps(e, sort_keys=True) for e in seen} == expected, (seen, expected)
    placed = t["phases"]["colocated"]["worker"]["env"]
    if mode == "mig":
        assert placed["CUDA_VISIBLE_DEVICES"].startswith("MIG-")
    else:
        assert placed["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "40" and "CUDA_MPS_PIPE_DIRECTORY" in placed


@pytest.mark.parametrize("mode", ["timeslice", "mps"])
def test_on_device_1_the_program_is_shown_that_gpu(runner, tmp_path, mode):
    # Issue 34 (item 12): a command tenant's program picks CUDA device 0 unless told; on device N it is shown
    # GPU N by CUDA_VISIBLE_DEVICES (NVML's UUID where NVML is loaded, else the index), in every phase.
    from test_mps import FAKES  # the fake MPS control daemon
    runner.env.update(PATH=f"{FAKES}:{os.environ['PATH']}", FAKE_MPS_LOG=str(tmp_path / "mps.log"))
    envs = tmp_path / "env.jsonl"
    train = toy("train", "heartbeat", env={"IB_ENV_FILE": str(envs)})
    doc = scenario("device1", [train, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                       "params": {"sample_ms": 1.0}}], mode=mode, duration=0.4, device=1)
    r, res = run(runner, tmp_path, doc, *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    seen = [json.loads(line) for line in envs.read_text().splitlines()]
    assert seen and all(e.get("CUDA_VISIBLE_DEVICES") == "1" for e in seen), seen


def test_a_placements_device_is_the_workers_gpu(runner, tmp_path):
    # Issue 35: a worker (a collective's rank, here a program) may have a GPU of its own: placement.device
    # is the device its worker gets, and so the one its program is shown; the scenario's is the default.
    envs = tmp_path / "env.jsonl"
    train = {**toy("train", "heartbeat", env={"IB_ENV_FILE": str(envs)}), "placement": {"device": 2}}
    doc = scenario("device2", [train, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                       "params": {"sample_ms": 1.0}}], duration=0.4)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    seen = [json.loads(line) for line in envs.read_text().splitlines()]
    assert seen and all(e.get("CUDA_VISIBLE_DEVICES") == "2" for e in seen), seen
    assert res["runs"][0]["tenants"][0]["placement"] == {"device": 2}


@pytest.mark.parametrize("metric", ["stdout", "wall", "heartbeat"])
def test_descendants_that_leave_the_programs_group_do_not_outlive_the_run(runner, tmp_path, metric):
    # Issue 37 item 1: a setsid daemon, a setpgid child and a child in the worker's group per program start;
    # the worker is a subreaper, so they stay its descendants and die with the program (the runner fixture
    # finds any survivor by its tag). The escape is named in the results: a warning of its own kind in each
    # phase it happened in, and the verdict's reason says it is the tenant's doing.
    argv = [sys.executable, ESCAPER, metric]
    tenant = command_tenant("esc", argv, {"stdout": STDOUT_MS, "wall": "wall"}.get(metric, "heartbeat"))
    doc = scenario("escape", [tenant, {"name": "n", "role": "aggressor", "workload": "host-idle",
                                       "params": {"sample_ms": 1.0}}], duration=0.6, warmup=0.1)
    r, res = run(runner, tmp_path, doc, "--rounds", "1", "--until", "fixed", *LENIENT)
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    logs = "".join(f.read_text() for f in (tmp_path / "out" / "logs").glob("*esc*.log"))
    assert "had left its process group" in logs
    t = res["runs"][0]["tenants"][0]
    for phase in ("exclusive", "colocated"):
        assert t["phases"][phase]["worker"].get("escaped_processes", 0) >= 2, (phase, t["phases"][phase]["worker"], logs)
    assert "escaped_processes" in t["warning_kinds"], t["warning_kinds"]
    assert any("left its process group" in w and "not its neighbours" in w for w in t["warnings"]), t["warnings"]
    a = aggregate(res, "esc")
    assert "outside its process group" in a["verdict_reason"] and "escaped_processes" in a["warning_kinds"], a
    other = res["runs"][0]["tenants"][1]
    assert "escaped_processes" not in other["warning_kinds"] and "escaped_processes" not in other["phases"]["colocated"]["worker"]
    assert "left its process group" in (tmp_path / "out" / "summary.md").read_text()
    assert "left its process group" in r.stdout  # a warning that changes how the verdict reads


def test_a_sigkilled_harness_leaves_no_program_behind(runner, tmp_path):
    # SIGKILL the harness while the program runs: its worker dies (PR_SET_PDEATHSIG), and the keeper
    # that watched the worker kills the program's group.
    f = runner.write_json("s.json", scenario("killed", [toy("train", "heartbeat"),
                                                        {"name": "n", "workload": "host-idle",
                                                         "params": {"sample_ms": 1.0}}], duration=30))
    p = runner.popen("--backend", "host", "--scenario", f, "--out", tmp_path / "out", *LENIENT)
    wait_for(lambda: any("toy_train.py" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
                         for pid in runner.leftover_processes() if Path(f"/proc/{pid}/cmdline").exists()),
             timeout=60, process=p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    wait_for(lambda: runner.leftover_processes() == [], timeout=20)
    r = runner.run("cleanup", "--state-dir", runner.state_dir)  # the temp folder its journal names
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_one_line_form_runs_my_command_beside_each_aggressor(runner, tmp_path):
    out = tmp_path / "out"
    # --rounds/--until given here: the mechanics defaults would otherwise land after "--", in the command.
    r = runner.run("run", "--backend", "host", "--out", out, "--duration", "0.6", "--warmup", "0.2", *LENIENT,
                   "--rounds", "3", "--until", "fixed",
                   "--aggressors", "host-compute,host-copy", "--victim-metric", "stdout:took (?P<ms>[0-9.]+) ms",
                   "--victim-command", "--", sys.executable, TOY, "stdout", "--work", "20000")
    assert r.returncode in (0, 1, 5), r.stdout + r.stderr
    res = load_results(out)
    names = [run["scenario"] for run in res["runs"]]
    assert names == ["command+host-compute", "command+host-copy"], names
    for run in res["runs"]:
        victim, aggressor = run["tenants"]
        assert victim["name"] == "command" and victim["role"] == "victim" and victim["workload"] == "command"
        assert victim["params"]["argv"] == [sys.executable, TOY, "stdout", "--work", "20000"]
        assert victim["params"]["metric"] == {"stdout": "took (?P<ms>[0-9.]+) ms"}
        assert aggressor["role"] == "aggressor" and aggressor["workload"] == run["scenario"].split("+")[1]
        assert victim["phases"]["exclusive"]["worker"]["status"] == "ok"


@pytest.mark.parametrize("args,says", [
    (["--victim-command"], "--victim-command: expected the command after --"),
    (["--victim-metric", "wall"], "--victim-metric: only with --victim-command"),
    (["--victim-command", "--victim-metric", "stdout:([0-9]+)", "--", "true"],
     "--victim-metric: expected a named group"),
    (["--victim-command", "--aggressors", "nosuch", "--", "true"], "--aggressors: unknown workload \"nosuch\""),
    (["--victim-command", "--suite", "quick", "--", "true"], "--victim-command: not with --scenario or --suite"),
    # issue 37 item 11: a list that names none ran the defaults
    (["--victim-command", "--aggressors", ",,,", "--", "true"], "--aggressors: \",,,\" names no workload"),
])
def test_the_one_line_form_refuses_what_it_cannot_run(runner, tmp_path, args, says):
    r = runner.run("run", "--backend", "host", "--out", tmp_path / "out", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tenant,says", [
    ({"name": "x", "command": {"argv": ["true"]}, "workload": "host-idle"},
     "tenants[0].workload: a tenant has either \"workload\" (with \"params\") or \"command\", not both"),
    ({"name": "x", "command": {"argv": []}}, "tenants[0].command.argv: expected a non-empty list"),
    ({"name": "x", "command": {"argv": ["true"], "metric": {"stdout": "(?P<tokens>\\d+)"}}},
     "tenants[0].command.metric.stdout: the named group is \"tokens\""),
    ({"name": "x", "command": {"argv": ["true"], "prepare": ["make"]}},
     "tenants[0].command.prepare: only with metric \"wall\""),
    # issue 37 item 11: a NUL in an environment name cut the message off there
    ({"name": "x", "command": {"argv": ["true"], "env": {"A\u0000B": "1"}}},
     "tenants[0].command.env: \"A\\u0000B\" is not an environment variable name"),
])
def test_a_bad_command_tenant_is_refused_before_anything_runs(runner, tmp_path, tenant, says):
    f = runner.write_json("s.json", scenario("bad", [tenant]))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stdout + r.stderr
    assert says in r.stderr, r.stderr


def test_an_argument_too_long_for_the_kernel_says_so(runner, tmp_path):
    # issue 37 item 11: a 200 KB argument (E2BIG: one string past 128 KiB) was "cannot create its log"
    prog = command_tenant("long", ["true", "x" * 200_000], "wall")
    f = runner.write_json("s.json", scenario("long", [prog]))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out", "--rounds", "1", "--until", "fixed")
    assert r.returncode == 4, r.stdout + r.stderr
    message = load_results(tmp_path / "out")["runs"][0]["message"]
    assert "too long for the kernel" in message and "cannot create its log" not in message, message


def test_mode_streams_refuses_a_command_tenant(runner, tmp_path):
    f = runner.write_json("s.json", scenario("streams", [toy("train", "heartbeat")], mode="streams"))
    r = runner.run("--backend", "host", "--scenario", f, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "tenants[0].command: mode streams runs tenants as threads of one process" in r.stderr
