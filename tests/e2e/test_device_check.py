"""scripts/device-bundle.sh and scripts/device-check.sh, rehearsed here without a GPU: the device check is
one call on a lent H200 with minutes of device time, so its plumbing is tested where it is cheap.
The bundle is made from this build, the checkout is copied elsewhere (the device gets a copy without
.git at another path). Without a GPU the check must stop in its preflight within a minute, with one
clear line and the step log under $OUT; a fake nvidia-smi (NVIDIA_SMI) lets it get as far as a driver
check or CUDA's own view, and REHEARSE_ALL=1 runs every later step to its (fast) end."""
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BINARY, SOURCE_DIR

BUILD = Path(BINARY).parent
PROGRAMS = [BUILD / "interference-bench", BUILD / "kernels" / "cuda" / "interference-microbench",
            BUILD / "tests" / "gpu" / "ib_cuda_gpu_tests", BUILD / "libinterference-bench-cuda.so"]
pytestmark = pytest.mark.skipif(not all(p.exists() for p in PROGRAMS) or not (SOURCE_DIR / ".git").exists(),
                                 reason="needs the CUDA programs (default preset) and a git checkout")
# What the device tool brings back: at most 8 files, flat, plain names.
OUT_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
FAKE_NVIDIA_SMI = """#!/bin/sh
case "$*" in
  *--query-gpu*) echo "0, NVIDIA H200, {driver}, 143771 MiB";;
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)";;
  *) echo "fake nvidia-smi $*";;
esac
"""
FAILING_NVIDIA_SMI = """#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
exit 9
"""


def cuda_sees_a_gpu():
    r = subprocess.run([str(PROGRAMS[1]), "--info"], capture_output=True, text=True, timeout=60)
    return r.returncode == 0 and json.loads(r.stdout)["devices"]["count"] > 0


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    return make_checkout(tmp_path_factory)


@pytest.fixture(scope="module")
def rehearsal_checkout(tmp_path_factory):
    """The same, for the long rehearsals (their own CTest, labelled long)."""
    return make_checkout(tmp_path_factory)


def make_checkout(tmp_path_factory):
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


def fake_smi(tmp_path, driver="580.159.04", text=None):
    path = tmp_path / "nvidia-smi"
    path.write_text(text if text is not None else FAKE_NVIDIA_SMI.format(driver=driver))
    path.chmod(0o755)
    return str(path)


def device_check(root, tmp_path, expect_rc, **env):
    """Runs the check; returns OUT, WORK, the step log, stdout and the wall time."""
    out, work = tmp_path / "out", tmp_path / "work"
    env.setdefault("NVIDIA_SMI", str(tmp_path / "no-such-nvidia-smi"))  # this machine's state, wherever it runs
    start = time.monotonic()
    r = subprocess.run([str(root / "scripts" / "device-check.sh")], cwd=root, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, OUT=str(out), WORK=str(work), **env))
    wall = time.monotonic() - start
    assert r.returncode == expect_rc, r.stdout + r.stderr
    names = os.listdir(out)
    assert len(names) <= 8 and all(OUT_NAME.match(n) and (out / n).is_file() for n in names), names
    return out, work, (work / "steps.log").read_text(), r.stdout, wall


def assert_stopped(out, stdout, wall, reason):
    """One clear line, in $OUT/STOPPED.txt and last on stdout; the step log and the logs beside it."""
    stopped = (out / "STOPPED.txt").read_text().strip()
    assert reason in stopped, stopped
    assert "\n" not in stopped
    assert stdout.strip().splitlines()[-1].endswith(stopped)
    assert f"STOPPED: {stopped}" in (out / "steps.log").read_text()
    assert {"steps.log", "summary.json", "summary.md", "device-check-logs.tar.gz"} <= set(os.listdir(out))
    assert json.loads((out / "summary.json").read_text())["figures"]["stopped"] == stopped
    assert wall < 60, f"the rehearsal took {wall:.1f} s"
    return stopped


