#include "reports/prometheus/prometheus_common.h"

#include "harness/core/text.h"

#include <cmath>
#include <cstdlib>

namespace ib {

std::string prometheus_label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string prometheus_labels(const PrometheusLabels& labels) {
  if (labels.empty()) return "";
  std::string s = "{";
  for (std::size_t i = 0; i < labels.size(); ++i)
    s += (i ? "," : "") + labels[i].first + "=\"" + prometheus_label_value(labels[i].second) + "\"";
  return s + "}";
}

// Shortest text that reads back as the same double (what results.json holds).
std::string prometheus_sample_value(double v) {
  for (const char* f : {"%.15g", "%.16g"}) {
    const std::string text = formatted(f, v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
  }
  return formatted("%.17g", v);
}

PrometheusFamily::PrometheusFamily(std::ostringstream& os, const char* name, const char* help) : os_(os), name_(name) {
  os_ << "# HELP " << name_ << " " << help << "\n# TYPE " << name_ << " gauge\n";
}

void PrometheusFamily::sample(const PrometheusLabels& labels, double v) {
  if (std::isfinite(v)) os_ << name_ << prometheus_labels(labels) << " " << prometheus_sample_value(v) << "\n";
}

}  // namespace ib
