// The results reader's entry points (results_reader.h): a results.json, the modes of its runs, a sustain.json's
// verdict, a vet.json and a task.json; the aggregates and summary of a results file. The runs, phases and
// meta are read by results_reader_runs.cpp, _phases.cpp and _meta.cpp (results_reading.h).
#include "harness/results/results_reader.h"

#include "harness/core/json_input.h"
#include "harness/results/results_reading.h"

#include <algorithm>
#include <cstddef>

namespace ib {

using namespace results_reading;

ResultsFileError::ResultsFileError(const std::string& file, const std::string& field, const std::string& problem)
    : InputError(file + ": " + (field.empty() ? "" : field + ": ") + problem), field_(field) {}

namespace {

Advice read_advice(const Field& f) {
  Advice a;
  a.choice = f["choice"].word<CardChoice>();
  a.reason = f["reason"].string();
  const Field in = f["inputs"];
  a.inputs.peak_memory_fraction = in["peak_memory_fraction"].optional_number();
  a.inputs.gpu_util_pct = in["gpu_util_pct"].optional_number();
  a.inputs.run_length_h = in["run_length_h"].optional_number();
  if (!in["interruptible"].is_null()) a.inputs.interruptible = in["interruptible"].boolean();
  a.inputs.price_exclusive_per_h = in["price_exclusive_per_h"].optional_number();
  a.inputs.price_shared_per_h = in["price_shared_per_h"].optional_number();
  a.inputs.step_exclusive_s = in["step_exclusive_s"].optional_number();
  a.inputs.step_shared_s = in["step_shared_s"].optional_number();
  a.inputs.p95_verdict = in["p95_verdict"].word<Verdict>();
  const Field rules = f["rules"];
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Field r = rules[i];
    a.rules.push_back({r["id"].string(), r["holds"].word<RuleHolds>(), r["points_to"].word<CardChoice>(),
                       r["says"].string(), r["evidence"].string(), r["source"].string()});
  }
  a.cost_per_step_exclusive = f["cost_per_step"]["exclusive"].optional_number();
  a.cost_per_step_shared = f["cost_per_step"]["shared"].optional_number();
  return a;
}

TenantAggregate read_aggregate(const Field& f) {
  TenantAggregate a;
  a.scenario = f["scenario"].string();
  a.mode = f["mode"].string();
  a.tenant = f["tenant"].string();
  a.workload = f["workload"].string();
  a.repetitions = f["repetitions"].integer<int>();
  a.repetitions_measured = f["repetitions_measured"].integer<int>();
  a.repetition_verdicts = f["repetition_verdicts"].strings();
  a.metrics = read_metrics(f["metrics"]);
  a.verdict = f["verdict"].word<Verdict>();
  a.verdict_reason = f["verdict_reason"].string();
  if (f.has("decision")) a.decision = read_decision(f["decision"]);
  a.warnings = read_warnings(f);
  if (f.has("advice")) a.advice = read_advice(f["advice"]);
  if (f.has("amplification")) {
    const Field& m = f["amplification"];
    a.amplification = TenantAggregate::Amplification{m["reference_scenario"].string(), m["collective_p95_slowdown"].number(),
                                                     m["single_rank_p95_slowdown"].number(), m["value"].optional_number()};
  }
  return a;
}

RunSummary read_summary_totals(const Field& f) {
  RunSummary s;
  s.pass = f["pass"].boolean();
  s.interrupted = f["interrupted"].boolean();
  s.exit_code = f["exit_code"].integer<int>();
  s.runs = f["runs"].integer<int>();
  s.tenants = f["tenants"].integer<int>();
  s.passed = f["passed"].integer<int>();
  s.failed = f["failed"].integer<int>();
  s.inconclusive = f["inconclusive"].integer<int>();
  s.baseline = f["baseline"].integer<int>();
  s.waived = f["waived"].integer<int>();
  s.errors = f["errors"].integer<int>();
  return s;
}

// `kind`: what the file should be, e.g. "results file".
// Results files hold raw samples (a million samples are some 25 MB), never deep nesting.
constexpr JsonLimits kResultsFileLimits{std::size_t{1} << 30, 32};

ojson parse_file(const std::string& path, const char* kind) {
  try {
    return read_ordered_json_file(path, kind, kResultsFileLimits);
  } catch (const InputError& e) {  // "PATH: ..." already
    const std::string m = e.what();
    const std::string prefix = path + ": ";
    throw ResultsFileError(path, "", std::string("not an interference-bench ") + kind + " (" +
                                         (m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m) + ")");
  }
}

}  // namespace

