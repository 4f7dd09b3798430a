"""First contact: the binary starts, and does everything but a GPU run, without the CUDA libraries.

The CUDA workloads are a module the binary loads when a CUDA backend is asked for
(harness/exec/cuda_module.h). These tests run a copy of the binary alone in a folder (no module beside
it), with a clean environment, as on a laptop or a merge pod without the toolkit.
"""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BINARY, LENIENT, MECHANICS, compute, load_results, scenario

# Set by CMake: the module's file when the build made one, "" for a build without nvcc.
MODULE = os.environ.get("IB_CUDA_MODULE_FILE", "")
CUDA_LIBRARIES = ("libcuda.", "libcudart", "libcublas", "libnccl", "libnvidia", "libnvrtc")


def needed_libraries(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def alone(tmp_path):
    """A copy of the binary in a folder of its own: no CUDA module beside it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    shutil.copy2(BINARY, folder / "interference-bench")
    return folder / "interference-bench"


def clean_env(runner):
    env = {k: v for k, v in runner.env.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "IB_CUDA_MODULE", "CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return env


def run(binary, env, *args, timeout=120):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def test_the_binary_links_no_cuda_library():
    needed = needed_libraries(BINARY)
    assert needed, "readelf found no NEEDED entries"
    assert not [lib for lib in needed if lib.startswith(CUDA_LIBRARIES)], needed
    if MODULE:  # the module is where they are
        assert any(lib.startswith("libcublas") for lib in needed_libraries(MODULE))


def test_without_the_cuda_module_every_command_but_a_gpu_run_works(runner, tmp_path):
    binary, env = alone(tmp_path), clean_env(runner)
    assert run(binary, env, "--version").returncode == 0
    listed = run(binary, env, "list", "workloads")
    assert listed.returncode == 0
    names = {line.split()[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")}
    assert {"gemm", "copy", "allreduce", "host-compute"} <= names, "CUDA workloads are known without the module"

    doc = scenario("alone", [compute("a"), compute("b")], mode="timeslice", duration=0.3, warmup=0.1)
    f = runner.write_json("s.json", doc)
    db = tmp_path / "history.db"
    history = run(binary, env, "history", db)
    with_history = "no history database support" not in history.stderr
    out = tmp_path / "out"
    args = ["--backend", "auto", "--scenario", f, "--out", out, *LENIENT, *MECHANICS]
    r = run(binary, env, *args, *(["--history", db] if with_history else []))
    assert r.returncode in (0, 1, 5), r.stderr
    expected = "libinterference-bench-cuda.so was not found" if MODULE else "no CUDA support"
    assert "NO GPU FOUND" in r.stderr and expected in r.stderr, r.stderr
    assert load_results(out)["meta"]["backend"] == "host"

    assert run(binary, env, "report", out / "results.json", "--junit", tmp_path / "junit.xml").returncode == 0
    assert (tmp_path / "junit.xml").exists()
    compared = run(binary, env, "compare", out / "results.json", out / "results.json")
    assert compared.returncode in (0, 5) and "better" in compared.stdout, compared.stderr
    merged = run(binary, env, "merge", out, "--out", tmp_path / "fleet")
    assert merged.returncode in (0, 1, 5), merged.stderr
    assert (tmp_path / "fleet" / "fleet.json").exists()
    if with_history:
        h = run(binary, env, "history", db)
        assert h.returncode == 0 and "alone" in h.stdout, h.stderr

    refused = run(binary, env, "--backend", "cuda", "--scenario", f, "--out", tmp_path / "cuda")
    assert refused.returncode == 3
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()], "one line"
    assert expected in refused.stderr


@pytest.mark.skipif(not MODULE, reason="this build has no CUDA module (configured without nvcc)")
def test_a_module_that_cannot_be_loaded_is_named_and_the_run_falls_back(runner, tmp_path):
    broken = tmp_path / "libinterference-bench-cuda.so"
    broken.write_text("not a shared object\n")
    env = dict(clean_env(runner), IB_CUDA_MODULE=str(broken))
    f = runner.write_json("s.json", scenario("auto", [compute("a")], mode="exclusive", duration=0.3, warmup=0.1))
    r = run(alone(tmp_path), env, "--backend", "auto", "--scenario", f, "--out", tmp_path / "out", *LENIENT,
            *MECHANICS)
    assert r.returncode == 0, r.stderr
    assert "the CUDA module could not be loaded" in r.stderr and str(broken) in r.stderr, r.stderr


@pytest.mark.measurement
@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="needs GNU time (/usr/bin/time, Debian's time)")
def test_version_starts_without_mapping_the_cuda_libraries(runner, tmp_path):
    """Peak resident memory of `--version` (the binary that linked cuBLAS mapped it at every start).
    GNU time reports its child's ru_maxrss: a child spawned from Python itself would inherit the
    interpreter's high-water mark across exec."""
    binary, env = alone(tmp_path), clean_env(runner)
    peaks = []
    for _ in range(3):
        r = subprocess.run(["/usr/bin/time", "-f", "%M", str(binary), "--version"], capture_output=True, text=True,
                           env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        peaks.append(int(r.stderr.strip().splitlines()[-1]) * 1024)
    assert min(peaks) <= 20 * 2**20, f"--version peaked at {min(peaks) / 2**20:.1f} MiB"


def stop_signals_blocked(pid):
    """True once the process blocks SIGTERM (main.cpp's first constructor does, before anything else)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


def test_a_sigterm_in_the_first_milliseconds_is_a_clean_stop(runner, tmp_path):
    f = runner.write_json("s.json", scenario("early", [compute("a")], mode="exclusive", duration=5, warmup=0.1))
    started = time.monotonic()
    proc = subprocess.Popen([BINARY, "--backend", "host", "--scenario", str(f), "--out", str(tmp_path / "out"),
                             *LENIENT, *MECHANICS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=runner.env, stdin=subprocess.DEVNULL)
    time.sleep(0.005)  # the moment the issue names; then, on a loaded machine, until the mask is set
    while not stop_signals_blocked(proc.pid) and proc.poll() is None:
        assert time.monotonic() - started < 30, "the stop signals were never blocked"
        time.sleep(0.0005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
