#include "kernels/command/command_process.h"
#include "kernels/open_loop.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace ib {

namespace {


// The worker's environment with kProgramEnvironment and then `extra` on top, as "K=V" strings.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> all;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::size_t eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& kv : kProgramEnvironment) all[kv[0]] = kv[1];
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The program's path: argv[0] as given when it holds a '/', else found on this worker's PATH as posix_spawnp
// would (resolved before the fork: the child may only make async-signal-safe calls). "" when not found.
std::string program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The forked child's way to exec: async-signal-safe calls only (the worker has threads). It waits for the go
// byte on `gate` first: the worker sends it once the keeper knows the child's group, so that no moment exists
// in which the program runs unguarded. End of file instead (the worker died) ends it before it ever runs.
[[noreturn]] void exec_program(int gate, int gate_write, int error_pipe, int out_fd, const char* cwd, const char* path,
                               char* const* cargs, char* const* cenv) {
  close(gate_write);  // only the worker may hold it: its death must read as end of file here
  setpgid(0, 0);
  char go = 0;
  ssize_t n;
  while ((n = read(gate, &go, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1) _exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the harness blocks its stop signals; the program must not
  const int null = open("/dev/null", O_RDONLY);
  int err = null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ? errno : 0;
  if (err == 0 && cwd[0] != '\0' && chdir(cwd) != 0) err = errno;
  if (err == 0) {
    // Every descriptor from 3 up closed (the worker's report pipe above all), but the error pipe (close-on-exec).
    if (error_pipe > 3) syscall(SYS_close_range, 3u, static_cast<unsigned>(error_pipe) - 1u, 0u);
    syscall(SYS_close_range, static_cast<unsigned>(error_pipe) + 1u, ~0u, 0u);
    execve(path, cargs, cenv);
    err = errno;
  }
  while (write(error_pipe, &err, sizeof err) < 0 && errno == EINTR) {
  }
  _exit(127);
}

}  // namespace

// The program forked in a new process group, stdin /dev/null, stdout and stderr on `out_fd`, descriptors from 3
// up closed, signals default and unblocked; held before exec until release_program (the header says why).
pid_t CommandProcess::fork_program(const std::vector<std::string>& argv, const std::string& cwd,
                                   const std::map<std::string, std::string>& env, int out_fd) {
  std::vector<std::string> args = argv, envs = environment_with(env);
  std::vector<char*> cargs = c_strings(args), cenv = c_strings(envs);
  const std::string path = program_path(argv[0]);
  const auto cannot = [&](int err) {
    return std::runtime_error("cannot start \"" + argv[0] + "\"" + (cwd.empty() ? "" : " in " + cwd) + ": " + std::strerror(err));
  };
  if (path.empty()) throw cannot(ENOENT);
  int gate[2], error_pipe[2];
  if (pipe2(gate, O_CLOEXEC) != 0) throw cannot(errno);
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : gate) close(fd);
    throw cannot(err);
  }
  const pid_t pid = fork();
  if (pid == 0) exec_program(gate[0], gate[1], error_pipe[1], out_fd, cwd.c_str(), path.c_str(), cargs.data(), cenv.data());
  const int fork_errno = errno;
  close(gate[0]);
  close(error_pipe[1]);
  if (pid < 0) {
    close(gate[1]);
    close(error_pipe[0]);
    throw cannot(fork_errno);
  }
  setpgid(pid, pid);  // as the child does itself: whichever runs first, the group exists before the keeper hears of it
  gate_fd_ = gate[1];
  exec_error_fd_ = error_pipe[0];
  return pid;
}

