// The reader of results files (harness/results/results_reader.h): a hand-built Results written by the JSON writer
// reads back as the same structs, write -> read -> write is byte-identical, and a file that does not read
// says which file and which field in one line.
#include "reports/json/results_json.h"
#include "harness/results/results_reader.h"
#include "tests/unit/sample_results.h"

#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;
using ojson = nlohmann::ordered_json;

// Every field the writer writes set to something other than its default, NaN where a NaN is written
// as null.
Results every_field_results() {
  Results r = sample_results();
  Meta& m = r.meta;
  m.git_sha = "abc123";
  m.start_time = "2025-01-02T03:04:05Z";
  m.host = "node7";
  m.host_cpus = 16;
  m.backend_requested = "auto";
  m.backend_note = "NO GPU FOUND";
  m.telemetry = {{"hz", 10.0}, {"source", "libnvidia-ml.so.1"}};
  m.max_foreign_cpus = 0.25;
  m.max_steal_cpus = 0.1;
  m.max_reruns = 2;
  r.runs.at(0).tenants.at(0).colocated.outcome.escaped_processes = 3;  // issue 37 item 1
  r.runs.at(0).tenants.at(0).warnings.push_back({WarningKind::escaped_processes, "3 process(es) left its group"});
  r.runs.at(0).tenants.at(0).alone.outcome.lines_given_up = 4;  // issue 37 item 11
  r.runs.at(0).tenants.at(0).warnings.push_back({WarningKind::pattern_gave_up, "4 line(s) given up"});
  DeviceRecord gpu;
  gpu.kind = DeviceKind::gpu;
  gpu.index = 1;
  gpu.name = "NVIDIA H200";
  gpu.uuid = "GPU-1234";
  gpu.node = "node7";
  gpu.driver_version = "550.90.07";
  gpu.cuda_version = "12.4";
  gpu.vbios_version = "96.00.74.00.01";
  gpu.compute_mode = "Default";
  gpu.mig_mode = CurrentPending{true, false};
  gpu.ecc = CurrentPending{true, true};
  gpu.power_limit_w = 650.5;
  gpu.default_power_limit_w = 700.0;
  gpu.pcie_gen_current = 4;
  gpu.pcie_width_current = 16;
  gpu.pcie_gen_max = 5;
  gpu.pcie_width_max = 16;
  gpu.memory_total_bytes = 150754820096ULL;
  gpu.unsupported = {"vbios_version: nvmlDeviceGetVbiosVersion: Not Supported"};
  DeviceRecord host;
  host.kind = DeviceKind::host;
  host.name = "AMD EPYC 9654";
  host.node = "node7";
  host.cores_online = 192;
  host.cores_usable = 16;
  host.memory_total_bytes = 1ULL << 40;
  host.error = "none";
  m.devices = {gpu, host};

  RunResult& run = r.runs[0];
  run.scenario_file = "scenarios/pair.json";
  run.device = 1;
  run.warmup_s = 0.5;
  run.duration_s = 2.0;
  run.status = RunStatus::interrupted;
  run.message = "interrupted";
  run.mode_config.mode = "mig";
  run.mode_config.device = ModeDeviceFacts{};
  run.mode_config.device->name = "NVIDIA H200";
  run.mode_config.device->compute_mode = "Default";
  run.mode_config.device->mig_mode = MigModeState{true, false};
  run.mode_config.device->mig_created = std::vector<CreatedMigInstance>{{"1g.18gb", 7, 0}};
  run.mode_config.device->unmapped["future_fact"] = 3;
  run.mode_config.mps = MpsDaemonInfo{"/tmp/p", "/tmp/l", "private", "all clients"};
  MigInstance inst;
  inst.index = 1;
  inst.gpu_instance_id = 7;
  inst.profile = "1g.18gb";
  inst.uuid = "MIG-1";
  inst.sm_count = 16;
  inst.memory_bytes = 18ull << 30;
  run.mode_config.mig = MigPlacementInfo{{inst}, {{"a", "MIG-1"}}, {{"a", {"MIG-1", "MIG-2"}}}};
  run.mode_config.exclusive_source = "baseline";
  run.barrier_skew_s = 2e-5;
  run.blocks[0].barrier_skew_s = 1e-5;
  run.blocks[0].round = 2;
  run.blocks[0].attempt = 3;
  run.blocks[0].start_ns = 100;
  run.blocks[0].end_ns = 900;
  run.blocks[0].load = {1.0, 0.5, 0.01, 1.9, 2, 40u, 1ull << 30};
  run.blocks[0].load.gpu_drain_s = 0.35;
  run.blocks[0].load.gpu_own_busy_processes = 0;
  BlockRecord quiet;
  quiet.index = 1;
  quiet.phase = Phase::exclusive;
  quiet.tenants = {"alpha"};
  run.blocks.push_back(quiet);

  TenantResult& a = run.tenants[0];
  a.role = "victim";
  // A phase that repeats the exclusive one keeps none of its samples (as modes/common.cpp makes it).
  a.alone.start_ns.clear();
  a.alone.duration_s.clear();
  a.alone.in_window.clear();
  a.alone.outlier.clear();
  a.placement = {{"cpus", {0}}};
  PhaseResult& c = a.colocated;
  c.outcome.exit_code = 0;
  c.outcome.log_file = "logs/a.log";
  c.outcome.env = {{"CUDA_VISIBLE_DEVICES", "0"}};
  c.outcome.resolved = {{"rate", 250.0}};
  c.block = {0, 0, 1, 1};
  c.counted = {0, 1, 1, 1};
  c.coverage = {kNaN, 0.9, 1.0, 0.95};
  c.coverage_mean = 0.95;
  c.coverage_p5 = 0.905;
  c.latency_count = {1, 2, 0, 1};
  c.latencies_s = {0.001, 0.002, 0.003, 0.004};
  c.latency = summary_of(4, 0.0025);
  c.counter_samples = {{"requests", {1, 2, 0, 1}}};
  c.counters = {{"requests", {3.0, 120.0}}};
  // Two ranks: each sample starts with its first arrival (start_ns), the late rank a few microseconds after.
  c.rank_duration_s = {c.duration_s, {0.0009, 0.0019, 0.0029, 0.0039}};
  c.rank_start_ns = {c.start_ns, {c.start_ns[0] + 100'000, c.start_ns[1], c.start_ns[2] + 7, c.start_ns[3] + 100'000}};
  c.rank_figures = PhaseResult::RankFigures{2, 1, 2.0 / 3.0};
  TelemetrySample t0, t1;
  t0.t_ns = 1'000'000;
  t0.r.sm_clock_mhz = 1980;
  t0.r.max_sm_clock_mhz = 1980;
  t0.r.mem_clock_mhz = 3201;
  t0.r.power_w = 600.5;
  t0.r.power_limit_w = 700.0;
  t0.r.default_power_limit_w = 700.0;
  t0.r.temperature_c = 61;
  t0.r.clock_event_reasons = 0x4;
  t0.r.util_gpu_pct = 99;
  t0.r.util_memory_pct = 40;
  t0.r.memory_used_bytes = 1ull << 33;
  t0.r.power_violation = ViolationTime{0, 12};
  t0.r.thermal_violation = ViolationTime{0, 0};
  t1.t_ns = 101'000'000;
  t1.r.sm_clock_mhz = 1300;  // every other field unreported: null in the series
  c.telemetry = {t0, t1};
  c.throttled = {0, 1, 1, 0};
  ThrottleSummary th;
  th.samples = 4;
  th.throttled_samples = 2;
  th.throttled_fraction = 0.5;
  th.readings = 2;
  th.throttled_readings = 1;
  th.covered_s = 0.1;
  th.reasons_seen = 0x4;
  th.time_per_reason = {{0x1, "GpuIdle", 0.0, 0.0}, {0x4, "SwPowerCap", 0.1, 1.0}};
  c.throttle = th;
  c.telemetry_unsupported = {"util_gpu_pct: nvmlDeviceGetUtilizationRates: Not Supported"};
  c.measure_start_ns = 1'000'000;
  c.measure_end_ns = 9'000'000;
  c.blocks = 2;
  c.blocks_counted = 1;
  a.exclusive.telemetry_error = "NVML went away";
  a.exclusive.blocks = 1;
  a.exclusive.blocks_counted = 1;
  a.metrics->basis = "request_latency";

  r.aggregates[0].repetitions = 2;
  r.summary.interrupted = true;
  r.summary.failed = 1;
  r.summary.inconclusive = 2;
  r.summary.baseline = 3;
  r.summary.waived = 4;
  r.summary.exit_code = 130;
  return r;
}

