"""Unit tests of the shipped Python heartbeat client (clients/python), against a fake harness on a
socket pair of this process: what it sends, that it blocks while paused, that it ends on end of file.
Standard library and pytest only; the client itself needs Python 3.8+ and nothing else."""
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
import interference_bench_heartbeat as hbmod  # noqa: E402
from interference_bench_heartbeat import Heartbeat  # noqa: E402


class FakeHarness:
    """Listens on an abstract address like the harness; reads the client's lines."""

    def __init__(self):
        self.name = "ib-test/%d/%d" % (os.getpid(), time.monotonic_ns())
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind("\0" + self.name)
        self.listener.listen(1)
        self.address = "unix:@" + self.name
        self.conn = None
        self.buf = b""

    def accept(self):
        self.listener.settimeout(10)
        self.conn, _ = self.listener.accept()
        self.conn.settimeout(10)

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.conn.recv(4096)
            assert chunk, "client closed"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def send(self, text):
        self.conn.sendall(text.encode() + b"\n")

    def close(self):
        if self.conn:
            self.conn.close()
        self.listener.close()


@pytest.fixture
def harness():
    h = FakeHarness()
    yield h
    h.close()


def start_client(harness, **kw):
    """A client connecting in a thread (its constructor waits for "go"); returns (thread, box)."""
    box = {}

    def connect():
        box["hb"] = Heartbeat(address=harness.address, **kw)

    t = threading.Thread(target=connect)
    t.start()
    harness.accept()
    assert harness.line() == "hello 1"
    return t, box


def test_inactive_without_the_environment(monkeypatch):
    monkeypatch.delenv(hbmod.ENV, raising=False)
    hb = Heartbeat()
    assert not hb.active
    hb.step()  # returns at once, sends nothing
    hb.step(work=3)


def test_says_hello_waits_for_go_and_reports_contiguous_steps(harness):
    t, box = start_client(harness)
    time.sleep(0.05)
    assert t.is_alive(), "the constructor returned before go"
    harness.send("go")
    t.join(10)
    hb = box["hb"]
    assert hb.active
    hb.step()
    hb.step(work=128)
    first, second = harness.line().split(), harness.line().split()
    assert first[0] == "step" and len(first) == 3
    assert second[0] == "step" and float(second[3]) == 128.0
    start1, end1, start2, end2 = int(first[1]), int(first[2]), int(second[1]), int(second[2])
    assert start1 <= end1 == start2 <= end2  # no time between two steps is lost
    assert abs(end2 - time.monotonic_ns()) < 5e9  # CLOCK_MONOTONIC, the harness's clock
    hb.close()


def test_blocks_after_a_step_while_paused_and_the_pause_is_no_steps_time(harness):
    t, box = start_client(harness)
    harness.send("go")
    t.join(10)
    hb = box["hb"]
    harness.send("pause")
    done = threading.Event()

    def one_step():
        hb.step()
        done.set()

    s = threading.Thread(target=one_step)
    s.start()
    assert harness.line().startswith("step ")
    assert harness.line() == "paused"
    assert not done.wait(0.2), "step() returned while paused"
    resumed_after = time.monotonic_ns()
    harness.send("go")
    assert done.wait(10)
    s.join()
    hb.step()
    start = int(harness.line().split()[1])
    assert start >= resumed_after  # the next step starts at the release
    hb.close()


def test_ends_the_program_when_the_harness_closes(harness):
    t, box = start_client(harness)
    harness.send("go")
    t.join(10)
    harness.conn.close()
    with pytest.raises(SystemExit) as e:
        for _ in range(1000):  # the end of file is seen by a step (a send or the pause check)
            box["hb"].step()
    assert e.value.code == 0


def test_cuda_sync_runs_before_the_timestamp(harness, monkeypatch):
    calls = []
    monkeypatch.setattr(hbmod, "_cuda_synchronize", lambda: calls.append(time.monotonic_ns()))
    t, box = start_client(harness, cuda_sync=True)
    harness.send("go")
    t.join(10)
    box["hb"].step()
    end = int(harness.line().split()[2])
    assert len(calls) == 1 and calls[0] <= end
    box["hb"].close()


@pytest.mark.parametrize("value", ["tcp:1234", "unix:", "/tmp/x"])
def test_a_bad_address_is_an_error(value):
    with pytest.raises(ValueError, match="expected unix:@NAME or unix:/PATH"):
        Heartbeat(address=value)


def test_the_client_uses_only_python_3_8_syntax():
    # Parsed with the 3.8 grammar (no match statements, no | in annotations, ...).
    import ast
    source = (Path(hbmod.__file__)).read_text()
    ast.parse(source, feature_version=(3, 8))