def test_the_programs_link_no_nccl_and_search_no_empty_rpath_entry():
    for p in PROGRAMS:
        ldd = subprocess.run(["ldd", str(p)], capture_output=True, text=True, check=True).stdout
        assert "libnccl" not in ldd, f"{p.name} links NCCL: it must be loaded at run time\n{ldd}"
        # an empty RPATH/RUNPATH entry makes the loader search the current folder too
        dyn = subprocess.run(["readelf", "-d", str(p)], capture_output=True, text=True, check=True).stdout
        for paths in re.findall(r"R(?:UN)?PATH\)\s+Library r(?:un)?path: \[(.*)\]", dyn):
            assert "" not in paths.split(":"), f"{p.name}: {paths}"


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_the_bundle_holds_the_programs_their_libraries_and_checksums(checkout):
    b = checkout / ".device-bundle"
    for p in PROGRAMS:
        assert os.access(b / "bin" / p.name, os.X_OK)
    assert list((b / "lib").glob("libbenchmark.so*")), "Google Benchmark is not on the H200 image"
    assert not list((b / "lib").glob("libnccl*")), "NCCL is the device's own, loaded at run time"
    assert (b / "prefix" / "include" / "CLI" / "CLI.hpp").exists()
    sums = (b / "SOURCES.sha256").read_text()
    assert "harness/run/orchestrator.cpp" in sums and "README.md" not in sums and "docs/" not in sums
    own = (b / "BUNDLE.sha256").read_text()
    assert "bin/interference-bench" in own and "SOURCES.sha256" in own
    subprocess.run(["sha256sum", "--quiet", "-c", "BUNDLE.sha256"], cwd=b, check=True)


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_rehearsal_without_a_driver_stops_at_once(checkout, tmp_path):
    out, work, steps, stdout, wall = device_check(checkout, tmp_path, 3)
    assert_stopped(out, stdout, wall, "no nvidia-smi on this machine: no NVIDIA driver, so no GPU to measure")
    assert "using the carried programs" not in steps  # nothing after the first stop


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_a_failing_nvidia_smi_stops_with_its_message(checkout, tmp_path):
    out, _, _, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path, text=FAILING_NVIDIA_SMI))
    assert_stopped(out, stdout, wall, "no GPU visible: nvidia-smi --query-gpu failed: NVIDIA-SMI has failed")


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_a_driver_older_than_r580_stops_before_anything_else(checkout, tmp_path):
    compat = tmp_path / "no-compat"
    compat.mkdir()
    out, _, steps, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path, "550.54.15"),
                                               CUDA_COMPAT_DIR=str(compat))
    assert_stopped(out, stdout, wall, "driver 550.54.15 is older than R580, which CUDA 13 needs, and there are no "
                                      f"forward-compatibility libraries at {compat}")
    assert "using the carried programs" not in steps


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_an_old_driver_tries_the_forward_compatibility_libraries_first(checkout, tmp_path):
    compat = tmp_path / "compat"
    compat.mkdir()
    # Not a driver: CUDA loads it from the compat folder and finds no driver in it.
    shutil.copy(BUILD / "tests" / "gpu" / "fake_nccl_complete" / "libnccl.so.2", compat / "libcuda.so.1")
    out, work, steps, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path, "550.54.15"),
                                                  CUDA_COMPAT_DIR=str(compat))
    assert f"trying the toolkit's forward-compatibility libraries in {compat}" in steps
    assert_stopped(out, stdout, wall, f"the forward-compatibility libraries in {compat} did not help")
    assert str(compat / "libcuda.so.1") in json.loads((out / "preflight.json").read_text())["loaded_libraries"]


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_a_driver_but_no_gpu_for_cuda_stops_after_the_preflight_record(checkout, tmp_path):
    if cuda_sees_a_gpu():
        pytest.skip("CUDA sees a GPU here: the check would go on and measure")
    out, work, steps, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path))
    assert_stopped(out, stdout, wall, "no GPU visible to CUDA: no CUDA GPU found")
    assert "driver 580.159.04; 1 GPU(s): GPU 0: NVIDIA H200" in steps
    assert "using the carried programs" in steps
    info = json.loads((out / "preflight.json").read_text())  # what was found where, for the record
    assert info["cublasLt_version"] > 0 and "nccl" in info and info["devices"]["count"] == 0
    libraries = (work / "libraries.txt").read_text()
    assert "NCCL (loaded at run time" in libraries and "libcublasLt.so" in libraries


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_a_stale_bundle_stops_the_check(checkout, tmp_path):
    changed = checkout / "harness" / "core" / "clock.cpp"
    original = changed.read_text()
    try:
        changed.write_text(original + "\n// changed after the bundle was made\n")
        out, work, steps, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path))
        assert_stopped(out, stdout, wall, "stale bundle: built from other sources (1 files differ)")
        assert "harness/core/clock.cpp: FAILED" in (work / "bundle-sources.txt").read_text()
        assert "using the carried programs" not in steps and "building here" not in steps.lower()
    finally:
        changed.write_text(original)


