// The advice for a user's own workload: exclusive card or shared (docs/design.md section 11, from seeds 000
// and 004). One function; each rule is judged on its inputs, unknown when an input is unknown.
//
//   peak memory > 70% of the card                      -> exclusive          (seed 000)
//   peak memory < 50% and the P95 verdict a pass        -> shared is possible (seed 000, docs/design.md section 4)
//   P95 slowdown over the cutoff (a fail)               -> exclusive          (docs/design.md section 4)
//   run > 8 h, or it cannot be interrupted              -> exclusive          (seed 000)
//   shared steps >= 2x the exclusive ones               -> exclusive          (seed 004)
//   GPU utilisation < 30%                               -> the bottleneck is data or CPU, not the card (seed 004)
//   cost per step T_s*P_s vs T_e*P_e (both prices)      -> the cheaper one    (seed 000)
//
// The choice: exclusive when a rule pointing there holds; shared when the shared rule holds and no
// exclusive rule holds or is unknown; otherwise unknown, saying what is missing.
#pragma once

#include "harness/results/results.h"

namespace ib {

constexpr double kAdviceExclusiveMemory = 0.70;
constexpr double kAdviceSharedMemory = 0.50;
constexpr double kAdviceLongRunH = 8.0;
constexpr double kAdviceSlowerFactor = 2.0;
constexpr double kAdviceLowUtilPct = 30.0;

Advice advise(const AdviceInputs& in);

}  // namespace ib
