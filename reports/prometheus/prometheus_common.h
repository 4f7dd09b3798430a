// What the Prometheus texts of a run and of a fleet share: the text exposition format's label escaping, a
// sample's value, gauge families (HELP and TYPE once, then the samples). No timestamps (node-exporter's
// textfile collector forbids them).
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// A label value escaped as the exposition format says: backslash, double quote and line feed.
std::string prometheus_label_value(const std::string& value);

// Labels in order: name, value.
using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;
std::string prometheus_labels(const PrometheusLabels& labels);  // {a="x",b="y"}, values escaped; "" for none
std::string prometheus_sample_value(double v);  // the shortest text that reads back as the same double
// One gauge family: HELP and TYPE once, then its samples (a value that is not finite has none).
class PrometheusFamily {
 public:
  PrometheusFamily(std::ostringstream& os, const char* name, const char* help);
  void sample(const PrometheusLabels& labels, double v);

 private:
  std::ostringstream& os_;
  std::string name_;
};

}  // namespace ib
