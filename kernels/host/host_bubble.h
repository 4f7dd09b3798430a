// host-bubble: the calibrated, tunable pressure of `matrix --predict` on the host backend (docs/design.md
// section 14, docs/methodology.md "Predicted co-location"), after Bubble-Up's bubble (MICRO'11). Each sample is
// one period of `period_ms`; the bubble is busy for `level` x period of it (wall time, from the sample's start)
// and sleeps the rest, so `level` is the share of every period it competes for its core. With `mib` > 0 its
// busy time streams a buffer of that size (read and write each cache line) instead of spinning, so it presses
// on memory bandwidth too.
#pragma once

#include "kernels/workload.h"

namespace ib {

void register_host_bubble(Registry& registry);

}  // namespace ib