// ---- the structs compared field by field (NaN equals NaN: the writer writes both as null) ----

void same(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  else EXPECT_EQ(a, b) << what;
}
void same(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) same(a[i], b[i], what + "[" + std::to_string(i) + "]");
}
void same(const std::optional<double>& a, const std::optional<double>& b, const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) same(*a, *b, what);
}
void same(const Summary& a, const Summary& b, const std::string& what) {
  EXPECT_EQ(a.n, b.n) << what;
  same(std::vector<double>{a.mean, a.median, a.stddev, a.cv, a.min, a.max, a.p5, a.p50, a.p95, a.p99},
       std::vector<double>{b.mean, b.median, b.stddev, b.cv, b.min, b.max, b.p5, b.p50, b.p95, b.p99}, what);
}

void same_telemetry(const std::vector<TelemetrySample>& a, const std::vector<TelemetrySample>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const TelemetryReading &x = a[i].r, &y = b[i].r;
    EXPECT_EQ(a[i].t_ns, b[i].t_ns);
    EXPECT_EQ(x.sm_clock_mhz, y.sm_clock_mhz);
    EXPECT_EQ(x.max_sm_clock_mhz, y.max_sm_clock_mhz);
    EXPECT_EQ(x.mem_clock_mhz, y.mem_clock_mhz);
    same(x.power_w, y.power_w, "power_w");
    same(x.power_limit_w, y.power_limit_w, "power_limit_w");
    same(x.default_power_limit_w, y.default_power_limit_w, "default_power_limit_w");
    EXPECT_EQ(x.temperature_c, y.temperature_c);
    EXPECT_EQ(x.clock_event_reasons, y.clock_event_reasons);
    EXPECT_EQ(x.util_gpu_pct, y.util_gpu_pct);
    EXPECT_EQ(x.util_memory_pct, y.util_memory_pct);
    EXPECT_EQ(x.memory_used_bytes, y.memory_used_bytes);
    ASSERT_EQ(x.power_violation.has_value(), y.power_violation.has_value());
    if (x.power_violation) EXPECT_EQ(x.power_violation->violation_ns, y.power_violation->violation_ns);
    ASSERT_EQ(x.thermal_violation.has_value(), y.thermal_violation.has_value());
    if (x.thermal_violation) EXPECT_EQ(x.thermal_violation->violation_ns, y.thermal_violation->violation_ns);
  }
}

