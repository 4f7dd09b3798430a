// The results reader's runs: a run's blocks (with their foreign load), system metrics, stopping plan and
// tenants (metrics with their estimate, verdicts, warnings); a repetition's decision, which an aggregate
// holds too.
#include "harness/results/results_reading.h"

#include <cstdint>
#include <utility>

namespace ib::results_reading {

namespace {

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

}  // namespace

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

}  // namespace ib::results_reading
