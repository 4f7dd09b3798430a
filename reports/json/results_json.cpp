#include "reports/json/results_json.h"

#include <cmath>

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

// `cv_key`: "sample_cv" for sample times (docs/design.md section 4), "cv" for per-request latencies.
ojson stats_json(const Summary& s, const char* cv_key) {
  return {{"n", s.n},          {"mean", json_number(s.mean)}, {"median", json_number(s.median)}, {"stddev", json_number(s.stddev)},
          {cv_key, json_number(s.cv)}, {"min", json_number(s.min)},   {"max", json_number(s.max)},       {"p5", json_number(s.p5)},
          {"p50", json_number(s.p50)}, {"p95", json_number(s.p95)}, {"p99", json_number(s.p99)}};
}

// mode_config: the keys in alphabetical order, as they always were (an unordered object once).
nlohmann::json mode_device_facts_json(const ModeDeviceFacts& d) {
  nlohmann::json j = d.unmapped;
  const std::pair<const char*, const std::optional<std::string>*> texts[] = {
      {"nvml", &d.nvml}, {"name", &d.name}, {"uuid", &d.uuid}, {"compute_mode", &d.compute_mode},
      {"compute_policy", &d.compute_policy}, {"measures", &d.measures}};
  for (const auto& [key, value] : texts)
    if (*value) j[key] = **value;
  if (d.mig_mode) j["mig_mode"] = {{"current", d.mig_mode->current}, {"pending", d.mig_mode->pending}};
  if (d.mig_created) {
    j["mig_created"] = nlohmann::json::array();
    for (const auto& c : *d.mig_created)
      j["mig_created"].push_back(
          {{"profile", c.profile}, {"gpu_instance_id", c.gpu_instance_id}, {"compute_instance_id", c.compute_instance_id}});
  }
  return j;
}

ojson mode_config_json(const ModeConfig& c) {
  nlohmann::json j = {{"mode", c.mode}};
  if (c.device) j["device"] = mode_device_facts_json(*c.device);
  if (c.mps)
    j["mps"] = {{"pipe_directory", c.mps->pipe_directory}, {"log_directory", c.mps->log_directory},
                {"daemon", c.mps->daemon}, {"fault_propagation", c.mps->fault_propagation}};
  if (c.mig) {
    nlohmann::json instances = nlohmann::json::array();
    for (const auto& m : c.mig->instances)
      instances.push_back({{"index", m.index}, {"gpu_instance_id", m.gpu_instance_id},
                           {"compute_instance_id", m.compute_instance_id}, {"profile", m.profile}, {"uuid", m.uuid},
                           {"sm_count", m.sm_count}, {"memory_bytes", m.memory_bytes}});
    j["mig"] = {{"instances", instances}, {"assignment", c.mig->assignment}};
    if (!c.mig->rank_assignment.empty()) j["mig"]["rank_assignment"] = c.mig->rank_assignment;
  }
  if (c.exclusive_source) j["exclusive_source"] = *c.exclusive_source;
  return ojson::parse(j.dump());
}

ojson outcome_json(const WorkerOutcome& o) {
  ojson j = {{"status", to_string(o.status)}, {"message", o.message}};
  j["exit_code"] = o.exit_code ? ojson(*o.exit_code) : ojson(nullptr);
  j["signal"] = o.signal ? ojson(*o.signal) : ojson(nullptr);
  j["log"] = o.log_file;
  j["env"] = o.env;
  j["resolved"] = o.resolved;
  if (o.escaped_processes > 0) j["escaped_processes"] = o.escaped_processes;
  if (o.lines_given_up > 0) j["lines_given_up"] = o.lines_given_up;
  return j;
}

// Readings as columns (one array per field; null where NVML did not report the field).
template <typename T, typename F>
ojson column(const std::vector<TelemetrySample>& s, F field) {
  ojson a = ojson::array();
  for (const auto& x : s) {
    const std::optional<T> v = field(x.r);
    a.push_back(v ? ojson(*v) : ojson(nullptr));
  }
  return a;
}

