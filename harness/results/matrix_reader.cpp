// The matrix.json reader (matrix_reader.h), on the results reader's Field (results_reading.h): every wrong read
// names the file and the field's path.
#include "harness/results/matrix_reader.h"

#include "harness/core/json_input.h"
#include "harness/core/files.h"
#include "harness/results/results_reading.h"

namespace ib {

using namespace results_reading;

namespace {

constexpr const char* kMatrixSchemaMajor = "1";
// A matrix of kMatrixMaxWorkloads (16) holds 256 cells and 136 runs: far below a results file's size.
constexpr JsonLimits kMatrixFileLimits{std::size_t{64} << 20, 32};
constexpr std::size_t kMaxPeekBytes = std::size_t{1} << 30;  // a results.json with raw samples, when it is one

// Finds meta.command in one pass over the text without building the document, and stops there.
class CommandPeek : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string command;
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool string(string_t& s) override {
    if (!want_) return true;
    command = s;
    return false;  // found: stop parsing
  }
  bool start_object(std::size_t) override { return enter(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool end_array() override { return leave(); }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    want_ = depth_ == 2 && top_key_ == "meta" && k == "command";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  int depth_ = 0;
  std::string top_key_;
  bool want_ = false;
  bool value() {
    want_ = false;
    return true;
  }
  bool enter() {
    want_ = false;
    ++depth_;
    return true;
  }
  bool leave() {
    --depth_;
    return !(depth_ == 1 && top_key_ == "meta");  // meta ended without a command: stop
  }
};

std::optional<Estimate> read_matrix_estimate(const Field& f) {
  if (f.is_null()) return std::nullopt;
  Estimate e{};
  e.value = f["value"].number();
  e.ci_low = f["ci_low"].number();
  e.ci_high = f["ci_high"].number();
  return e;
}

MatrixRun read_matrix_run(const Field& f) {
  MatrixRun r;
  r.outcome = f["outcome"].word<MatrixRunOutcome>();
  r.reason = f["reason"].string();
  r.exit_code = f["exit_code"].optional_integer<int>();
  r.results_file = f["results_file"].string();
  r.seconds = f["seconds"].number();
  return r;
}

// An index into the workloads: a field that names another would make cell() read out of bounds.
std::size_t matrix_workload_index(const Field& f, std::size_t workloads) {
  const auto i = f.integer<std::size_t>();
  if (i >= workloads) f.fail(std::to_string(i) + " is not one of the " + std::to_string(workloads) + " workloads");
  return i;
}

MatrixCell read_matrix_cell(const Field& f, std::size_t n) {
  MatrixCell c;
  c.victim = matrix_workload_index(f["victim"], n);
  c.aggressor = matrix_workload_index(f["aggressor"], n);
  c.source = f["source"].word<CellSource>();
  c.p95_slowdown = read_matrix_estimate(f["p95_slowdown"]);
  c.median_slowdown = f["median_slowdown"].optional_number();
  c.verdict = f["verdict"].word<Verdict>();
  c.verdict_reason = f["verdict_reason"].string();
  return c;
}

std::vector<std::size_t> read_matrix_indices(const Field& f, std::size_t n) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < f.size(); ++i) out.push_back(matrix_workload_index(f[i], n));
  return out;
}

std::optional<MatrixPacking> read_matrix_packing(const Field& f, std::size_t n) {
  if (f.is_null()) return std::nullopt;
  MatrixPacking p;
  const Field devices = f["devices"];
  for (std::size_t d = 0; d < devices.size(); ++d) p.devices.push_back(read_matrix_indices(devices[d], n));
  p.exclusive_devices = f["exclusive_devices"].integer<std::size_t>();
  p.saved = f["saved"].integer<std::size_t>();
  const Field costs = f["costs"];
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const Field c = costs[i];
    p.costs.push_back({matrix_workload_index(c["workload"], n), c["exclusive_cost_per_hour_of_work"].number(),
                       c["shared_cost_per_hour_of_work"].number(), c["shared_cheaper"].boolean()});
  }
  p.exclusive_price_per_hour = f["exclusive_price_per_hour"].optional_number();
  p.packed_price_per_hour = f["packed_price_per_hour"].optional_number();
  return p;
}

