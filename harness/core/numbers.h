// The one not-a-number every metric takes when it is undefined (an empty phase, a division by zero):
// results write it as null and readers turn null back into it.
#pragma once

#include <limits>

namespace ib {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace ib
