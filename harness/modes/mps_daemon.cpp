#include "harness/modes/mps_daemon.h"

#include "harness/modes/journal.h"

#include "harness/core/errors.h"
#include "harness/process/process.h"

#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace ib {

namespace {
void make_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    throw CannotRunError("cannot create " + path + ": " + std::strerror(errno));
}
constexpr double kControlTimeout = 10.0;
}  // namespace

std::vector<std::string> MpsDaemon::client_env() const {
  std::vector<std::string> env = {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir_};
  if (!log_dir_.empty()) env.push_back("CUDA_MPS_LOG_DIRECTORY=" + log_dir_);
  return env;
}

bool MpsDaemon::answers() const {
  return run_helper_command({kMpsControl}, client_env(), "get_server_list\n", kControlTimeout, kInheritedMpsSettings).ok();
}

std::vector<pid_t> parse_server_list(const std::string& output) {
  std::vector<pid_t> pids;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string word = line.substr(first, last - first + 1);
    if (word.size() > 9 || word.find_first_not_of("0123456789") != std::string::npos) continue;  // not a PID
    const long pid = std::stol(word);
    if (pid > 0) pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

std::vector<pid_t> MpsDaemon::server_pids() const {
  try {
    const CommandResult r = run_helper_command({kMpsControl}, client_env(), "get_server_list\n", kControlTimeout,
                                               kInheritedMpsSettings);
    return r.ok() ? parse_server_list(r.output) : std::vector<pid_t>{};
  } catch (const std::exception&) {
    return {};
  }
}

std::unique_ptr<MpsDaemon> MpsDaemon::start(const std::string& pipe_dir, const std::string& log_dir, Journal* journal) {
  if (find_on_path(kMpsControl).empty())
    throw CannotRunError(std::string("mode mps needs the MPS control daemon, but ") + kMpsControl +
                         " is not on PATH (it ships with the NVIDIA driver)");
  make_dir(pipe_dir);
  make_dir(log_dir);
  if (journal) journal->record({JournalEvent::mps_intent, 0, {}, pipe_dir});
  std::unique_ptr<MpsDaemon> d(new MpsDaemon(pipe_dir, log_dir, true));
  d->journal_ = journal;
  const CommandResult r = run_helper_command({kMpsControl, "-d"}, d->client_env(), "", kControlTimeout, kInheritedMpsSettings);
  if (!r.ok()) {
    d->running_ = false;  // it did not start: nothing to quit
    if (journal) journal->record({JournalEvent::mps_quit, 0, {}, pipe_dir});
    throw CannotRunError(std::string("cannot start the MPS control daemon (") + kMpsControl + " -d: " +
                         (r.timed_out ? "timed out" : r.status.describe()) + ") " + r.output);
  }
  // The control daemon forks and returns at once; give it a few seconds to answer.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (d->answers()) return d;
    poll(nullptr, 0, 100);
  }
  throw CannotRunError("the MPS control daemon started but does not answer on " + d->pipe_dir_);
  // (the destructor of d quits it)
}

std::unique_ptr<MpsDaemon> MpsDaemon::adopt(const std::string& pipe_dir) {
  return std::unique_ptr<MpsDaemon>(new MpsDaemon(pipe_dir, "", true));
}

std::unique_ptr<MpsDaemon> MpsDaemon::attach(const std::string& pipe_dir) {
  std::unique_ptr<MpsDaemon> d(new MpsDaemon(pipe_dir, "", false));
  if (find_on_path(kMpsControl).empty())
    throw CannotRunError(std::string("--mps-pipe-dir: ") + kMpsControl + " is not on PATH");
  if (!d->answers()) throw CannotRunError("--mps-pipe-dir " + pipe_dir + ": no MPS control daemon answers there");
  return d;
}

void MpsDaemon::quit() noexcept {
  if (!owned_ || !running_) return;
  running_ = false;
  try {
    const CommandResult r = run_helper_command({kMpsControl}, client_env(), "quit\n", kControlTimeout, kInheritedMpsSettings);
    quit_result_ = r.ok() ? "quit" : "quit failed: " + (r.timed_out ? std::string("timed out") : r.status.describe());
    if (r.ok() && journal_) journal_->record({JournalEvent::mps_quit, 0, {}, pipe_dir_});
  } catch (const std::exception& e) {
    quit_result_ = std::string("quit failed: ") + e.what();
  }
}

MpsDaemon::~MpsDaemon() { quit(); }

MpsDaemonInfo MpsDaemon::describe() const {
  return {pipe_dir_, log_dir_,
          owned_ ? "private (started and quit by interference-bench)" : "attached (--mps-pipe-dir; never stopped)",
          "a fatal GPU fault in one MPS client is delivered to every client on the GPU: one tenant's crash "
          "can end its neighbours"};
}

}  // namespace ib
