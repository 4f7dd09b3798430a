#include "harness/process/process.h"

#include "harness/core/clock.h"
#include "harness/core/errors.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace ib {

namespace {
[[noreturn]] void sys_fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// A posix_spawn* call's result (an error number, not errno).
void spawn_check(int rc, const char* what) {
  if (rc != 0) sys_fail(what, rc);
}

// RAII for posix_spawn's attribute and file-action objects.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    spawn_check(posix_spawnattr_init(&attr), "posix_spawnattr_init");
    if (const int rc = posix_spawn_file_actions_init(&actions)) {
      posix_spawnattr_destroy(&attr);
      sys_fail("posix_spawn_file_actions_init", rc);
    }
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  void dup2(int from, int to) { spawn_check(posix_spawn_file_actions_adddup2(&actions, from, to), "posix_spawn_file_actions_adddup2"); }
  // An empty signal mask and the default disposition of `signals`, whatever the harness blocks or
  // ignores; `own_group`: the child leads a new process group.
  void reset_signals(std::initializer_list<int> signals, bool own_group) {
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    for (int sig : signals) sigaddset(&defaults, sig);
    spawn_check(posix_spawnattr_setsigmask(&attr, &empty), "posix_spawnattr_setsigmask");
    spawn_check(posix_spawnattr_setsigdefault(&attr, &defaults), "posix_spawnattr_setsigdefault");
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (own_group) {
      spawn_check(posix_spawnattr_setpgroup(&attr, 0), "posix_spawnattr_setpgroup");
      flags |= POSIX_SPAWN_SETPGROUP;
    }
    spawn_check(posix_spawnattr_setflags(&attr, flags), "posix_spawnattr_setflags");
  }
};

// A pipe with both ends close-on-exec; closes what it still holds when destroyed.
struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) sys_fail("pipe2", errno);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_fd(read);
    close_fd(write);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int release_read() { return std::exchange(read, -1); }
  int release_write() { return std::exchange(write, -1); }
};

// argv or envp for exec: pointers into `strings`, then nullptr.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The harness's environment without the names in `unset` (a name ending in '*' is a prefix: "CUDA_MPS_*"),
// with `overrides` ("KEY=VALUE") set on top.
std::vector<std::string> merged_environment(const std::vector<std::string>& overrides,
                                            const std::vector<std::string>& unset) {
  std::map<std::string, std::string> env = current_environment();
  for (const auto& name : unset) {
    if (!name.empty() && name.back() == '*') {
      const std::string prefix = name.substr(0, name.size() - 1);
      for (auto it = env.begin(); it != env.end();) it = it->first.rfind(prefix, 0) == 0 ? env.erase(it) : std::next(it);
    } else {
      env.erase(name);
    }
  }
  for (const auto& kv : overrides) {
    const auto eq = kv.find('=');
    env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}
}  // namespace

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

ChildProcess spawn_process(const SpawnSpec& spec) {
  Pipe control, report;
  SpawnSetup s;
  // stdin <- control pipe, fd 3 -> report pipe, stdout+stderr -> log file (a new file: never one
  // planted there, never through a symlink; each worker of a run has its own name). dup2 clears
  // FD_CLOEXEC on the targets; every other descriptor of ours is close-on-exec.
  const bool socket = spec.channel_fd >= 0;
  s.dup2(socket ? spec.channel_fd : control.read, 0);
  s.dup2(socket ? spec.channel_fd : report.write, kWorkerReportFd);
  const bool no_log = spec.log_path.empty();
  spawn_check(posix_spawn_file_actions_addopen(&s.actions, 1, no_log ? "/dev/null" : spec.log_path.c_str(),
                                               no_log ? O_WRONLY : O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644),
              "posix_spawn_file_actions_addopen");
  s.dup2(1, 2);
  // Own process group (a terminal's Ctrl-C reaches the harness only, which then stops the workers;
  // and kill_process_group reaches whatever a worker starts).
  s.reset_signals({SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}, true);

  std::vector<std::string> argv_s{spec.exe};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env_s = merged_environment(spec.env, spec.env_unset);
  const std::vector<char*> argv = c_strings(argv_s), envp = c_strings(env_s);

  pid_t pid = -1;
  const int rc = posix_spawn(&pid, spec.exe.c_str(), &s.actions, &s.attr, argv.data(), envp.data());
  // posix_spawn reports a failed file action (the log) like a failed exec: tell them apart. E2BIG is the
  // arguments and environment together past the kernel's limit (a command tenant's huge argv or env value).
  if (rc == E2BIG) {
    std::size_t bytes = 0;
    for (const auto& a : argv_s) bytes += a.size() + 1;
    for (const auto& e : env_s) bytes += e.size() + 1;
    sys_fail("cannot start worker " + spec.exe + ": its arguments and environment (" + std::to_string(bytes) +
                 " bytes; one string may hold at most 128 KiB) are too long for the kernel",
             rc);
  }
  if (rc != 0 && !no_log && ::access(spec.exe.c_str(), X_OK) == 0)
    sys_fail("cannot start worker " + spec.exe + ": cannot create its log " + spec.log_path +
                 (rc == EEXIST ? " (a file or symlink is already there)" : ""),
             rc);
  if (rc != 0) sys_fail("cannot start worker " + spec.exe, rc);
  if (socket) return {pid, -1, -1};
  return {pid, control.release_write(), report.release_read()};  // the child's ends close with the Pipes
}