def bundle_from_a_clone(tmp_path, **env):
    """A clone of the checkout (its committed files) with a bundle of this build made from it."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(SOURCE_DIR), str(clone)], check=True, timeout=120)
    for f in (SOURCE_DIR / "scripts").iterdir():  # the scripts under test (not part of SOURCES.sha256)
        shutil.copy2(f, clone / "scripts" / f.name)
    (clone / "device-check.log").write_text("a log written into the checkout before bundling\n")
    r = subprocess.run([str(clone / "scripts" / "device-bundle.sh")], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NO_BUILD="1", BUILD_DIR=str(BUILD), **env))
    return clone, r


def test_untracked_files_do_not_make_a_bundle_stale_and_untracked_sources_are_refused(tmp_path):
    clone, r = bundle_from_a_clone(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    sums = (clone / ".device-bundle" / "SOURCES.sha256").read_text()
    assert "device-check.log" not in sums and "harness/run/orchestrator.cpp" in sums
    # the log grows after bundling, as it would between bundling and the device call
    (clone / "device-check.log").write_text("more lines\n" * 100)
    out, work, steps, stdout, wall = device_check(clone, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path))
    assert "using the carried programs" in steps, steps
    # an untracked file the build could compile is refused at bundling, naming it
    (clone / "harness" / "run" / "extra.cpp").write_text("// not added to git\n")
    r = subprocess.run([str(clone / "scripts" / "device-bundle.sh")], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NO_BUILD="1", BUILD_DIR=str(BUILD)))
    assert r.returncode == 1 and "harness/run/extra.cpp" in r.stderr and "git add" in r.stderr, r.stderr


FAILS_TO_START = """#!/bin/sh
echo "interference-bench: error while loading shared libraries: libnotthere.so.1: cannot open shared object file" >&2
exit 127
"""
RECORDING_CMAKE = """#!/bin/sh
echo "$*" >> "{log}"
exit 1
"""


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_carried_programs_that_do_not_start_are_built_here_from_the_bundles_prefix(checkout, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(checkout / ".device-bundle", bundle, symlinks=True)
    (bundle / "bin" / "interference-bench").write_text(FAILS_TO_START)
    files = sorted(str(p.relative_to(bundle)) for d in ("bin", "lib") for p in (bundle / d).rglob("*") if p.is_file())
    sums = subprocess.run(["sha256sum", *files, "SOURCES.sha256", "MANIFEST"], cwd=bundle, check=True,
                          capture_output=True, text=True).stdout
    (bundle / "BUNDLE.sha256").write_text(sums)
    cmake_log = tmp_path / "cmake-calls.txt"
    fake_cmake = tmp_path / "cmake"
    fake_cmake.write_text(RECORDING_CMAKE.format(log=cmake_log))
    fake_cmake.chmod(0o755)
    out, work, steps, stdout, wall = device_check(checkout, tmp_path, 3, NVIDIA_SMI=fake_smi(tmp_path),
                                                  BUNDLE=str(bundle), CMAKE=str(fake_cmake))
    assert "the carried interference-bench does not start here (interference-bench: error while loading" in steps
    assert f"-DCMAKE_PREFIX_PATH={bundle}/prefix" in cmake_log.read_text()
    assert_stopped(out, stdout, wall, "the build here could not be configured")


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_a_host_only_build_configures_from_the_bundle_alone(checkout, tmp_path):
    # The H200 image has none of the Debian packages: with the system's paths switched off, every
    # package CMakeLists.txt finds must come from the bundle's prefix.
    prefix = checkout / ".device-bundle" / "prefix"
    b = tmp_path / "build"
    tools = [f"-DCMAKE_MAKE_PROGRAM={shutil.which('ninja')}", f"-DCMAKE_CXX_COMPILER={shutil.which('c++')}",
             f"-DCMAKE_C_COMPILER={shutil.which('cc')}"]  # found on PATH, which is switched off below
    r = subprocess.run(["cmake", "-S", str(checkout), "-B", str(b), "-G", "Ninja", "-DIB_WITH_CUDA=OFF",
                        "-DIB_BUILD_TESTS=ON", "-DIB_BUILD_BENCHMARKS=ON", *tools,
                        f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF",
                        "-DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
                        "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    cache = dict(line.split("=", 1) for line in (b / "CMakeCache.txt").read_text().splitlines()
                 if "=" in line and not line.startswith(("//", "#")))
    for package in ("nlohmann_json", "CLI11", "fmt", "pugixml", "SQLiteCpp", "GTest", "benchmark"):
        assert cache[f"{package}_DIR:PATH"].startswith(str(prefix)), (package, cache[f"{package}_DIR:PATH"])
    assert cache["IB_CHARTJS:FILEPATH"].startswith(str(prefix)), cache["IB_CHARTJS:FILEPATH"]


FIRST = ["torch-before", "microbench-headline", "torch-after", "cv-gemm-bf16-exclusive", "cv-copy-sm-exclusive",
         "cv-latency-half-load-exclusive", "modes-timeslice", "modes-mps", "selftest"]
SECOND = ["microbench-rest", "gpu-tests", "probe", "collective-timeslice", "collective-mps", "modes-mig", "modes-streams", "sampler-gemm-bf16-hz10-1",
          "sampler-copy-sm-hz10-4", "baseline", "vet", "sustain"]
# BEFORE_STEP: what $OUT's log archive holds as each step starts, one file per step.
LIST_OUT = """#!/bin/sh
tar -tzf "$2/device-check-logs.tar.gz" > "{seen}/$1.members" 2>/dev/null
"""


def rehearse(checkout, tmp_path, part):
    """PART=part to its end without a GPU; the step log and, per step, what $OUT held as it started."""
    seen = tmp_path / "seen"
    seen.mkdir()
    hook = tmp_path / "before-step"
    hook.write_text(LIST_OUT.format(seen=seen))
    hook.chmod(0o755)
    out, work, steps, stdout, wall = device_check(checkout, tmp_path, 0, NVIDIA_SMI=fake_smi(tmp_path),
                                                  REHEARSE_ALL="1", PART=part, BEFORE_STEP=str(hook))
    return out, work, steps, seen


def assert_in_order_and_published(steps, seen, order):
    positions = [steps.index(f"{name} exit") for name in order]
    assert positions == sorted(positions), steps  # the order of value
    for i, name in enumerate(order):
        members = (seen / f"{name}.members").read_text().split()
        missing = [p for p in order[:i] if f"work/{p}.log" not in members]
        assert not missing, f"{name} started before $OUT had the logs of {missing}"


@pytest.mark.long
def test_the_first_call_brings_back_the_headline_figures_first_each_step_published_before_the_next(rehearsal_checkout,
                                                                                                 tmp_path):
    if cuda_sees_a_gpu():
        pytest.skip("CUDA sees a GPU here: the check would measure for minutes")
    out, work, steps, seen = rehearse(rehearsal_checkout, tmp_path, "first")
    assert_in_order_and_published(steps, seen, [n for n in FIRST if n != "selftest"])
    assert "selftest exit" in steps or "SKIPPED selftest: interference-bench has no selftest subcommand" in steps
    assert not any(f"{name} exit" in steps for name in SECOND), steps  # the rest is the second call's
    log = (work / "microbench-headline.log").read_text()
    assert "--ib-cases=headline" in log and f"--benchmark_out={work}/microbench-headline.json" in log
    assert "--label before" in (work / "torch-before.log").read_text()
    # the scenarios are the checkout's (the compiled-in path is this machine's): the run got as far
    # as looking for a GPU
    assert "no CUDA GPU" in (work / "modes-timeslice.log").read_text()
    assert "--until fixed" in (work / "modes-mps.log").read_text()
    # PyTorch runs with the check's own environment: not the programs' library path
    assert str(rehearsal_checkout / ".device-bundle" / "lib") not in (work / "torch-before.log").read_text()
    assert str(rehearsal_checkout / ".device-bundle" / "lib") in steps  # ... which the programs do get
    summary = json.loads((out / "summary.json").read_text())
    assert summary["figures"]["mps_left_over"].startswith("none")
    assert "STOPPED.txt" not in os.listdir(out)
    assert "[device-check" in (out / "steps.log").read_text() and "done" in (out / "steps.log").read_text()


@pytest.mark.long
def test_the_second_call_brings_back_the_rest_in_order(rehearsal_checkout, tmp_path):
    if cuda_sees_a_gpu():
        pytest.skip("CUDA sees a GPU here: the check would measure for minutes")
    out, work, steps, seen = rehearse(rehearsal_checkout, tmp_path, "second")
    assert_in_order_and_published(steps, seen, SECOND)
    assert not any(f"{name} exit" in steps for name in FIRST), steps
    assert "no baseline file: vet runs without the P95 comparison" in steps  # no GPU: no baseline
    assert "SKIPPED torch-tenant: no PyTorch with CUDA here" in steps  # (the H200's image has it)
    assert (work / "nvidia-smi-mig-lgip.txt").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["figures"]["gpu_tests"]["failed"], summary["figures"]["gpu_tests"]  # IB_REQUIRE_GPU=1


MIG_ENABLED_SMI = """#!/bin/sh
case "$*" in
  *mig.mode.current*) echo "Enabled";;
  *"mig -lgip") echo "|   0  MIG 1g.18gb          19     7/7        16.00      No     16     1     0   |";;
  *--query-gpu*) echo "0, NVIDIA H200, 580.159.04, 143771 MiB";;
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)";;
  *) echo "fake nvidia-smi $*";;