void same_throttle(const std::optional<ThrottleSummary>& a, const std::optional<ThrottleSummary>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->samples, b->samples);
  EXPECT_EQ(a->throttled_samples, b->throttled_samples);
  same(a->throttled_fraction, b->throttled_fraction, "throttled_fraction");
  EXPECT_EQ(a->throttled_readings, b->throttled_readings);
  same(a->covered_s, b->covered_s, "covered_s");
  EXPECT_EQ(a->reasons_seen, b->reasons_seen);
  ASSERT_EQ(a->time_per_reason.size(), b->time_per_reason.size());
  for (std::size_t i = 0; i < a->time_per_reason.size(); ++i) {
    EXPECT_EQ(a->time_per_reason[i].bit, b->time_per_reason[i].bit);
    EXPECT_EQ(a->time_per_reason[i].name, b->time_per_reason[i].name);
    same(a->time_per_reason[i].seconds, b->time_per_reason[i].seconds, "seconds");
    same(a->time_per_reason[i].fraction, b->time_per_reason[i].fraction, "fraction");
  }
}

void same_phase(const PhaseResult& a, const PhaseResult& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.outcome.status, b.outcome.status);
  EXPECT_EQ(a.outcome.message, b.outcome.message);
  EXPECT_EQ(a.outcome.exit_code, b.outcome.exit_code);
  EXPECT_EQ(a.outcome.signal, b.outcome.signal);
  EXPECT_EQ(a.outcome.log_file, b.outcome.log_file);
  EXPECT_EQ(a.outcome.env, b.outcome.env);
  EXPECT_EQ(a.outcome.resolved, b.outcome.resolved);
  EXPECT_EQ(a.start_ns, b.start_ns);
  same(a.duration_s, b.duration_s, "duration_s");
  EXPECT_EQ(a.block, b.block);
  EXPECT_EQ(a.in_window, b.in_window);
  EXPECT_EQ(a.counted, b.counted);
  EXPECT_EQ(a.outlier, b.outlier);
  same(a.coverage, b.coverage, "coverage");
  EXPECT_EQ(a.latency_count, b.latency_count);
  same(a.latencies_s, b.latencies_s, "latencies_s");
  ASSERT_EQ(a.latency.has_value(), b.latency.has_value());
  if (a.latency) same(*a.latency, *b.latency, "latency");
  EXPECT_EQ(a.counter_samples, b.counter_samples);
  ASSERT_EQ(a.rank_duration_s.size(), b.rank_duration_s.size());
  for (std::size_t r = 0; r < a.rank_duration_s.size(); ++r) same(a.rank_duration_s[r], b.rank_duration_s[r], "rank_duration_s");
  EXPECT_EQ(a.rank_start_ns, b.rank_start_ns);
  ASSERT_EQ(a.rank_figures.has_value(), b.rank_figures.has_value());
  if (a.rank_figures) {
    EXPECT_EQ(a.rank_figures->ranks, b.rank_figures->ranks);
    EXPECT_EQ(a.rank_figures->straggler_rank, b.rank_figures->straggler_rank);
    same(a.rank_figures->straggler_share, b.rank_figures->straggler_share, "straggler_share");
  }
  ASSERT_EQ(a.counters.size(), b.counters.size());
  for (const auto& [name, total] : a.counters) {
    same(total.total, b.counters.at(name).total, name);
    same(total.rate, b.counters.at(name).rate, name);
  }
  same_telemetry(a.telemetry, b.telemetry);
  EXPECT_EQ(a.throttled, b.throttled);
  same_throttle(a.throttle, b.throttle);
  EXPECT_EQ(a.telemetry_error, b.telemetry_error);
  EXPECT_EQ(a.telemetry_unsupported, b.telemetry_unsupported);
  EXPECT_EQ(a.measure_start_ns, b.measure_start_ns);
  EXPECT_EQ(a.measure_end_ns, b.measure_end_ns);
  same(a.stats, b.stats, "stats");
  same(a.throughput, b.throughput, "throughput");
  EXPECT_EQ(a.throughput_unit, b.throughput_unit);
  same(a.window_cv, b.window_cv, "window_cv");
  EXPECT_EQ(a.outliers, b.outliers);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.blocks_counted, b.blocks_counted);
  same(a.coverage_mean, b.coverage_mean, "coverage_mean");
  same(a.coverage_p5, b.coverage_p5, "coverage_p5");
}

void same_metrics(const std::optional<TenantMetrics>& a, const std::optional<TenantMetrics>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->basis, b->basis);
  same(std::vector<double>{a->p95_slowdown.value, a->p95_slowdown.ci_low, a->p95_slowdown.ci_high,
                           a->p95_slowdown.confidence, a->median_slowdown, a->partition_cost, a->interference},
       std::vector<double>{b->p95_slowdown.value, b->p95_slowdown.ci_low, b->p95_slowdown.ci_high,
                           b->p95_slowdown.confidence, b->median_slowdown, b->partition_cost, b->interference},
       "metrics");
  EXPECT_EQ(a->p95_slowdown.resamples, b->p95_slowdown.resamples);
  EXPECT_EQ(a->p95_slowdown.seed, b->p95_slowdown.seed);
  EXPECT_EQ(a->n_exclusive, b->n_exclusive);
  EXPECT_EQ(a->n_colocated, b->n_colocated);
}

