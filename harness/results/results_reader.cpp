#include "harness/results/results_reader.h"

#include "harness/core/json_input.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <type_traits>

namespace ib {

using ojson = nlohmann::ordered_json;

ResultsFileError::ResultsFileError(const std::string& file, const std::string& field, const std::string& problem)
    : InputError(file + ": " + (field.empty() ? "" : field + ": ") + problem), field_(field) {}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The file being read, for errors: its name and what a wrong field says about it.
struct Source {
  std::string file;
  std::string wrong_field_note;  // e.g. "; not a results file of this version (schema 2.0)"
};

// A value of the document with its path, for errors that say where. Reading a field that is missing
// or of the wrong type throws ResultsFileError naming the file and the path.
class Field {
 public:
  Field(const ojson& value, std::string path, const Source& source) : v_(value), path_(std::move(path)), source_(source) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw ResultsFileError(source_.file, path_.empty() ? "(top level)" : path_, problem + source_.wrong_field_note);
  }

  bool has(const char* key) const { return v_.is_object() && v_.contains(key); }
  Field operator[](const char* key) const {
    if (!v_.is_object()) fail("an object was expected, found " + type());
    const std::string path = path_.empty() ? key : path_ + "." + key;
    const auto it = v_.find(key);
    if (it == v_.end()) Field(v_, path, source_).fail("missing");
    return Field(*it, path, source_);
  }
  Field operator[](std::size_t i) const { return Field(v_.at(i), path_ + "[" + std::to_string(i) + "]", source_); }

  bool is_null() const { return v_.is_null(); }
  const ojson& json() const { return v_; }
  std::string type() const { return v_.type_name(); }

  std::size_t size() const {
    if (!v_.is_array()) fail("an array was expected, found " + type());
    return v_.size();
  }
  std::size_t object_size() const {
    if (!v_.is_object()) fail("an object was expected, found " + type());
    return v_.size();
  }

  // A number; null (what the writer writes for NaN) reads as NaN.
  double number() const {
    if (v_.is_null()) return kNaN;
    if (!v_.is_number()) fail("a number was expected, found " + type());
    return v_.get<double>();
  }
  template <typename T>
  T integer() const {
    const bool fits = std::is_unsigned<T>::value ? v_.is_number_unsigned() : v_.is_number_integer();
    if (!fits) fail(std::string(std::is_unsigned<T>::value ? "a non-negative " : "an ") + "integer was expected, found " +
                    type());
    return v_.get<T>();
  }
  std::string string() const {
    if (!v_.is_string()) fail("a string was expected, found " + type());
    return v_.get<std::string>();
  }
  bool boolean() const {
    if (!v_.is_boolean()) fail("true or false was expected, found " + type());
    return v_.get<bool>();
  }
  template <typename E>
  E word() const {
    const auto e = parse_name<E>(string());
    if (!e) fail("\"" + string() + "\" is not one of the words this field takes");
    return *e;
  }
  // null reads as nullopt.
  std::optional<double> optional_number() const {
    return v_.is_null() ? std::nullopt : std::optional<double>(number());
  }
  template <typename T>
  std::optional<T> optional_integer() const {
    return v_.is_null() ? std::nullopt : std::optional<T>(integer<T>());
  }

  // Arrays of numbers are read without a Field per element (raw sample arrays are long).
  std::vector<double> numbers() const {
    std::vector<double> out;
    out.reserve(size());
    for (std::size_t i = 0; i < v_.size(); ++i)
      out.push_back(v_[i].is_number() ? v_[i].get<double>() : (*this)[i].number());
    return out;
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i].string());
    return out;
  }
  // A free-form object (params, placement, mode_config) as the structs hold it.
  nlohmann::json free_form() const { return nlohmann::json::parse(v_.dump()); }

  template <typename F>
  void each_member(F f) const {
    object_size();
    for (auto it = v_.begin(); it != v_.end(); ++it) f(it.key(), (*this)[it.key().c_str()]);
  }

 private:
  const ojson& v_;
  std::string path_;
  const Source& source_;
};

