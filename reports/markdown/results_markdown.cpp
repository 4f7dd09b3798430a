#include "reports/markdown/results_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace ib {
namespace {

const std::string kSeconds = "s";  // a request latency's unit

std::string ci(const Estimate& e) { return signed_percent(e.value) + " [" + signed_percent(e.ci_low) + ", " + signed_percent(e.ci_high) + "]"; }

const TenantResult* tenant_of(const RunResult& run, const std::string& name) {
  for (const auto& t : run.tenants)
    if (t.name == name) return &t;
  return nullptr;
}

// How far a verdict got: "decided after 12 rounds, 31 s" or "budget: 30 rounds, 80 s".
std::string how_far(const Decision& d) {
  std::string what = d.decided ? "decided" : d.stopped_by == StoppedBy::fixed ? "fixed" : to_string(d.stopped_by);
  return what + ": " + std::to_string(d.rounds) + " rounds, " + formatted("%.0f s", d.seconds);
}

// The verdicts that count: one row per (scenario, mode, tenant) over its repetitions. The interval is
// at the level the verdict was judged at (its look's), and "resolves" is its half-width: the slowdown
// this run can tell apart.
void aggregate_table(std::ostringstream& os, const Results& r) {
  os << "| scenario | mode | tenant | reps | n excl/coloc | p95_slowdown [CI] | CI level | resolves +/- | median_slowdown | coverage "
        "| cutoff | verdict | stopped |\n";
  os << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& a : r.aggregates) {
    double cutoff = kDefaultCutoff;
    std::optional<double> coverage;
    for (const auto& run : r.runs)
      if (run.scenario == a.scenario && run.mode == a.mode) {
        cutoff = run.cutoff;
        if (const TenantResult* t = tenant_of(run, a.tenant)) coverage = t->colocated.coverage_mean;
      }
    os << "| " << a.scenario << " | " << a.mode << " | " << a.tenant << " | " << a.repetitions << " | ";
    if (a.metrics)
      os << a.metrics->n_exclusive << "/" << a.metrics->n_colocated << (a.metrics->basis == "request_latency" ? " req" : "")
         << " | " << ci(a.metrics->p95_slowdown) << " | " << formatted("%.4g%%", a.metrics->p95_slowdown.confidence * 100.0)
         << " | " << (a.decision ? formatted("%.1f", a.decision->resolution * 100.0) + " pts" : std::string("n/a")) << " | "
         << signed_percent(a.metrics->median_slowdown);
    else
      os << "n/a | n/a | n/a | n/a | n/a";
    os << " | " << (coverage ? formatted("%.3f", *coverage) : std::string("n/a")) << " | " << formatted("%.0f%%", cutoff * 100.0)
       << " | **" << verdict_name(a.verdict) << "** | " << (a.decision ? how_far(*a.decision) : std::string("n/a")) << " |\n";
  }
}

// Each repetition's own figures, with its blocks: how many counted of those that ran.
void repetition_table(std::ostringstream& os, const Results& r) {
  os << "| scenario | mode | rep | tenant | blocks counted excl/coloc | P95 excl (ms) | P95 coloc (ms) | p95_slowdown [95% CI] | verdict |\n";
  os << "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& run : r.runs)
    for (const auto& t : run.tenants) {
      // The P95s compared: per-request latencies (marked "req"), sample times, or the time per unit of work of an
      // interval reporter (with its unit: "0.2103 ns/B").
      const bool req = t.metrics && t.metrics->basis == "request_latency" && t.exclusive.latency && t.colocated.latency;
      const Summary& e = req ? *t.exclusive.latency : t.exclusive.stats;
      const Summary& c = req ? *t.colocated.latency : t.colocated.stats;
      const std::string& ue = req ? kSeconds : t.exclusive.value_unit;
      const std::string& uc = req ? kSeconds : t.colocated.value_unit;
      os << "| " << run.scenario << " | " << run.mode << " | " << run.repetition << "/" << run.repetitions << " | " << t.name
         << " | " << t.exclusive.blocks_counted << "/" << t.exclusive.blocks << ", " << t.colocated.blocks_counted << "/"
         << t.colocated.blocks << " | " << phase_value_text(e.p95, ue) << (req ? " req" : "") << " | "
         << phase_value_text(c.p95, uc) << " | "
         << (t.metrics ? ci(t.metrics->p95_slowdown) : std::string("n/a")) << " | " << verdict_name(t.verdict) << " |\n";
    }
}

