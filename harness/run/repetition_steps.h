// What RepetitionRun's files (repetition.cpp, repetition_workers.cpp, repetition_blocks.cpp,
// repetition_outcomes.cpp, repetition_ranks.cpp) share: seconds as the clock's nanoseconds, and a phase as
// the index of the per-phase block counts (planned_, started_, completed_).
#pragma once

#include "harness/results/results.h"

#include <cstdint>

namespace ib::repetition_steps {

inline std::int64_t ns_of_seconds(double s) { return static_cast<std::int64_t>(s * 1e9); }
inline int phase_index(Phase p) { return static_cast<int>(p); }

}  // namespace ib::repetition_steps
