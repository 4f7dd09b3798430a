"""A program whose descendants leave its process group (tests/e2e/test_command.py, issue 37 item 1).

usage: escaper.py stdout|wall|heartbeat
  Starts a daemon (double fork + setsid: a new session), a child in a group of its own (setpgid(0, 0)) and
  a child that joins its parent's (the worker's) group, each sleeping for ten minutes; then `stdout`
  prints "took 2 ms" every 2 ms until ended, `heartbeat` reports a 2 ms step over the heartbeat socket until
  ended, `wall` exits at once. Nothing it started may outlive the run.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
from interference_bench_heartbeat import Heartbeat  # noqa: E402


def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)


def own_group_child():
    if os.fork() == 0:
        os.setpgid(0, 0)
        time.sleep(600)
        os._exit(0)


def parents_group_child():
    group = os.getpgid(os.getppid())
    if os.fork() == 0:
        os.setpgid(0, group)
        time.sleep(600)
        os._exit(0)


def main():
    daemon()
    own_group_child()
    parents_group_child()
    if sys.argv[1] == "wall":
        return 0
    if sys.argv[1] == "heartbeat":
        hb = Heartbeat()
        while True:
            time.sleep(0.002)
            hb.step()
    while True:
        time.sleep(0.002)
        print("took 2 ms", flush=True)


if __name__ == "__main__":
    sys.exit(main())