void run_notes(std::ostringstream& os, const RunResult& run) {
  const std::string where = run.scenario + " (" + run.mode + ") rep " + std::to_string(run.repetition);
  if (run.status != RunStatus::ok) os << "- " << where << ": **" << to_string(run.status) << "** — " << run.message << "\n";
  // What the slowdowns of a mode are against, and what sharing it implies, where the mode says so
  // (once per scenario and mode).
  const std::string mode_where = run.scenario + " (" + run.mode + ")";
  if (run.repetition == 1 && run.mode_config.exclusive_source)
    os << "- " << mode_where << ": exclusive phase from " << *run.mode_config.exclusive_source << "\n";
  if (run.repetition == 1 && run.mode_config.mps)
    os << "- " << mode_where << ": " << run.mode_config.mps->fault_propagation << "\n";
  if (run.system)
    os << "- " << where << ": STP " << formatted("%.2f", run.system->stp_exclusive) << " / ANTT " << formatted("%.2f", run.system->antt_exclusive)
       << " against exclusive, " << formatted("%.2f", run.system->stp_alone) << " / " << formatted("%.2f", run.system->antt_alone)
       << " against alone; largest barrier skew "
       << (run.barrier_skew_s ? formatted("%.1f us", *run.barrier_skew_s * 1e6) : std::string("n/a")) << "\n";
  for (const auto& t : run.tenants)  // a tenant with ranks: how far sharing reached, how close to a timeout
    if (t.metrics && t.metrics->collective) {
      const auto& c = *t.metrics->collective;
      os << "- " << where << ", " << t.name << ": blast radius " << c.blast_radius << " of " << c.ranks
         << " ranks (median slowed > " << formatted("%.0f%%", c.blast_threshold * 100) << "); longest collective stall "
         << formatted("%.3f s", c.longest_stall_s) << ", " << formatted("%.0f", c.stall_margin) << "x inside the "
         << formatted("%.0f s", c.timeout_s) << " timeout"
         << (c.stall_margin < 1.0 ? " — **that stall would have ended the job**: raise the timeout or leave the shared "
                                    "pool (seed 000); NCCL training wants whole cards (seed 004)"
                                  : "")
         << "\n";
    }
  for (const auto& t : run.tenants)  // a tenant with ranks: who held its collectives back (arrived last)
    for (const auto& [phase, p] : {std::pair<const char*, const PhaseResult*>{"exclusive", &t.exclusive},
                                   {"colocated", &t.colocated}})
      if (p->rank_figures)
        os << "- " << where << ", " << t.name << " (" << p->rank_figures->ranks << " ranks, " << phase
           << "): straggler rank " << p->rank_figures->straggler_rank << ", the last to arrive in "
           << formatted("%.0f%%", p->rank_figures->straggler_share * 100) << " of the samples\n";
  for (const auto& b : run.blocks)
    if (b.status != BlockStatus::clean)
      os << "- " << where << ": block " << b.index << " (" << phase_name(b.phase) << ", round " << b.round + 1 << ", attempt "
         << b.attempt << ") **" << to_string(b.status) << "**: " << b.reason << "\n";
}

