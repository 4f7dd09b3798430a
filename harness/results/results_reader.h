// The one reader of the files this tool writes: a results.json (reports/results.schema.json) back into
// the structs the writers format, and the verdict of a sustain.json; it sits beside those structs so any
// seam may read a file back without the writers (reports/). Nothing else parses them. A file that does not read is bad input: one line naming the file, the field and what is wrong.
#pragma once

#include "harness/core/errors.h"
#include "harness/results/fleet.h"
#include "harness/results/platform_reports.h"
#include "harness/results/results.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib {

// "FILE: FIELD: PROBLEM" (FIELD as runs[0].tenants[1].phases.exclusive.stats.median), or
// "FILE: PROBLEM" for the file as a whole.
class ResultsFileError : public InputError {
 public:
  ResultsFileError(const std::string& file, const std::string& field, const std::string& problem);
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// A results.json read back. Written again (results_to_json with raw_samples), a file with raw samples
// comes out byte for byte the same. A --no-raw file does too unless a phase had telemetry: the file has
// the count of its readings but not the readings, and the writer writes a phase's telemetry object only
// for readings it holds, so that object would be lost.
struct ResultsDocument {
  Results results;
  // meta.raw_samples: false for a file written with --no-raw, whose phases have no per-sample arrays
  // (nor telemetry series) to read back.
  bool raw_samples = true;
};

// Whether a results file of this schema_version reads: the same major as kSchemaVersion, any minor
// (minor versions only add fields; a 2.0 file reads with meta.devices empty).
bool schema_version_readable(const std::string& version, const char* schema_major = kSchemaMajor);

// Reads a results.json of this schema major (schema_version_readable); schema_version keeps the
// file's. Throws ResultsFileError, also for a file without runs (nothing was measured in it).
ResultsDocument read_results_file(const std::string& path);
// The same from its parsed text; `file` names it in errors.
ResultsDocument results_from_json(const nlohmann::ordered_json& doc, const std::string& file);
// Devices in meta.devices[]'s form (a node's hello says its own so); throws ResultsFileError naming `origin`
// and the field.
std::vector<DeviceRecord> devices_from_json(const nlohmann::ordered_json& devices, const std::string& origin);

// The modes of a results file's runs, in order, read without the rest of it: so that a refusal can
// name the reason that matters (a mig run given as a baseline) even in a file the full reader would
// refuse for something else. Throws ResultsFileError when the file is not JSON or has no runs[].
std::vector<std::string> results_file_modes(const std::string& path);

// The verdict, evidence and node of a sustain.json (what vet's sustained-load check and merge quote);
// the rest of the report is not read back. Throws ResultsFileError.
SustainReport read_sustain_verdict(const std::string& path);

// What merge needs of a vet.json: when and where it ran, its verdict and checklist (the cost advice and
// the step budget are not read back). Throws ResultsFileError.
VetReport read_vet_report(const std::string& path);

// A task folder's task.json (deploy/ib-task.sh; docs/fleet.md). Throws ResultsFileError.
TaskRecord read_task_file(const std::string& path);

}  // namespace ib
