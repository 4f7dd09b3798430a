#!/usr/bin/env python3
"""A small PyTorch training loop as a command tenant (scripts/device-check.sh, step torch-tenant):
a 4-layer MLP, batch 512, bf16 autocast, SGD, one heartbeat per --steps-per-sample steps (default 32,
~30 ms on an H200: a sample of one ~1 ms step would measure the GPU's time slice, not the slowdown) with
the shipped client and cuda_sync=True (so a sample's time is its GPU time). Runs until the harness ends it.

Alone it only proves it runs: `python3 scripts/torch_tenant.py --steps 20` prints the mean step time."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
from interference_bench_heartbeat import Heartbeat  # noqa: E402

import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--steps", type=int, default=0, help="without the harness: run this many steps and print")
    ap.add_argument("--steps-per-sample", type=int, default=32, help="steps per heartbeat (one sample)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(a.width, a.width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(a.batch, a.width, device=dev)
    hb = Heartbeat(cuda_sync=True)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    if not hb.active:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        t0 = time.monotonic()
        for _ in range(max(1, a.steps)):
            step()
        torch.cuda.synchronize()
        print("mean step %.3f ms" % ((time.monotonic() - t0) / max(1, a.steps) * 1e3))
        return
    while True:
        for _ in range(a.steps_per_sample):
            step()
        hb.step(work=a.batch * a.steps_per_sample)


if __name__ == "__main__":
    main()
