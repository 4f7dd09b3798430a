// The signals that stop a run: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 (docs/design.md
// section 8: exit 130 after cleanup). They are blocked for the whole process and read through a
// signalfd, so no handler runs and every stage (loading, set-up, measuring, analysis, writing, the
// measuring steps of vet) asks at its own points and cleans up on the normal way out.
#pragma once

#include <functional>
#include <vector>

namespace ib {

class StopSignals {
 public:
  // Blocks the stop signals in the calling thread (threads started later inherit the mask) and opens
  // the signalfd. Call it before any thread starts. Throws std::system_error when no signalfd opens.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signals this class stops on.
  static const std::vector<int>& numbers();
  // Blocks them in the calling thread without a signalfd: for the first moment of the program (a
  // constructor in main.cpp), so that one arriving before StopSignals exists is held, not acted on.
  static void block_early() noexcept;
  // Readable while a stop signal is pending: a wait polls it beside its own descriptors.
  int fd() const { return fd_; }
  // True once a stop signal arrived (reads what is pending, never waits; stays true).
  bool requested();
  // The first stop signal that arrived, 0 before one did.
  int signal() const { return signal_; }
  // Gives the stop signals back to their default action (unblocks them, closes the signalfd), for a
  // command that needs no clean-up (a worker, `history`, `report`): call requested() first, or a
  // pending signal takes its default action at once.
  void release();
  // Throws Interrupted (core/errors.h) once requested().
  void throw_if_requested();
  // requested() as a callable, for the long computations that check it now and then.
  std::function<bool()> check() {
    return [this] { return requested(); };
  }

 private:
  int fd_ = -1;
  int signal_ = 0;
};

}  // namespace ib
