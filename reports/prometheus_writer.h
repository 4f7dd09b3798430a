// Prometheus text exposition format for node-exporter's textfile collector (docs/design.md section 8): per
// tenant verdict (aggregates[]) interference_bench_p95_slowdown, _median_slowdown and _verdict (one
// series per verdict word, 1 for the tenant's), and per repetition and phase (exclusive, colocated)
// _throughput, _window_cv and _throttled_fraction; labels scenario, mode, tenant, workload, gpu_uuid
// (meta.devices, empty with the host backend), node (+ repetition, phase). A figure that is null in
// results.json has no sample. No timestamps (the collector forbids them). Formats; computes nothing.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// A label value escaped as the exposition format says: backslash, double quote and line feed.
std::string prometheus_label_value(const std::string& value);

std::string prometheus_text(const Results& results);

// The pieces the other Prometheus writers share (fleet_writer.h).
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

class PrometheusResultsFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return prometheus_text(results); }
};

}  // namespace ib
