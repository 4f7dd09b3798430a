"""Unit tests of the shipped Python heartbeat client (clients/python), against a fake harness on a
socket pair of this process: what it sends, that it blocks while paused, that it ends on end of file.
Then the faults (issue 37, item 8), on a program run as a process with each shipped client (Python, and
C++ compiled with g++ into the test's folder): an address that is garbage or stale is one warning line
and a no-op, the harness going away at any point is one line and exit 0, never a traceback.
Standard library and pytest only; the client itself needs Python 3.8+ and nothing else."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
CLIENT_DIR = SOURCE / "clients" / "python"
sys.path.insert(0, str(CLIENT_DIR))
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
def test_a_bad_address_is_one_warning_and_an_inactive_client(value, capsys):
    hb = Heartbeat(address=value)
    assert not hb.active
    hb.step()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not unix:@NAME or unix:/PATH" in err and repr(value) in err, err


def test_the_client_uses_only_python_3_8_syntax():
    # Parsed with the 3.8 grammar (no match statements, no | in annotations, ...).
    import ast
    source = (Path(hbmod.__file__)).read_text()
    ast.parse(source, feature_version=(3, 8))


# --- faults (issue 37, item 8): a program using the client, run as a process --------------------------------

PREFIX = "interference-bench heartbeat: "
PROGRAM_EXIT = 7  # the program's own exit code: seen only when the client let it run to its end

# The program: reports ARGV[1] steps, each ARGV[2] s long, in the main thread or (ARGV[3] == "thread")
# in another one; prints "active"/"inactive" first and "done" at its end, then exits 7.
PY_PROGRAM = """\
import signal, sys, threading, time
sys.path.insert(0, %r)
if sys.argv[4] == "sigpipe-default":  # as command-line tools do, for `| head`
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
from interference_bench_heartbeat import Heartbeat
hb = Heartbeat()
print("active" if hb.active else "inactive", flush=True)
def loop():
    for _ in range(int(sys.argv[1])):
        time.sleep(float(sys.argv[2]))
        hb.step(work=1)
if sys.argv[3] == "thread":
    t = threading.Thread(target=loop)
    t.start()
    t.join()
else:
    loop()
print("done", flush=True)
sys.exit(%d)
""" % (str(CLIENT_DIR), PROGRAM_EXIT)

CPP_PROGRAM = """\
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <thread>
#include "clients/cpp/interference_bench_heartbeat.h"
int main(int argc, char** argv) {
  if (argc < 5) return 100;
  if (strcmp(argv[4], "sigpipe-default") == 0) signal(SIGPIPE, SIG_DFL);
  interference_bench::Heartbeat hb;
  printf("%%s\\n", hb.active() ? "active" : "inactive");
  fflush(stdout);
  const long n = atol(argv[1]);
  const double s = atof(argv[2]);
  auto loop = [&] {
    for (long i = 0; i < n; ++i) {
      timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
      nanosleep(&ts, nullptr);
      hb.step(1.0);
    }
  };
  if (strcmp(argv[3], "thread") == 0) {
    std::thread t(loop);
    t.join();
  } else {
    loop();
  }
  printf("done\\n");
  return %d;
}
""" % PROGRAM_EXIT


@pytest.fixture(scope="module")
def cpp_program(tmp_path_factory):
    gxx = shutil.which("g++")
    if not gxx:
        pytest.skip("g++ not found on PATH: the C++ client's fault cases need it to compile their program")
    folder = tmp_path_factory.mktemp("cpp-client")
    (folder / "program.cpp").write_text(CPP_PROGRAM)
    # C++11, as the header promises, with the project's warnings as errors.
    r = subprocess.run([gxx, "-std=c++11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-pthread",
                        "-I" + str(SOURCE), str(folder / "program.cpp"), "-o", str(folder / "program")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return folder / "program"


@pytest.fixture(params=["python", "cpp"])
def program(request, tmp_path):
    """argv of the program with the client of this parameter; call it with the loop's arguments."""
    if request.param == "cpp":
        binary = request.getfixturevalue("cpp_program")
        return lambda *args: [str(binary), *map(str, args)]
    script = tmp_path / "program.py"
    script.write_text(PY_PROGRAM)
    return lambda *args: [sys.executable, str(script), *map(str, args)]


def start(argv, value):
    env = dict(os.environ)
    env[hbmod.ENV] = value
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def finish(proc, timeout=30):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("the program did not end within %d s:\n%s\n%s" % (timeout, out, err))
    return proc.returncode, out.splitlines(), err