ojson telemetry_series(const std::vector<TelemetrySample>& s) {
  ojson t = ojson::array();
  for (const auto& x : s) t.push_back(x.t_ns);
  using R = TelemetryReading;
  return {{"t_ns", t},
          {"sm_clock_mhz", column<unsigned>(s, [](const R& r) { return r.sm_clock_mhz; })},
          {"max_sm_clock_mhz", column<unsigned>(s, [](const R& r) { return r.max_sm_clock_mhz; })},
          {"mem_clock_mhz", column<unsigned>(s, [](const R& r) { return r.mem_clock_mhz; })},
          {"power_w", column<double>(s, [](const R& r) { return r.power_w; })},
          {"power_limit_w", column<double>(s, [](const R& r) { return r.power_limit_w; })},
          {"default_power_limit_w", column<double>(s, [](const R& r) { return r.default_power_limit_w; })},
          {"temperature_c", column<unsigned>(s, [](const R& r) { return r.temperature_c; })},
          {"clock_event_reasons", column<unsigned long long>(s, [](const R& r) { return r.clock_event_reasons; })},
          {"util_gpu_pct", column<unsigned>(s, [](const R& r) { return r.util_gpu_pct; })},
          {"util_memory_pct", column<unsigned>(s, [](const R& r) { return r.util_memory_pct; })},
          {"memory_used_bytes", column<unsigned long long>(s, [](const R& r) { return r.memory_used_bytes; })},
          {"power_violation_ns", column<unsigned long long>(s, [](const R& r) {
             return r.power_violation ? std::optional<unsigned long long>(r.power_violation->violation_ns) : std::nullopt;
           })},
          {"thermal_violation_ns", column<unsigned long long>(s, [](const R& r) {
             return r.thermal_violation ? std::optional<unsigned long long>(r.thermal_violation->violation_ns)
                                        : std::nullopt;
           })}};
}

ojson phase_json(const PhaseResult& p, bool raw) {
  ojson j;
  j["source"] = to_string(p.source);
  j["worker"] = outcome_json(p.outcome);
  j["stats"] = stats_json(p.stats, "sample_cv");
  j["stats"]["unit"] = p.value_unit;  // "s", or "s/UNIT" for time per unit of work
  j["blocks"] = {{"ran", p.blocks}, {"counted", p.blocks_counted}};
  if (p.coverage_mean) j["coverage"] = {{"mean", optional_json_number(p.coverage_mean)}, {"p5", optional_json_number(p.coverage_p5)}};
  j["throughput"] = {{"value", json_number(p.throughput)}, {"unit", p.throughput_unit}};
  j["window_cv"] = json_number(p.window_cv);
  j["outliers"] = p.outliers;
  j["measure_start_ns"] = p.measure_start_ns;
  j["measure_end_ns"] = p.measure_end_ns;
  if (p.gpu_memory_peak_bytes)
    j["gpu_memory"] = {{"peak_bytes", *p.gpu_memory_peak_bytes},
                       {"total_bytes", p.gpu_memory_total_bytes ? ojson(*p.gpu_memory_total_bytes) : ojson(nullptr)}};
  if (!p.counters.empty()) {
    ojson c = ojson::object();
    for (const auto& [name, v] : p.counters) c[name] = {{"total", json_number(v.total)}, {"rate_per_s", json_number(v.rate)}};
    j["counters"] = c;
  }
  if (!p.telemetry.empty() || !p.telemetry_error.empty()) {
    ojson t;
    t["readings"] = p.telemetry.size();
    t["error"] = p.telemetry_error.empty() ? ojson(nullptr) : ojson(p.telemetry_error);
    t["unsupported"] = p.telemetry_unsupported;
    if (p.throttle) {
      ojson reasons = ojson::object();
      for (const auto& r : p.throttle->time_per_reason) reasons[r.name] = {{"seconds", r.seconds}, {"fraction", json_number(r.fraction)}};
      t["throttle"] = {{"samples", p.throttle->samples},
                       {"throttled_samples", p.throttle->throttled_samples},
                       {"throttled_fraction", json_number(p.throttle->throttled_fraction)},
                       {"throttled_readings", p.throttle->throttled_readings},
                       {"covered_s", json_number(p.throttle->covered_s)},
                       {"reasons_seen", p.throttle->reasons_seen},
                       {"time_per_reason", reasons}};
    }
    if (raw) t["series"] = telemetry_series(p.telemetry);
    j["telemetry"] = t;
  }
  if (p.latency) {
    j["latency"] = stats_json(*p.latency, "cv");
    j["latency"]["unit"] = "s";
  }
  if (p.rank_figures)
    j["ranks"] = {{"count", p.rank_figures->ranks},
                  {"straggler_rank", p.rank_figures->straggler_rank},
                  {"straggler_share", json_number(p.rank_figures->straggler_share)}};
  if (raw && p.source != PhaseSource::exclusive) {
    j["samples"] = {{"start_ns", p.start_ns},
                    {"duration_s", p.duration_s},
                    {"block", p.block},
                    {"in_window", p.in_window},
                    {"counted", p.counted},
                    {"outlier", p.outlier}};
    if (!p.coverage.empty()) {
      ojson c = ojson::array();
      for (double v : p.coverage) c.push_back(json_number(v));
      j["samples"]["coverage"] = c;
    }
    if (!p.counter_samples.empty()) j["samples"]["counters"] = p.counter_samples;
    if (!p.rank_duration_s.empty()) j["samples"]["rank_duration_s"] = p.rank_duration_s;
    if (!p.rank_start_ns.empty()) j["samples"]["rank_start_ns"] = p.rank_start_ns;
    if (!p.throttled.empty()) j["samples"]["throttled"] = p.throttled;
    if (!p.latencies_s.empty()) {
      j["samples"]["latency_count"] = p.latency_count;
      j["samples"]["latency_s"] = p.latencies_s;
    }
  }
  return j;
}

