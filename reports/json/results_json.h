// The canonical JSON result (reports/results.schema.json). Formats the result structs; computes nothing.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"
#include "reports/writer_common.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// include_raw=false (--no-raw) drops the per-sample arrays.
nlohmann::ordered_json results_to_json(const Results& results, bool include_raw);

// One aggregate as results.json writes it (selftest quotes the victim's).
nlohmann::ordered_json aggregate_to_json(const TenantAggregate& aggregate);

// meta.devices[] as results.json writes it.
nlohmann::ordered_json devices_to_json(const std::vector<DeviceRecord>& devices);

// results.json (see ResultsFile).
class JsonResultsFile : public ResultsFile {
 public:
  JsonResultsFile(std::string path, bool include_raw) : ResultsFile(std::move(path)), include_raw_(include_raw) {}

 protected:
  std::string text(const Results& results) const override;

 private:
  bool include_raw_;
};

}  // namespace ib