// Integer arrays are long too: checked in one pass, converted in another.
template <typename T>
std::vector<T> integer_array(const Field& f) {
  const ojson& a = f.json();
  f.size();
  std::vector<T> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool fits = std::is_unsigned<T>::value ? a[i].is_number_unsigned() : a[i].is_number_integer();
    out.push_back(fits ? a[i].get<T>() : f[i].integer<T>());
  }
  return out;
}

// A per-sample array has one value per sample, or none (a flag the phase does not have: the
// analysis then reads every sample as one block, in its window, counted).
template <typename T>
void check_length(const Field& f, const std::vector<T>& v, std::size_t n) {
  if (!v.empty() && v.size() != n)
    f.fail(std::to_string(v.size()) + " values where start_ns has " + std::to_string(n));
}

Summary read_summary(const Field& f, const char* cv_key) {
  Summary s;
  s.n = f["n"].integer<std::size_t>();
  s.mean = f["mean"].number();
  s.median = f["median"].number();
  s.stddev = f["stddev"].number();
  s.cv = f[cv_key].number();
  s.min = f["min"].number();
  s.max = f["max"].number();
  s.p5 = f["p5"].number();
  s.p50 = f["p50"].number();
  s.p95 = f["p95"].number();
  s.p99 = f["p99"].number();
  return s;
}

std::optional<CurrentPending> read_current_pending(const Field& f) {
  if (f.is_null()) return std::nullopt;
  return CurrentPending{f["current"].boolean(), f["pending"].boolean()};
}

std::optional<std::string> optional_string(const Field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(f.string());
}

// meta.devices[i] (schema 2.1; reports/json_writer.cpp device_json).
DeviceRecord read_device(const Field& f) {
  DeviceRecord d;
  d.kind = f["kind"].word<DeviceKind>();
  d.index = f["index"].optional_integer<int>();
  d.name = f["name"].string();
  d.uuid = optional_string(f["uuid"]);
  d.node = f["node"].string();
  d.driver_version = optional_string(f["driver_version"]);
  d.cuda_version = optional_string(f["cuda_version"]);
  d.vbios_version = optional_string(f["vbios_version"]);
  d.compute_mode = optional_string(f["compute_mode"]);
  d.mig_mode = read_current_pending(f["mig_mode"]);
  d.ecc = read_current_pending(f["ecc"]);
  d.power_limit_w = f["power_limit_w"]["enforced"].optional_number();
  d.default_power_limit_w = f["power_limit_w"]["default"].optional_number();
  const Field pcie = f["pcie"];
  d.pcie_gen_current = pcie["gen_current"].optional_integer<unsigned>();
  d.pcie_width_current = pcie["width_current"].optional_integer<unsigned>();
  d.pcie_gen_max = pcie["gen_max"].optional_integer<unsigned>();
  d.pcie_width_max = pcie["width_max"].optional_integer<unsigned>();
  d.memory_total_bytes = f["memory_total_bytes"].optional_integer<unsigned long long>();
  d.cores_online = f["cores"]["online"].optional_integer<unsigned>();
  d.cores_usable = f["cores"]["usable"].optional_integer<unsigned>();
  d.error = f["error"].string();
  d.unsupported = f["unsupported"].strings();
  return d;
}