// One line naming what the numbers came from (meta.devices).
std::string device_line(const DeviceRecord& d) {
  std::string line = d.kind == DeviceKind::gpu ? "GPU " : "host CPU ";
  line += d.name;
  std::vector<std::string> facts;
  if (d.uuid) facts.push_back(*d.uuid);
  if (d.driver_version) facts.push_back("driver " + *d.driver_version);
  if (d.cuda_version) facts.push_back("CUDA " + *d.cuda_version);
  if (d.cores_usable) facts.push_back(std::to_string(*d.cores_usable) + " usable cores");
  if (d.kind == DeviceKind::host && d.memory_total_bytes)
    facts.push_back(formatted("%.1f GiB", static_cast<double>(*d.memory_total_bytes) / (1024.0 * 1024.0 * 1024.0)));
  if (!d.error.empty()) facts.push_back("not read: " + d.error);
  for (std::size_t i = 0; i < facts.size(); ++i) line += (i == 0 ? " (" : ", ") + facts[i];
  if (!facts.empty()) line += ")";
  return line + " on " + d.node;
}

// How the runs decided when to stop, and what a block's status means.
std::string rounds_line(const Results& r) {
  const RunResult& run = r.runs.front();
  std::string line;
  if (r.meta.until == StopRule::decided)
    line = "Rounds: " + std::to_string(run.stopping.first_rounds) + " (" + run.round_order +
           ") before the first look, then a look after every pair of rounds until every verdict is decided" +
           (r.meta.resolution > 0 ? " or resolved to +/-" + formatted("%.1f", r.meta.resolution * 100.0) + " points" : "") +
           ", at most " + std::to_string(run.stopping.max_rounds) +
           "; looking spends alpha 0.03 over the looks (O'Brien-Fleming), so an early look's interval is wider than 95%.";
  else
    line = "Rounds per repetition: " + std::to_string(run.rounds) + " (" + run.round_order + "), a fixed length.";
  return line + " A block is contaminated above " + formatted("%.2f", r.meta.max_foreign_cpus) + " foreign CPUs or " +
         formatted("%.2f", r.meta.max_steal_cpus) + " stolen CPUs, an exclusive block with a tail burst is an outlier " +
         "(each re-run up to " + std::to_string(r.meta.max_reruns) +
         " times per repetition). Verdicts on the interval: pass when it lies at or below the cutoff, fail above, "
         "inconclusive across it.";
}

std::string totals_line(const RunSummary& s) {
  return "**" + std::string(s.pass ? "PASS" : "NOT PASS") + "**: " + std::to_string(s.passed) + " pass, " +
         std::to_string(s.failed) + " fail, " + std::to_string(s.inconclusive) + " inconclusive, " + std::to_string(s.baseline) +
         " baseline, " + std::to_string(s.waived) + " waived, " + std::to_string(s.errors) + " error" +
         (s.interrupted ? " (interrupted)" : "") + " — exit code " + std::to_string(s.exit_code) + "\n";
}

// The title, backend note, devices, rounds and the verdict table: what summary.md and the terminal
// both begin with.
void header_and_verdicts(std::ostringstream& os, const Results& r) {
  os << "## interference-bench " << r.meta.version << " — backend " << r.meta.backend;
  if (!r.meta.suite.empty()) os << ", suite " << r.meta.suite;
  os << "\n\n";
  if (!r.meta.backend_note.empty()) os << "> " << r.meta.backend_note << "\n\n";
  for (const auto& d : r.meta.devices) os << "Device: " << device_line(d) << "\n\n";
  if (!r.runs.empty()) os << rounds_line(r) << "\n\n";
  aggregate_table(os, r);
  os << "\n";
}