esac
"""


@pytest.mark.long
@pytest.mark.parametrize("mig", ["disabled", "enabled"])
def test_part_mig_sweeps_only_a_gpu_already_in_mig_mode(rehearsal_checkout, tmp_path, mig):
    if cuda_sees_a_gpu():
        pytest.skip("CUDA sees a GPU here: the check would measure for minutes")
    smi = fake_smi(tmp_path, text=MIG_ENABLED_SMI if mig == "enabled" else None)
    out, work, steps, _, _ = device_check(rehearsal_checkout, tmp_path, 0, NVIDIA_SMI=smi, REHEARSE_ALL="1", PART="mig")
    assert not any(f"{name} exit" in steps for name in FIRST + SECOND), steps
    # First the GPU matrix (issue 50), on any GPU: four CUDA workloads, every pair time-sliced.
    assert "gpu-matrix exit" in steps, steps
    log = (work / "gpu-matrix.log").read_text()
    assert "matrix --backend cuda --mode timeslice --workloads gemm:reps=16,copy:reps=48," in log and "--budget 200" in log
    if mig == "disabled":
        assert "SKIPPED mig-sweep: GPU 0 is not in MIG mode (nvidia-smi says: 0, NVIDIA H200" in steps
        assert "mig-sweep exit" not in steps
        return
    assert "mig-sweep exit" in steps, steps
    assert (work / "nvidia-smi-mig-lgipp.txt").read_text().startswith("fake nvidia-smi mig -lgipp")
    log = (work / "mig-sweep.log").read_text()
    assert "mig-sweep --backend cuda" in log and "scenarios/cuda/quick-gemm-copy.json" in log and "--budget 360" in log
    assert "collective-mig exit" in steps, steps  # after the sweep: the ranks on instances the run makes
    log = (work / "collective-mig.log").read_text()
    assert "--mode mig --mig-create 1g.18gb,1g.18gb,1g.18gb" in log and "allreduce-two-ranks-gemm.json" in log, log
    assert "STOPPED.txt" not in os.listdir(out)


@pytest.mark.long  # the checkout group (about 28 s on 2 loaded cores): ctest --preset long
def test_an_unknown_part_stops_naming_the_parts(checkout, tmp_path):
    out, _, _, stdout, wall = device_check(checkout, tmp_path, 3, PART="all")
    assert_stopped(out, stdout, wall, "unknown PART=all (first, second or mig)")


@pytest.mark.long
def test_steps_that_no_longer_fit_are_skipped_and_said_so(rehearsal_checkout, tmp_path):
    if cuda_sees_a_gpu():
        pytest.skip("CUDA sees a GPU here")
    _, _, steps, _, wall = device_check(rehearsal_checkout, tmp_path, 0, NVIDIA_SMI=fake_smi(tmp_path), REHEARSE_ALL="1",
                                        DEADLINE_S="50", PART="second")
    assert "SKIPPED modes-streams: needs 60 s" in steps
    assert "SKIPPED sampler" in steps and "SKIPPED sustain" in steps
    assert wall < 60