Meta read_meta(const Field& f, bool& raw_samples) {
  if (f["tool"].string() != "interference-bench") f["tool"].fail("\"" + f["tool"].string() + "\" is not interference-bench");
  Meta m;
  m.version = f["version"].string();
  m.git_sha = f["git_sha"].string();
  m.argv = f["argv"].strings();
  m.start_time = f["start_time"].string();
  m.host = f["host"]["hostname"].string();
  m.host_cpus = f["host"]["cpus"].integer<int>();
  if (f.has("devices"))  // schema 2.1; a 2.0 file has none
    for (std::size_t i = 0; i < f["devices"].size(); ++i) m.devices.push_back(read_device(f["devices"][i]));
  m.backend = f["backend"].string();
  m.backend_requested = f["backend_requested"].string();
  m.backend_note = f["backend_note"].string();
  m.suite = f["suite"].string();
  m.bootstrap_seed = f["bootstrap"]["seed"].integer<std::uint64_t>();
  m.bootstrap_resamples = f["bootstrap"]["resamples"].integer<int>();
  if (f.has("stopping")) {
    const Field st = f["stopping"];
    m.until = st["until"].word<StopRule>();
    m.rounds = st["rounds"].integer<int>();
    m.max_duration_s = st["max_duration_s"].optional_number();
    m.resolution = st["resolution"].number();
  }
  const Field limits = f["foreign_load_limits"];
  m.max_foreign_cpus = limits["max_foreign_cpus"].number();
  m.max_steal_cpus = limits["max_steal_cpus"].number();
  m.max_reruns = limits["max_reruns"].integer<int>();
  m.telemetry = f["telemetry"].free_form();
  raw_samples = f["raw_samples"].boolean();
  if (f.has("scheduler")) {  // schema 2.4, and only when a scheduler launched the run
    const Field s = f["scheduler"];
    const std::string kind = s["kind"].string();
    if (kind != "slurm" && kind != "kubernetes") s["kind"].fail("\"" + kind + "\" is not slurm or kubernetes");
    m.scheduler = SchedulerFacts{kind, s["job_id"].string(), s["array_job_id"].string(),
                                 s["task_index"].optional_integer<int>(), s["node"].string()};
  }
  return m;
}

// runs[].mode_config (reports/json_writer.cpp mode_config_json): every key the writer writes has a
// field; a device fact the reader does not know is kept in `unmapped`, as the writer would write it.
ModeDeviceFacts read_device_facts(const Field& f) {
  ModeDeviceFacts d;
  const std::pair<const char*, std::optional<std::string>*> texts[] = {
      {"nvml", &d.nvml}, {"name", &d.name}, {"uuid", &d.uuid}, {"compute_mode", &d.compute_mode},
      {"compute_policy", &d.compute_policy}, {"measures", &d.measures}};
  f.each_member([&](const std::string& key, const Field& v) {
    for (const auto& [k, field] : texts)
      if (key == k) {
        *field = v.string();
        return;
      }
    if (key == "mig_mode") {
      d.mig_mode = MigModeState{v["current"].boolean(), v["pending"].boolean()};
    } else if (key == "mig_created") {
      d.mig_created.emplace();
      for (std::size_t i = 0; i < v.size(); ++i)
        d.mig_created->push_back({v[i]["profile"].string(), v[i]["gpu_instance_id"].integer<unsigned>(),
                                  v[i]["compute_instance_id"].integer<unsigned>()});
    } else {
      d.unmapped[key] = v.free_form();
    }
  });
  return d;
}

ModeConfig read_mode_config(const Field& f) {
  ModeConfig c;
  c.mode = f["mode"].string();
  if (f.has("device")) c.device = read_device_facts(f["device"]);
  if (f.has("mps")) {
    const Field m = f["mps"];
    c.mps = MpsDaemonInfo{m["pipe_directory"].string(), m["log_directory"].string(), m["daemon"].string(),
                          m["fault_propagation"].string()};
  }
  if (f.has("mig")) {
    c.mig.emplace();
    const Field instances = f["mig"]["instances"];
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const Field x = instances[i];
      MigInstance m;
      m.index = x["index"].integer<int>();
      m.gpu_instance_id = x["gpu_instance_id"].integer<unsigned>();
      m.compute_instance_id = x["compute_instance_id"].integer<unsigned>();
      m.profile = x["profile"].string();
      m.uuid = x["uuid"].string();
      m.sm_count = x["sm_count"].integer<unsigned>();
      m.memory_bytes = x["memory_bytes"].integer<unsigned long long>();
      c.mig->instances.push_back(m);
    }
    f["mig"]["assignment"].each_member([&](const std::string& k, const Field& v) { c.mig->assignment[k] = v.string(); });
  }
  if (f.has("exclusive_source")) c.exclusive_source = f["exclusive_source"].string();
  return c;
}