// Command tenants (a user's program): the advice, each rule with its evidence and source.
void advice_section(std::ostringstream& os, const Results& r) {
  bool any = false;
  for (const auto& a : r.aggregates) {
    if (!a.advice) continue;
    if (!any) os << "\n### Advice for your workload\n\n";
    any = true;
    os << "**" << a.scenario << " (" << a.mode << "), " << a.tenant << ": " << to_string(a.advice->choice) << "** — "
       << a.advice->reason << "\n\n| rule | holds | points to | says | evidence | source |\n|---|---|---|---|---|---|\n";
    for (const auto& rule : a.advice->rules)
      os << "| " << rule.id << " | " << to_string(rule.holds) << " | " << to_string(rule.points_to) << " | " << rule.says
         << " | " << rule.evidence << " | " << rule.source << " |\n";
    if (a.advice->cost_per_step_exclusive && a.advice->cost_per_step_shared)
      os << "\nCost per step: " << formatted("%.4g", *a.advice->cost_per_step_shared) << " shared, "
         << formatted("%.4g", *a.advice->cost_per_step_exclusive) << " exclusive (price per hour x median step time).\n";
    os << "\n";
  }
}

}  // namespace

std::string markdown_summary(const Results& r) {
  std::ostringstream os;
  header_and_verdicts(os, r);
  for (const auto& a : r.aggregates) {
    if (a.verdict != Verdict::pass)
      os << "- " << a.scenario << " (" << a.mode << "), " << a.tenant << ": " << verdict_name(a.verdict) << " — " << a.verdict_reason << "\n";
    for (const auto& w : a.warnings) os << "- warning (" << a.scenario << ", " << a.mode << ", " << a.tenant << "): " << w.text << "\n";
    if (const auto& m = a.amplification)
      os << "- " << a.scenario << " (" << a.mode << "), " << a.tenant << ": amplification "
         << (m->value ? formatted("%.2f", *m->value) : std::string("n/a (its one rank alone slowed < 1%)")) << " — P95 slowdown "
         << signed_percent(m->collective_slowdown) << " as a collective against " << signed_percent(m->single_rank_slowdown)
         << " for its shared rank alone (" << m->reference_scenario << ")\n";
  }
  advice_section(os, r);
  os << "\n### Repetitions\n\n";
  repetition_table(os, r);
  os << "\n";
  for (const auto& run : r.runs) run_notes(os, run);
  os << "\n" << totals_line(r.summary);
  return os.str();
}

std::string terminal_summary(const Results& r) {
  std::ostringstream os;
  header_and_verdicts(os, r);
  // Per tenant: why it is not a pass, and the warnings that change how its verdict reads; the others
  // only counted (summary.md has them all).
  std::map<WarningKind, int> others;
  for (const auto& a : r.aggregates) {
    std::vector<const Warning*> shown;
    for (const auto& w : a.warnings)
      if (changes_how_a_verdict_reads(w.kind)) shown.push_back(&w);
      else ++others[w.kind];
    if (a.verdict == Verdict::pass && shown.empty()) continue;
    os << "- " << a.scenario << " (" << a.mode << "), " << a.tenant << ": " << verdict_name(a.verdict);
    if (a.verdict != Verdict::pass) os << " — " << a.verdict_reason;
    os << "\n";
    for (const Warning* w : shown) os << "  - " << w->text << "\n";
  }
  if (!others.empty()) {
    int n = 0;
    std::string kinds;
    for (const auto& [kind, count] : others) {
      n += count;
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + to_string(kind);
    }
    os << "- " << n << " more warning(s) in summary.md (" << kinds << ")\n";
  }
  for (const auto& run : r.runs)
    if (run.status != RunStatus::ok)
      os << "- " << run.scenario << " (" << run.mode << ") rep " << run.repetition << ": **" << to_string(run.status) << "** — "
         << run.message << "\n";
  for (const auto& a : r.aggregates)
    if (a.advice)
      os << "- advice (" << a.scenario << ", " << a.tenant << "): **" << to_string(a.advice->choice) << "** — "
         << a.advice->reason << " (each rule in summary.md)\n";
  os << "\n" << totals_line(r.summary);
  return os.str();
}

void TerminalSummary::finalize(const Results& results) {
  out_ << terminal_summary(results) << "\nresults: " << results_path_ << "\n";
}

}  // namespace ib
