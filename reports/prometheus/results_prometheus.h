// Prometheus text exposition format for node-exporter's textfile collector (docs/design.md section 8): per
// tenant verdict (aggregates[]) interference_bench_p95_slowdown, _median_slowdown and _verdict (one
// series per verdict word, 1 for the tenant's), and per repetition and phase (exclusive, colocated)
// _throughput, _window_cv and _throttled_fraction; labels scenario, mode, tenant, workload, gpu_uuid
// (meta.devices, empty with the host backend), node (+ repetition, phase). A figure that is null in
// results.json has no sample. No timestamps (the collector forbids them). Formats; computes nothing.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <string>

namespace ib {

std::string prometheus_text(const Results& results);

class PrometheusResultsFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return prometheus_text(results); }
};

}  // namespace ib
