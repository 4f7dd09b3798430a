"""Heartbeat client for interference-bench: report each step of your own program to the harness.

Add two lines to a training or inference loop::

    from interference_bench_heartbeat import Heartbeat
    hb = Heartbeat(cuda_sync=True)          # a no-op when not run by interference-bench
    for batch in loader:
        train_step(batch)
        hb.step(work=len(batch))            # work is optional (tokens, samples, ...)

Each step() reports the step's start and end on CLOCK_MONOTONIC (time.monotonic_ns) and, when the
harness asked for a pause between measurement blocks, blocks until it is released, so the harness
times every step and your program never runs beside another tenant's exclusive block. With
cuda_sync=True it calls torch.cuda.synchronize() before taking the time, so a step's time is its GPU
time, not the time to enqueue it.

Standard library only, Python 3.8+. The wire format is in docs/heartbeat.md.
"""

import os
import socket
import sys
import time

__all__ = ["Heartbeat", "ENV", "PROTOCOL_VERSION"]

ENV = "INTERFERENCE_BENCH_HEARTBEAT"
PROTOCOL_VERSION = 1


def _address(value):
    """The socket address of ENV's value: "unix:@NAME" (abstract) or "unix:/PATH"."""
    if not value.startswith("unix:") or len(value) <= len("unix:"):
        raise ValueError("%s=%r: expected unix:@NAME or unix:/PATH" % (ENV, value))
    rest = value[len("unix:"):]
    return "\0" + rest[1:] if rest.startswith("@") else rest


class Heartbeat:
    """One connection to the harness; inactive (every call returns at once) without ENV."""

    def __init__(self, cuda_sync=False, address=None):
        value = address if address is not None else os.environ.get(ENV)
        self._sock = None
        self._buf = b""
        self._sync = _cuda_synchronize if cuda_sync else None
        self._start_ns = time.monotonic_ns()
        if not value:
            return
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(_address(value))
        self._send("hello %d" % PROTOCOL_VERSION)
        self._wait_for_go()

    @property
    def active(self):
        """True when run by interference-bench (connected)."""
        return self._sock is not None

    def step(self, work=None):
        """Reports one finished step (optionally its work, a number >= 0), then pauses if asked."""
        if self._sock is None:
            return
        if self._sync is not None:
            self._sync()
        end = time.monotonic_ns()
        line = "step %d %d" % (self._start_ns, end)
        if work is not None:
            line += " %r" % float(work)
        self._send(line)
        self._start_ns = end
        if self._pause_asked():
            self._send("paused")
            self._wait_for_go()

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the wire

    def _send(self, line):
        try:
            self._sock.sendall(line.encode("ascii") + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            self._gone()

    def _pause_asked(self):
        """Reads what the harness sent without waiting; True when it says "pause"."""
        self._sock.setblocking(False)
        try:
            chunk = self._sock.recv(4096)
            if not chunk:
                self._gone()
            self._buf += chunk
        except BlockingIOError:
            pass
        finally:
            self._sock.setblocking(True)
        return self._take_line() == "pause" if b"\n" in self._buf else False

    def _wait_for_go(self):
        while True:
            while b"\n" not in self._buf:
                chunk = self._sock.recv(4096)
                if not chunk:
                    self._gone()
                self._buf += chunk
            if self._take_line() == "go":
                # The next step starts now: the time paused is no step's.
                self._start_ns = time.monotonic_ns()
                return

    def _take_line(self):
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("ascii", "replace").strip()

    def _gone(self):
        # The harness ended the run (or died): end the program, as it would end it anyway.
        self.close()
        sys.exit(0)


def _cuda_synchronize():
    try:
        import torch  # noqa: F401 (only when asked for)
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()