std::string estimate_method(const Estimate& e) {
  std::string m = e.pairing == Pairing::paired ? "paired round bootstrap (repetitions, then rounds with their exclusive "
                                                 "and colocated blocks together"
                                               : "round bootstrap with the sides drawn apart (repetitions, then rounds";
  m += e.whole_rounds ? ", each taken whole), Student-t interval on the log ratio"
                      : ", then moving blocks of samples within the few rounds), normal interval on the log ratio";
  return m;
}

ojson estimate_json(const Estimate& e) {
  return {{"value", json_number(e.value)},
          {"ci_low", json_number(e.ci_low)},
          {"ci_high", json_number(e.ci_high)},
          {"confidence", json_number(e.confidence)},
          {"z", json_number(e.z)},
          {"log_se", json_number(e.log_se)},
          {"pairing", to_string(e.pairing)},
          {"method", estimate_method(e)},
          {"clusters", e.clusters},
          {"whole_rounds", e.whole_rounds},
          {"quantile", json_number(e.quantile)},
          {"resamples", e.resamples},
          {"seed", e.seed}};
}

// Warnings as their texts, and their kinds in a parallel array (schema 2.2).
void warnings_json(ojson& j, const std::vector<Warning>& warnings) {
  j["warnings"] = ojson::array();
  j["warning_kinds"] = ojson::array();
  for (const Warning& w : warnings) {
    j["warnings"].push_back(w.text);
    j["warning_kinds"].push_back(to_string(w.kind));
  }
}

ojson stopping_json(const Stopping& s) {
  ojson boundaries = ojson::array();
  for (double z : s.boundaries) boundaries.push_back(json_number(z));
  return {{"until", to_string(s.until)},
          {"first_rounds", s.first_rounds},
          {"max_rounds", s.max_rounds},
          {"earlier_rounds", s.earlier_rounds},
          {"resolution", json_number(s.resolution)},
          {"looks", s.looks},
          {"boundaries", boundaries},
          {"looks_taken", s.looks_taken},
          {"stopped_by", to_string(s.stopped_by)},
          {"z", json_number(s.z)}};
}

ojson decision_json(const Decision& d) {
  return {{"decided", d.decided},       {"rounds", d.rounds},
          {"seconds", json_number(d.seconds)}, {"look", d.look},
          {"looks_planned", d.looks_planned}, {"z", json_number(d.z)},
          {"stopped_by", to_string(d.stopped_by)}, {"resolution", json_number(d.resolution)}};
}

ojson metrics_json(const TenantMetrics& m) {
  ojson j = {{"basis", m.basis},
             {"p95_slowdown", estimate_json(m.p95_slowdown)},
             {"median_slowdown", json_number(m.median_slowdown)},
             {"partition_cost", json_number(m.partition_cost)},
             {"interference", json_number(m.interference)},
             {"n", {{"exclusive", m.n_exclusive}, {"colocated", m.n_colocated}}}};
  if (m.collective)
    j["collective"] = {{"ranks", m.collective->ranks},
                       {"blast_radius", m.collective->blast_radius},
                       {"blast_threshold", json_number(m.collective->blast_threshold)},
                       {"longest_stall_s", json_number(m.collective->longest_stall_s)},
                       {"timeout_s", json_number(m.collective->timeout_s)},
                       {"stall_margin", json_number(m.collective->stall_margin)}};
  return j;
}

