// mig-sweep's judgement (mig_sweep.h, docs/design.md section 12): the recommended layout and the sweep's exit code,
// the GPU's power over a layout's readings, which entries pre-existing instances block, the yardstick's
// instance, and the --prices file. Pure functions; the command is mig_sweep_command.cpp.
#include "harness/vet/mig_sweep.h"

#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/json_input.h"
#include "harness/core/text.h"
#include "harness/modes/mig_layouts.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace ib {

using json = nlohmann::json;

namespace {

bool intervals_overlap(const std::optional<Estimate>& a, const std::optional<Estimate>& b) {
  if (!a || !b) return true;  // nothing to tell them apart with
  return a->ci_low <= b->ci_high && b->ci_low <= a->ci_high;
}

// Whether every tenant's interval overlaps between the two layouts (tenants matched by name).
bool indistinguishable(const SweepLayout& a, const SweepLayout& b) {
  for (const SweepTenant& t : a.tenants)
    for (const SweepTenant& u : b.tenants)
      if (t.tenant == u.tenant && !intervals_overlap(t.p95_slowdown, u.p95_slowdown)) return false;
  return true;
}

}  // namespace

std::optional<SweepRecommendation> recommend_layout(const std::vector<SweepLayout>& layouts, unsigned tenants) {
  std::vector<const SweepLayout*> measured;
  for (const SweepLayout& l : layouts)
    if (l.outcome == LayoutOutcome::measured) measured.push_back(&l);
  if (measured.empty()) return std::nullopt;
  // With prices the throughput that counts is STP per price (every measured layout has one then).
  const auto score = [](const SweepLayout* l) { return l->stp_per_price ? *l->stp_per_price : l->stp.value_or(0.0); };
  std::stable_sort(measured.begin(), measured.end(), [&score](const SweepLayout* a, const SweepLayout* b) {
    if (a->passing != b->passing) return a->passing > b->passing;
    return score(a) > score(b);
  });
  const SweepLayout& best = *measured.front();
  SweepRecommendation r{best.name, best.profiles, "", true, ""};
  r.reason = std::to_string(best.passing) + " of " + std::to_string(tenants) + " tenants pass the cutoff" +
             (best.stp ? ", system throughput " + significant(*best.stp, 3) + " (STP against the common yardstick)" : "") +
             (best.stp_per_price ? ", " + significant(*best.stp_per_price, 3) + " STP per unit of price" : "");
  if (measured.size() > 1) {
    const SweepLayout& next = *measured[1];
    r.runner_up = next.name;
    if (next.passing == best.passing && indistinguishable(best, next)) {
      r.distinguishable = false;
      r.reason += "; " + next.name + " has as many tenants passing and every tenant's P95 interval overlaps: the runs "
                                     "cannot tell the two apart (measure longer)";
    } else {
      r.reason += "; runner-up " + next.name + ": " + std::to_string(next.passing) + " passing" +
                  (next.stp ? ", STP " + significant(*next.stp, 3) : "") +
                  (next.stp_per_price ? ", " + significant(*next.stp_per_price, 3) + " per unit of price" : "");
    }
  }
  return r;
}

int sweep_exit_code(const MigSweepResult& result, unsigned tenants) {
  if (result.interrupted) return kExitInterrupted;
  if (result.yardstick.outcome == LayoutOutcome::failed) return kExitWorkloadFailed;
  for (const auto* entries : {&result.layouts, &result.references})
    for (const SweepLayout& l : *entries)
      if (l.outcome == LayoutOutcome::failed) return kExitWorkloadFailed;
  if (!result.recommendation) return kExitCannotRun;
  const SweepLayout* best = nullptr;
  for (const SweepLayout& l : result.layouts)
    if (l.name == result.recommendation->layout) best = &l;
  if (!best || best->passing < static_cast<int>(tenants)) {
    for (const SweepTenant& t : best ? best->tenants : std::vector<SweepTenant>{})
      if (t.verdict == Verdict::fail) return kExitVerdictFailed;
    return kExitInconclusive;
  }
  return result.recommendation->distinguishable ? kExitPass : kExitInconclusive;
}

