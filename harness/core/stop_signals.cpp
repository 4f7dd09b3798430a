#include "harness/core/stop_signals.h"

#include "harness/core/errors.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <system_error>

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace ib {

namespace {
sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : StopSignals::numbers()) sigaddset(&set, sig);
  return set;
}
}  // namespace

std::string Interrupted::signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

const std::vector<int>& StopSignals::numbers() {
  static const std::vector<int> kNumbers{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  return kNumbers;
}

void StopSignals::block_early() noexcept {
  const sigset_t set = stop_set();
  (void)pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  if (const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0)
    throw std::system_error(rc, std::generic_category(), "pthread_sigmask");
  fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
}

// The signals stay blocked: one that arrives after this would otherwise end the process with its
// default action on the way out, after the cleanup it was meant to wait for.
StopSignals::~StopSignals() {
  if (fd_ >= 0) ::close(fd_);
}

void StopSignals::release() {
  const sigset_t set = stop_set();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  (void)pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

bool StopSignals::requested() {
  signalfd_siginfo info;
  for (;;) {
    const ssize_t n = ::read(fd_, &info, sizeof(info));
    if (n == static_cast<ssize_t>(sizeof(info))) {
      if (signal_ == 0) signal_ = static_cast<int>(info.ssi_signo);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN: nothing (more) pending
  }
  return signal_ != 0;
}

void StopSignals::throw_if_requested() {
  if (requested()) throw Interrupted(signal_);
}

}  // namespace ib