ojson load_json(const ForeignLoad& l) {
  ojson j = {{"seconds", json_number(l.seconds)},
             {"foreign_cpus", json_number(l.foreign_cpus)},
             {"steal_cpus", json_number(l.steal_cpus)},
             {"own_cpus", json_number(l.own_cpus)}};
  j["gpu_foreign_processes"] = l.gpu_foreign_processes ? ojson(*l.gpu_foreign_processes) : ojson(nullptr);
  j["gpu_idle_util_pct"] = l.gpu_idle_util_pct ? ojson(*l.gpu_idle_util_pct) : ojson(nullptr);
  j["gpu_foreign_memory_bytes"] = l.gpu_foreign_memory_bytes ? ojson(*l.gpu_foreign_memory_bytes) : ojson(nullptr);
  j["gpu_drain_s"] = l.gpu_drain_s ? json_number(*l.gpu_drain_s) : ojson(nullptr);
  j["gpu_own_busy_processes"] = l.gpu_own_busy_processes ? ojson(*l.gpu_own_busy_processes) : ojson(nullptr);
  return j;
}

ojson block_json(const BlockRecord& b) {
  ojson j = {{"index", b.index},   {"round", b.round},   {"phase", phase_name(b.phase)}, {"tenants", b.tenants},
             {"attempt", b.attempt}, {"start_ns", b.start_ns}, {"end_ns", b.end_ns},       {"status", to_string(b.status)},
             {"reason", b.reason}, {"tail_bursts", b.tail_bursts}};
  j["overlap_window_ns"] = b.overlap_start_ns ? ojson{{"start", *b.overlap_start_ns}, {"end", *b.overlap_end_ns}} : ojson(nullptr);
  j["barrier_skew_s"] = b.barrier_skew_s ? json_number(*b.barrier_skew_s) : ojson(nullptr);
  j["foreign_load"] = load_json(b.load);
  return j;
}

template <typename T>
ojson optional_value(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

ojson current_pending_json(const std::optional<CurrentPending>& v) {
  return v ? ojson{{"current", v->current}, {"pending", v->pending}} : ojson(nullptr);
}

ojson device_json(const DeviceRecord& d) {
  return {{"kind", to_string(d.kind)},
          {"index", optional_value(d.index)},
          {"name", d.name},
          {"uuid", optional_value(d.uuid)},
          {"node", d.node},
          {"driver_version", optional_value(d.driver_version)},
          {"cuda_version", optional_value(d.cuda_version)},
          {"vbios_version", optional_value(d.vbios_version)},
          {"compute_mode", optional_value(d.compute_mode)},
          {"mig_mode", current_pending_json(d.mig_mode)},
          {"ecc", current_pending_json(d.ecc)},
          {"power_limit_w", {{"enforced", optional_json_number(d.power_limit_w)}, {"default", optional_json_number(d.default_power_limit_w)}}},
          {"pcie",
           {{"gen_current", optional_value(d.pcie_gen_current)},
            {"width_current", optional_value(d.pcie_width_current)},
            {"gen_max", optional_value(d.pcie_gen_max)},
            {"width_max", optional_value(d.pcie_width_max)}}},
          {"memory_total_bytes", optional_value(d.memory_total_bytes)},
          {"cores", {{"online", optional_value(d.cores_online)}, {"usable", optional_value(d.cores_usable)}}},
          {"error", d.error},
          {"unsupported", d.unsupported}};
}

// meta.nodes[] (schema 2.5, 2.6): every node of a run across nodes but the conductor's.
ojson nodes_json(const std::vector<NodeRecord>& nodes) {
  ojson out = ojson::array();
  for (const NodeRecord& n : nodes)
    out.push_back({{"node_rank", n.node_rank},
                   {"host", n.host},
                   {"clock_offset_ns", n.clock_offset_ns},
                   {"clock_uncertainty_ns", n.clock_uncertainty_ns},
                   {"clock_rtt_ns", n.clock_rtt_ns},
                   {"clock_measurements", n.clock_measurements},
                   {"clock_offset_span_ns", n.clock_offset_span_ns},
                   {"devices", devices_to_json(n.devices)}});
  return out;
}

}  // namespace