void same_block(const BlockRecord& a, const BlockRecord& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.round, b.round);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.tenants, b.tenants);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.overlap_start_ns, b.overlap_start_ns);
  EXPECT_EQ(a.overlap_end_ns, b.overlap_end_ns);
  same(a.barrier_skew_s, b.barrier_skew_s, "barrier_skew_s");
  same(std::vector<double>{a.load.seconds, a.load.foreign_cpus, a.load.steal_cpus, a.load.own_cpus},
       std::vector<double>{b.load.seconds, b.load.foreign_cpus, b.load.steal_cpus, b.load.own_cpus}, "load");
  EXPECT_EQ(a.load.gpu_foreign_processes, b.load.gpu_foreign_processes);
  EXPECT_EQ(a.load.gpu_idle_util_pct, b.load.gpu_idle_util_pct);
  EXPECT_EQ(a.load.gpu_foreign_memory_bytes, b.load.gpu_foreign_memory_bytes);
  EXPECT_EQ(a.load.gpu_drain_s, b.load.gpu_drain_s);
  EXPECT_EQ(a.load.gpu_own_busy_processes, b.load.gpu_own_busy_processes);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
}

void same_mode_config(const ModeConfig& a, const ModeConfig& b) {
  EXPECT_EQ(a.mode, b.mode);
  ASSERT_EQ(a.device.has_value(), b.device.has_value());
  if (a.device) {
    EXPECT_EQ(a.device->nvml, b.device->nvml);
    EXPECT_EQ(a.device->name, b.device->name);
    EXPECT_EQ(a.device->uuid, b.device->uuid);
    EXPECT_EQ(a.device->compute_mode, b.device->compute_mode);
    EXPECT_EQ(a.device->compute_policy, b.device->compute_policy);
    EXPECT_EQ(a.device->measures, b.device->measures);
    ASSERT_EQ(a.device->mig_mode.has_value(), b.device->mig_mode.has_value());
    if (a.device->mig_mode) EXPECT_EQ(a.device->mig_mode->current, b.device->mig_mode->current);
    ASSERT_EQ(a.device->mig_created.has_value(), b.device->mig_created.has_value());
    if (a.device->mig_created) {
      ASSERT_EQ(a.device->mig_created->size(), b.device->mig_created->size());
      for (std::size_t i = 0; i < a.device->mig_created->size(); ++i) {
        EXPECT_EQ((*a.device->mig_created)[i].profile, (*b.device->mig_created)[i].profile);
        EXPECT_EQ((*a.device->mig_created)[i].gpu_instance_id, (*b.device->mig_created)[i].gpu_instance_id);
      }
    }
    EXPECT_EQ(a.device->unmapped, b.device->unmapped);
  }
  ASSERT_EQ(a.mps.has_value(), b.mps.has_value());
  if (a.mps) {
    EXPECT_EQ(a.mps->pipe_directory, b.mps->pipe_directory);
    EXPECT_EQ(a.mps->fault_propagation, b.mps->fault_propagation);
  }
  ASSERT_EQ(a.mig.has_value(), b.mig.has_value());
  if (a.mig) {
    ASSERT_EQ(a.mig->instances.size(), b.mig->instances.size());
    for (std::size_t i = 0; i < a.mig->instances.size(); ++i) {
      EXPECT_EQ(a.mig->instances[i].uuid, b.mig->instances[i].uuid);
      EXPECT_EQ(a.mig->instances[i].memory_bytes, b.mig->instances[i].memory_bytes);
      EXPECT_EQ(a.mig->instances[i].sm_count, b.mig->instances[i].sm_count);
    }
    EXPECT_EQ(a.mig->assignment, b.mig->assignment);
    EXPECT_EQ(a.mig->rank_assignment, b.mig->rank_assignment);
  }
  EXPECT_EQ(a.exclusive_source, b.exclusive_source);
}

void same_run(const RunResult& a, const RunResult& b) {
  EXPECT_EQ(a.scenario, b.scenario);
  EXPECT_EQ(a.scenario_file, b.scenario_file);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.repetition, b.repetition);
  EXPECT_EQ(a.repetitions, b.repetitions);
  same(std::vector<double>{a.warmup_s, a.duration_s, a.cutoff}, std::vector<double>{b.warmup_s, b.duration_s, b.cutoff},
       "run");
  EXPECT_EQ(a.status, b.status);
  same_mode_config(a.mode_config, b.mode_config);
  EXPECT_EQ(a.message, b.message);
  ASSERT_EQ(a.system.has_value(), b.system.has_value());
  if (a.system)
    same(std::vector<double>{a.system->stp_exclusive, a.system->antt_exclusive, a.system->stp_alone, a.system->antt_alone},
         std::vector<double>{b.system->stp_exclusive, b.system->antt_exclusive, b.system->stp_alone, b.system->antt_alone},
         "system");
  same(a.barrier_skew_s, b.barrier_skew_s, "barrier_skew_s");
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_EQ(a.round_order, b.round_order);
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (std::size_t i = 0; i < a.blocks.size(); ++i) same_block(a.blocks[i], b.blocks[i]);
  ASSERT_EQ(a.tenants.size(), b.tenants.size());
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const TenantResult &x = a.tenants[i], &y = b.tenants[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.role, y.role);
    EXPECT_EQ(x.workload, y.workload);
    EXPECT_EQ(x.params, y.params);
    EXPECT_EQ(x.placement, y.placement);
    same(x.work.amount, y.work.amount, "work");
    EXPECT_EQ(x.work.unit, y.work.unit);
    same_phase(x.exclusive, y.exclusive, x.name + " exclusive");
    same_phase(x.alone, y.alone, x.name + " alone");
    same_phase(x.colocated, y.colocated, x.name + " colocated");
    same_metrics(x.metrics, y.metrics);
    EXPECT_EQ(x.verdict, y.verdict);
    EXPECT_EQ(x.verdict_reason, y.verdict_reason);
    EXPECT_EQ(x.warnings, y.warnings);
  }
}