def assert_one_line(err, says):
    """stderr is exactly one line of the client's, saying `says`, and no traceback."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), err
    assert lines[0].startswith(PREFIX) and says in lines[0], lines[0]


def stale_socket(tmp_path):
    """A socket file whose listener is gone (bound, never listening: connect is refused)."""
    path = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.close()
    return path


@pytest.mark.parametrize("fault", ["garbage", "missing-path", "refused", "wrong-type-file"])
def test_a_bad_or_stale_address_is_one_warning_then_a_no_op(program, tmp_path, fault):
    regular = tmp_path / "not-a-socket"
    regular.write_text("a regular file\n")
    value, says = {
        "garbage": ("tcp://localhost:1234\tgarbage", "is not unix:@NAME or unix:/PATH"),
        "missing-path": ("unix:" + str(tmp_path / "no" / "such.sock"), "No such file or directory"),
        "refused": ("unix:" + str(stale_socket(tmp_path)), "Connection refused"),
        "wrong-type-file": ("unix:" + str(regular), "Connection refused"),
    }[fault]
    steps = 20000
    began = time.monotonic()
    rc, out, err = finish(start(program(steps, 0, "main", "sigpipe-ignored"), value))
    # The program ran to its own end: the client did not end it, and every step returned at once.
    assert rc == PROGRAM_EXIT and out == ["inactive", "done"], (rc, out, err)
    assert time.monotonic() - began < 20
    assert_one_line(err, says)
    assert "steps are not reported" in err


class ProcessHarness:
    """The harness's side for a program run as a process: an abstract listening socket."""

    def __init__(self):
        self.name = "ib-test/%d/%d" % (os.getpid(), time.monotonic_ns())
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind("\0" + self.name)
        self.listener.listen(1)
        self.listener.settimeout(30)
        self.address = "unix:@" + self.name
        self.conn = None
        self.buf = b""

    def accept(self):
        self.conn, _ = self.listener.accept()
        self.conn.settimeout(30)

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.conn.recv(4096)
            assert chunk, "the program closed the connection"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def peek_until(self, text):
        """Waits until `text` is in the socket's queue, leaving it unread (so a close resets the peer)."""
        deadline = time.monotonic() + 30
        while text.encode() not in self.conn.recv(65536, socket.MSG_PEEK):
            assert time.monotonic() < deadline, "never came: " + text
            time.sleep(0.01)

    def close(self):
        if self.conn:
            self.conn.close()
        self.listener.close()


@pytest.fixture
def process_harness():
    h = ProcessHarness()
    yield h
    h.close()


def assert_ended_by_the_client(rc, out, err, *says):
    # Exit 0, the documented end; the program's own end ("done", exit 7) never came.
    assert rc == 0 and out == ["active"], (rc, out, err)
    assert_one_line(err, "the connection to the harness ended (")
    assert any("ended (" + why in err for why in says), err
    assert "exiting with status 0" in err


@pytest.mark.parametrize("sigpipe", ["sigpipe-default", "sigpipe-ignored"])
def test_the_harness_closing_mid_step_ends_the_program_with_0(program, process_harness, sigpipe):
    # The harness reads the steps so far and goes while the program is inside its next step: the
    # program's next report finds the connection closed (a broken pipe), which must not kill it with
    # SIGPIPE either (a program that restored SIGPIPE's default, as command-line tools do).
    h = process_harness
    proc = start(program(1000, 0.2, "main", sigpipe), h.address)
    h.accept()
    assert h.line() == "hello 1"
    h.conn.sendall(b"go\n")
    for _ in range(3):
        assert h.line().startswith("step ")
    time.sleep(0.05)  # the program past its pause check, 0.15 s before its next report
    h.conn.close()
    h.conn = None
    # A loaded machine may run the close before the pause check: then that check reads the end of file.
    assert_ended_by_the_client(*finish(proc), "Broken pipe", "end of file")


def test_the_harness_going_after_asking_for_a_pause_ends_the_program_with_0(program, process_harness):
    # The harness asks for a pause, and dies with the program's answer unread: the program, waiting for
    # "go", reads a reset (ECONNRESET), not an end of file.
    h = process_harness
    proc = start(program(1000, 0.01, "main", "sigpipe-ignored"), h.address)
    h.accept()
    assert h.line() == "hello 1"
    h.conn.sendall(b"go\n")
    assert h.line().startswith("step ")
    h.conn.sendall(b"pause\n")
    h.peek_until("paused\n")
    h.conn.close()
    h.conn = None
    assert_ended_by_the_client(*finish(proc), "Connection reset by peer")


def test_the_harness_going_before_go_ends_the_program_with_0(program, process_harness):
    # The hello unread when the harness goes: a reset while the constructor waits for the first "go".
    h = process_harness
    proc = start(program(1000, 0.01, "main", "sigpipe-ignored"), h.address)
    h.accept()
    h.peek_until("hello 1\n")
    h.conn.close()
    h.conn = None
    rc, out, err = finish(proc)
    assert rc == 0 and out == [], (rc, out, err)
    assert_one_line(err, "the connection to the harness ended (Connection reset by peer)")


def test_the_harness_going_ends_a_program_whose_steps_run_in_a_thread(program, process_harness):
    # The end is the program's, not only the reporting thread's (SystemExit would end just that thread).
    h = process_harness
    proc = start(program(1000, 0.01, "thread", "sigpipe-ignored"), h.address)
    h.accept()
    assert h.line() == "hello 1"
    h.conn.sendall(b"go\n")
    assert h.line().startswith("step ")
    h.conn.close()
    h.conn = None
    assert_ended_by_the_client(*finish(proc), "Broken pipe", "end of file", "Connection reset by peer")