ojson devices_to_json(const std::vector<DeviceRecord>& devices) {
  ojson a = ojson::array();
  for (const auto& d : devices) a.push_back(device_json(d));
  return a;
}

ojson advice_json(const Advice& a) {
  const AdviceInputs& in = a.inputs;
  ojson inputs = {{"peak_memory_fraction", optional_json_number(in.peak_memory_fraction)},
                  {"gpu_util_pct", optional_json_number(in.gpu_util_pct)},
                  {"run_length_h", optional_json_number(in.run_length_h)},
                  {"interruptible", in.interruptible ? ojson(*in.interruptible) : ojson(nullptr)},
                  {"price_exclusive_per_h", optional_json_number(in.price_exclusive_per_h)},
                  {"price_shared_per_h", optional_json_number(in.price_shared_per_h)},
                  {"step_exclusive_s", optional_json_number(in.step_exclusive_s)},
                  {"step_shared_s", optional_json_number(in.step_shared_s)},
                  {"p95_verdict", verdict_name(in.p95_verdict)}};
  ojson rules = ojson::array();
  for (const AdviceRule& r : a.rules)
    rules.push_back({{"id", r.id},
                     {"holds", to_string(r.holds)},
                     {"points_to", to_string(r.points_to)},
                     {"says", r.says},
                     {"evidence", r.evidence},
                     {"source", r.source}});
  return {{"choice", to_string(a.choice)},
          {"reason", a.reason},
          {"inputs", inputs},
          {"rules", rules},
          {"cost_per_step", {{"exclusive", optional_json_number(a.cost_per_step_exclusive)},
                             {"shared", optional_json_number(a.cost_per_step_shared)}}}};
}

ojson aggregate_to_json(const TenantAggregate& a) {
  ojson j = {{"scenario", a.scenario},
             {"mode", a.mode},
             {"tenant", a.tenant},
             {"workload", a.workload},
             {"repetitions", a.repetitions},
             {"repetitions_measured", a.repetitions_measured},
             {"repetition_verdicts", a.repetition_verdicts}};
  j["metrics"] = a.metrics ? metrics_json(*a.metrics) : ojson(nullptr);
  j["verdict"] = verdict_name(a.verdict);
  j["verdict_reason"] = a.verdict_reason;
  j["decision"] = a.decision ? decision_json(*a.decision) : ojson(nullptr);
  warnings_json(j, a.warnings);
  if (a.advice) j["advice"] = advice_json(*a.advice);
  if (a.amplification)
    j["amplification"] = {{"value", optional_json_number(a.amplification->value)},
                          {"collective_p95_slowdown", json_number(a.amplification->collective_slowdown)},
                          {"single_rank_p95_slowdown", json_number(a.amplification->single_rank_slowdown)},
                          {"reference_scenario", a.amplification->reference_scenario}};
  return j;
}

namespace {

ojson tenant_json(const TenantResult& t, bool raw) {
  ojson jt;
  jt["name"] = t.name;
  jt["role"] = t.role;
  jt["workload"] = t.workload;
  jt["params"] = ojson::parse(t.params.dump());
  jt["placement"] = ojson::parse(t.placement.dump());
  jt["work_per_sample"] = {{"value", t.work.amount}, {"unit", t.work.unit}};
  jt["phases"] = {{"exclusive", phase_json(t.exclusive, raw)},
                  {"alone", phase_json(t.alone, raw)},
                  {"colocated", phase_json(t.colocated, raw)}};
  if (t.metrics) {
    jt["metrics"] = metrics_json(*t.metrics);
    jt["metrics"]["sample_cv"] = {{"exclusive", json_number(t.exclusive.stats.cv)},
                                  {"alone", json_number(t.alone.stats.cv)},
                                  {"colocated", json_number(t.colocated.stats.cv)}};
    jt["metrics"]["window_cv"] = {{"exclusive", json_number(t.exclusive.window_cv)},
                                  {"alone", json_number(t.alone.window_cv)},
                                  {"colocated", json_number(t.colocated.window_cv)}};
    jt["metrics"]["coverage"] = {{"mean", optional_json_number(t.colocated.coverage_mean)},
                                 {"p5", optional_json_number(t.colocated.coverage_p5)}};
  } else {
    jt["metrics"] = nullptr;
  }
  jt["verdict"] = verdict_name(t.verdict);
  jt["verdict_reason"] = t.verdict_reason;
  warnings_json(jt, t.warnings);
  return jt;
}

}  // namespace

