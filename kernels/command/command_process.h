// A user's program run by a worker: started without a shell in its own process group, its stdout and
// stderr read continuously (so it never blocks on a full pipe) into the worker's log (bounded) and a
// tail of its last lines, and ended with its whole group on every path.
//
// Why a pseudo-terminal: C stdio, and the programs built on it, buffer their output in 4 KiB blocks when it
// is a pipe and write it line by line when it is a terminal; Python likewise (and PYTHONUNBUFFERED=1 makes it
// write at once). Read from a pipe, a program's lines arrive in bursts long after they were written, all with
// one arrival time; the stdout metric places steps by their arrival and an interval between two arrivals. So
// stdout and stderr are the slave side of a pseudo-terminal (raw: bytes pass unchanged), or a pipe where the
// system has none (a line on the worker's log says so).
//
// Why a keeper: the harness's watchdog SIGKILLs the worker's process group, and a harness that dies
// takes its workers with it (PR_SET_PDEATHSIG); neither reaches the program's own group. So each
// program gets a tiny keeper process (forked, in a group of its own, blocking all signals it can)
// that holds the read end of a pipe only the worker writes: when the worker is gone, however it went,
// the keeper reads end of file and SIGKILLs the program's group. The keeper is forked first and told the
// program's group while the program is still held before its exec (a forked child waiting on a gate pipe):
// a worker killed at any moment leaves either a program that never runs (the gate reads end of file) or a
// keeper that knows its group. (Spawned first and guarded after, a harness SIGKILLed in between once left
// a program running with nothing to end it.)
//
// Why a subreaper: a descendant that leaves the group (setsid, setpgid, or a daemon's double fork) is
// out of the group's reach. The worker is a child subreaper (PR_SET_CHILD_SUBREAPER, set by run_worker),
// so such a process stays the worker's descendant whatever group or session it moves to: pause() and
// resume() stop and continue it with the group, and the teardown kills and reaps it, naming it on the
// worker's stderr (its log).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ib {

// Set in every program's environment (a command's `env` may override them): Python then writes its output at
// once instead of in blocks (see "Why a pseudo-terminal" above).
constexpr const char* kProgramEnvironment[][2] = {{"PYTHONUNBUFFERED", "1"}};

// A line of the program's text as the tool shows it (errors, the terminal, summary.md, HTML, JUnit): control
// characters and C1 controls escaped ("\x1b", "\u009b") so that no escape sequence reaches a terminal, cut
// to `max_chars` characters with "..." (issue 37 item 7).
std::string escaped_line(const std::string& line, std::size_t max_chars = 200);

// How a program ended, in words for an error ("exit code 3", "killed by signal 9").
struct ProgramExit {
  bool exited = false;  // false: still running
  int code = 0;         // exit code, or 128 + signal
  std::string describe;
};

// What every start of a tenant's program shares (a wall tenant starts it once a sample): the bytes of its
// output copied to the worker's log, whose cap is per tenant, not per start (issue 37 item 4); and the
// processes found outside its process group (they had called setsid or setpgid), each stopped with the
// group at block ends and killed at teardown (issue 37 item 1).
struct ProgramLedger {
  std::atomic<std::size_t> log_bytes{0};
  void add_escaped(const std::vector<pid_t>& pids);
  std::size_t escaped() const;

 private:
  mutable std::mutex mutex_;
  std::set<pid_t> escaped_;
};

class CommandProcess {
 public:
  static constexpr std::size_t kTailLines = 20;
  static constexpr std::size_t kMaxLineBytes = 4096;        // a longer line is cut (the rest ignored)
  static constexpr std::size_t kMaxLogBytes = 16u << 20;    // copied to the worker's log, then counted

  // Called from the output thread for every complete line, with its CLOCK_MONOTONIC arrival time.
  using LineSink = std::function<void(const std::string& line, std::int64_t at_ns)>;

  // Starts argv (PATH search when argv[0] has no '/'), in `cwd` when not empty, with the worker's
  // environment plus `env`, stdin /dev/null, every other descriptor closed, every signal default
  // and unblocked. Throws std::runtime_error naming the program when it cannot be started.
  // The program inherits the calling thread's CPU affinity (a tenant's placement.cpus). With
  // `release_cpus`, the calling thread and the output thread then move to the worker's whole CPU set,
  // so the harness's reading of steps never runs on the cores the program was given.
  // `ledger`: shared with the tenant's other starts (nullptr: this start's own).
  CommandProcess(const std::vector<std::string>& argv, const std::string& cwd,
                 const std::map<std::string, std::string>& env, int log_fd, LineSink on_line = {},
                 bool release_cpus = false, std::shared_ptr<ProgramLedger> ledger = nullptr);
  ~CommandProcess();  // SIGKILL to the group, keeper released, everything reaped
  CommandProcess(const CommandProcess&) = delete;
  CommandProcess& operator=(const CommandProcess&) = delete;

  pid_t pid() const { return pid_; }  // also its process group
  // Whether it has exited (the leader; its group may live on), without reaping it.
  ProgramExit poll_exit();
  // Waits up to timeout_s for the leader to exit.
  ProgramExit wait_exit(double timeout_s);
  void pause();   // SIGSTOP to the group
  void resume();  // SIGCONT to the group
  // SIGCONT + SIGTERM to the group; SIGKILL when the leader is still there after timeout_s. True when
  // it ended on SIGTERM (or before), false when it had to be killed.
  bool terminate(double timeout_s);
  // The last lines of its output (each cut to 200 characters), oldest first.
  std::vector<std::string> tail() const;
  // "; last output: | a | b" for an error message, or "; no output". Once the program has exited it
  // first waits (at most half a second) for the output thread to read what it wrote last.
  std::string tail_text();
  // The output thread saw end of file (every holder of the pipe closed it).
  bool output_closed() const;

 private:
  void drain_output(int fd);
  void kill_and_reap();
  // Signals the processes descending from this worker that are outside the program's group (the keeper
  // aside): those that escaped it. Returns them.
  std::vector<pid_t> signal_escaped(int sig);
  void kill_escaped();

  pid_t pid_ = -1;
  pid_t keeper_ = -1;
  int lifeline_fd_ = -1;  // write end; the keeper reads the other
  int gate_fd_ = -1;        // while the program is held before its exec: the go byte goes here
  int exec_error_fd_ = -1;  // and its exec's errno comes back here (end of file: it ran)
  pid_t fork_program(const std::vector<std::string>& argv, const std::string& cwd,
                     const std::map<std::string, std::string>& env, int out_fd);
  void release_program(const std::string& name, const std::string& cwd);
  int log_fd_ = -1;
  bool reaped_ = false;
  ProgramExit exit_;
  LineSink on_line_;
  std::thread output_thread_;
  mutable std::mutex mutex_;
  std::condition_variable output_closed_cv_;
  std::deque<std::string> tail_;
  bool output_closed_ = false;
  std::shared_ptr<ProgramLedger> ledger_;
};

}  // namespace ib