// Lets the held program exec; throws (the program reaped) when the exec failed.
void CommandProcess::release_program(const std::string& name, const std::string& cwd) {
  char go = 1;
  const bool sent = write(gate_fd_, &go, 1) == 1;
  close(gate_fd_);
  gate_fd_ = -1;
  int err = 0;
  ssize_t n;
  while ((n = read(exec_error_fd_, &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(exec_error_fd_);
  exec_error_fd_ = -1;
  if (sent && n == 0) return;  // end of file: the exec closed the error pipe
  if (!sent) err = EPIPE;
  throw std::runtime_error("cannot start \"" + name + "\"" + (cwd.empty() ? "" : " in " + cwd) + ": " + std::strerror(err));
}

namespace {

// The keeper (see the header): forked from a threaded process, so only async-signal-safe calls.
// It is forked before the program starts and reads the program's group from the lifeline first: a worker that
// dies at any moment after the program exists leaves a keeper that knows it (the end of file it then reads
// before a whole group id means no program was started, or its id never left the worker: nothing to kill).
[[noreturn]] void keeper_main(int lifeline) {
  setpgid(0, 0);  // out of the worker's group, which the watchdog kills
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  if (syscall(SYS_close_range, 0u, static_cast<unsigned>(lifeline) - 1u, 0u) != 0 && lifeline > 0)
    for (int fd = 0; fd < lifeline; ++fd) close(fd);
  if (syscall(SYS_close_range, static_cast<unsigned>(lifeline) + 1u, ~0u, 0u) != 0)
    for (int fd = lifeline + 1; fd < 4096; ++fd) close(fd);
  pid_t group = 0;
  std::size_t got = 0;
  while (got < sizeof group) {
    const ssize_t n = read(lifeline, reinterpret_cast<char*>(&group) + got, sizeof group - got);
    if (n == 0 || (n < 0 && errno != EINTR)) _exit(0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  char c;
  while (read(lifeline, &c, 1) != 0 && errno == EINTR) {
  }
  if (group > 0) kill(-group, SIGKILL);
  _exit(0);
}

ProgramExit exit_from(const siginfo_t& info) {
  ProgramExit e;
  e.exited = true;
  if (info.si_code == CLD_EXITED) {
    e.code = info.si_status;
    e.describe = "exit code " + std::to_string(info.si_status);
  } else {
    e.code = 128 + info.si_status;
    e.describe = std::string("killed by signal ") + std::to_string(info.si_status) + " (" + strsignal(info.si_status) + ")";
  }
  return e;
}

}  // namespace

namespace {

// A pseudo-terminal for the program's stdout and stderr: out[0] the side we read (the master), out[1] the side
// it writes (the slave), both close-on-exec. Raw (no "\n" to "\r\n"), 200 columns by 50 rows (what a progress
// bar sizes itself to), and not the program's controlling terminal (O_NOCTTY; it never gets one, as its
// process group is not a session). False when the system has none to give (no /dev/pts).
bool open_terminal(int out[2]) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return false;
  char name[128];
  int slave = -1;
  if (grantpt(master) == 0 && unlockpt(master) == 0 && ptsname_r(master, name, sizeof name) == 0)
    slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  termios mode{};
  if (slave < 0 || tcgetattr(slave, &mode) != 0) {
    if (slave >= 0) close(slave);
    close(master);
    return false;
  }
  cfmakeraw(&mode);
  tcsetattr(slave, TCSANOW, &mode);
  const winsize size{50, 200, 0, 0};
  ioctl(slave, TIOCSWINSZ, &size);
  out[0] = master;
  out[1] = slave;
  return true;
}

}  // namespace

CommandProcess::CommandProcess(const std::vector<std::string>& argv, const std::string& cwd,
                               const std::map<std::string, std::string>& env, int log_fd, LineSink on_line,
                               bool release_cpus, std::shared_ptr<ProgramLedger> ledger)
    : log_fd_(log_fd), on_line_(std::move(on_line)), ledger_(ledger ? std::move(ledger) : std::make_shared<ProgramLedger>()) {
  int out[2], life[2];
  // A terminal, so that C stdio and the like write each line when it is written; a pipe where there is none.
  if (!open_terminal(out)) {
    if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("no pipe for the program: ") + std::strerror(errno));
    std::fprintf(stderr, "interference-bench worker: no pseudo-terminal for the program (%s): its output goes "
                 "through a pipe, which C stdio and the like fill before they write\n", std::strerror(errno));
  }
  if (pipe2(life, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw std::runtime_error(std::string("no pipe for the program's keeper: ") + std::strerror(errno));
  }
  // The keeper first, told the program's group before the program may exec (fork_program holds it at a gate):
  // whenever the worker dies from here on, either the program never runs or the keeper ends its group.
  keeper_ = fork();
  if (keeper_ == 0) keeper_main(life[0]);
  const int fork_errno = errno;
  close(life[0]);
  lifeline_fd_ = life[1];
  if (keeper_ < 0) {  // no keeper: the program must not run unguarded
    for (int fd : {out[0], out[1], life[1]}) close(fd);
    lifeline_fd_ = -1;
    throw std::runtime_error(std::string("cannot start the program's keeper: ") + std::strerror(fork_errno));
  }
  try {
    pid_ = fork_program(argv, cwd, env, out[1]);
  } catch (...) {
    for (int fd : {out[0], out[1]}) close(fd);
    close(lifeline_fd_);  // end of file before a group: the keeper exits
    lifeline_fd_ = -1;
    waitpid(keeper_, nullptr, 0);
    keeper_ = -1;
    throw;
  }
  close(out[1]);
  const bool told = write(lifeline_fd_, &pid_, sizeof pid_) == static_cast<ssize_t>(sizeof pid_);  // a pipe: whole or nothing
  try {
    if (!told) throw std::runtime_error(std::string("cannot tell the program's keeper its group: ") + std::strerror(errno));
    release_program(argv[0], cwd);
  } catch (...) {
    close(out[0]);
    if (gate_fd_ >= 0) close(gate_fd_);  // the held program reads end of file and exits without running
    if (exec_error_fd_ >= 0) close(exec_error_fd_);
    gate_fd_ = exec_error_fd_ = -1;
    kill_and_reap();
    throw;
  }
  if (release_cpus) {
    // The process's own mask (its main thread's, which placement never pins) for this thread, and so
    // for the output thread it starts.
    cpu_set_t all;
    CPU_ZERO(&all);
    if (sched_getaffinity(getpid(), sizeof(all), &all) == 0) sched_setaffinity(0, sizeof(all), &all);
  }
  output_thread_ = std::thread([this, fd = out[0]] { drain_output(fd); });
}

CommandProcess::~CommandProcess() { kill_and_reap(); }

namespace {

// Every process in /proc with its parent, group and state ("R", "S", "Z", ...).
struct ProcEntry {
  pid_t pid = 0, ppid = 0, pgrp = 0;
  std::string state;
};
std::vector<ProcEntry> proc_entries() {
  std::vector<ProcEntry> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    ProcEntry p;
    long ppid = 0, pgrp = 0;
    if (!(fields >> p.state >> ppid >> pgrp)) continue;
    p.pid = static_cast<pid_t>(std::atol(e->d_name));
    p.ppid = static_cast<pid_t>(ppid);
    p.pgrp = static_cast<pid_t>(pgrp);
    out.push_back(p);
  }
  closedir(d);
  return out;
}

// Whether a process of group `pgid` other than a zombie is left.
bool group_has_live_members(pid_t pgid) {
  const std::vector<ProcEntry> all = proc_entries();
  return std::any_of(all.begin(), all.end(), [&](const ProcEntry& p) { return p.pgrp == pgid && p.state != "Z"; });
}

// The live processes descending from `root` (its children, theirs, ...).
std::vector<ProcEntry> live_descendants(pid_t root) {
  const std::vector<ProcEntry> all = proc_entries();
  std::vector<pid_t> frontier = {root};
  std::vector<ProcEntry> out;
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    for (const ProcEntry& p : all)
      if (p.ppid == parent) {
        frontier.push_back(p.pid);
        if (p.state != "Z") out.push_back(p);
      }
  }
  return out;
}

}  // namespace

std::string escaped_line(const std::string& line, std::size_t max_chars) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (out.size() >= max_chars) return out + "...";
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    } else if (c == 0xc2 && i + 1 < line.size() && static_cast<unsigned char>(line[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(line[i + 1]) <= 0x9f) {  // U+0080..U+009F: C1 controls (CSI is U+009B)
      const auto d = static_cast<unsigned char>(line[++i]);
      out += "\\u00";
      out += digits[d >> 4];
      out += digits[d & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void ProgramLedger::add_escaped(const std::vector<pid_t>& pids) {
  std::lock_guard<std::mutex> lock(mutex_);
  escaped_.insert(pids.begin(), pids.end());
}

std::size_t ProgramLedger::escaped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return escaped_.size();
}

std::vector<pid_t> CommandProcess::signal_escaped(int sig) {
  std::vector<pid_t> escaped;
  if (pid_ <= 0) return escaped;
  for (const ProcEntry& p : live_descendants(getpid()))
    if (p.pgrp != pid_ && p.pid != keeper_ && p.pgrp != keeper_) {
      kill(p.pid, sig);
      escaped.push_back(p.pid);
    }
  ledger_->add_escaped(escaped);
  return escaped;
}

// After the group is dead: whatever still descends from the worker outside it escaped the group. Killed,
// waited for (at most 2 s) and reaped where it is the worker's child; named on stderr (the worker's log).
void CommandProcess::kill_escaped() {
  std::vector<pid_t> named;
  const std::int64_t deadline = open_loop_now_ns() + 2'000'000'000;
  for (;;) {
    const std::vector<pid_t> escaped = signal_escaped(SIGKILL);
    for (pid_t p : escaped)
      if (std::find(named.begin(), named.end(), p) == named.end()) named.push_back(p);
    if (escaped.empty() || open_loop_now_ns() > deadline) break;
    const timespec tick{0, 1'000'000};
    nanosleep(&tick, nullptr);
  }
  for (const ProcEntry& p : proc_entries())  // the escaped that were re-parented to us (subreaper)
    if (p.ppid == getpid() && p.state == "Z" && p.pid != pid_ && p.pid != keeper_ &&
        std::find(named.begin(), named.end(), p.pid) != named.end())
      waitpid(p.pid, nullptr, WNOHANG);
  if (named.empty()) return;
  std::string list;
  for (pid_t p : named) list += (list.empty() ? "" : ", ") + std::to_string(p);
  std::fprintf(stderr, "interference-bench worker: %zu process(es) of the program had left its process group "
               "(pid %s): killed with it\n", named.size(), list.c_str());
}

void CommandProcess::kill_and_reap() {
  if (!reaped_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    // SIGKILL is delivered, not yet acted on: wait (at most 2 s) until every member of the group is
    // dead, so nothing of the program outlives the worker's teardown, not even for a moment.
    const std::int64_t deadline = open_loop_now_ns() + 2'000'000'000;
    while (group_has_live_members(pid_) && open_loop_now_ns() < deadline) {
      const timespec tick{0, 1'000'000};
      nanosleep(&tick, nullptr);
    }
  }
  // The keeper kills the group once more (the leader is not yet reaped, so its id cannot be reused).
  if (lifeline_fd_ >= 0) close(lifeline_fd_);
  lifeline_fd_ = -1;
  if (keeper_ > 0) waitpid(keeper_, nullptr, 0);
  keeper_ = -1;
  if (!reaped_ && pid_ > 0) {
    kill_escaped();  // before the leader is reaped: its pid (the group's id) cannot be reused meanwhile
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  // The group is dead, so the pipe's writers are gone, unless a process left the group (setsid)
  // with our stdout: the output thread gives up on its own after a second (drain_output).
  if (output_thread_.joinable()) output_thread_.join();
}

ProgramExit CommandProcess::poll_exit() {
  if (exit_.exited || reaped_) return exit_;
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_)
    exit_ = exit_from(info);
  return exit_;
}

ProgramExit CommandProcess::wait_exit(double timeout_s) {
  const std::int64_t deadline = open_loop_now_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
  // A pidfd wakes us the moment it exits (a wall sample's end); without one (an old kernel, a
  // seccomp filter) a 1 ms poll.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  for (;;) {
    if (poll_exit().exited || open_loop_now_ns() >= deadline) break;
    const int left_ms = static_cast<int>(std::max<std::int64_t>(1, (deadline - open_loop_now_ns()) / 1000000));
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, left_ms);
    } else {
      const timespec tick{0, 1'000'000};
      nanosleep(&tick, nullptr);
    }
  }
  if (pidfd >= 0) close(pidfd);
  return exit_;
}

void CommandProcess::pause() {
  kill(-pid_, SIGSTOP);
  signal_escaped(SIGSTOP);
}
void CommandProcess::resume() {
  kill(-pid_, SIGCONT);
  signal_escaped(SIGCONT);
}

bool CommandProcess::terminate(double timeout_s) {
  if (poll_exit().exited) return true;
  kill(-pid_, SIGCONT);
  kill(-pid_, SIGTERM);
  if (wait_exit(timeout_s).exited) return true;
  kill(-pid_, SIGKILL);
  return false;
}

std::vector<std::string> CommandProcess::tail() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {tail_.begin(), tail_.end()};
}

