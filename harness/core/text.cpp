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

std::string printable(const std::string& s, std::size_t max_chars) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  if (out.size() <= max_chars) return out;
  const std::string tail = "... (" + std::to_string(s.size()) + " characters)";
  std::size_t cut = max_chars > tail.size() ? max_chars - tail.size() : 0;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return out.substr(0, cut) + tail;
}

std::string formatted(const char* printf_format, double v) {
  return std::isfinite(v) ? fmt::sprintf(printf_format, v) : "n/a";
}

}  // namespace ib
