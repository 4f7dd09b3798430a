// Formatting helpers shared by the writers (writer_common.h).
#include "reports/writer_common.h"

#include "harness/core/text.h"

#include <cmath>

namespace ib {

nlohmann::ordered_json json_number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json optional_json_number(const std::optional<double>& v) {
  return v ? json_number(*v) : nlohmann::ordered_json(nullptr);
}

std::string markdown_cell(const std::string& s, std::size_t max_chars) {
  std::string out;
  for (char c : printable(s, max_chars)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string p95_words(const std::optional<Estimate>& e) {
  if (!e) return "n/a";
  return signed_percent(e->value) + " [" + signed_percent(e->ci_low) + ", " + signed_percent(e->ci_high) + "]";
}

}  // namespace ib
