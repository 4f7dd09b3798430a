// What more than one format shares (writer_common.h).
#include "reports/writer_common.h"

#include "harness/core/text.h"

#include <algorithm>
#include <cmath>

namespace ib {

nlohmann::ordered_json json_number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json optional_json_number(const std::optional<double>& v) {
  return v ? json_number(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json optional_estimate_json(const std::optional<Estimate>& e) {
  if (!e) return nullptr;
  return {{"value", json_number(e->value)}, {"ci_low", json_number(e->ci_low)}, {"ci_high", json_number(e->ci_high)}};
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

TimeScale time_scale(double seconds) {
  const double a = std::fabs(seconds);
  if (!std::isfinite(a) || a >= 1.0) return {1.0, "s"};
  if (a >= 1e-3) return {1e3, "ms"};
  if (a >= 1e-6) return {1e6, "us"};
  return {1e9, "ns"};
}

std::string phase_value_text(double value, const std::string& value_unit) {
  if (value_unit == "s") return formatted("%.3f", value * 1e3);
  const TimeScale t = time_scale(value);
  return formatted("%.4g", value * t.factor) + " " + t.prefix + value_unit.substr(1);
}

const char* fleet_exit_words(int code) {
  return code == 0 ? "all good" : code == 1 ? "a member failed or is missing" : code == 5 ? "only inconclusive" : "?";
}

std::string sweep_yardstick_words(const SweepYardstick& y) {
  if (y.source == YardstickSource::baseline)
    return "Every layout's slowdowns and STP are against one yardstick: the exclusive phases of the --baseline file " +
           y.baseline_file + ".";
  const std::string on = "each tenant alone once on one " + y.profile + " instance" + (y.uuid.empty() ? "" : " (" + y.uuid + ")");
  if (y.outcome != LayoutOutcome::measured && y.outcome != LayoutOutcome::pending)
    return "No common yardstick (" + (y.profile.empty() ? std::string("no instance for it") : on) + "): " +
           std::string(to_string(y.outcome)) + (y.reason.empty() ? "" : ", " + y.reason) +
           ". The layouts are not run against their own largest instances, which would not be comparable; give one with "
           "--baseline.";
  return "Every layout's slowdowns and STP are against one yardstick: " + on +
         (y.whole_gpu_largest ? ", the GPU's largest" : " (" + y.reason + ")") +
         (y.baseline_file.empty() ? "" : ", read by each layout's run as its --baseline " + y.baseline_file) + ".";
}

std::string sweep_power_words(const std::optional<SweepPower>& p) {
  if (!p || !p->median_w) return "n/a";
  std::string w = significant(*p->median_w, 3) + " W (max " + significant(*p->max_w, 3) + ")";
  if (p->limit_w) w += " of " + significant(*p->limit_w, 3) + " W";
  if (p->power_capped_fraction) w += ", power-capped " + percent(*p->power_capped_fraction);
  return w;
}

std::vector<std::pair<std::string, int>> mig_profile_counts(const std::vector<std::string>& profiles) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& p : profiles) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p; });
    if (it == out.end()) out.push_back({p, 1});
    else ++it->second;
  }
  return out;
}

}  // namespace ib
