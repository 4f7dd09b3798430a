// How the orchestrator starts its workers, talks to them, and waits: a seam (docs/design.md section 2) in
// the manner of hyperfine's injectable executor. The real launcher starts processes (posix_spawn, in
// their own process group, harness/process); tests give the orchestrator a scripted fake that plays
// worker behaviour without processes and advances time itself (tests/unit/fake_launcher.h), so every
// path of the orchestration runs deterministically, whatever the speed of the machine.
#pragma once

#include "harness/process/process.h"
#include "harness/worker/protocol.h"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// One started worker: its control sink, its report source, its exit.
class WorkerChannel {
 public:
  virtual ~WorkerChannel() = default;  // a worker still running is killed and reaped
  // The process, for the foreign-load accounting; -1 when there is none (a fake).
  virtual pid_t pid() const = 0;
  // Writes `text` (whole control lines) to the worker; false when it cannot (the worker is gone).
  virtual bool send(const std::string& text) = 0;
  // The worker reads end of file on its control input.
  virtual void close_control() = 0;
  // Appends the complete report lines available now (call when Clock::wait said readable). After
  // `closed` or `overlong` the source is closed and reads nothing more.
  virtual ReadStatus read_reports(std::vector<std::string>& lines) = 0;
  // The report source as a descriptor poll() can wait on; -1 when closed or not a descriptor.
  virtual int report_fd() const = 0;
  // The exit status once the worker has exited (reaped; whatever it left in its process group is
  // killed), nullopt while it runs.
  virtual std::optional<ExitStatus> poll_exit() = 0;
  // SIGKILL to the worker and everything it started (its process group). No-op once reaped.
  virtual void kill() = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts a worker. Throws std::runtime_error when it cannot be started.
  virtual std::unique_ptr<WorkerChannel> start(const SpawnSpec& spec) = 0;
};

// Time as the orchestrator sees it, and its one way of waiting.
class Clock {
 public:
  virtual ~Clock() = default;
  // CLOCK_MONOTONIC nanoseconds: the clock of the workers' sample times.
  virtual std::int64_t now_ns() = 0;
  // Waits at most `timeout_ms` until one of `channels` has reports (or end of file) to read; sets
  // readable[i] for those (sized like channels).
  virtual void wait(const std::vector<WorkerChannel*>& channels, int timeout_ms, std::vector<char>& readable) = 0;
};

// Worker processes (spawn_process), reports read through a LineReader bounded at kMaxReportLineBytes.
class ProcessLauncher final : public Launcher {
 public:
  std::unique_ptr<WorkerChannel> start(const SpawnSpec& spec) override;
};

// monotonic_ns() and poll(2) on the channels' report descriptors, and on `wake_fd` (StopSignals::fd(),
// or -1) so that a stop signal ends a wait at once. The caller reads wake_fd.
class SystemClock final : public Clock {
 public:
  explicit SystemClock(int wake_fd = -1) : wake_fd_(wake_fd) {}
  std::int64_t now_ns() override;
  void wait(const std::vector<WorkerChannel*>& channels, int timeout_ms, std::vector<char>& readable) override;

 private:
  int wake_fd_;
};

}  // namespace ib