ojson results_to_json(const Results& r, bool raw) {
  ojson j;
  j["schema_version"] = r.schema_version;
  const Meta& m = r.meta;
  j["meta"] = {{"tool", "interference-bench"},
               {"version", m.version},
               {"git_sha", m.git_sha},
               {"argv", m.argv},
               {"start_time", m.start_time},
               {"host", {{"hostname", m.host}, {"cpus", m.host_cpus}}},
               {"devices", devices_to_json(m.devices)},
               {"backend", m.backend},
               {"backend_requested", m.backend_requested},
               {"backend_note", m.backend_note},
               {"suite", m.suite},
               {"bootstrap", {{"seed", m.bootstrap_seed}, {"resamples", m.bootstrap_resamples}}},
               {"stopping",
                {{"until", to_string(m.until)},
                 {"rounds", m.rounds},
                 {"max_duration_s", optional_json_number(m.max_duration_s)},
                 {"resolution", json_number(m.resolution)}}},
               {"foreign_load_limits",
                {{"max_foreign_cpus", m.max_foreign_cpus}, {"max_steal_cpus", m.max_steal_cpus}, {"max_reruns", m.max_reruns}}},
               {"telemetry", ojson::parse(m.telemetry.dump())},
               {"raw_samples", raw}};
  if (m.scheduler)
    j["meta"]["scheduler"] = {{"kind", m.scheduler->kind},
                              {"job_id", m.scheduler->job_id},
                              {"array_job_id", m.scheduler->array_job_id},
                              {"task_index", m.scheduler->task_index ? ojson(*m.scheduler->task_index) : ojson(nullptr)},
                              {"node", m.scheduler->node}};
  if (!m.nodes.empty()) j["meta"]["nodes"] = nodes_json(m.nodes);
  j["runs"] = ojson::array();
  for (const RunResult& run : r.runs) {
    ojson jr;
    jr["scenario"] = run.scenario;
    jr["scenario_file"] = run.scenario_file;
    jr["mode"] = run.mode;
    jr["device"] = run.device;
    jr["repetition"] = run.repetition;
    jr["repetitions"] = run.repetitions;
    jr["warmup_s"] = run.warmup_s;
    jr["duration_s"] = run.duration_s;
    jr["cutoff"] = run.cutoff;
    jr["status"] = to_string(run.status);
    jr["message"] = run.message;
    jr["mode_config"] = mode_config_json(run.mode_config);
    jr["rounds"] = run.rounds;
    jr["round_order"] = run.round_order;
    jr["stopping"] = stopping_json(run.stopping);
    jr["barrier_skew_s"] = run.barrier_skew_s ? json_number(*run.barrier_skew_s) : ojson(nullptr);
    jr["blocks"] = ojson::array();
    for (const auto& b : run.blocks) jr["blocks"].push_back(block_json(b));
    if (run.system)
      jr["system"] = {{"vs_exclusive", {{"stp", json_number(run.system->stp_exclusive)}, {"antt", json_number(run.system->antt_exclusive)}}},
                      {"vs_alone", {{"stp", json_number(run.system->stp_alone)}, {"antt", json_number(run.system->antt_alone)}}}};
    else
      jr["system"] = nullptr;
    jr["tenants"] = ojson::array();
    for (const TenantResult& t : run.tenants) jr["tenants"].push_back(tenant_json(t, raw));
    j["runs"].push_back(std::move(jr));
  }
  j["aggregates"] = ojson::array();
  for (const auto& a : r.aggregates) j["aggregates"].push_back(aggregate_to_json(a));
  const RunSummary& s = r.summary;
  j["summary"] = {{"pass", s.pass},         {"interrupted", s.interrupted}, {"exit_code", s.exit_code},
                  {"runs", s.runs},         {"tenants", s.tenants},         {"passed", s.passed},
                  {"failed", s.failed},     {"inconclusive", s.inconclusive}, {"baseline", s.baseline},
                  {"waived", s.waived},     {"errors", s.errors}};
  return j;
}

std::string JsonResultsFile::text(const Results& results) const {
  return results_to_json(results, include_raw_).dump(1) + "\n";
}

}  // namespace ib
