#include "harness/cli/app.h"
#include "harness/core/stop_signals.h"

// The stop signals are blocked before anything else of this program runs: from the executable's
// .preinit_array, which the dynamic loader runs right after mapping and relocating the libraries and
// before any of their initialisers or this program's static ones. One that arrives while the process
// starts is held and answered by run_app's StopSignals with the run's clean-up (exit 130), not by its
// default action (143). Only the kernel's exec and the loader's mapping of the (few: no CUDA library,
// harness/exec/cuda_module.h) libraries come before this.
static void block_stop_signals_first() { ib::StopSignals::block_early(); }
__attribute__((section(".preinit_array"), used)) static void (*const ib_preinit_block_signals)() =
    block_stop_signals_first;

int main(int argc, char** argv) { return ib::run_app(argc, argv); }
