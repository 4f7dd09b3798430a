// Worker processes: started without a shell (posix_spawn), in their own process group, with a
// control pipe on stdin (harness -> worker), a report pipe on fd 3 (worker -> harness) and
// stdout/stderr in a log file.
#pragma once

#include <sys/types.h>

#include <optional>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ib {

constexpr int kWorkerReportFd = 3;

struct SpawnSpec {
  std::string exe;
  std::vector<std::string> args;         // argv[1..]
  std::vector<std::string> env;          // "KEY=VALUE" set on top of the harness's environment
  std::string log_path;                  // stdout and stderr of the worker
  std::vector<std::string> env_unset;    // names removed from the harness's environment (before env);
                                         // "PREFIX*" removes every name that starts with PREFIX
  int node = 0;          // which node of a run across nodes starts it (0: this one; nodes/remote_launcher.h)
  int channel_fd = -1;   // >= 0: the worker's stdin and fd 3 are this connected socket, not pipes
};

struct ChildProcess {
  pid_t pid = -1;
  int control_fd = -1;  // write end of the worker's stdin (-1 with a channel_fd)
  int report_fd = -1;   // read end of the worker's fd 3 (-1 with a channel_fd)
};

// Throws std::runtime_error when the process cannot be started.
ChildProcess spawn_process(const SpawnSpec& spec);

struct ExitStatus {
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string lost;  // a worker on another node whose node was lost: "node 1 (host) was lost" (nodes/remote_launcher.h)
  std::string describe() const;  // "exit code 3", "killed by signal 6 (Aborted)", or `lost`
};

std::optional<ExitStatus> try_wait(pid_t pid);  // nullopt while running
ExitStatus wait_for(pid_t pid);                  // blocks
// For a process that leads its own group (spawn_process): nullopt while it runs; once it exited,
// SIGKILL to what is left in its group (what the worker started and left behind), then it is reaped.
std::optional<ExitStatus> try_wait_group(pid_t leader);
void kill_process_group(pid_t pid, int sig);     // the worker and anything it started
// Writes all of `text`; false when the reader is gone (EPIPE), on error, or for fd -1.
bool write_all(int fd, const std::string& text);
void close_fd(int& fd);                          // closes fd (when >= 0) and sets it to -1

std::string self_exe_path();

}  // namespace ib

namespace ib {

// A short helper command (e.g. nvidia-cuda-mps-control): found on PATH, started without a shell,
// fed `stdin_text`, its stdout+stderr captured, killed when it outlives `timeout_s`.
struct CommandResult {
  bool started = false;     // false: not found / could not start (see output)
  bool timed_out = false;
  bool interrupted = false;  // `stop` said so and the helper was sent SIGTERM
  ExitStatus status;
  std::string output;
  bool ok() const { return started && !timed_out && status.exit_code == 0; }
};
// This process's environment, by name.
std::map<std::string, std::string> current_environment();

// `env` and `env_unset` as in SpawnSpec. Throws std::runtime_error when no pipe can be made. Once
// `stop` (asked every 50 ms) says so, the helper gets SIGTERM once and is waited for as before (a
// measuring step of vet then writes what it finished and exits 130).
CommandResult run_helper_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                 const std::string& stdin_text, double timeout_s,
                                 const std::vector<std::string>& env_unset = {},
                                 const std::function<bool()>& stop = {});

// The full path of `name` on $PATH, or "" when it is not there.
std::string find_on_path(const std::string& name);

}  // namespace ib