std::optional<SweepPower> summarize_power(const std::vector<TelemetrySample>& readings) {
  std::vector<double> power, limit;
  std::size_t with_reasons = 0, capped = 0;
  for (const TelemetrySample& t : readings) {
    if (t.r.power_w) power.push_back(*t.r.power_w);
    if (t.r.power_limit_w) limit.push_back(*t.r.power_limit_w);
    if (t.r.clock_event_reasons) {
      ++with_reasons;
      capped += (*t.r.clock_event_reasons & (kReasonSwPowerCap | kReasonHwPowerBrakeSlowdown)) != 0;
    }
  }
  if (power.empty()) return std::nullopt;
  SweepPower p;
  p.readings = power.size();
  p.median_w = median(power);
  p.max_w = *std::max_element(power.begin(), power.end());
  if (!limit.empty()) p.limit_w = median(limit);
  if (with_reasons) p.power_capped_fraction = static_cast<double>(capped) / static_cast<double>(with_reasons);
  return p;
}

void skip_blocked_entries(MigSweepResult& r, const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                          const std::vector<MigGpuInstance>& existing) {
  if (existing.empty()) return;
  std::vector<MigPlacement> occupied;
  for (const MigGpuInstance& m : existing)
    if (m.placement) occupied.push_back(*m.placement);
  const bool known = occupied.size() == existing.size();
  for (auto* entries : {&r.references, &r.layouts})
    for (SweepLayout& l : *entries) {
      const bool reference = entries == &r.references;
      // A reference's tenants share one instance of the largest profile.
      const std::vector<std::string> instances = reference ? std::vector<std::string>{l.profiles.front()} : l.profiles;
      if (!known) {
        if (!reference) continue;
        l.outcome = LayoutOutcome::skipped_existing;
        l.reason = "needs an instance of " + instances.front() + ", and NVML does not say where the pre-existing "
                   "instances sit (never touched)";
        continue;
      }
      const MigCreationPlan plan = plan_mig_creation(instances, gpu_profiles, occupied);
      if (plan.check.layout) continue;
      l.outcome = LayoutOutcome::skipped_existing;
      l.reason = (reference ? "its " + instances.front() + " instance " : std::string("it ")) + plan.check.reason;
    }
}

void plan_yardstick(const std::string& baseline, SweepYardstick& y, const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                    const std::vector<MigGpuInstance>& existing) {
  y = SweepYardstick{};
  if (!baseline.empty()) {
    y.source = YardstickSource::baseline;
    y.baseline_file = baseline;
    y.outcome = LayoutOutcome::measured;  // given: each layout's run checks it against the scenario
    return;
  }
  std::vector<MigPlacement> occupied;
  for (const MigGpuInstance& m : existing) {
    if (!m.placement) {
      y.outcome = LayoutOutcome::skipped_existing;
      y.reason = "NVML does not say where the pre-existing instances sit (never touched), so no instance for the "
                 "yardstick can be placed";
      return;
    }
    occupied.push_back(*m.placement);
  }
  std::vector<MigGpuInstanceProfile> by_size = gpu_profiles;
  std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) {
    return std::tie(a.slice_count, a.memory_mib) > std::tie(b.slice_count, b.memory_mib);
  });
  for (const MigGpuInstanceProfile& p : by_size) {
    if (!plan_mig_creation({p.name}, gpu_profiles, occupied).check.layout) continue;
    y.profile = p.name;
    y.whole_gpu_largest = p.name == by_size.front().name;
    if (!y.whole_gpu_largest)
      y.reason = "the GPU's largest profile, " + by_size.front().name + ", does not fit beside the pre-existing "
                 "instances: the largest that does";
    return;
  }
  y.outcome = LayoutOutcome::skipped_existing;
  y.reason = "no MIG instance fits beside the pre-existing instances (never touched)";
}

std::map<std::string, double> read_sweep_prices(const std::string& file) {
  const json doc = read_json_file(file, "mig-sweep --prices");
  const std::string where = "mig-sweep --prices " + file;
  if (!doc.is_object() || doc.empty())
    throw InputError(where + ": an object of MIG profile -> price of one instance was expected, e.g. {\"1g.18gb\": 0.6}");
  std::map<std::string, double> prices;
  for (const auto& [profile, price] : doc.items()) {
    if (!price.is_number() || !(price.get<double>() > 0.0) || !std::isfinite(price.get<double>()))
      throw InputError(where + ": " + printable(profile, 60) + ": a price above 0 was expected");
    prices[profile] = price.get<double>();
  }
  return prices;
}

}  // namespace ib