std::string ExitStatus::describe() const {
  if (!lost.empty()) return lost;
  if (signal) {
    const char* name = strsignal(*signal);
    return "killed by signal " + std::to_string(*signal) + (name ? std::string(" (") + name + ")" : "");
  }
  if (exit_code) return "exit code " + std::to_string(*exit_code);
  return "unknown";
}

namespace {
ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}
}  // namespace

std::optional<ExitStatus> try_wait(pid_t pid) {
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return std::nullopt;
  if (r < 0) return ExitStatus{};  // already reaped or not ours: treat as gone
  return decode(status);
}

ExitStatus wait_for(pid_t pid) {
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0) return ExitStatus{};
  return decode(status);
}

std::optional<ExitStatus> try_wait_group(pid_t leader) {
  siginfo_t info{};
  int r;
  do r = waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED | WNOHANG | WNOWAIT);
  while (r < 0 && errno == EINTR);
  if (r < 0) return ExitStatus{};             // already reaped or not ours: treat as gone
  if (info.si_pid == 0) return std::nullopt;  // still running
  // Not reaped yet, the leader's pid (the group's id) cannot be reused: this reaches exactly what
  // the worker left behind in its group.
  kill_process_group(leader, SIGKILL);
  return wait_for(leader);
}

void kill_process_group(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

bool write_all(int fd, const std::string& text) {
  if (fd < 0) return false;
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string self_exe_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw CannotRunError("cannot read /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace ib

namespace ib {

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return "";
}

namespace {

// Seconds since `start_ns`.
double seconds_since(std::int64_t start_ns) { return static_cast<double>(monotonic_ns() - start_ns) * 1e-9; }

// Starts a helper command without a shell: stdin <- in, stdout and stderr -> out. The pid, or -1 with
// the reason in `why`.
pid_t start_helper(const std::string& exe, const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::vector<std::string>& env_unset, const Pipe& in, const Pipe& out, std::string& why) {
  SpawnSetup s;
  s.dup2(in.read, 0);
  s.dup2(out.write, 1);
  s.dup2(out.write, 2);
  s.reset_signals({SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}, false);
  std::vector<std::string> args = argv;
  args[0] = exe;
  std::vector<std::string> env_s = merged_environment(env, env_unset);
  const std::vector<char*> cargv = c_strings(args), envp = c_strings(env_s);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &s.actions, &s.attr, cargv.data(), envp.data());
  if (rc == 0) return pid;
  why = exe + ": " + std::strerror(rc);
  return -1;
}

// Reads the helper's output until it closes it or exits (a daemonising command may leave a child
// holding the pipe open: its exit is enough), or until the timeout (then it is killed). True when
// its exit status is already in `r`.
// Sends the helper SIGTERM the first time `stop` says so.
void forward_stop(pid_t pid, const std::function<bool()>& stop, CommandResult& r) {
  if (stop && !r.interrupted && stop()) {
    r.interrupted = true;
    ::kill(pid, SIGTERM);
  }
}

bool collect_helper_output(pid_t pid, int out_fd, std::int64_t start_ns, double timeout_s,
                           const std::function<bool()>& stop, CommandResult& r) {
  constexpr std::size_t kMaxOutput = 65536;
  char buf[4096];
  for (;;) {
    forward_stop(pid, stop, r);
    if (seconds_since(start_ns) > timeout_s) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      return false;
    }
    pollfd p{out_fd, POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) return false;
    if (ready > 0) {
      ssize_t n;
      do n = ::read(out_fd, buf, sizeof(buf));
      while (n < 0 && errno == EINTR);
      if (n <= 0) return false;  // the command (and anything it left holding the pipe) closed it
      if (r.output.size() < kMaxOutput) r.output.append(buf, static_cast<std::size_t>(n));
    } else if (auto st = try_wait(pid)) {
      r.status = *st;
      return true;
    }
  }
}

// Reaps the helper, still bounded by the timeout (then it is killed and reaped).
void reap_helper(pid_t pid, std::int64_t start_ns, double timeout_s, const std::function<bool()>& stop,
                 CommandResult& r) {
  for (;;) {
    forward_stop(pid, stop, r);
    if (auto st = try_wait(pid)) {
      r.status = *st;
      return;
    }
    if (!r.timed_out && seconds_since(start_ns) > timeout_s) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    poll(nullptr, 0, 10);
  }
}

}  // namespace

CommandResult run_helper_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                 const std::string& stdin_text, double timeout_s, const std::vector<std::string>& env_unset,
                                 const std::function<bool()>& stop) {
  CommandResult r;
  const std::string exe = find_on_path(argv.at(0));
  if (exe.empty()) {
    r.output = argv[0] + ": not found on PATH";
    return r;
  }
  Pipe in, out;
  const pid_t pid = start_helper(exe, argv, env, env_unset, in, out, r.output);
  close_fd(in.read);
  close_fd(out.write);
  if (pid < 0) return r;
  r.started = true;
  // The input is a line or two: far below the pipe buffer, so this write cannot block. A helper that
  // exits without reading it is no error here: its exit status says how it went.
  (void)write_all(in.write, stdin_text);
  close_fd(in.write);
  const std::int64_t start_ns = monotonic_ns();
  if (!collect_helper_output(pid, out.read, start_ns, timeout_s, stop, r)) reap_helper(pid, start_ns, timeout_s, stop, r);
  return r;
}

}  // namespace ib
