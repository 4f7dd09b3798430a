"""One timeline across nodes (issue 36), its first piece: the conductor's clock exchange over TCP, the node
in a time namespace of its own (`unshare --time`: CLOCK_MONOTONIC a known 1000 s ahead of the conductor's).
The estimated offset must be that known answer within the uncertainty it states (half the best round trip)."""
import json
import os
import shutil
import subprocess

import pytest

PEER = os.environ.get("IB_CLOCK_PEER", "")
OFFSET_S = 1000


def time_namespaces():
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "--fork", "--time", "--monotonic", "1", "true"], capture_output=True)
    return r.returncode == 0


pytestmark = [pytest.mark.skipif(not PEER, reason="IB_CLOCK_PEER not set (run through ctest)"),
              pytest.mark.skipif(not time_namespaces(), reason="needs root and time namespaces (unshare --time)")]


def estimate(node_prefix, exchanges=50):
    server = subprocess.Popen([PEER, "serve"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        assert port.isdigit(), server.stderr.read()
        r = subprocess.run([*node_prefix, PEER, "ask", port, str(exchanges)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert server.wait(timeout=30) == 0, server.stderr.read()
        return json.loads(r.stdout)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_a_node_whose_clock_is_1000_s_ahead_is_placed_on_the_conductors_timeline():
    o = estimate(["unshare", "--fork", "--time", "--monotonic", str(OFFSET_S)])
    assert o["exchanges"] == 50
    # conductor = node + offset: the node reads 1000 s more, so the offset is -1000 s, within its bound.
    assert abs(o["offset_ns"] + OFFSET_S * 10**9) <= o["uncertainty_ns"], o
    assert 0 <= o["uncertainty_ns"] < 5_000_000, o  # loopback: the best of 50 round trips is well under 10 ms


def test_the_same_clock_is_offset_zero_within_its_bound():
    o = estimate([])
    assert abs(o["offset_ns"]) <= o["uncertainty_ns"] < 5_000_000, o
