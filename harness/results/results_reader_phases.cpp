// The results reader's phases: a tenant's phase (its worker's outcome, statistics, blocks, coverage, counters,
// latency, ranks), its NVML telemetry (series and throttle summary) and its per-sample arrays, checked as
// measurements.
#include "harness/results/results_reading.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace ib::results_reading {

namespace {

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
  if (f.has("lines_given_up")) o.lines_given_up = f["lines_given_up"].integer<std::size_t>();
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

// A tenant with ranks: every rank's duration (rank_duration_s) and arrival (rank_start_ns, schema 2.7; a 2.6 file
// has none), [rank][sample]: one arrival per sample for each rank, as many ranks as durations, none before the
// clock's zero.
void read_rank_columns(const Field& f, PhaseResult& p, std::size_t n) {
  if (f.has("rank_duration_s")) {
    const Field ranks = f["rank_duration_s"];
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      p.rank_duration_s.push_back(ranks[r].numbers());
      check_length(ranks[r], p.rank_duration_s.back(), n);
    }
  }
  if (!f.has("rank_start_ns")) return;
  const Field ranks = f["rank_start_ns"];
  if (f.has("rank_duration_s") && ranks.size() != p.rank_duration_s.size())
    ranks.fail(std::to_string(ranks.size()) + " ranks where rank_duration_s has " +
               std::to_string(p.rank_duration_s.size()));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    p.rank_start_ns.push_back(integer_array<std::int64_t>(ranks[r]));
    if (p.rank_start_ns.back().size() != n)
      ranks[r].fail(std::to_string(p.rank_start_ns.back().size()) + " values where start_ns has " + std::to_string(n));
    for (std::size_t i = 0; i < n; ++i)
      if (p.rank_start_ns.back()[i] < 0)
        ranks[r][i].fail(std::to_string(p.rank_start_ns.back()[i]) + " is before the clock's zero: not a start time");
  }
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
  read_rank_columns(f, p, n);
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

// What the phase's values are in (stats.unit, "s" or "s/UNIT" since 2.9) and, judged per work, each sample's
// time per unit of work. A 2.8 file wrote "s" for a phase judged per work: its work unit is its throughput's.
void read_value_unit(const Field& f, PhaseResult& p) {
  std::string unit = f["stats"].has("unit") ? f["stats"]["unit"].string() : "s";
  const bool per_work = judged_per_work(p) || p.counters.count(kSampleWorkCounter) != 0;
  if (unit == "s" && per_work) {
    const std::string& t = p.throughput_unit;
    unit = "s/" + (t.size() > 2 && t.compare(t.size() - 2, 2, "/s") == 0 ? t.substr(0, t.size() - 2) : t);
  }
  if (unit != "s" && unit.rfind("s/", 0) != 0) f["stats"]["unit"].fail("expected \"s\" or \"s/UNIT\"");
  set_sample_values(p, unit == "s" ? "" : unit.substr(2));
  p.value_unit = unit;  // a file without samples (--no-raw) still says what its stats are in
}

}  // namespace

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
  read_value_unit(f, p);
  return p;
}

}  // namespace ib::results_reading
