"""Shared helpers for the end-to-end tests: the real binary, real worker processes, host workloads."""
import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import jsonschema
import pytest

BINARY = os.environ.get("IB_BINARY", "")
SOURCE_DIR = Path(os.environ.get("IB_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCHEMA = json.loads((SOURCE_DIR / "reports" / "results.schema.json").read_text())


def pytest_configure(config):
    if not BINARY or not Path(BINARY).exists():
        raise pytest.UsageError("IB_BINARY must name the built interference-bench binary")
    # Read by cmake/e2e_tests.py when it registers one CTest per test function.
    config.addinivalue_line("markers", "serial: measures a slowdown or a timing; CTest runs it alone (RUN_SERIAL)")
    config.addinivalue_line("markers", "measurement: its only subject is what is measured; the sanitizer preset "
                                       "leaves it out")
    config.addinivalue_line("markers", "long: a long known answer or rehearsal; the README's test command leaves it "
                                       "out, `ctest --preset long` and .ci/run run it")


# Tests of the harness's mechanics (not of foreign-load control) must not depend on what else this
# machine runs: with these limits no block is contaminated, re-run or excluded.
LENIENT = ("--max-foreign-cpus", "64", "--max-steal-cpus", "64")


# Subcommands other than `run`: their options are their own.
SUBCOMMANDS = {"list", "probe", "sustain", "baseline", "vet", "selftest", "compare", "history", "report", "cleanup", "merge", "mig-sweep", "matrix",
               "worker"}

# The tests of the harness's mechanics (phases, blocks, outputs, faults, signals) run the fixed length
# of 3 rounds they were written for: a run that goes on until decided would spend their time on
# resampling what they do not judge. The tests of deciding (test_deciding.py) name their own options,
# and any test that passes --rounds or --until keeps them.
MECHANICS = ("--rounds", "3", "--until", "fixed")


def with_mechanics(args):
    args = [str(a) for a in args]
    if args and (args[0] in SUBCOMMANDS or args[0] in ("--help", "--version")):
        return args
    if any(a in ("--rounds", "--until") for a in args):
        return args
    return [*args, *MECHANICS]


class Runner:
    """Runs interference-bench with a unique tag in its environment, so leftover workers can be found."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.tag = uuid.uuid4().hex
        # Journals of what a run changes outside itself (MIG instances, MPS daemons, temp folders) go
        # here; a run that ends in any way short of SIGKILL leaves none.
        self.state_dir = tmp_path / "ib-state"
        self.env = dict(os.environ, IB_TEST_TAG=self.tag, INTERFERENCE_BENCH_STATE_DIR=str(self.state_dir))

    def write_json(self, name, doc):
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def run(self, *args, timeout=120):
        return subprocess.run([BINARY, *with_mechanics(args)], capture_output=True, text=True, timeout=timeout,
                              env=self.env, stdin=subprocess.DEVNULL)

    def popen(self, *args):
        return subprocess.Popen([BINARY, *with_mechanics(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env, stdin=subprocess.DEVNULL)

    def suite(self, name, scenario_docs):
        """Makes a scenarios folder with a suite of these scenarios; returns its path for the env."""
        root = self.tmp / "scenarios"
        files = []
        for i, doc in enumerate(scenario_docs):
            rel = f"s{i}.json"
            self.write_json(f"scenarios/{rel}", doc)
            files.append(rel)
        self.write_json(f"scenarios/suites/{name}.json", {"name": name, "scenarios": {"host": files}})
        self.env["INTERFERENCE_BENCH_SCENARIOS"] = str(root)
        return root

    def journals(self):
        return sorted(self.state_dir.glob("*.journal")) if self.state_dir.exists() else []

    def leftover_processes(self):
        """Processes (other than zombies) that carry this runner's tag in their environment."""
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                environ = (proc / "environ").read_bytes()
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if f"IB_TEST_TAG={self.tag}".encode() in environ and state != "Z":
                found.append(int(proc.name))
        return found


@pytest.fixture
def runner(tmp_path):
    r = Runner(tmp_path)
    yield r
    assert r.leftover_processes() == [], "worker processes were left behind"
    assert r.journals() == [], "a run left its journal (something it made was not undone)"


def load_results(out_dir):
    doc = json.loads((Path(out_dir) / "results.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    return doc


def skip_unless_measured(aggregate):
    """A known answer on a machine that cannot measure right now: when foreign load left a phase of `aggregate`
    (an entry of results.json's aggregates) without a clean block, the tool's verdict is inconclusive with that
    reason and nothing is there to compare, so the test skips with the tool's own words (never a crash on the
    missing figures, never a failure)."""
    reason = aggregate.get("verdict_reason") or ""
    if aggregate.get("verdict") == "inconclusive" and "was clean (all contaminated" in reason:
        pytest.skip(f"{aggregate.get('tenant')}: the tool could not measure here: {reason}")


def scenario(name, tenants, mode="timeslice", duration=0.6, warmup=0.1, **extra):
    return {"name": name, "mode": mode, "warmup_s": warmup, "duration_s": duration, "tenants": tenants, **extra}


def compute(name, n=64, reps=4, **placement):
    t = {"name": name, "workload": "host-compute", "params": {"n": n, "reps": reps}}
    if placement:
        t["placement"] = placement
    return t


def fault(name, action, at_sample, sample_ms=2.0, **params):
    return {"name": name, "workload": "host-fault",
            "params": {"action": action, "at_sample": at_sample, "sample_ms": sample_ms, **params}}


def wait_for(predicate, timeout=60.0, process=None):
    """Polls a condition (not a sleep standing in for synchronisation); fails the test on timeout, or
    when `process` exits before the condition holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached")
        if process is not None and process.poll() is not None:
            pytest.fail(f"the process exited ({process.returncode}) before the condition held")
        time.sleep(0.05)


def percentile(values, q):
    """numpy's default (linear) percentile, written out so the test does not depend on numpy."""
    xs = sorted(values)
    h = (len(xs) - 1) * q / 100.0
    lo = int(h)
    if lo + 1 >= len(xs):
        return xs[-1]
    return xs[lo] + (h - lo) * (xs[lo + 1] - xs[lo])
