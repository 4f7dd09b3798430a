#include "harness/cli/app.h"
#include "harness/core/stop_signals.h"

// The stop signals are blocked before anything else of this program runs (its static initialisers
// included, priority 101 being the first user one): one that arrives while the process starts is held
// and answered by run_app's StopSignals with the run's clean-up (exit 130), not by its default action
// (143). Only the kernel's exec and the dynamic loader's mapping of the libraries come before this.
__attribute__((constructor(101))) static void block_stop_signals_first() { ib::StopSignals::block_early(); }

int main(int argc, char** argv) { return ib::run_app(argc, argv); }