SensitivityCurve read_matrix_curve(const Field& f) {
  SensitivityCurve c;
  const Field slowdowns = f["p95_slowdowns"], runs = f["runs"];
  for (std::size_t i = 0; i < slowdowns.size(); ++i) c.slowdowns.push_back(slowdowns[i].optional_number());
  for (std::size_t i = 0; i < runs.size(); ++i) c.runs.push_back(read_matrix_run(runs[i]));
  return c;
}

PredictedWorkload read_predicted_workload(const Field& f) {
  PredictedWorkload w;
  w.curve = read_matrix_curve(f["curve"]);
  w.reporter_slowdown = f["reporter_slowdown"].optional_number();
  w.pressure = f["pressure"].optional_number();
  w.pressure_clamped = f["pressure_clamped"].boolean();
  if (!f["pressure_run"].is_null()) w.pressure_run.push_back(read_matrix_run(f["pressure_run"]));
  w.reason = f["reason"].string();
  return w;
}

std::optional<PredictionError> read_prediction_error(const Field& f) {
  if (f.is_null()) return std::nullopt;
  PredictionError e;
  e.cells = f["cells"].integer<std::size_t>();
  e.mean_abs_error_points = f["mean_abs_error_points"].number();
  e.ci_low_points = f["ci_low_points"].optional_number();
  e.ci_high_points = f["ci_high_points"].optional_number();
  e.confidence = f["confidence"].number();
  e.mean_error_points = f["mean_error_points"].number();
  e.max_abs_error_points = f["max_abs_error_points"].number();
  return e;
}

// --predict's part: what matrix_prediction.h holds (its writer is reports/json/matrix_prediction_json.cpp).
std::optional<MatrixPrediction> read_matrix_prediction(const Field& f, std::size_t n) {
  if (f.is_null()) return std::nullopt;
  MatrixPrediction p;
  p.runs = f["runs"].integer<std::size_t>();
  p.full_matrix_runs = f["full_matrix_runs"].integer<std::size_t>();
  const Field levels = f["levels"], workloads = f["workloads"], sampled = f["sampled_pairs"], checks = f["checks"];
  for (std::size_t i = 0; i < levels.size(); ++i) p.levels.push_back(levels[i].number());
  p.bubble_workload = f["bubble"]["workload"].string();
  p.bubble_params = f["bubble"]["params"].free_form();
  p.reporter = f["reporter"]["name"].string();
  p.reporter_tenant = f["reporter"]["tenant"].free_form();
  p.reporter_curve = read_matrix_curve(f["reporter"]["curve"]);
  for (std::size_t i = 0; i < workloads.size(); ++i) p.workloads.push_back(read_predicted_workload(workloads[i]));
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    p.sampled_pairs.emplace_back(matrix_workload_index(sampled[i]["a"], n), matrix_workload_index(sampled[i]["b"], n));
    if (!sampled[i]["run"].is_null()) p.sample_runs.push_back(read_matrix_run(sampled[i]["run"]));
  }
  for (std::size_t i = 0; i < checks.size(); ++i) {
    PredictionCheck c;
    c.victim = matrix_workload_index(checks[i]["victim"], n);
    c.aggressor = matrix_workload_index(checks[i]["aggressor"], n);
    c.predicted = checks[i]["predicted"].number();
    c.measured = checks[i]["measured"].number();
    c.error_points = checks[i]["error_points"].number();
    p.checks.push_back(c);
  }
  p.error = read_prediction_error(f["error"]);
  return p;
}

void read_matrix_meta(const Field& meta, MatrixResult& r) {
  r.version = meta["version"].string();
  r.git_sha = meta["git_sha"].string();
  r.argv = meta["argv"].strings();
  r.start_time = meta["start_time"].string();
  r.host = meta["host"].string();
}

