#include "harness/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
}  // namespace

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

  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& kv : spec.env) {
    const auto eq = kv.find('=');
    env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
  }
  std::vector<std::string> env_s;
  for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
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
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace ib
