#include "harness/process/process.h"

#include "harness/core/errors.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>
#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

extern char** environ;

namespace ib {

namespace {
[[noreturn]] void sys_fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// RAII for posix_spawn's attribute and file-action objects.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
};
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
  int control[2], report[2];
  if (pipe2(control, O_CLOEXEC) != 0) sys_fail("pipe2", errno);
  if (pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(control[0]);
    ::close(control[1]);
    sys_fail("pipe2", e);
  }
  SpawnSetup s;
  // stdin <- control pipe, fd 3 -> report pipe, stdout+stderr -> log file. dup2 clears
  // FD_CLOEXEC on the targets; every other descriptor of ours is close-on-exec.
  posix_spawn_file_actions_adddup2(&s.actions, control[0], 0);
  posix_spawn_file_actions_adddup2(&s.actions, report[1], kWorkerReportFd);
  posix_spawn_file_actions_addopen(&s.actions, 1, spec.log_path.empty() ? "/dev/null" : spec.log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&s.actions, 1, 2);

  // Own process group (a terminal's Ctrl-C reaches the harness only, which then stops the
  // workers), default dispositions and an empty signal mask whatever the harness blocks/ignores.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&s.attr, &empty);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> argv_s{spec.exe};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_s = merged_environment(spec.env, spec.env_unset);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawn(&pid, spec.exe.c_str(), &s.actions, &s.attr, argv.data(), envp.data());
  ::close(control[0]);
  ::close(report[1]);
  if (rc != 0) {
    ::close(control[1]);
    ::close(report[0]);
    sys_fail("cannot start worker " + spec.exe, rc);
  }
  return {pid, control[1], report[0]};
}

std::string ExitStatus::describe() const {
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

void kill_process_group(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
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

CommandResult run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::string& stdin_text, double timeout_s, const std::vector<std::string>& env_unset) {
  CommandResult r;
  const std::string exe = find_on_path(argv.at(0));
  if (exe.empty()) {
    r.output = argv[0] + ": not found on PATH";
    return r;
  }
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) sys_fail("pipe2", errno);
  if (pipe2(out, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(in[0]);
    ::close(in[1]);
    sys_fail("pipe2", e);
  }
  SpawnSetup s;
  posix_spawn_file_actions_adddup2(&s.actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&s.actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&s.actions, out[1], 2);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&s.attr, &empty);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> args = argv;
  args[0] = exe;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env_s = merged_environment(env, env_unset);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &s.actions, &s.attr, cargv.data(), envp.data());
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    r.output = exe + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  // The input is a line or two: far below the pipe buffer, so this write cannot block.
  (void)!::write(in[1], stdin_text.data(), stdin_text.size());
  ::close(in[1]);
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char buf[4096];
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double elapsed = static_cast<double>(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
    if (elapsed > timeout_s) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      const ssize_t n = ::read(out[0], buf, sizeof(buf));
      if (n <= 0) break;  // the command (and anything it left holding the pipe) closed it
      if (r.output.size() < 65536) r.output.append(buf, static_cast<std::size_t>(n));
    } else if (auto st = try_wait(pid)) {
      // Exited (a daemonising command may leave a child holding the pipe open: do not wait for EOF).
      ::close(out[0]);
      r.status = *st;
      return r;
    }
  }
  ::close(out[0]);
  // Output closed (or timed out and killed): reap, still bounded by the timeout.
  for (;;) {
    if (auto st = try_wait(pid)) {
      r.status = *st;
      return r;
    }
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (static_cast<double>(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9 > timeout_s) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    poll(nullptr, 0, 10);
  }
}

}  // namespace ib