void read_matrix_grid(const Field& top, MatrixResult& r) {
  const Field workloads = top["workloads"];
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const Field w = workloads[i];
    const Field tenant = w["tenant"];
    tenant.object_size();
    r.workloads.push_back({w["name"].string(), w["workload"].string(), tenant.free_form()});
  }
  const std::size_t n = r.workloads.size();
  const Field pairs = top["pairs"];
  for (std::size_t i = 0; i < pairs.size(); ++i)
    r.pairs.push_back({matrix_workload_index(pairs[i]["a"], n), matrix_workload_index(pairs[i]["b"], n), read_matrix_run(pairs[i]["run"])});
  const Field cells = top["cells"];
  if (cells.size() != n * n) cells.fail(std::to_string(cells.size()) + " cells for " + std::to_string(n) + " workloads (N x N expected)");
  for (std::size_t i = 0; i < n * n; ++i) {
    r.cells.push_back(read_matrix_cell(cells[i], n));
    if (r.cells.back().victim * n + r.cells.back().aggressor != i) cells[i].fail("out of row-major order");
  }
  const Field share = top["may_share"];
  for (std::size_t i = 0; i < share.size(); ++i) {
    const std::vector<std::size_t> ab = read_matrix_indices(share[i], n);
    if (ab.size() != 2) share[i].fail("a pair [a, b] was expected");
    r.may_share.emplace_back(ab[0], ab[1]);
  }
  r.self_sharing = read_matrix_indices(top["self_sharing"], n);
}

}  // namespace

bool is_matrix_file(const std::string& path) {
  try {
    const std::string text = read_input_file(path, "results file", kMaxPeekBytes);
    CommandPeek peek;
    nlohmann::json::sax_parse(text, &peek);
    return peek.command == "matrix";
  } catch (const std::exception&) {
    return false;
  }
}

MatrixResult matrix_from_json(const nlohmann::ordered_json& doc, const std::string& file) {
  const Source source{file, std::string("; not a matrix.json of this version (schema ") + kMatrixSchemaVersion + ")"};
  const Field top(doc, "", source);
  // What the document is first (a results.json beside a matrix.json has no meta.command), then its version.
  const Field command = top["meta"]["command"];
  if (command.string() != "matrix") command.fail("\"" + command.string() + "\" is not matrix");
  const Field version = top["schema_version"];
  if (!schema_version_readable(version.string(), kMatrixSchemaMajor)) version.fail("\"" + version.string() + "\"");
  MatrixResult r;
  r.schema_version = version.string();
  read_matrix_meta(top["meta"], r);
  r.backend = top["backend"].string();
  r.mode = top["mode"].string();
  r.device = top["device"].integer<int>();
  r.cutoff = top["cutoff"].number();
  r.phase_s = top["phase_s"].optional_number();
  r.rounds = top["rounds"].optional_integer<int>();
  r.budget_s = top["budget_s"].number();
  r.price_exclusive = top["price_exclusive"].optional_number();
  r.price_shared = top["price_shared"].optional_number();
  read_matrix_grid(top, r);
  r.packing = read_matrix_packing(top["packing"], r.workloads.size());
  r.prediction = read_matrix_prediction(top["prediction"], r.workloads.size());
  r.interrupted = top["interrupted"].boolean();
  r.exit_code = top["exit_code"].integer<int>();
  return r;
}

MatrixResult read_matrix_file(const std::string& path) {
  nlohmann::ordered_json doc;
  try {
    doc = read_ordered_json_file(path, "matrix.json", kMatrixFileLimits);
  } catch (const InputError& e) {  // "PATH: ..." already
    const std::string m = e.what(), prefix = path + ": ";
    throw ResultsFileError(path, "", "not an interference-bench matrix.json (" +
                                         (m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m) + ")");
  }
  return matrix_from_json(doc, path);
}

}  // namespace ib
