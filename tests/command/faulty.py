"""Programs that break the command-tenant contract, one per fault (tests/e2e/test_command.py).

usage: faulty.py KIND
  exit-early     reports 30 steps, prints a last line and exits with code 3
  never-ready    prints a line and sleeps without connecting
  hang           reports 30 steps, then stops reporting (sleeps)
  flood          reports steps while writing 1 MiB of output per step, then exits with code 4
  malformed      reports 30 steps, then sends a line that is not a heartbeat
  close-socket   reports 30 steps, then closes the connection and keeps running
  fork-children  starts two children that sleep (in its group), then exits with code 5 after 30 steps
  ignore-term    ignores SIGTERM and reports steps until killed
"""
import os
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
from interference_bench_heartbeat import Heartbeat  # noqa: E402


def busy(ms):
    end = time.monotonic() + ms / 1e3
    while time.monotonic() < end:
        pass


def steps(hb, n, ms=2.0, each=None):
    for _ in range(n):
        busy(ms)
        if each:
            each()
        hb.step()


BAD_STEPS = {
    "zero-step": lambda now: "step %d %d\n" % (now, now),                   # lasts 0 ns
    "overlap": lambda now: "step %d %d\n" % (now - 10**9, now),             # starts 1 s ago, before the last ended
    "huge-work": lambda now: "step %d %d 1e308\n" % (now - 1000, now),      # work past 1e15 (a sum would overflow)
}


def main(kind):
    print("faulty.py %s starting" % kind, flush=True)
    if kind == "never-ready":
        time.sleep(3600)
    hb = Heartbeat()
    if kind == "exit-early":
        steps(hb, 30)
        print("giving up after 30 steps", flush=True)
        sys.exit(3)
    if kind == "hang":
        steps(hb, 30)
        print("hanging now", flush=True)
        time.sleep(3600)
    if kind == "flood":
        chunk = "x" * 1023 + "\n"
        steps(hb, 40, each=lambda: sys.stdout.write(chunk * 1024))
        sys.stdout.flush()
        print("flooded", flush=True)
        sys.exit(4)
    if kind == "malformed":
        steps(hb, 30)
        hb._sock.sendall(b"stop it 12\n")
        time.sleep(3600)
    if kind in BAD_STEPS:  # a well-formed step line the harness must refuse (issue 37 item 5)
        steps(hb, 30)
        now = time.monotonic_ns()
        hb._sock.sendall(BAD_STEPS[kind](now).encode())
        time.sleep(3600)
    if kind == "close-socket":
        steps(hb, 30)
        print("closing the socket", flush=True)
        hb._sock.close()
        time.sleep(3600)
    if kind == "fork-children":
        for _ in range(2):
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        steps(hb, 30)
        print("leaving my children behind", flush=True)
        sys.exit(5)
    if kind == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            while True:
                steps(hb, 1)
        except SystemExit:  # the client's answer to the harness closing the connection: ignored too
            time.sleep(3600)
    raise SystemExit("unknown kind " + kind)


if __name__ == "__main__":
    main(sys.argv[1])