WorkerOutcome read_outcome(const Field& f) {
  WorkerOutcome o;
  o.status = f["status"].word<WorkerStatus>();
  o.message = f["message"].string();
  o.exit_code = f["exit_code"].optional_integer<int>();
  o.signal = f["signal"].optional_integer<int>();
  o.log_file = f["log"].string();
  if (f.has("env")) f["env"].each_member([&](const std::string& k, const Field& v) { o.env[k] = v.string(); });
  if (f.has("resolved")) o.resolved = f["resolved"].free_form();
  if (f.has("escaped_processes")) o.escaped_processes = f["escaped_processes"].integer<std::size_t>();
  return o;
}

// One column of the telemetry series: one value per reading, null where NVML did not report it.
template <typename T>
std::vector<std::optional<T>> series_column(const Field& series, const char* key, std::size_t n) {
  std::vector<std::optional<T>> out(n);
  if (!series.has(key)) return out;
  const Field column = series[key];
  if (column.size() != n) column.fail(std::to_string(column.size()) + " values where t_ns has " + std::to_string(n));
  for (std::size_t i = 0; i < n; ++i) {
    const Field v = column[i];
    if (v.is_null()) continue;
    if constexpr (std::is_floating_point<T>::value) out[i] = v.number();
    else out[i] = v.integer<T>();
  }
  return out;
}

std::vector<TelemetrySample> read_series(const Field& series) {
  const std::vector<std::int64_t> t = integer_array<std::int64_t>(series["t_ns"]);
  const std::size_t n = t.size();
  const auto sm = series_column<unsigned>(series, "sm_clock_mhz", n);
  const auto max_sm = series_column<unsigned>(series, "max_sm_clock_mhz", n);
  const auto mem = series_column<unsigned>(series, "mem_clock_mhz", n);
  const auto power = series_column<double>(series, "power_w", n);
  const auto limit = series_column<double>(series, "power_limit_w", n);
  const auto default_limit = series_column<double>(series, "default_power_limit_w", n);
  const auto temperature = series_column<unsigned>(series, "temperature_c", n);
  const auto reasons = series_column<unsigned long long>(series, "clock_event_reasons", n);
  const auto util = series_column<unsigned>(series, "util_gpu_pct", n);
  const auto util_memory = series_column<unsigned>(series, "util_memory_pct", n);
  const auto memory_used = series_column<unsigned long long>(series, "memory_used_bytes", n);
  const auto power_violation = series_column<unsigned long long>(series, "power_violation_ns", n);
  const auto thermal_violation = series_column<unsigned long long>(series, "thermal_violation_ns", n);
  std::vector<TelemetrySample> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    TelemetryReading& r = out[i].r;
    out[i].t_ns = t[i];
    r.sm_clock_mhz = sm[i];
    r.max_sm_clock_mhz = max_sm[i];
    r.mem_clock_mhz = mem[i];
    r.power_w = power[i];
    r.power_limit_w = limit[i];
    r.default_power_limit_w = default_limit[i];
    r.temperature_c = temperature[i];
    r.clock_event_reasons = reasons[i];
    r.util_gpu_pct = util[i];
    r.util_memory_pct = util_memory[i];
    r.memory_used_bytes = memory_used[i];
    if (power_violation[i]) r.power_violation = ViolationTime{0, *power_violation[i]};
    if (thermal_violation[i]) r.thermal_violation = ViolationTime{0, *thermal_violation[i]};
  }
  return out;
}

// The bit of a clock-event reason named as reason_names() names it.
std::uint64_t reason_bit(const Field& f, const std::string& name) {
  for (int k = 0; k < 64; ++k) {
    const char* n = reason_name(std::uint64_t{1} << k);
    if (n && name == n) return std::uint64_t{1} << k;
  }
  f.fail("\"" + name + "\" is not a clock-event reason");
}

