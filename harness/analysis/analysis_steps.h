// What the analysis's files (analysis.cpp, tail_bursts.cpp, warnings.cpp, tenant_metrics.cpp, aggregate.cpp)
// share and nobody else uses: a sample's end and a block's tenants, the tail-burst helpers the warnings
// name blocks with, a tenant's warnings and escape note, and the basis a tenant's metrics and verdict
// are computed on (one repetition in finalize_run, several in tenant_metrics and aggregate_repetitions).
#pragma once

#include "harness/analysis/analysis.h"
#include "harness/core/numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ib::analysis_steps {


inline std::int64_t end_ns(const PhaseResult& p, std::size_t i) {
  return p.start_ns[i] + static_cast<std::int64_t>(std::llround(p.duration_s[i] * 1e9));
}

inline bool has_tenant(const BlockRecord& b, const std::string& name) {
  return std::find(b.tenants.begin(), b.tenants.end(), name) != b.tenants.end();
}

// tail_bursts.cpp
std::optional<std::size_t> tenant_index(const RunResult& run, const std::string& name);
// Blocks of `phase` with tenant `name`, judged in tails, up to and including index `upto`.
std::vector<int> tail_reference(const RunResult& run, Phase phase, const std::string& name, int upto);
// Why block `k` of `tails` is a tail burst, against the others.
std::string tail_reason(const std::vector<BlockTail>& tails, std::size_t k);
// Flags the tail bursts of every tenant's phases over the whole repetition (docs/design.md section 4).
void flag_tail_bursts(RunResult& run);

// warnings.cpp
// Appends a tenant's warnings of one repetition (noisy baseline, throttling, outliers, blocks not
// counted, tail bursts, coverage, drift, escaped processes) to t.warnings.
void phase_warnings(const RunResult& run, TenantResult& t);
// A phase's matching lines that arrived in bursts (kLinesInBurstCounter) are warned about (buffered_output)
// from kMinBurstLines and a kBurstLineShare of its counted samples: a line or two sharing a read with the one
// before happens to a program that writes at once, when the reader was not running for a moment.
constexpr double kMinBurstLines = 5, kBurstLineShare = 0.10;
std::optional<std::string> burst_warning(const PhaseResult& p, const char* phase);
// Issue 37 item 1: a program whose processes left its group is named in the verdict's reason as the
// tenant's fault ("" when none did).
std::string escape_note(const std::vector<const TenantResult*>& reps);

// tenant_metrics.cpp
struct Basis {
  bool by_latency = false;
  bool per_work = false;  // the values are time per unit of work (judged_per_work), not sample durations
  Pairing pairing = Pairing::paired;
  BlockedSamples E, A, C;
};

// One tenant in one repetition.
struct TenantRep {
  const RunResult* run;
  const TenantResult* t;
};

inline const PhaseResult& alone_of(const TenantResult& t) {
  return t.alone.source == PhaseSource::exclusive ? t.exclusive : t.alone;
}

// The values a tenant is judged on over `reps`: per-request latencies or sample times, by round or by block.
Basis basis_of(const std::vector<TenantRep>& reps, bool have_a);
TenantMetrics metrics_of(const Basis& b, bool have_a, std::uint64_t seed, int resamples, double z, const StopCheck& stop);
VerdictResult judge(const std::vector<const TenantResult*>& reps, const TenantMetrics& m, double cutoff);

}  // namespace ib::analysis_steps
