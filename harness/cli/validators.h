// Checks of option values that CLI11's own do not make: its Range and PositiveNumber let NaN through
// (every comparison with NaN is false), and an unsigned option takes "-1" as 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string>

namespace ib {

// A finite number in [lo, hi]; with `above_lo`, in (lo, hi].
inline CLI::Validator number_in(double lo, double hi, bool above_lo = false) {
  const std::string range = std::string(above_lo ? "(" : "[") + CLI::detail::to_string(lo) + ", " +
                            CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, above_lo, range](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        const bool whole = end != text.c_str() && *end == '\0' && errno == 0;
        if (!whole || !std::isfinite(v) || v > hi || v < lo || (above_lo && v == lo))
          return "expected a number in " + range + ", got " + text.substr(0, 40);
        return "";
      },
      "NUMBER in " + range);
}

// A non-negative integer that fits in 64 bits, written in digits ("-1" and "1e3" are refused).
inline CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        std::strtoull(text.c_str(), &end, 10);
        if (!digits || errno == ERANGE) return "expected an integer in [0, 18446744073709551615], got " + text.substr(0, 40);
        return "";
      },
      "UINT");
}

// A path or name: an empty one is refused (`--suite ''` ran the whole quick suite, `--junit ''` was
// ignored without a word).
inline CLI::Validator non_empty() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "expected a path or name, got an empty string" : ""; },
                        "TEXT");
}

// A MIG GPU-instance profile name as nvidia-smi writes it ("1g.18gb", "1g.35gb+me", "3g.71gb").
inline CLI::Validator mig_profile_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const std::regex profile(R"(^[0-9]+g\.[0-9]+gb(\+[a-z]+)?$)");
        if (!std::regex_match(text, profile))
          return "expected MIG profile names like 3g.71gb,3g.71gb, got \"" + text.substr(0, 40) + "\"";
        return "";
      },
      "PROFILE[,PROFILE...]");
}

}  // namespace ib
