// A tenant's warnings in one repetition (phase_warnings): noisy baseline, throttling, multi-modal samples and
// outliers, blocks not counted, the blocks whose tail burst, coverage, drift and escaped processes; and the
// note a verdict's reason gets when the tenant's program left its process group (escape_note).
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_steps.h"

#include "harness/core/text.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace ib {

using namespace analysis_steps;

namespace {

// Exclusive medians of the first and last round differ by more than cutoff/4 (docs/design.md section 4).
std::optional<std::string> drift_warning(const RunResult& run, const TenantResult& t) {
  if (run.rounds < 2 || t.exclusive.block.size() != t.exclusive.start_ns.size()) return std::nullopt;
  std::vector<double> first, last;
  for (std::size_t i = 0; i < t.exclusive.start_ns.size(); ++i) {
    const int k = t.exclusive.block[i];
    if (!sample_counts(t.exclusive, i) || k < 0 || k >= static_cast<int>(run.blocks.size())) continue;
    if (run.blocks[k].round == 0) first.push_back(sample_value(t.exclusive, i));
    if (run.blocks[k].round == run.rounds - 1) last.push_back(sample_value(t.exclusive, i));
  }
  if (first.empty() || last.empty()) return std::nullopt;
  const double change = median(last) / median(first) - 1.0;
  if (!(std::fabs(change) > run.cutoff / 4)) return std::nullopt;
  return "drift: the exclusive median changed by " + percent(change) + " from the first round to the last (more than cutoff/4 = " +
         percent(run.cutoff / 4) + "); the machine changed during the run";
}

// The colocated blocks in which this tenant's tail burst (flag_tail_bursts), named: kept, since a
// neighbour may have caused it, but the reader learns which block drove the tail.
void tail_burst_warnings(const RunResult& run, TenantResult& t) {
  const auto i = tenant_index(run, t.name);
  if (!i) return;
  std::vector<int> idx;
  std::vector<BlockTail> tails;
  for (int k : tail_reference(run, Phase::colocated, t.name, INT_MAX))
    if (const auto tail = block_tail(run, *i, k)) idx.push_back(k), tails.push_back(*tail);
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const BlockRecord& b = run.blocks[static_cast<std::size_t>(idx[j])];
    if (std::find(b.tail_bursts.begin(), b.tail_bursts.end(), t.name) == b.tail_bursts.end()) continue;
    t.warnings.push_back({WarningKind::tail_burst, "colocated block " + std::to_string(b.index) + " (round " +
                                                       std::to_string(b.round + 1) + ") drove the tail: " + tail_reason(tails, j) +
                                                       "; kept (a neighbour may have caused it)"});
  }
}

}  // namespace

