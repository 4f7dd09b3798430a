#include "harness/run/launcher.h"

#include "harness/core/clock.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ib {

namespace {

class ProcessChannel final : public WorkerChannel {
 public:
  explicit ProcessChannel(ChildProcess proc) : proc_(proc) {}
  ~ProcessChannel() override {
    close_fd(proc_.control_fd);
    close_fd(proc_.report_fd);
    if (!exit_) {
      kill_process_group(proc_.pid, SIGKILL);
      wait_for(proc_.pid);
    }
  }
  ProcessChannel(const ProcessChannel&) = delete;
  ProcessChannel& operator=(const ProcessChannel&) = delete;

  pid_t pid() const override { return proc_.pid; }
  bool send(const std::string& text) override { return write_all(proc_.control_fd, text); }
  void close_control() override { close_fd(proc_.control_fd); }
  int report_fd() const override { return proc_.report_fd; }

  ReadStatus read_reports(std::vector<std::string>& lines) override {
    if (proc_.report_fd < 0) return ReadStatus::closed;
    const ReadStatus status = read_lines(proc_.report_fd, reader_, lines);
    if (status != ReadStatus::open) close_fd(proc_.report_fd);
    return status;
  }

  std::optional<ExitStatus> poll_exit() override {
    if (!exit_) exit_ = try_wait_group(proc_.pid);
    return exit_;
  }

  void kill() override {
    if (!exit_) kill_process_group(proc_.pid, SIGKILL);
  }

 private:
  ChildProcess proc_;
  LineReader reader_{kMaxReportLineBytes};
  std::optional<ExitStatus> exit_;  // set once reaped: the pid may be reused after that
};

}  // namespace

std::unique_ptr<WorkerChannel> ProcessLauncher::start(const SpawnSpec& spec) {
  ChildProcess proc = spawn_process(spec);
  auto channel = std::make_unique<ProcessChannel>(proc);  // kills and reaps it on the way out below
  const int flags = fcntl(proc.report_fd, F_GETFL);
  if (flags < 0 || fcntl(proc.report_fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("cannot make the report pipe non-blocking: ") + std::strerror(errno));
  return channel;
}

std::int64_t SystemClock::now_ns() { return monotonic_ns(); }

void SystemClock::wait(const std::vector<WorkerChannel*>& channels, int timeout_ms, std::vector<char>& readable) {
  std::vector<pollfd> fds;
  for (const WorkerChannel* c : channels) fds.push_back({c->report_fd(), POLLIN, 0});  // fd -1 is ignored
  if (wake_fd_ >= 0) fds.push_back({wake_fd_, POLLIN, 0});
  readable.assign(channels.size(), 0);
  int n;
  do n = poll(fds.data(), fds.size(), timeout_ms);
  while (n < 0 && errno == EINTR);
  if (n < 0) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  for (std::size_t i = 0; i < channels.size(); ++i) readable[i] = fds[i].revents != 0;
}

}  // namespace ib