bool schema_version_readable(const std::string& version, const char* schema_major) {
  const std::string major = std::string(schema_major) + ".";
  if (version.compare(0, major.size(), major) != 0 || version.size() == major.size()) return false;
  return std::all_of(version.begin() + static_cast<std::ptrdiff_t>(major.size()), version.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

ResultsDocument results_from_json(const ojson& doc, const std::string& file) {
  const Source source{file, std::string("; not a results file of this version (schema ") + kSchemaVersion + ")"};
  const Field top(doc, "", source);
  const Field version = top["schema_version"];
  if (!schema_version_readable(version.string())) version.fail("\"" + version.string() + "\"");
  ResultsDocument d;
  Results& r = d.results;
  r.schema_version = version.string();
  r.meta = read_meta(top["meta"], d.raw_samples);
  for (std::size_t i = 0; i < top["runs"].size(); ++i) r.runs.push_back(read_run(top["runs"][i]));
  for (std::size_t i = 0; i < top["aggregates"].size(); ++i) r.aggregates.push_back(read_aggregate(top["aggregates"][i]));
  r.summary = read_summary_totals(top["summary"]);
  return d;
}

ResultsDocument read_results_file(const std::string& path) {
  ResultsDocument d = results_from_json(parse_file(path, "results file"), path);
  // A file of a run that stopped before its first scenario ended (a signal, a full disk): nothing in it
  // to report, compare or take a baseline from (issue 20: `report` accepted one with exit 0).
  if (d.results.runs.empty()) throw ResultsFileError(path, "runs", "no runs: nothing was measured in this file");
  return d;
}

std::vector<std::string> results_file_modes(const std::string& path) {
  const ojson doc = parse_file(path, "results file");
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
    throw ResultsFileError(path, "", "not an interference-bench results file (no runs[])");
  std::vector<std::string> modes;
  for (const auto& run : doc["runs"])
    if (run.is_object() && run.contains("mode") && run["mode"].is_string()) modes.push_back(run["mode"].get<std::string>());
  return modes;
}

SustainReport read_sustain_verdict(const std::string& path) {
  const ojson doc = parse_file(path, "sustain report");
  const Source source{path, "; not a sustain report of this version"};
  const Field top(doc, "", source);
  SustainReport r;
  r.verdict = top["verdict"].word<LoadVerdict>();
  r.evidence = top["evidence"].strings();
  if (top.has("host")) r.host = top["host"].string();  // platform schema 1.1
  return r;
}

TaskRecord read_task_file(const std::string& path) {
  const ojson doc = parse_file(path, "task file");
  const Source source{path, "; not a task.json of deploy/ib-task.sh (task_schema 1)"};
  const Field top(doc, "", source);
  if (top["task_schema"].integer<int>() != 1) top["task_schema"].fail("only task_schema 1 reads");
  TaskRecord t;
  t.scheduler = top["scheduler"].string();
  t.node = top["node"].string();
  if (t.node.empty()) top["node"].fail("empty");
  t.job_id = optional_string(top["job_id"]).value_or("");
  t.array_job_id = optional_string(top["array_job_id"]).value_or("");
  t.task_index = top["task_index"].optional_integer<int>();
  t.results_dir = top["results_dir"].string();
  t.exit_code = top["exit_code"].optional_integer<int>();
  t.started = top["started"].string();
  t.ended = optional_string(top["ended"]).value_or("");
  return t;
}

VetReport read_vet_report(const std::string& path) {
  const ojson doc = parse_file(path, "vet report");
  const Source source{path, std::string("; not a vet report of this version (platform schema ") + kPlatformSchemaMajor + ".x)"};
  const Field top(doc, "", source);
  // As a results file's: another major (a newer tool's report), or no version at all, is not read as this one.
  const Field version = top["schema_version"];
  if (!schema_version_readable(version.string(), kPlatformSchemaMajor)) version.fail("\"" + version.string() + "\"");
  if (top["kind"].string() != "vet") top["kind"].fail("\"" + top["kind"].string() + "\" is not vet");
  VetReport r;
  r.start_time = top["start_time"].string();
  if (top.has("host")) r.host = top["host"].string();  // platform schema 1.1
  r.device = top["device"].integer<int>();
  r.backend = top["backend"].string();
  r.verdict = top["verdict"].word<CheckOutcome>();
  const Field checks = top["checks"];
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Field c = checks[i];
    r.checks.push_back({c["id"].string(), c["title"].string(), c["status"].word<CheckOutcome>(), c["evidence"].string(),
                        c["threshold"].string(), c["source"].string()});
  }
  r.interrupted = top["interrupted"].boolean();
  return r;
}

}  // namespace ib
