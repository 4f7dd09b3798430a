// A private MPS control daemon for one run (docs/design.md section 7): started with its own
// CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY so it cannot collide with a system daemon,
// checked to answer, and quit on every exit path (the destructor quits it). Or an existing daemon
// attached to with --mps-pipe-dir, which is never stopped.
#pragma once

#include "harness/results/results.h"

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace ib {

class Journal;

inline constexpr const char* kMpsControl = "nvidia-cuda-mps-control";
// Every MPS setting a process can inherit (SpawnSpec::env_unset pattern). The harness removes them
// all from what it starts and sets only its own: in the control daemon's environment a value becomes
// every server's default, in a worker it would change the tenant's share.
inline const std::vector<std::string> kInheritedMpsSettings = {"CUDA_MPS_*"};

// The PIDs in the output of "get_server_list" (one per line; other lines are ignored).
std::vector<pid_t> parse_server_list(const std::string& output);

class MpsDaemon {
 public:
  // Starts `nvidia-cuda-mps-control -d` with these (private, created) pipe and log folders. Keep the
  // pipe folder's path short: the daemon puts Unix sockets in it (108-byte limit).
  // Throws CannotRunError when the binary is not on PATH or the daemon does not answer. The start is
  // recorded in `journal` (when given) before it is made, and the quit once it succeeded.
  static std::unique_ptr<MpsDaemon> start(const std::string& pipe_dir, const std::string& log_dir,
                                          Journal* journal = nullptr);
  // A private daemon a killed run left in `pipe_dir` (its journal says so): quit when this goes.
  static std::unique_ptr<MpsDaemon> adopt(const std::string& pipe_dir);
  // Uses a daemon that is already running; throws CannotRunError when it does not answer.
  static std::unique_ptr<MpsDaemon> attach(const std::string& pipe_dir);

  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Sends "quit" to a daemon we started (no-op when attached or already quit). Never throws.
  void quit() noexcept;
  // "quit", "quit failed: ..." after quit(); "" before.
  const std::string& quit_result() const { return quit_result_; }
  // The PIDs of the daemon's MPS servers ("get_server_list"; none before a client connected). NVML
  // lists a server as a compute process of the GPU: it is this run's, not a neighbour. Never throws:
  // a daemon that does not answer has no servers to report.
  std::vector<pid_t> server_pids() const;
  // What every MPS client needs in its environment to reach this daemon.
  std::vector<std::string> client_env() const;
  // What the results record about it (mode_config.mps).
  MpsDaemonInfo describe() const;

 private:
  MpsDaemon(std::string pipe_dir, std::string log_dir, bool owned)
      : pipe_dir_(std::move(pipe_dir)), log_dir_(std::move(log_dir)), owned_(owned) {}
  bool answers() const;

  std::string pipe_dir_;
  std::string log_dir_;
  bool owned_;
  bool running_ = true;
  std::string quit_result_;
  Journal* journal_ = nullptr;
};

}  // namespace ib