namespace analysis_steps {

void phase_warnings(const RunResult& run, TenantResult& t) {
  const auto name = [&](const PhaseResult* p) { return p == &t.exclusive ? "exclusive" : p == &t.alone ? "alone" : "colocated"; };
  const auto add = [&](WarningKind k, std::string text) { t.warnings.push_back({k, std::move(text)}); };
  for (const PhaseResult* p : {&t.exclusive, &t.alone})
    if (p->measured() && p->source != PhaseSource::exclusive && p->stats.cv > kNoisyBaselineCv)
      add(WarningKind::noisy_baseline, std::string("noisy baseline: the ") + name(p) + " phase has a sample_cv of " +
                                           percent(p->stats.cv) + " (above " + percent(kNoisyBaselineCv) +
                                           "); slowdowns below that level are not resolvable");
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated}) {
    if (!p->measured() || p->source == PhaseSource::exclusive) continue;
    if (p->throttle && p->throttle->throttled_samples > 0)
      add(WarningKind::throttled, percent(p->throttle->throttled_fraction) + " of the " + name(p) +
                                      " samples ran throttled (reasons seen: " + reason_names(p->throttle->reasons_seen) +
                                      "); flagged and kept in the statistics");
    const double flagged = p->stats.n ? static_cast<double>(p->outliers) / static_cast<double>(p->stats.n) : 0.0;
    // An open-loop sample lasts its slice of the arrival schedule, so its duration is nearly constant and
    // MAD flags on it say nothing; such a tenant is judged on per-request latency.
    const bool open_loop = !p->latencies_s.empty();
    if (!open_loop && flagged > 0.10)
      add(WarningKind::multi_modal, std::string("multi-modal: ") + percent(flagged) + " of the " + name(p) +
                                        " samples are MAD-flagged, so the distribution has more than one mode (not a few outliers); kept");
    else if (!open_loop && p->outliers > 0)
      add(WarningKind::outliers, std::to_string(p->outliers) + " outlier sample(s) flagged (MAD) in the " + name(p) +
                                     " phase; kept in the statistics");
    if (p->blocks > p->blocks_counted)
      add(WarningKind::blocks_not_counted, std::to_string(p->blocks - p->blocks_counted) + " of " + std::to_string(p->blocks) +
                                               " " + name(p) +
                                               " block(s) not counted: contaminated by foreign load or a tail burst (see runs[].blocks)");
  }
  tail_burst_warnings(run, t);
  if (t.colocated.coverage_mean && *t.colocated.coverage_mean < 0.9)
    add(WarningKind::coverage, "coverage: colocated samples overlapped their neighbours " + percent(*t.colocated.coverage_mean) +
                                   " of their time on average (below 90%); the neighbours were not always running");
  if (const auto d = drift_warning(run, t)) add(WarningKind::drift, *d);
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    if (p->outcome.escaped_processes > 0)
      add(WarningKind::escaped_processes,
          std::to_string(p->outcome.escaped_processes) + " process(es) of the program left its process group (setsid or "
              "setpgid) in the " + name(p) + " phase: stopped with it between blocks and killed at its end; the "
              "tenant's own doing, not its neighbours'");
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    if (p->outcome.lines_given_up > 0)
      add(WarningKind::pattern_gave_up,
          std::to_string(p->outcome.lines_given_up) + " line(s) of the program's output in the " + name(p) +
              " phase cost its step pattern more than its match limit and were not read as steps: simplify the "
              "pattern (a nested repeat such as (a+)+ backtracks without end)");
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    if (p->measured() && p->source != PhaseSource::exclusive)
      if (const auto w = burst_warning(*p, name(p))) add(WarningKind::buffered_output, *w);
}

// A command tenant whose matching lines came in bursts (several read in one piece: kLinesInBurstCounter): its
// output is buffered although it writes to a terminal, so where its steps lie in time is not known.
std::optional<std::string> burst_warning(const PhaseResult& p, const char* phase) {
  const auto c = p.counters.find(kLinesInBurstCounter);
  if (c == p.counters.end() || p.stats.n == 0) return std::nullopt;
  const double share = c->second.total / static_cast<double>(p.stats.n);
  if (!(c->second.total >= kMinBurstLines && share >= kBurstLineShare)) return std::nullopt;
  return std::to_string(static_cast<long long>(c->second.total)) + " of the program's " + std::to_string(p.stats.n) +
         " matching lines in the " + phase + " phase arrived in bursts (read together with the line before): it "
         "buffers its output although it writes to a terminal, so when a step ended (or how long an interval was) is "
         "not known; flush after every line (fflush(stdout); print(..., flush=True); stdbuf -oL for a program that "
         "uses C stdio), or report steps with the heartbeat client";
}

std::string escape_note(const std::vector<const TenantResult*>& reps) {
  std::size_t n = 0;
  for (const TenantResult* t : reps)
    for (const PhaseResult* p : {&t->exclusive, &t->alone, &t->colocated}) n += p->outcome.escaped_processes;
  return n == 0 ? std::string() : "; its program left " + std::to_string(n) + " process(es) outside its process group "
                                  "(killed with it; the tenant's fault)";
}

}  // namespace analysis_steps

}  // namespace ib
