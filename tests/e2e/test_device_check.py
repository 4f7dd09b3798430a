"""scripts/device-bundle.sh and scripts/device-check.sh, run here without a GPU: the device check is
one call on a lent H200 with minutes of device time, so its plumbing is tested where it is cheap.
The bundle is made from this build, the checkout is copied elsewhere (the device gets a copy without
.git at another path), and every step must end, fail fast without a GPU, and be reported."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY, SOURCE_DIR

BUILD = Path(BINARY).parent
PROGRAMS = [BUILD / "interference-bench", BUILD / "kernels" / "cuda" / "interference-microbench",
            BUILD / "tests" / "gpu" / "ib_cuda_gpu_tests"]
pytestmark = pytest.mark.skipif(not all(p.exists() for p in PROGRAMS) or not (SOURCE_DIR / ".git").exists(),
                                 reason="needs the CUDA programs (default preset) and a git checkout")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the checkout without .git, with a bundle of this build in it."""
    root = tmp_path_factory.mktemp("device") / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=SOURCE_DIR, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = SOURCE_DIR / f
        if src.is_file():
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / f)
    env = dict(os.environ, NO_BUILD="1", BUILD_DIR=str(BUILD), BUNDLE_DIR=str(root / ".device-bundle"))
    r = subprocess.run([str(SOURCE_DIR / "scripts" / "device-bundle.sh")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return root


def device_check(root, tmp_path, **env):
    out, work = tmp_path / "out", tmp_path / "work"
    r = subprocess.run([str(root / "scripts" / "device-check.sh")], cwd=root, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, OUT=str(out), WORK=str(work), **env))
    assert r.returncode == 0, r.stdout + r.stderr
    return out, work, (work / "steps.log").read_text()


def test_the_bundle_holds_the_programs_their_libraries_and_the_source_checksums(checkout):
    b = checkout / ".device-bundle"
    for p in PROGRAMS:
        assert os.access(b / "bin" / p.name, os.X_OK)
    assert list((b / "lib").glob("libbenchmark.so*")), "Google Benchmark is not on the H200 image"
    assert not list((b / "lib").glob("libnccl*")), "NCCL is the device's own"
    assert (b / "prefix" / "include" / "CLI" / "CLI.hpp").exists()
    sums = (b / "SOURCES.sha256").read_text()
    assert "harness/orchestrator.cpp" in sums and "README.md" not in sums and "docs/" not in sums


def test_every_step_of_the_default_part_runs_and_three_files_come_back(checkout, tmp_path):
    out, work, steps = device_check(checkout, tmp_path)
    assert sorted(os.listdir(out)) == ["device-check-logs.tar.gz", "summary.json", "summary.md"]
    assert "using the carried programs" in steps
    for step in ("gpu-tests", "probe", "modes", "sampler-gemm-bf16-hz10-1", "sampler-copy-sm-hz10-4", "baseline",
                 "vet", "sustain"):
        assert f"{step} exit" in steps or f"SKIPPED {step}" in steps, step
    assert "no baseline file: vet runs without the P95 comparison" in steps  # no GPU: no baseline
    # the scenarios are the checkout's (the compiled-in path is this machine's): the run got as far
    # as looking for a GPU
    assert "no CUDA GPU" in (work / "modes.log").read_text()
    # IB_REQUIRE_GPU=1: without a GPU the GPU tests fail rather than skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["figures"]["gpu_tests"]["failed"], summary["figures"]["gpu_tests"]
    assert summary["figures"]["mps_left_over"].startswith("none")


def test_programs_built_from_other_sources_are_not_used(checkout, tmp_path):
    changed = checkout / "harness" / "clock.cpp"
    original = changed.read_text()
    try:
        changed.write_text(original + "\n// changed after the bundle was made\n")
        _, work, steps = device_check(checkout, tmp_path, DEADLINE_S="20")
        assert "built from other sources (1 files differ" in steps
        assert "building here instead" in steps and "using the carried programs" not in steps
        assert "harness/clock.cpp: FAILED" in (work / "bundle-sources.txt").read_text()
    finally:
        changed.write_text(original)
