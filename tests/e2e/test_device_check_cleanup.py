"""scripts/device-check.sh after a step killed by its timeout (issue 34, item 9): every step that ran
interference-bench is followed, whatever its exit, by `interference-bench cleanup` and the stop of every MPS
process started during the check, so the next step starts clean. Rehearsed with fake programs (an
interference-bench whose first exclusive step leaves an MPS server and journalled GPU state, then hangs past
its timeout), so it runs on a host-only build; test_device_check.py rehearses the real programs."""
import os
import signal
import subprocess

import pytest

from conftest import SOURCE_DIR

FAKE_SMI = """#!/bin/sh
case "$*" in
  *--query-gpu*) echo "0, NVIDIA H200, 580.159.04, 143771 MiB";;
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)";;
  *) echo "fake nvidia-smi $*";;
esac
"""
# The first exclusive step leaves what a SIGKILLed run leaves (an MPS server in its own session, and the GPU
# state its journal records, here a file), then hangs; `cleanup` undoes the journalled state.
FAKE_IB = """#!/bin/sh
echo "$*" >> "{log}"
case "$*" in
  --version) echo "interference-bench (fake)";;
  cleanup*) rm -f "{state}";;
  *cv-gemm-bf16-exclusive*)
    setsid "{server}" > /dev/null 2>&1 < /dev/null &
    echo $! > "{server}.pid"
    echo "instances this run made" > "{state}"
    exec sleep 120;;
esac
exit 0
"""
FAKE_SERVER = """#!/bin/sh
while :; do sleep 1; done
"""
# BEFORE_STEP: what is left as each step starts.
BEFORE = """#!/bin/sh
{{ pgrep -f 'nvidia-cuda-mps-(control|server)' | tr '\\n' ' '; echo; [ -e "{state}" ] && echo state-left; }} \\
  > "{seen}/$1.txt"
"""


def script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


@pytest.mark.serial  # the check stops every MPS process started while it runs: none of another test's
def test_a_step_killed_by_its_timeout_is_cleaned_up_and_the_next_starts_clean(tmp_path):
    build, bin_dir, seen = tmp_path / "build", tmp_path / "bin", tmp_path / "seen"
    for d in (build, bin_dir, seen):
        d.mkdir()
    log, state = tmp_path / "ib.log", tmp_path / "gpu-state"
    server = script(bin_dir / "nvidia-cuda-mps-server", FAKE_SERVER)
    script(build / "interference-bench", FAKE_IB.format(log=log, state=state, server=server))
    env = dict(os.environ, OUT=str(tmp_path / "out"), WORK=str(tmp_path / "work"), PART="first",
               BUNDLE=str(tmp_path / "no-bundle"), BUILD_DIR=str(build),
               NVIDIA_SMI=script(tmp_path / "nvidia-smi", FAKE_SMI),
               BEFORE_STEP=script(tmp_path / "before", BEFORE.format(state=state, seen=seen)),
               MAX_STEP_S="2", KILL_AFTER="2")
    try:
        r = subprocess.run([str(SOURCE_DIR / "scripts" / "device-check.sh")], cwd=SOURCE_DIR, capture_output=True,
                           text=True, timeout=240, env=env)
    finally:
        try:  # this test's fake server, by its pid, whatever happened
            os.kill(int(open(f"{server}.pid").read()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
    assert r.returncode == 0, r.stdout + r.stderr
    steps = (tmp_path / "work" / "steps.log").read_text()
    assert "cv-gemm-bf16-exclusive TIMED OUT" in steps, steps
    # Cleaned up after the killed step, before the next one started: no MPS server, no state left.
    assert "cv-gemm-bf16-exclusive cleanup exit 0" in steps, steps
    assert steps.index("cv-gemm-bf16-exclusive cleanup exit") < steps.index("cv-copy-sm-exclusive (timeout")
    assert "MPS processes started during the check and still running" in steps
    assert (seen / "cv-copy-sm-exclusive.txt").read_text().split() == [], (seen / "cv-copy-sm-exclusive.txt").read_text()
    # Every later interference-bench step is followed by its cleanup too, whatever its exit.
    calls = log.read_text().splitlines()
    assert calls.count("cleanup") == 5, calls  # three exclusive steps, time-slicing and MPS
    for name in ("cv-copy-sm-exclusive", "modes-timeslice", "modes-mps"):
        assert f"{name} cleanup exit 0" in steps, steps