ThrottleSummary read_throttle(const Field& f) {
  ThrottleSummary t;
  t.samples = f["samples"].integer<std::size_t>();
  t.throttled_samples = f["throttled_samples"].integer<std::size_t>();
  t.throttled_fraction = f["throttled_fraction"].number();
  if (f.has("throttled_readings")) t.throttled_readings = f["throttled_readings"].integer<std::size_t>();
  if (f.has("covered_s")) t.covered_s = f["covered_s"].number();
  if (f.has("reasons_seen")) t.reasons_seen = f["reasons_seen"].integer<std::uint64_t>();
  f["time_per_reason"].each_member([&](const std::string& name, const Field& r) {
    t.time_per_reason.push_back({reason_bit(r, name), name, r["seconds"].number(), r["fraction"].number()});
  });
  return t;
}

void read_telemetry(const Field& f, PhaseResult& p) {
  p.telemetry_error = f["error"].is_null() ? std::string() : f["error"].string();
  if (f.has("unsupported")) p.telemetry_unsupported = f["unsupported"].strings();
  if (f.has("throttle")) p.throttle = read_throttle(f["throttle"]);
  if (f.has("series")) {
    p.telemetry = read_series(f["series"]);
    if (p.telemetry.size() != f["readings"].integer<std::size_t>())
      f["series"]["t_ns"].fail(std::to_string(p.telemetry.size()) + " readings where readings says " +
                               std::to_string(f["readings"].integer<std::size_t>()));
  }
  // The readings' count without the series (--no-raw) has nowhere to go: nothing reads it back.
}

// Saved samples are measurements, not only JSON: a start before the clock's zero, or a duration that
// is not a positive, finite number of seconds (at most kMaxSampleS), was never measured.
constexpr double kMaxSampleS = 1e6;

std::string shown_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

void check_measured(const Field& f, const PhaseResult& p) {
  for (std::size_t i = 0; i < p.start_ns.size(); ++i)
    if (p.start_ns[i] < 0) f["start_ns"][i].fail(std::to_string(p.start_ns[i]) + " is before the clock's zero: not a start time");
  for (std::size_t i = 0; i < p.duration_s.size(); ++i) {
    const double d = p.duration_s[i];
    if (!(std::isfinite(d) && d > 0.0 && d <= kMaxSampleS))
      f["duration_s"][i].fail(shown_number(d) + " is not a sample's duration (seconds, above 0 and at most " +
                              shown_number(kMaxSampleS) + ")");
  }
  for (std::size_t i = 0; i < p.latencies_s.size(); ++i)
    if (!(std::isfinite(p.latencies_s[i]) && p.latencies_s[i] >= 0.0 && p.latencies_s[i] <= kMaxSampleS))
      f["latency_s"][i].fail(shown_number(p.latencies_s[i]) + " is not a request's latency (seconds, 0 to " +
                             shown_number(kMaxSampleS) + ")");
}

void read_samples(const Field& f, PhaseResult& p) {
  p.start_ns = integer_array<std::int64_t>(f["start_ns"]);
  const std::size_t n = p.start_ns.size();
  p.duration_s = f["duration_s"].numbers();
  if (p.duration_s.size() != n) f["duration_s"].fail(std::to_string(p.duration_s.size()) + " values where start_ns has " +
                                                     std::to_string(n));
  p.block = integer_array<int>(f["block"]);
  check_length(f["block"], p.block, n);
  p.in_window = integer_array<std::uint8_t>(f["in_window"]);
  check_length(f["in_window"], p.in_window, n);
  p.counted = integer_array<std::uint8_t>(f["counted"]);
  check_length(f["counted"], p.counted, n);
  p.outlier = integer_array<std::uint8_t>(f["outlier"]);
  check_length(f["outlier"], p.outlier, n);
  if (f.has("coverage")) {
    p.coverage = f["coverage"].numbers();
    check_length(f["coverage"], p.coverage, n);
  }
  if (f.has("counters"))
    f["counters"].each_member([&](const std::string& name, const Field& c) { p.counter_samples[name] = c.numbers(); });
  if (f.has("rank_duration_s")) {
    const Field ranks = f["rank_duration_s"];
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      p.rank_duration_s.push_back(ranks[r].numbers());
      check_length(ranks[r], p.rank_duration_s.back(), n);
    }
  }
  if (f.has("throttled")) {
    p.throttled = integer_array<std::uint8_t>(f["throttled"]);
    check_length(f["throttled"], p.throttled, n);
  }
  if (f.has("latency_s")) {
    p.latency_count = integer_array<std::uint32_t>(f["latency_count"]);
    check_length(f["latency_count"], p.latency_count, n);
    p.latencies_s = f["latency_s"].numbers();
  }
  check_measured(f, p);
}

