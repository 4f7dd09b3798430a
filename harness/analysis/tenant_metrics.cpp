// A tenant's metrics and verdict: the basis it is judged on (latencies or sample times, paired rounds or
// blocks), its P95 slowdown and the other metrics, the verdict; per repetition with the run's system metrics
// (finalize_run), and over repetitions (tenant_metrics).
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_steps.h"
#include "harness/analysis/ranks.h"

#include "harness/stats/bootstrap.h"
#include "harness/stats/stats.h"

#include <string>

namespace ib {

using namespace analysis_steps;

namespace {

const WorkerStatus kBadStatuses[] = {WorkerStatus::error,   WorkerStatus::crashed, WorkerStatus::exited,
                                     WorkerStatus::timeout, WorkerStatus::stopped, WorkerStatus::interrupted};

const PhaseResult* failed_phase(const TenantResult& t) {
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    for (const WorkerStatus b : kBadStatuses)
      if (p->outcome.status == b) return p;
  return nullptr;
}

// A phase that ran blocks but has none clean cannot be judged (foreign load took all of them).
std::optional<std::string> no_clean_blocks(const std::vector<const TenantResult*>& reps) {
  for (const char* name : {"exclusive", "colocated"}) {
    int blocks = 0, clean = 0;
    for (const TenantResult* t : reps) {
      const PhaseResult& p = std::string(name) == "exclusive" ? t->exclusive : t->colocated;
      blocks += p.blocks;  // 0 for a phase read from a baseline file
      clean += p.blocks_counted;
    }
    if (blocks > 0 && clean == 0)
      return "foreign load: none of the " + std::to_string(blocks) + " " + name +
             " blocks was clean (all contaminated, see runs[].blocks); run again on a quieter machine";
  }
  return std::nullopt;
}

}  // namespace

namespace analysis_steps {

// Latency-type workloads are judged on their per-request latencies (queueing included): an open-loop
// sample lasts as long as its arrivals do, so its duration hides a slower victim. The rounds are
// paired unless an exclusive phase comes from a baseline file (measured in another run's rounds).
Basis basis_of(const std::vector<TenantRep>& reps, bool have_a) {
  Basis b;
  b.by_latency = true;
  for (const TenantRep& r : reps) {
    const TenantResult* t = r.t;
    b.by_latency &= !counted_latencies(t->exclusive).empty() && !counted_latencies(t->colocated).empty() &&
                    (!have_a || !counted_latencies(alone_of(*t)).empty());
    // A phase from a baseline file was measured in another run's rounds; a run without block records
    // (a file from before rounds) has no rounds to pair.
    if (t->exclusive.source == PhaseSource::baseline || r.run->blocks.empty()) b.pairing = Pairing::independent;
    b.per_work |= judged_per_work(t->exclusive) || judged_per_work(t->colocated);
  }
  for (const TenantRep& r : reps) {
    const TenantResult* t = r.t;
    const auto rounds = [&](const PhaseResult& p) {
      return b.pairing == Pairing::paired ? counted_by_round(p, r.run->blocks, r.run->rounds, b.by_latency)
                                          : counted_by_block(p, b.by_latency);
    };
    b.E.push_back(rounds(t->exclusive));
    b.A.push_back(have_a ? counted_by_block(alone_of(*t), b.by_latency) : std::vector<std::vector<double>>{});
    b.C.push_back(rounds(t->colocated));
  }
  return b;
}

TenantMetrics metrics_of(const Basis& b, bool have_a, std::uint64_t seed, int resamples, double z, const StopCheck& stop) {
  const auto E = pool_samples(b.E), A = pool_samples(b.A), C = pool_samples(b.C);
  TenantMetrics m;
  m.basis = b.by_latency ? "request_latency" : b.per_work ? "time_per_work" : "sample_time";
  m.p95_slowdown = interval_at(p95_slowdown(b.C, b.E, seed, resamples, stop, b.pairing), z);
  m.median_slowdown = median_slowdown(C, E);
  m.partition_cost = have_a ? partition_cost(A, E) : kNaN;
  m.interference = have_a ? interference(C, A) : kNaN;
  m.n_exclusive = E.size();
  m.n_colocated = C.size();
  return m;
}

VerdictResult judge(const std::vector<const TenantResult*>& reps, const TenantMetrics& m, double cutoff) {
  if (const auto why = no_clean_blocks(reps)) return {Verdict::inconclusive, *why};
  return slowdown_verdict(m.n_exclusive, m.n_colocated, m.p95_slowdown, cutoff);
}

}  // namespace analysis_steps

void finalize_run(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  std::vector<MedianPair> vs_exclusive, vs_alone;
  bool all_colocated = !run.tenants.empty();
  for (std::size_t i = 0; i < run.tenants.size(); ++i) {
    TenantResult& t = run.tenants[i];
    const PhaseResult& alone = t.alone.source == PhaseSource::exclusive ? t.exclusive : t.alone;
    phase_warnings(run, t);
    const PhaseResult* failed = failed_phase(t);
    if (t.exclusive.outcome.status == WorkerStatus::waived || t.colocated.outcome.status == WorkerStatus::waived ||
        t.alone.outcome.status == WorkerStatus::waived) {
      t.verdict = Verdict::waived;
      for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
        if (p->outcome.status == WorkerStatus::waived) t.verdict_reason = p->outcome.message;
    } else if (failed) {
      t.verdict = Verdict::error;
      t.verdict_reason = "worker " + std::string(to_string(failed->outcome.status)) + (failed->outcome.message.empty() ? "" : ": " + failed->outcome.message);
    }
    const bool have_e = t.exclusive.measured(), have_a = alone.measured(), have_c = t.colocated.measured();
    all_colocated &= have_c && have_e && have_a;
    if (have_e && have_c) {
      const Basis b = basis_of({{&run, &t}}, have_a);
      t.metrics = metrics_of(b, have_a, seed + i, resamples, run.stopping.z, stop);
      t.metrics->collective = collective_metrics(t, run.cutoff, run.collective_timeout_s);
      if (have_a) {
        vs_alone.push_back({median(counted_values(alone)), median(counted_values(t.colocated))});
        vs_exclusive.push_back({median(counted_values(t.exclusive)), median(counted_values(t.colocated))});
      }
      if (!failed && t.verdict != Verdict::waived) {
        const auto v = judge({&t}, *t.metrics, run.cutoff);
        t.verdict = v.verdict;
        t.verdict_reason = v.reason;
      }
    } else if (!failed && t.verdict != Verdict::waived) {
      if (have_e && run.mode == "exclusive") {
        t.verdict = Verdict::baseline;
        t.verdict_reason = "exclusive mode measures the baseline only";
      } else {
        t.verdict = Verdict::error;
        t.verdict_reason = "not measured: " + (run.message.empty() ? std::string("phases missing") : run.message);
      }
    }
    t.verdict_reason += escape_note({&t});
  }
  if (all_colocated && vs_alone.size() == run.tenants.size())
    run.system = SystemMetrics{system_throughput(vs_exclusive), average_normalised_turnaround(vs_exclusive),
                               system_throughput(vs_alone), average_normalised_turnaround(vs_alone)};
}

std::vector<std::optional<TenantMetrics>> tenant_metrics(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                         int resamples, double z, const StopCheck& stop) {
  std::vector<std::optional<TenantMetrics>> out;
  if (reps.empty()) return out;
  for (std::size_t i = 0; i < reps.front()->tenants.size(); ++i) {
    std::vector<TenantRep> with_values;
    bool have_a = true;
    for (const RunResult* r : reps) {
      if (i >= r->tenants.size()) continue;
      const TenantResult& t = r->tenants[i];
      if (counted_values(t.exclusive).empty() || counted_values(t.colocated).empty()) continue;
      with_values.push_back({r, &t});
      have_a &= !counted_values(alone_of(t)).empty();
    }
    if (with_values.empty()) out.emplace_back();
    else out.push_back(metrics_of(basis_of(with_values, have_a), have_a, seed + i, resamples, z, stop));
  }
  return out;
}

}  // namespace ib
