"""A toy training loop for the command-tenant tests: each step is a fixed amount of pure-Python CPU
work (the same on every machine, its time is what the neighbours change).

usage: toy_train.py heartbeat|stdout|wall|total [--work N] [--steps N] [--every S]
  heartbeat: reports every step with the shipped client (clients/python), runs until ended
  stdout:    prints "step K took X.XXX ms" for every step, runs until ended
  wall:      runs --steps steps and exits (one wall sample)
  total:     an interval reporter: prints the running total of loop iterations done, "done N it", once every
             --every seconds (of its own clock), runs until ended
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
from interference_bench_heartbeat import Heartbeat  # noqa: E402


def one_step(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metric", choices=["heartbeat", "stdout", "wall", "total"])
    ap.add_argument("--work", type=int, default=300000)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--every", type=float, default=0.01)
    a = ap.parse_args()
    if os.environ.get("IB_ENV_FILE"):  # what placement this start got (the tests of the modes)
        with open(os.environ["IB_ENV_FILE"], "a") as f:
            f.write(json.dumps({k: v for k, v in os.environ.items()
                                if k == "CUDA_VISIBLE_DEVICES" or k.startswith("CUDA_MPS_")}) + "\n")
    if os.environ.get("IB_PID_FILE"):  # where a test's fake NVML finds this process (a "GPU" process)
        with open(os.environ["IB_PID_FILE"], "a") as f:
            f.write("%d\n" % os.getpid())
    if a.metric == "heartbeat":
        hb = Heartbeat()
        while True:
            one_step(a.work)
            hb.step(work=a.work)
    elif a.metric == "stdout":
        k = 0
        while True:
            t0 = time.monotonic()
            one_step(a.work)
            k += 1
            print("step %d took %.3f ms" % (k, (time.monotonic() - t0) * 1e3), flush=True)
    elif a.metric == "total":
        done, last = 0, time.monotonic()
        while True:
            one_step(1000)
            done += 1000
            if time.monotonic() - last >= a.every:
                last = time.monotonic()
                print("done %d it" % done, flush=True)
    else:
        for _ in range(a.steps):
            one_step(a.work)


if __name__ == "__main__":
    main()