PhaseResult read_phase(const Field& f) {
  PhaseResult p;
  p.source = f["source"].word<PhaseSource>();
  p.outcome = read_outcome(f["worker"]);
  p.stats = read_summary(f["stats"], "sample_cv");
  p.blocks = f["blocks"]["ran"].integer<int>();
  p.blocks_counted = f["blocks"]["counted"].integer<int>();
  if (f.has("coverage")) {
    p.coverage_mean = f["coverage"]["mean"].number();
    p.coverage_p5 = f["coverage"]["p5"].optional_number();
  }
  p.throughput = f["throughput"]["value"].number();
  p.throughput_unit = f["throughput"]["unit"].string();
  p.window_cv = f["window_cv"].number();
  p.outliers = f["outliers"].integer<std::size_t>();
  p.measure_start_ns = f["measure_start_ns"].integer<std::int64_t>();
  p.measure_end_ns = f["measure_end_ns"].integer<std::int64_t>();
  if (f.has("gpu_memory")) {
    p.gpu_memory_peak_bytes = f["gpu_memory"]["peak_bytes"].integer<unsigned long long>();
    p.gpu_memory_total_bytes = f["gpu_memory"]["total_bytes"].optional_integer<unsigned long long>();
  }
  if (f.has("counters"))
    f["counters"].each_member([&](const std::string& name, const Field& c) {
      p.counters[name] = {c["total"].number(), c["rate_per_s"].number()};
    });
  if (f.has("telemetry")) read_telemetry(f["telemetry"], p);
  if (f.has("latency")) p.latency = read_summary(f["latency"], "cv");
  if (f.has("ranks")) {
    const Field r = f["ranks"];
    p.rank_figures = PhaseResult::RankFigures{r["count"].integer<int>(), r["straggler_rank"].integer<int>(),
                                              r["straggler_share"].number()};
  }
  if (f.has("samples")) {
    read_samples(f["samples"], p);
    if (p.start_ns.empty() && p.stats.n > 0)
      f["samples"]["start_ns"].fail("no samples, where stats.n counts " + std::to_string(p.stats.n));
  }
  return p;
}

// Texts, with their kinds where the file has them (schema 2.2); an older file's are `other`.
std::vector<Warning> read_warnings(const Field& f) {
  std::vector<Warning> out;
  const std::vector<std::string> texts = f["warnings"].strings();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Warning w;
    w.text = texts[i];
    if (f.has("warning_kinds")) {
      if (f["warning_kinds"].size() != texts.size()) f["warning_kinds"].fail("not one kind per warning");
      w.kind = f["warning_kinds"][i].word<WarningKind>();
    }
    out.push_back(std::move(w));
  }
  return out;
}

Estimate read_estimate(const Field& f) {
  Estimate e{};
  e.value = f["value"].number();
  e.ci_low = f["ci_low"].number();
  e.ci_high = f["ci_high"].number();
  e.confidence = f["confidence"].number();
  e.resamples = f["resamples"].integer<int>();
  e.seed = f["seed"].integer<std::uint64_t>();
  if (f.has("z")) {  // schema 2.2: the normal interval on the log ratio
    e.z = f["z"].number();
    e.log_se = f["log_se"].number();
    e.pairing = f["pairing"].word<Pairing>();
    e.clusters = f["clusters"].integer<int>();
    e.quantile = f["quantile"].number();
    e.whole_rounds = f["whole_rounds"].boolean();
  }
  return e;
}

