"""Every file a command reads follows one rule (harness/core/files.h, read_input_file): a regular file of
bounded size, else exit 2 in one line naming it. /dev/zero never ends and a FIFO without a writer never
answers: each is refused for every file option of every command, at once and in little memory (each
command runs under a 2 GB address-space limit and a 30 s timeout; before the rule, `merge --expect-nodes
/dev/zero` grew to 4 GB in 8 s and a FIFO blocked it for ever)."""
import json
import os
import shutil

import pytest
import subprocess

from conftest import BINARY, LENIENT, SOURCE_DIR, compute, scenario

FAKE_NVML = os.environ.get("FAKE_NVML_LIB", "")
RESULTS = SOURCE_DIR / "tests" / "fuzz" / "corpus" / "results_reader" / "run1.json"
H200_7G = {"name": "7g.141gb", "id": 0, "slices": 7, "sm": 132, "memory_mb": 143360, "capacity": 1}
H200_3G = {"name": "3g.71gb", "id": 9, "slices": 3, "sm": 60, "memory_mb": 69632, "capacity": 2}


class Inputs:
    """The good files a case needs beside the bad one."""

    def __init__(self, runner, tmp_path):
        self.scenario = str(runner.write_json("s.json", scenario("pair", [compute("a", n=16, reps=1),
                                                                          compute("b", n=16, reps=1)])))
        self.results = str(RESULTS)
        self.empty = tmp_path / "empty"
        self.empty.mkdir()
        self.out = str(tmp_path / "out")


# option -> the command's arguments with the bad file `f`
CASES = {
    "run --scenario": lambda f, i: ["run", "--backend", "host", "--scenario", f, "--out", i.out],
    "run --baseline": lambda f, i: ["run", "--backend", "host", "--mode", "mig", "--scenario", i.scenario, "--baseline", f,
                                    "--out", i.out],
    "report RESULTS": lambda f, i: ["report", f, "--junit", i.out + ".xml"],
    "compare BASE": lambda f, i: ["compare", f, i.results],
    "compare NEW": lambda f, i: ["compare", i.results, f],
    "merge RESULTS": lambda f, i: ["merge", f, "--out", i.out],
    "merge --expect-nodes": lambda f, i: ["merge", str(i.empty), "--expect-nodes", f, "--out", i.out],
    "vet --baseline": lambda f, i: ["vet", "--backend", "host", "--baseline", f, "--out", i.out],
    "mig-sweep --scenario": lambda f, i: ["mig-sweep", "--backend", "host", "--scenario", f, "--out", i.out],
    "mig-sweep --prices": lambda f, i: ["mig-sweep", "--backend", "host", "--scenario", i.scenario, "--prices", f,
                                        "--out", i.out],
    "mig-sweep --layouts": lambda f, i: ["mig-sweep", "--backend", "host", "--scenario", i.scenario, "--layouts", f,
                                         "--out", i.out],
    "mig-sweep --baseline": lambda f, i: ["mig-sweep", "--backend", "host", "--scenario", i.scenario, "--baseline", f,
                                          "--out", i.out],
}


def fake_mig_gpu(runner, tmp_path):
    """mig-sweep reads --layouts after it asks NVML for the GPU's profiles, vet and a mig run read their
    baseline after NVML: the fake, MIG on."""
    if not FAKE_NVML:
        pytest.skip("FAKE_NVML_LIB not set (run through ctest)")
    dev = {"name": "NVIDIA H200", "uuid": "GPU-11111111-2222-3333-4444-555555555555", "compute_mode": 0, "sm": 132,
           "memory_mb": 143771, "mig": {"supported": True, "current": 1, "pending": 1, "max_devices": 7, "slices": 7},
           "instances": [], "profiles": [H200_3G, H200_7G]}
    cfg = runner.write_json("nvml.json", {"devices": [dev]})
    runner.env.update(INTERFERENCE_BENCH_NVML=FAKE_NVML, FAKE_NVML_CONFIG=str(cfg),
                      FAKE_NVML_STATE=str(tmp_path / "nvml-state.jsonl"))


def bad_file(tmp_path, kind):
    if kind == "zero":
        return "/dev/zero"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody ever opens it for writing
    return str(fifo)


@pytest.mark.parametrize("kind", ["zero", "fifo"])
@pytest.mark.parametrize("option", list(CASES))
def test_a_file_that_never_ends_is_refused_in_one_line(runner, tmp_path, option, kind):
    if option.startswith(("mig-sweep", "vet", "run --baseline")):  # these ask NVML first
        if os.geteuid() != 0 and option == "mig-sweep --layouts":
            pytest.skip("mig-sweep reads --layouts only as root (it creates MIG instances)")
        fake_mig_gpu(runner, tmp_path)
    f = bad_file(tmp_path, kind)
    argv = [BINARY, *CASES[option](f, Inputs(runner, tmp_path))]
    if option.startswith(("run", "vet", "mig-sweep")):
        argv += LENIENT
    # The address space bounds the memory a read may take: a command that reads /dev/zero on dies here.
    # An address-space limit bounds the memory a read may take; AddressSanitizer reserves terabytes of shadow
    # address space at start, so under it (the asan preset sets ASAN_OPTIONS) the time limit alone bounds it.
    under_asan = bool(os.environ.get("ASAN_OPTIONS"))
    limit = ["prlimit", "--as=2000000000", "--"] if shutil.which("prlimit") and not under_asan else []
    r = subprocess.run(limit + argv, capture_output=True, text=True, timeout=30, env=runner.env,
                       stdin=subprocess.DEVNULL)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr[-2000:])
    assert f in lines[0], lines[0]
    flag = option.split()[-1]
    if flag.startswith("--"):  # the option is named (a scenario file as "scenario file")
        assert flag[2:] in lines[0], lines[0]
    assert not os.path.exists(os.path.join(tmp_path, "out", "fleet.json"))