void same_results(const Results& a, const Results& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  const Meta &x = a.meta, &y = b.meta;
  EXPECT_EQ(x.argv, y.argv);
  EXPECT_EQ(x.version, y.version);
  EXPECT_EQ(x.git_sha, y.git_sha);
  EXPECT_EQ(x.start_time, y.start_time);
  EXPECT_EQ(x.host, y.host);
  EXPECT_EQ(x.host_cpus, y.host_cpus);
  EXPECT_EQ(x.backend, y.backend);
  EXPECT_EQ(x.backend_requested, y.backend_requested);
  EXPECT_EQ(x.backend_note, y.backend_note);
  EXPECT_EQ(x.suite, y.suite);
  EXPECT_EQ(x.telemetry, y.telemetry);
  EXPECT_EQ(x.bootstrap_seed, y.bootstrap_seed);
  EXPECT_EQ(x.bootstrap_resamples, y.bootstrap_resamples);
  same(std::vector<double>{x.max_foreign_cpus, x.max_steal_cpus}, std::vector<double>{y.max_foreign_cpus, y.max_steal_cpus},
       "limits");
  EXPECT_EQ(x.max_reruns, y.max_reruns);
  ASSERT_EQ(x.devices.size(), y.devices.size());
  for (std::size_t i = 0; i < x.devices.size(); ++i) {
    const DeviceRecord &d = x.devices[i], &e = y.devices[i];
    EXPECT_EQ(d.kind, e.kind);
    EXPECT_EQ(d.index, e.index);
    EXPECT_EQ(std::vector<std::string>({d.name, d.node, d.error}), std::vector<std::string>({e.name, e.node, e.error}));
    EXPECT_EQ(std::vector<std::optional<std::string>>({d.uuid, d.driver_version, d.cuda_version, d.vbios_version, d.compute_mode}),
              std::vector<std::optional<std::string>>({e.uuid, e.driver_version, e.cuda_version, e.vbios_version, e.compute_mode}));
    EXPECT_EQ(d.mig_mode.has_value(), e.mig_mode.has_value());
    if (d.mig_mode && e.mig_mode) EXPECT_EQ(d.mig_mode->current, e.mig_mode->current);
    EXPECT_EQ(d.ecc.has_value(), e.ecc.has_value());
    if (d.ecc && e.ecc) EXPECT_EQ(d.ecc->pending, e.ecc->pending);
    EXPECT_EQ(d.power_limit_w, e.power_limit_w);
    EXPECT_EQ(d.default_power_limit_w, e.default_power_limit_w);
    EXPECT_EQ(std::vector<std::optional<unsigned>>({d.pcie_gen_current, d.pcie_width_current, d.pcie_gen_max, d.pcie_width_max,
                                                    d.cores_online, d.cores_usable}),
              std::vector<std::optional<unsigned>>({e.pcie_gen_current, e.pcie_width_current, e.pcie_gen_max, e.pcie_width_max,
                                                    e.cores_online, e.cores_usable}));
    EXPECT_EQ(d.memory_total_bytes, e.memory_total_bytes);
    EXPECT_EQ(d.unsupported, e.unsupported);
  }
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i) same_run(a.runs[i], b.runs[i]);
  ASSERT_EQ(a.aggregates.size(), b.aggregates.size());
  for (std::size_t i = 0; i < a.aggregates.size(); ++i) {
    const TenantAggregate &p = a.aggregates[i], &q = b.aggregates[i];
    EXPECT_EQ(p.scenario, q.scenario);
    EXPECT_EQ(p.mode, q.mode);
    EXPECT_EQ(p.tenant, q.tenant);
    EXPECT_EQ(p.workload, q.workload);
    EXPECT_EQ(p.repetitions, q.repetitions);
    EXPECT_EQ(p.repetitions_measured, q.repetitions_measured);
    same_metrics(p.metrics, q.metrics);
    EXPECT_EQ(p.repetition_verdicts, q.repetition_verdicts);
    EXPECT_EQ(p.verdict, q.verdict);
    EXPECT_EQ(p.verdict_reason, q.verdict_reason);
    EXPECT_EQ(p.warnings, q.warnings);
  }
  const RunSummary &s = a.summary, &t = b.summary;
  EXPECT_EQ(std::vector<int>({s.pass, s.interrupted, s.runs, s.tenants, s.passed, s.failed, s.inconclusive, s.baseline,
                              s.waived, s.errors, s.exit_code}),
            std::vector<int>({t.pass, t.interrupted, t.runs, t.tenants, t.passed, t.failed, t.inconclusive, t.baseline,
                              t.waived, t.errors, t.exit_code}));
}

ResultsDocument read_back(const Results& r, bool raw) {
  return results_from_json(ojson::parse(results_to_json(r, raw).dump(1)), "results.json");
}

// ---------------------------------------------------------------- round trip

TEST(ResultsReader, WhatTheWriterWroteReadsBackAsTheSameStructs) {
  const Results written = every_field_results();
  const ResultsDocument doc = read_back(written, true);
  EXPECT_TRUE(doc.raw_samples);
  same_results(written, doc.results);
}

// Byte-identical for every file with raw samples, and for --no-raw files without telemetry: a --no-raw
// file keeps the count of telemetry readings but not the readings, and the structs hold only the readings.
void expect_rewritten_identically(const Results& r, bool raw) {
  const std::string first = results_to_json(r, raw).dump(1);
  const ResultsDocument doc = results_from_json(ojson::parse(first), "results.json");
  EXPECT_EQ(doc.raw_samples, raw);
  EXPECT_EQ(results_to_json(doc.results, raw).dump(1), first) << "raw " << raw;
}

