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

The client never ends your program on its own account: an address that is not one (a leftover or
garbage INTERFERENCE_BENCH_HEARTBEAT, a socket nobody listens on) is one warning line on stderr and
then a no-op. Only the harness going away (end of file, a reset or a broken pipe on the connection, at
any point) ends the program, with one line on stderr and status 0, as the harness would end it anyway.

Standard library only, Python 3.8+. The wire format is in docs/heartbeat.md.
"""

import os
import socket
import sys
import threading
import time

__all__ = ["Heartbeat", "ENV", "PROTOCOL_VERSION"]

ENV = "INTERFERENCE_BENCH_HEARTBEAT"
PROTOCOL_VERSION = 1
_PREFIX = "interference-bench heartbeat: "
_MAX_LINE = 256  # the protocol's longest line: a peer sending this many bytes without a line end is not the harness


def _address(value):
    """The socket address of ENV's value: "unix:@NAME" (abstract) or "unix:/PATH"."""
    if not value.startswith("unix:") or len(value) <= len("unix:"):
        raise ValueError(value)
    rest = value[len("unix:"):]
    return "\0" + rest[1:] if rest.startswith("@") else rest


def _say(text):
    """One line on stderr; never raises (a closed or missing stderr is not the program's end)."""
    try:
        sys.stderr.write(_PREFIX + text + "\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 (sys.stderr may be None or closed)
        pass


class _Gone(Exception):
    """The harness went away (end of file, a reset, a broken pipe): the conversation is over."""


class Heartbeat:
    """One connection to the harness; inactive (every call returns at once) without ENV, or after one
    warning line when ENV's address is not one or nobody listens there."""

    def __init__(self, cuda_sync=False, address=None):
        value = address if address is not None else os.environ.get(ENV)
        what = "address" if address is not None else ENV
        self._sock = None
        self._buf = b""
        self._sync = _cuda_synchronize if cuda_sync else None
        self._start_ns = time.monotonic_ns()
        if not value:
            return
        shown = repr(value)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        try:
            addr = _address(value)
        except ValueError:
            _say("%s=%s is not unix:@NAME or unix:/PATH: steps are not reported (a leftover from another "
                 "run?)" % (what, shown))
            return
        sock = None
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(None)  # blocking whatever socket.setdefaulttimeout() says: a pause has no limit
            sock.connect(addr)
        except (OSError, ValueError, TypeError, UnicodeError) as e:
            if sock is not None:
                sock.close()
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            _say("%s=%s cannot connect (%s): steps are not reported (a leftover from another run?)"
                 % (what, shown, why))
            return
        self._sock = sock
        self._talk(self._hello)

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
        self._start_ns = end
        self._talk(self._report, line)

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the wire: every socket call runs under _talk, which turns the harness going away into the end

    def _talk(self, what, *args):
        try:
            what(*args)
        except _Gone as e:
            self._gone(str(e))
        except OSError as e:  # a reset, a broken pipe, ...: the harness is gone
            self._gone(e.strerror or e.__class__.__name__)

    def _hello(self):
        self._send("hello %d" % PROTOCOL_VERSION)
        self._wait_for_go()

    def _report(self, line):
        self._send(line)
        if self._pause_asked():
            self._send("paused")
            self._wait_for_go()

    def _send(self, line):
        data = (line + "\n").encode("ascii")
        while data:
            # MSG_NOSIGNAL: a program that restored SIGPIPE's default is not killed by a closed socket.
            n = self._sock.send(data, socket.MSG_NOSIGNAL)
            data = data[n:]

    def _recv(self, flags=0):
        chunk = self._sock.recv(4096, flags)
        if not chunk:
            raise _Gone("end of file")
        self._buf += chunk
        if b"\n" not in self._buf and len(self._buf) >= _MAX_LINE:
            raise _Gone("no line in %d bytes: not the harness" % len(self._buf))

    def _pause_asked(self):
        """Reads what the harness sent without waiting; True when it says "pause"."""
        try:
            self._recv(socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            pass
        return self._take_line() == "pause" if b"\n" in self._buf else False

    def _wait_for_go(self):
        while True:
            while b"\n" not in self._buf:
                try:
                    self._recv()
                except InterruptedError:
                    continue
            if self._take_line() == "go":
                # The next step starts now: the time paused is no step's.
                self._start_ns = time.monotonic_ns()
                return

    def _take_line(self):
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode("ascii", "replace").strip()

    def _gone(self, why):
        # The harness ended the run (or died): end the program, as the harness would end it anyway.
        self.close()
        _say("the connection to the harness ended (%s): the run is over, exiting with status 0" % why)
        if threading.current_thread() is threading.main_thread():
            raise SystemExit(0)
        # SystemExit would end only this thread: end the program, its output flushed first.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(0)


def _cuda_synchronize():
    try:
        import torch  # noqa: F401 (only when asked for)
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()