std::string CommandProcess::tail_text() {
  if (poll_exit().exited) {
    std::unique_lock<std::mutex> lock(mutex_);
    output_closed_cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return output_closed_; });
  }
  const auto lines = tail();
  if (lines.empty()) return "; no output";
  std::string s = "; last output:";
  for (const auto& l : lines) s += " | " + l;
  return s;
}

bool CommandProcess::output_closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return output_closed_;
}

void CommandProcess::drain_output(int fd) {
  std::string partial;
  bool cut = false;  // the current line passed kMaxLineBytes: the rest of it is dropped
  std::int64_t gone_since = 0;  // when the group was seen dead (reaped_ is set under no lock: read pid instead)
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, 200);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      // Nothing for 200 ms: once the group is gone, wait at most a second for a stray writer.
      if (kill(-pid_, 0) != 0) {
        if (gone_since == 0) gone_since = open_loop_now_ns();
        if (open_loop_now_ns() - gone_since > 1'000'000'000) break;
      }
      continue;
    }
    const ssize_t got = read(fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    const std::int64_t at = open_loop_now_ns();
    const std::size_t used = ledger_->log_bytes.load();
    if (log_fd_ >= 0 && used < kMaxLogBytes) {
      const std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(got), kMaxLogBytes - used);
      if (write(log_fd_, buf, keep) < 0) {
      }
      ledger_->log_bytes += keep;
      if (used + keep == kMaxLogBytes) {
        const char note[] = "\n[interference-bench: the program's output beyond 16 MiB is not kept]\n";
        if (write(log_fd_, note, sizeof(note) - 1) < 0) {
        }
      }
    }
    for (ssize_t i = 0; i < got; ++i) {
      const char c = buf[i];
      if (c != '\n' && c != '\r') {  // '\r' too: progress bars (tqdm) redraw one line with it
        if (partial.size() < kMaxLineBytes) partial.push_back(c);
        else cut = true;
        continue;
      }
      if (partial.empty()) continue;  // "\r\n", blank lines
      {
        std::lock_guard<std::mutex> lock(mutex_);
        tail_.push_back(escaped_line(partial));
        if (tail_.size() > kTailLines) tail_.pop_front();
      }
      if (on_line_ && !cut) on_line_(partial, at);
      partial.clear();
      cut = false;
    }
  }
  if (!partial.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    tail_.push_back(escaped_line(partial));
    if (tail_.size() > kTailLines) tail_.pop_front();
  }
  close(fd);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    output_closed_ = true;
  }
  output_closed_cv_.notify_all();
}

}  // namespace ib
