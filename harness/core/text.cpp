#include "harness/core/text.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <cmath>

namespace ib {

std::string significant(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : "n/a";
}

std::string percent(double fraction, int digits) {
  return std::isfinite(fraction) ? fmt::format("{:.{}g}%", fraction * 100.0, digits) : "n/a";
}

std::string signed_percent(double fraction, int decimals) {
  return std::isfinite(fraction) ? fmt::format("{:+.{}f}%", fraction * 100.0, decimals) : "n/a";
}

std::string fixed_percent(double fraction, int decimals) {
  return std::isfinite(fraction) ? fmt::format("{:.{}f}%", fraction * 100.0, decimals) : "n/a";
}

std::string formatted(const char* printf_format, double v) {
  return std::isfinite(v) ? fmt::sprintf(printf_format, v) : "n/a";
}

}  // namespace ib