TEST(ResultsReader, WriteReadWriteIsByteIdentical) {
  expect_rewritten_identically(every_field_results(), true);
  expect_rewritten_identically(sample_results(), true);
  expect_rewritten_identically(sample_results(), false);
}

// A command tenant's advice and its phase's GPU memory are written and read back byte for byte.
TEST(ResultsReader, AnAdviceAndGpuMemoryReadBackIdentically) {
  Results r = sample_results();
  ASSERT_FALSE(r.aggregates.empty());
  AdviceInputs in;
  in.peak_memory_fraction = 0.83;
  in.run_length_h = 12;
  in.interruptible = false;
  in.price_exclusive_per_h = 4.0;
  in.price_shared_per_h = 1.0;
  in.step_exclusive_s = 0.01;
  in.step_shared_s = 0.02;
  in.p95_verdict = Verdict::fail;
  Advice a;
  a.choice = CardChoice::exclusive;
  a.reason = "exclusive: peak_memory_above_70pct";
  a.inputs = in;
  a.rules = {{"peak_memory_above_70pct", RuleHolds::yes, CardChoice::exclusive, "says", "83%", "seed 000"},
             {"gpu_utilisation_below_30pct", RuleHolds::unknown, CardChoice::unknown, "says", "unknown", "seed 004"}};
  a.cost_per_step_exclusive = 1.1e-5;
  r.aggregates[0].advice = a;
  r.runs[0].tenants[0].exclusive.gpu_memory_peak_bytes = 120000ull << 20;
  r.runs[0].tenants[0].exclusive.gpu_memory_total_bytes = 143771ull << 20;
  expect_rewritten_identically(r, true);
  const ResultsDocument doc = results_from_json(ojson::parse(results_to_json(r, true).dump(1)), "results.json");
  ASSERT_TRUE(doc.results.aggregates[0].advice);
  EXPECT_EQ(doc.results.aggregates[0].advice->rules[0].holds, RuleHolds::yes);
  EXPECT_EQ(doc.results.aggregates[0].advice->inputs.interruptible, false);
  EXPECT_FALSE(doc.results.aggregates[0].advice->cost_per_step_shared.has_value());
  EXPECT_EQ(doc.results.runs[0].tenants[0].exclusive.gpu_memory_peak_bytes, 120000ull << 20);
}

// The scheduler's facts (schema 2.4) are written only when a scheduler launched the run, and read back.
TEST(ResultsReader, SchedulerFactsReadBackIdentically) {
  Results r = sample_results();
  EXPECT_FALSE(results_to_json(r, true)["meta"].contains("scheduler"));
  r.meta.scheduler = SchedulerFacts{"slurm", "1234", "1230", 4, "gpu-node-07"};
  expect_rewritten_identically(r, true);
  const ResultsDocument doc = results_from_json(ojson::parse(results_to_json(r, true).dump(1)), "results.json");
  ASSERT_TRUE(doc.results.meta.scheduler);
  EXPECT_EQ(doc.results.meta.scheduler->task_index, 4);
  EXPECT_EQ(doc.results.meta.scheduler->node, "gpu-node-07");
  auto j = results_to_json(r, true);
  j["meta"]["scheduler"]["kind"] = "pbs";
  try {
    results_from_json(j, "r.json");
    FAIL() << "an unknown scheduler kind was read";
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(e.field(), "meta.scheduler.kind");
  }
}