// A tenant's metrics also carry per-phase CVs and the coverage: copies of its phases' figures, not read.
std::optional<TenantMetrics> read_metrics(const Field& f) {
  if (f.is_null()) return std::nullopt;
  TenantMetrics m;
  m.basis = f["basis"].string();
  m.p95_slowdown = read_estimate(f["p95_slowdown"]);
  m.median_slowdown = f["median_slowdown"].number();
  m.partition_cost = f["partition_cost"].number();
  m.interference = f["interference"].number();
  m.n_exclusive = f["n"]["exclusive"].integer<std::size_t>();
  m.n_colocated = f["n"]["colocated"].integer<std::size_t>();
  if (f.has("collective")) {
    const Field c = f["collective"];
    m.collective = TenantMetrics::Collective{c["ranks"].integer<int>(),      c["blast_radius"].integer<int>(),
                                             c["blast_threshold"].number(),  c["longest_stall_s"].number(),
                                             c["timeout_s"].number(),        c["stall_margin"].number()};
  }
  return m;
}

TenantResult read_tenant(const Field& f) {
  TenantResult t;
  t.name = f["name"].string();
  t.role = f["role"].string();
  t.workload = f["workload"].string();
  t.params = f["params"].free_form();
  t.placement = f["placement"].free_form();
  t.work = {f["work_per_sample"]["value"].number(), f["work_per_sample"]["unit"].string()};
  const Field phases = f["phases"];
  t.exclusive = read_phase(phases["exclusive"]);
  t.alone = read_phase(phases["alone"]);
  t.colocated = read_phase(phases["colocated"]);
  t.metrics = read_metrics(f["metrics"]);
  t.verdict = f["verdict"].word<Verdict>();
  t.verdict_reason = f["verdict_reason"].string();
  t.warnings = read_warnings(f);
  return t;
}

ForeignLoad read_load(const Field& f) {
  ForeignLoad l;
  l.seconds = f["seconds"].number();
  l.foreign_cpus = f["foreign_cpus"].number();
  l.steal_cpus = f["steal_cpus"].number();
  l.own_cpus = f["own_cpus"].number();
  l.gpu_foreign_processes = f["gpu_foreign_processes"].optional_integer<int>();
  l.gpu_idle_util_pct = f["gpu_idle_util_pct"].optional_integer<unsigned>();
  l.gpu_foreign_memory_bytes = f["gpu_foreign_memory_bytes"].optional_integer<unsigned long long>();
  // Written since the GPU drain (issue 34): older results have neither.
  if (f.has("gpu_drain_s")) l.gpu_drain_s = f["gpu_drain_s"].optional_number();
  if (f.has("gpu_own_busy_processes")) l.gpu_own_busy_processes = f["gpu_own_busy_processes"].optional_integer<int>();
  return l;
}

BlockRecord read_block(const Field& f) {
  BlockRecord b;
  b.index = f["index"].integer<int>();
  b.round = f["round"].integer<int>();
  b.phase = f["phase"].word<Phase>();
  b.tenants = f["tenants"].strings();
  b.attempt = f["attempt"].integer<int>();
  b.start_ns = f["start_ns"].integer<std::int64_t>();
  b.end_ns = f["end_ns"].integer<std::int64_t>();
  b.status = f["status"].word<BlockStatus>();
  b.reason = f["reason"].string();
  if (f.has("tail_bursts")) b.tail_bursts = f["tail_bursts"].strings();
  if (!f["overlap_window_ns"].is_null()) {
    b.overlap_start_ns = f["overlap_window_ns"]["start"].integer<std::int64_t>();
    b.overlap_end_ns = f["overlap_window_ns"]["end"].integer<std::int64_t>();
  }
  b.barrier_skew_s = f["barrier_skew_s"].optional_number();
  b.load = read_load(f["foreign_load"]);
  return b;
}

