#!/usr/bin/env python3
"""Start-up cost of interference-bench binaries, side by side in one run (docs/performance.md).

    scripts/startup_cost.py [--runs N] [--sigterm-runs N] NAME=BINARY [NAME=BINARY ...]

For each binary, interleaved round by round so that the machine's load falls on all alike:
  - `--version`: wall time (spawn to exit, from Python) and peak resident memory (GNU time's %M: a child
    spawned from Python itself would report the interpreter's high-water mark, kept across exec);
  - a host run: the time from its spawn until it blocks the stop signals (SigBlk in /proc, polled);
  - a SIGTERM 5 ms after the spawn of a host run that would last seconds: its exit status
    (130 = the run's clean stop; 143 = the signal's default action, i.e. it arrived before main.cpp's
    first constructor blocked it).
Prints a Markdown table: medians, min, max, and the exit statuses counted.
"""
import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def version_once(binary):
    t0 = time.perf_counter()
    r = subprocess.run([binary, "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{binary} --version exited {r.returncode}")
    rss = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "--version"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True).stderr.strip().splitlines()[-1]
    return elapsed, int(rss) * 1024


def run_args(binary, scenario, out):
    return [binary, "--backend", "host", "--scenario", scenario, "--out", out, "--force", "--max-foreign-cpus", "64",
            "--max-steal-cpus", "64", "--rounds", "3", "--until", "fixed"]


def blocked(pid):
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


def time_to_block_once(binary, scenario, out):
    """Seconds from the spawn's return until the process blocks SIGTERM; then stops it."""
    proc = subprocess.Popen(run_args(binary, scenario, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    t0 = time.perf_counter()
    while not blocked(proc.pid):
        if proc.poll() is not None:
            sys.exit(f"{binary} exited before it blocked the stop signals")
    elapsed = time.perf_counter() - t0
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    return elapsed


def sigterm_once(binary, scenario, out):
    proc = subprocess.Popen(run_args(binary, scenario, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    return 128 + signal.SIGTERM if proc.returncode == -signal.SIGTERM else proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--sigterm-runs", type=int, default=20)
    ap.add_argument("binaries", nargs="+", metavar="NAME=BINARY")
    args = ap.parse_args()
    binaries = dict(b.split("=", 1) for b in args.binaries)
    times = {n: [] for n in binaries}
    rss = {n: [] for n in binaries}
    exits = {n: Counter() for n in binaries}
    to_block = {n: [] for n in binaries}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp) / "s.json"
        scenario.write_text(json.dumps({"name": "startup", "mode": "exclusive", "warmup_s": 0.1, "duration_s": 5,
                                        "tenants": [{"name": "a", "workload": "host-compute"}]}))
        for _ in range(args.runs):
            for name, binary in binaries.items():
                t, m = version_once(binary)
                times[name].append(t)
                rss[name].append(m)
        for i in range(args.sigterm_runs):
            for name, binary in binaries.items():
                to_block[name].append(time_to_block_once(binary, str(scenario), str(Path(tmp) / f"out-{name}")))
                exits[name][sigterm_once(binary, str(scenario), str(Path(tmp) / f"out-{name}"))] += 1
    print(f"| binary | --version median ms (min-max) | peak RSS MiB median (min-max) | stop signals blocked after, "
          f"median ms (min-max) | SIGTERM at 5 ms: exit statuses ({args.sigterm_runs} runs) |")
    print("| --- | --- | --- | --- | --- |")
    for name in binaries:
        t = [x * 1e3 for x in times[name]]
        m = [x / 2**20 for x in rss[name]]
        b = [x * 1e3 for x in to_block[name]]
        ex = ", ".join(f"{code}: {count}" for code, count in sorted(exits[name].items()))
        print(f"| {name} | {statistics.median(t):.1f} ({min(t):.1f}-{max(t):.1f}) | "
              f"{statistics.median(m):.1f} ({min(m):.1f}-{max(m):.1f}) | "
              f"{statistics.median(b):.1f} ({min(b):.1f}-{max(b):.1f}) | {ex} |")


if __name__ == "__main__":
    main()