// A run across nodes (schema 2.5) records every other node and its clock against the conductor's (2.6: how
// often it was measured, the spread, the node's devices); a run on one node has no nodes field.
TEST(ResultsReader, NodesOfARunAcrossNodesReadBackIdentically) {
  Results r = sample_results();
  EXPECT_FALSE(results_to_json(r, true)["meta"].contains("nodes"));
  r.meta.nodes = {{1, "gpu-node-08", -1'000'000'001'167, 14'433, 28'865, 1, 0, {}}, {2, "gpu-node-09", 52, 3, 6, 1, 0, {}}};
  r.meta.nodes[0].clock_measurements = 41;
  r.meta.nodes[0].clock_offset_span_ns = 2'345;
  DeviceRecord gpu;
  gpu.kind = DeviceKind::gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H200";
  gpu.uuid = "GPU-8";
  gpu.node = "gpu-node-08";
  r.meta.nodes[0].devices = {gpu};
  expect_rewritten_identically(r, true);
  const ResultsDocument doc = results_from_json(ojson::parse(results_to_json(r, true).dump(1)), "results.json");
  ASSERT_EQ(doc.results.meta.nodes.size(), 2u);
  EXPECT_EQ(doc.results.meta.nodes[0].clock_offset_ns, -1'000'000'001'167);
  EXPECT_EQ(doc.results.meta.nodes[0].clock_measurements, 41);
  EXPECT_EQ(doc.results.meta.nodes[0].clock_offset_span_ns, 2'345);
  ASSERT_EQ(doc.results.meta.nodes[0].devices.size(), 1u);
  EXPECT_EQ(doc.results.meta.nodes[0].devices[0].uuid, "GPU-8");
  EXPECT_EQ(doc.results.meta.nodes[1].host, "gpu-node-09");
  EXPECT_TRUE(doc.results.meta.nodes[1].devices.empty());
  auto older = results_to_json(r, true);  // a 2.5 file: measured once, no devices
  for (auto& n : older["meta"]["nodes"])
    for (const char* k : {"clock_measurements", "clock_offset_span_ns", "devices"}) n.erase(k);
  const auto old_nodes = results_from_json(older, "old.json").results.meta.nodes;
  EXPECT_EQ(old_nodes[0].clock_measurements, 1);
  EXPECT_TRUE(old_nodes[0].devices.empty());
  auto j = results_to_json(r, true);
  j["meta"]["nodes"][1]["clock_rtt_ns"] = "6";
  try {
    results_from_json(j, "r.json");
    FAIL() << "a string round trip was read";
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(e.field(), "meta.nodes[1].clock_rtt_ns");
  }
}

TEST(ResultsReader, ANoRawFileReadsBackWithoutItsSamples) {
  const ResultsDocument doc = read_back(every_field_results(), false);
  EXPECT_FALSE(doc.raw_samples);
  const PhaseResult& c = doc.results.runs[0].tenants[0].colocated;
  EXPECT_TRUE(c.start_ns.empty() && c.duration_s.empty() && c.telemetry.empty());
  EXPECT_EQ(c.stats.n, 4u);  // the figures stay
  ASSERT_TRUE(c.throttle);
  EXPECT_EQ(c.throttle->throttled_samples, 2u);
}

// ---------------------------------------------------------------- errors

// The one-line message results_from_json throws for `doc`.
std::string error_of(const ojson& doc) {
  try {
    results_from_json(doc, "base.json");
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "read without an error";
  return "";
}

// A phase judged on time per unit of work (an interval reporter's samples carry their work): its stats.unit says
// s/UNIT, and read back it has each sample's time per unit for the writers; a 2.8 file, which wrote "s" for it, reads
// with its throughput's unit; --no-raw keeps the unit.
TEST(ResultsReader, APhaseJudgedPerWorkReadsBackWithItsUnitAndValues) {
  Results r = sample_results();
  PhaseResult& p = r.runs[0].tenants[0].colocated;
  p.counter_samples[kSampleWorkCounter].assign(p.duration_s.size(), 0.0);
  for (std::size_t i = 0; i < p.duration_s.size(); ++i) p.counter_samples[kSampleWorkCounter][i] = 1e6 * (i + 1);
  p.throughput_unit = "B/s";
  set_sample_values(p, "B");
  ASSERT_EQ(p.value_unit, "s/B");
  ojson j = results_to_json(r, true);
  ojson& phase = j["runs"][0]["tenants"][0]["phases"]["colocated"];
  EXPECT_EQ(phase["stats"]["unit"], "s/B");
  const auto read = [](const ojson& doc) { return results_from_json(doc, "r.json").results.runs[0].tenants[0].colocated; };
  PhaseResult q = read(j);
  EXPECT_EQ(q.value_unit, "s/B");
  ASSERT_EQ(q.time_per_work.size(), p.duration_s.size());
  for (std::size_t i = 0; i < q.time_per_work.size(); ++i) EXPECT_DOUBLE_EQ(q.time_per_work[i], p.duration_s[i] / (1e6 * (i + 1)));
  phase["stats"]["unit"] = "s";  // as 2.8 wrote it
  EXPECT_EQ(read(j).value_unit, "s/B");
  phase["stats"]["unit"] = "ms";
  EXPECT_NE(error_of(j).find("stats.unit: expected \"s\" or \"s/UNIT\""), std::string::npos) << error_of(j);
  EXPECT_EQ(read_back(r, false).results.runs[0].tenants[0].colocated.value_unit, "s/B");
}

TEST(ResultsReader, AnotherSchemaVersionIsRefusedByName) {
  ojson doc = results_to_json(sample_results(), true);
  doc["schema_version"] = "1.0";
  EXPECT_EQ(error_of(doc), "base.json: schema_version: \"1.0\"; not a results file of this version (schema 2.9)");
  doc.erase("schema_version");
  EXPECT_EQ(error_of(doc), "base.json: schema_version: missing; not a results file of this version (schema 2.9)");
}

TEST(ResultsReader, EveryMinorVersionOfThisMajorReads) {
  EXPECT_TRUE(schema_version_readable("2.0"));
  EXPECT_TRUE(schema_version_readable("2.1"));
  EXPECT_TRUE(schema_version_readable("2.17"));
  EXPECT_FALSE(schema_version_readable("3.0"));
  EXPECT_FALSE(schema_version_readable("1.9"));
  EXPECT_FALSE(schema_version_readable("2."));
  EXPECT_FALSE(schema_version_readable("2.1x"));
  EXPECT_FALSE(schema_version_readable("20.1"));
  ojson doc = results_to_json(every_field_results(), true);
  doc["schema_version"] = "3.0";
  EXPECT_EQ(error_of(doc), "base.json: schema_version: \"3.0\"; not a results file of this version (schema 2.9)");
}

TEST(ResultsReader, A20FileReadsWithoutDevicesAndKeepsItsVersion) {
  ojson doc = results_to_json(every_field_results(), true);
  doc["schema_version"] = "2.0";
  doc["meta"].erase("devices");
  const ResultsDocument read = results_from_json(doc, "old.json");
  EXPECT_EQ(read.results.schema_version, "2.0");
  EXPECT_TRUE(read.results.meta.devices.empty());
}

TEST(ResultsReader, ADeviceFieldOfTheWrongWordIsNamedByItsPath) {
  ojson doc = results_to_json(every_field_results(), true);
  doc["meta"]["devices"][1]["kind"] = "tpu";
  EXPECT_EQ(error_of(doc), "base.json: meta.devices[1].kind: \"tpu\" is not one of the words this field takes; not a "
                           "results file of this version (schema 2.9)");
}

TEST(ResultsReader, AMissingFieldIsNamedByItsPath) {
  ojson doc = results_to_json(sample_results(), true);
  doc["runs"][0]["tenants"][1]["phases"]["exclusive"]["stats"].erase("median");
  EXPECT_EQ(error_of(doc), "base.json: runs[0].tenants[1].phases.exclusive.stats.median: missing; not a results file of "
                           "this version (schema 2.9)");
}

TEST(ResultsReader, AFieldOfTheWrongTypeOrWordIsNamedByItsPath) {
  ojson doc = results_to_json(sample_results(), true);
  doc["runs"][0]["blocks"][0]["start_ns"] = "soon";
  EXPECT_NE(error_of(doc).find("base.json: runs[0].blocks[0].start_ns: an integer was expected, found string"),
            std::string::npos);
  doc = results_to_json(sample_results(), true);
  doc["aggregates"][1]["verdict"] = "maybe";
  EXPECT_NE(error_of(doc).find("base.json: aggregates[1].verdict: \"maybe\" is not one of the words"), std::string::npos);
  doc = results_to_json(sample_results(), true);
  doc["runs"][0]["tenants"][0]["phases"]["colocated"]["samples"]["in_window"].erase(0);
  EXPECT_NE(error_of(doc).find("runs[0].tenants[0].phases.colocated.samples.in_window: 3 values where start_ns has 4"),
            std::string::npos);
}

// Saved results are measurements: a duration that is not a positive finite number of seconds, a start
// before the clock's zero, a sample of a block the run does not have, or a phase that counts samples
// it does not hold is one line naming the file and the field (exit 2 at the command line).
TEST(ResultsReader, ImpossibleMeasurementsAreRefusedNamingTheField) {
  const std::string samples = "runs[0].tenants[0].phases.colocated.samples.";
  const auto refused = [&](const std::function<void(ojson&)>& change) {
    ojson doc = results_to_json(every_field_results(), true);  // its colocated samples name their blocks
    change(doc["runs"][0]["tenants"][0]["phases"]["colocated"]["samples"]);
    return error_of(doc);
  };
  for (const double bad : {-1.0, 0.0, 1e308}) {
    const std::string e = refused([&](ojson& s) { s["duration_s"][1] = bad; });
    EXPECT_EQ(e.rfind("base.json: " + samples + "duration_s[1]: ", 0), 0u) << e;
    EXPECT_NE(e.find("is not a sample's duration (seconds, above 0 and at most 1e+06)"), std::string::npos) << e;
  }
  EXPECT_NE(refused([](ojson& s) { s["start_ns"][0] = -5; }).find(samples + "start_ns[0]: -5 is before the clock's zero"),
            std::string::npos);
  // Every rank's arrivals (schema 2.9): one per sample, as many ranks as durations, none before the clock's zero.
  EXPECT_NE(refused([](ojson& s) { s["rank_start_ns"][1].erase(0); })
                .find(samples + "rank_start_ns[1]: 3 values where start_ns has 4"),
            std::string::npos);
  EXPECT_NE(refused([](ojson& s) { s["rank_start_ns"].erase(1); }).find(samples + "rank_start_ns: 1 ranks where rank_duration_s has 2"),
            std::string::npos);
  EXPECT_NE(refused([](ojson& s) { s["rank_start_ns"][0][2] = -3; })
                .find(samples + "rank_start_ns[0][2]: -3 is before the clock's zero"),
            std::string::npos);
  const std::string block = refused([](ojson& s) { s["block"][2] = 99; });
  EXPECT_NE(block.find(samples + "block[2]: 99 is not one of the run's 2 blocks"), std::string::npos) << block;
  EXPECT_NE(refused([](ojson& s) { s["block"][0] = -1; }).find(samples + "block[0]: -1 is not one of"), std::string::npos);
  const std::string empty = refused([](ojson& s) {
    for (auto& [key, value] : s.items())
      if (value.is_array()) value = ojson::array();
      else if (value.is_object())
        for (auto& [name, series] : value.items()) series = ojson::array();
  });
  EXPECT_NE(empty.find(samples + "start_ns: no samples, where stats.n counts "), std::string::npos) << empty;
  // The unchanged file still reads.
  EXPECT_NO_THROW(results_from_json(results_to_json(every_field_results(), true), "base.json"));
}

TEST(ResultsReader, AFileThatIsNotJsonOrMissingSaysSo) {
  TempDir dir;
  const std::string path = dir.path + "/results.json";
  std::ofstream(path) << "not json";
  try {
    read_results_file(path);
    FAIL();
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": not an interference-bench results file (not valid JSON: ", 0), 0) << e.what();
  }
  EXPECT_THROW(read_results_file(dir.path + "/none.json"), InputError);
  EXPECT_THROW(results_file_modes(path), ResultsFileError);
}

TEST(ResultsReader, TheModesOfAFileReadWithoutTheRest) {
  TempDir dir;
  const std::string path = dir.path + "/results.json";
  std::ofstream(path) << R"({"runs": [{"mode": "mig"}, {"mode": "exclusive"}]})";
  EXPECT_EQ(results_file_modes(path), (std::vector<std::string>{"mig", "exclusive"}));
  std::ofstream(path) << R"({"meta": {}})";
  EXPECT_THROW(results_file_modes(path), ResultsFileError);
}

// ---------------------------------------------------------------- enum words

TEST(ResultsReader, VerdictWordsAreTheWritersWords) {
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::inconclusive, Verdict::baseline, Verdict::waived,
                    Verdict::error}) {
    EXPECT_STREQ(to_string(v), verdict_name(v));
    EXPECT_EQ(parse_name<Verdict>(verdict_name(v)), v);
  }
  for (LoadVerdict v : {LoadVerdict::pass, LoadVerdict::warn, LoadVerdict::fail, LoadVerdict::inconclusive})
    EXPECT_STREQ(to_string(v), load_verdict_name(v));
}

}  // namespace
}  // namespace ib