std::optional<SystemMetrics> read_system(const Field& f) {
  if (f.is_null()) return std::nullopt;
  return SystemMetrics{f["vs_exclusive"]["stp"].number(), f["vs_exclusive"]["antt"].number(),
                       f["vs_alone"]["stp"].number(), f["vs_alone"]["antt"].number()};
}

// Schema 2.2; an older file's run was of fixed length (its defaults say so).
Stopping read_stopping(const Field& f) {
  Stopping s;
  s.until = f["until"].word<StopRule>();
  s.first_rounds = f["first_rounds"].integer<int>();
  s.max_rounds = f["max_rounds"].integer<int>();
  s.earlier_rounds = f["earlier_rounds"].integer<int>();
  s.resolution = f["resolution"].number();
  s.looks = integer_array<int>(f["looks"]);
  for (std::size_t i = 0; i < f["boundaries"].size(); ++i) s.boundaries.push_back(f["boundaries"][i].number());
  s.looks_taken = f["looks_taken"].integer<int>();
  s.stopped_by = f["stopped_by"].word<StoppedBy>();
  s.z = f["z"].number();
  return s;
}

std::optional<Decision> read_decision(const Field& f) {
  if (f.is_null()) return std::nullopt;
  Decision d;
  d.decided = f["decided"].boolean();
  d.rounds = f["rounds"].integer<int>();
  d.seconds = f["seconds"].number();
  d.look = f["look"].integer<int>();
  d.looks_planned = f["looks_planned"].integer<int>();
  d.z = f["z"].number();
  d.stopped_by = f["stopped_by"].word<StoppedBy>();
  d.resolution = f["resolution"].number();
  return d;
}

// Every sample's block is one of the run's blocks (the analysis indexes them by it).
void check_block_indices(const Field& f, const RunResult& r) {
  const int blocks = static_cast<int>(r.blocks.size());
  for (std::size_t t = 0; t < r.tenants.size(); ++t) {
    const std::pair<const char*, const PhaseResult*> phases[] = {
        {"exclusive", &r.tenants[t].exclusive}, {"alone", &r.tenants[t].alone}, {"colocated", &r.tenants[t].colocated}};
    for (const auto& [name, p] : phases)
      for (std::size_t i = 0; i < p->block.size(); ++i)
        if (p->block[i] < 0 || p->block[i] >= blocks)
          f["tenants"][t]["phases"][name]["samples"]["block"][i].fail(
              std::to_string(p->block[i]) + " is not one of the run's " + std::to_string(blocks) + " blocks");
  }
}

RunResult read_run(const Field& f) {
  RunResult r;
  r.scenario = f["scenario"].string();
  r.scenario_file = f["scenario_file"].string();
  r.mode = f["mode"].string();
  r.device = f["device"].integer<int>();
  r.repetition = f["repetition"].integer<int>();
  r.repetitions = f["repetitions"].integer<int>();
  r.warmup_s = f["warmup_s"].number();
  r.duration_s = f["duration_s"].number();
  r.cutoff = f["cutoff"].number();
  r.status = f["status"].word<RunStatus>();
  r.message = f["message"].string();
  r.mode_config = read_mode_config(f["mode_config"]);
  r.rounds = f["rounds"].integer<int>();
  r.round_order = f["round_order"].string();
  if (f.has("stopping")) {
    r.stopping = read_stopping(f["stopping"]);
  } else {
    r.stopping.first_rounds = r.stopping.max_rounds = r.rounds;
    r.stopping.looks = {r.rounds};
    r.stopping.boundaries = {r.stopping.z};
  }
  r.barrier_skew_s = f["barrier_skew_s"].optional_number();
  for (std::size_t i = 0; i < f["blocks"].size(); ++i) r.blocks.push_back(read_block(f["blocks"][i]));
  r.system = read_system(f["system"]);
  for (std::size_t i = 0; i < f["tenants"].size(); ++i) r.tenants.push_back(read_tenant(f["tenants"][i]));
  check_block_indices(f, r);
  return r;
}

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
