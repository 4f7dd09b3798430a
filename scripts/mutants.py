#!/usr/bin/env python3
"""Re-applies a list of mutants (small, realistic bugs) one at a time to a copy of the tree and reports
which the unit tests kill: the mutation sweep of issue 21, repeatable by anyone.

Each mutant (scripts/mutants.json) names a file, an exact text that must occur in it once, its
replacement, the bug a user would see and the GoogleTest filter of the tests that must kill it. The
tree (git's tracked and untracked-not-ignored files, as they are now) is copied to WORK/src and built
there with the host-only preset (the unit tests need no GPU); the filtered tests must pass on the
unmodified copy first. Then each mutant is applied alone, the unit tests rebuilt, the filtered tests
run, and the file restored. Killed: the tests failed. Survived: they passed. A mutant whose text is
not found (the code changed) or that does not compile is reported as such, never as killed.

Usage: scripts/mutants.py [--list FILE] [--work DIR] [--only ID,ID,...] [--all-tests]
       --all-tests: a survivor is run against the whole unit test binary too (slower, catches what the
       filter missed). Exit 0 when every mutant was killed, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            if not (dest / f).exists() or (dest / f).read_bytes() != src.read_bytes():
                shutil.copy2(src, dest / f)  # unchanged files keep their times: ninja rebuilds less


def build(src, log):
    build_dir = src / "build-host"
    if not (build_dir / "build.ninja").exists():
        r = subprocess.run(["cmake", "--preset", "host-only"], cwd=src, capture_output=True, text=True)
        log.write(r.stdout + r.stderr)
        if r.returncode != 0:
            return False
    r = subprocess.run(["cmake", "--build", "--preset", "host-only", "--target", "ib_unit_tests"], cwd=src,
                       capture_output=True, text=True)
    log.write(r.stdout[-20000:] + r.stderr[-20000:])
    return r.returncode == 0


def unit_tests(src, gtest_filter, log):
    binary = src / "build-host" / "tests" / "ib_unit_tests"
    args = [str(binary)] + ([f"--gtest_filter={gtest_filter}"] if gtest_filter else [])
    r = subprocess.run(args, cwd=src, capture_output=True, text=True, timeout=900)
    log.write(r.stdout[-20000:] + r.stderr[-5000:])
    return r.returncode == 0


def apply(src, m):
    path = src / m["file"]
    text = path.read_text()
    if text.count(m["old"]) != 1:
        return None, f"its text occurs {text.count(m['old'])} times in {m['file']} (the code changed)"
    path.write_text(text.replace(m["old"], m["new"]))
    return text, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", default=str(ROOT / "scripts" / "mutants.json"))
    ap.add_argument("--work", default="/tmp/ib-mutants")
    ap.add_argument("--only", default="")
    ap.add_argument("--all-tests", action="store_true")
    a = ap.parse_args()
    try:
        mutants = json.loads(Path(a.list).read_text())["mutants"]
    except (OSError, ValueError, KeyError) as e:
        print(f"mutants: {a.list}: {e}", file=sys.stderr)
        return 2
    if a.only:
        wanted = {int(x) for x in a.only.split(",")}
        mutants = [m for m in mutants if m["id"] in wanted]
    src = Path(a.work) / "src"
    src.mkdir(parents=True, exist_ok=True)
    copy_tree(src)
    log = open(Path(a.work) / "mutants.log", "w")
    if not build(src, log):
        print(f"mutants: the unmodified copy does not build (see {a.work}/mutants.log)", file=sys.stderr)
        return 2
    every_filter = ":".join(m["tests"] for m in mutants)
    if not unit_tests(src, every_filter, log):
        print(f"mutants: the killing tests fail on the unmodified copy (see {a.work}/mutants.log)", file=sys.stderr)
        return 2
    rows, survivors = [], 0
    for m in mutants:
        t0 = time.monotonic()
        original, why = apply(src, m)
        if original is None:
            outcome = "NOT APPLIED: " + why
        else:
            log.write(f"\n==== mutant {m['id']}: {m['bug']}\n")
            try:
                if not build(src, log):
                    outcome = "DID NOT COMPILE"
                elif not unit_tests(src, m["tests"], log):
                    outcome = "killed"
                elif a.all_tests and not unit_tests(src, "", log):
                    outcome = "killed (by the whole unit suite only)"
                else:
                    outcome = "SURVIVED"
            finally:
                (src / m["file"]).write_text(original)
        survivors += outcome != "killed" and not outcome.startswith("killed")
        rows.append((m["id"], m["file"], m["bug"], m["tests"], outcome, time.monotonic() - t0))
        print(f"{m['id']:>3}  {outcome:<10} {m['file']}: {m['bug']} [{m['tests']}] ({rows[-1][5]:.0f} s)", flush=True)
    build(src, log)  # leave the copy built as it is now
    print(f"\n{len(rows) - survivors} of {len(rows)} killed; log: {a.work}/mutants.log")
    return 0 if survivors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
