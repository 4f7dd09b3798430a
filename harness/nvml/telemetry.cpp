// Telemetry sampler and the throttling definitions (see telemetry.h and docs/telemetry.md).
#include "harness/nvml/telemetry.h"

#include "harness/core/text.h"
#include "harness/nvml/nvml_abi.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "harness/stats/stats.h"

namespace ib {

namespace {

// The reason bits of telemetry.h are NVML's (nvml_abi.h), bit for bit.
static_assert(kReasonGpuIdle == nvmlClocksEventReasonGpuIdle &&
                  kReasonApplicationsClocksSetting == nvmlClocksEventReasonApplicationsClocksSetting &&
                  kReasonSwPowerCap == nvmlClocksEventReasonSwPowerCap &&
                  kReasonHwSlowdown == nvmlClocksThrottleReasonHwSlowdown &&
                  kReasonSyncBoost == nvmlClocksEventReasonSyncBoost &&
                  kReasonSwThermalSlowdown == nvmlClocksEventReasonSwThermalSlowdown &&
                  kReasonHwThermalSlowdown == nvmlClocksThrottleReasonHwThermalSlowdown &&
                  kReasonHwPowerBrakeSlowdown == nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
              "clock-event reason bits");
static_assert(kThrottleFailReasons == (kReasonHwSlowdown | kReasonSwThermalSlowdown | kReasonHwThermalSlowdown |
                                       kReasonHwPowerBrakeSlowdown),
              "DCGM's 0xE8");

struct NamedBit {
  uint64_t bit;
  const char* name;
};
constexpr NamedBit kReasonBits[] = {
    {kReasonGpuIdle, "GpuIdle"},
    {kReasonApplicationsClocksSetting, "ApplicationsClocksSetting"},
    {kReasonSwPowerCap, "SwPowerCap"},
    {kReasonHwSlowdown, "HwSlowdown"},
    {kReasonSyncBoost, "SyncBoost"},
    {kReasonSwThermalSlowdown, "SwThermalSlowdown"},
    {kReasonHwThermalSlowdown, "HwThermalSlowdown"},
    {kReasonHwPowerBrakeSlowdown, "HwPowerBrakeSlowdown"},
};


}  // namespace

const char* reason_name(uint64_t bit) {
  for (const auto& b : kReasonBits)
    if (b.bit == bit) return b.name;
  return nullptr;
}

std::string reason_names(uint64_t mask) {
  if (mask == 0) return "none";
  std::string out;
  for (int i = 0; i < 64; ++i) {
    uint64_t bit = uint64_t{1} << i;
    if (!(mask & bit)) continue;
    const char* n = reason_name(bit);
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(bit));
    out += (out.empty() ? "" : "|") + std::string(n ? n : hex);
  }
  return out;
}

bool is_throttled(const TelemetryReading& r, unsigned max_sm_clock) {
  // An idle GPU lowers its clocks: that reading is idle, not throttled (an open-loop victim idles
  // between requests).
  if (r.clock_event_reasons && (*r.clock_event_reasons & kReasonGpuIdle)) return false;
  if (r.clock_event_reasons && (*r.clock_event_reasons & kThrottleFailReasons)) return true;
  unsigned max = max_sm_clock ? max_sm_clock : r.max_sm_clock_mhz.value_or(0);
  if (r.sm_clock_mhz && max > 0) return *r.sm_clock_mhz < kThrottleClockFraction * max;
  return false;
}

std::vector<uint8_t> flag_throttled_samples(const std::vector<int64_t>& start_ns, const std::vector<double>& duration_s,
                                            const std::vector<TelemetrySample>& telemetry,
                                            const FlagOptions& options) {
  if (start_ns.size() != duration_s.size())
    throw std::invalid_argument("flag_throttled_samples: start_ns and duration_s differ in length");
  // prefix[i] = throttled readings among the first i.
  std::vector<size_t> prefix(telemetry.size() + 1, 0);
  std::vector<int64_t> t(telemetry.size());
  for (size_t i = 0; i < telemetry.size(); ++i) {
    t[i] = telemetry[i].t_ns;
    prefix[i + 1] = prefix[i] + (is_throttled(telemetry[i].r, options.max_sm_clock) ? 1 : 0);
  }
  std::vector<uint8_t> flags(start_ns.size(), 0);
  for (size_t s = 0; s < start_ns.size(); ++s) {
    int64_t start = start_ns[s];
    int64_t end = start + static_cast<int64_t>(std::llround(duration_s[s] * 1e9));
    size_t lo = static_cast<size_t>(std::lower_bound(t.begin(), t.end(), start) - t.begin());
    size_t hi = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), end) - t.begin());
    bool throttled = hi > lo && prefix[hi] - prefix[lo] > 0;
    if (!throttled && options.hold_ns > 0 && lo > 0 && start - t[lo - 1] <= options.hold_ns)
      throttled = prefix[lo] - prefix[lo - 1] > 0;
    flags[s] = throttled ? 1 : 0;
  }
  return flags;
}

std::vector<TelemetrySample> readings_of_blocks(const std::vector<TelemetrySample>& readings,
                                                const std::vector<std::pair<int64_t, int64_t>>& windows) {
  std::vector<uint8_t> taken(readings.size(), 0);
  const auto after = [&](int64_t t) {
    return static_cast<size_t>(std::upper_bound(readings.begin(), readings.end(), t,
                                                [](int64_t x, const TelemetrySample& r) { return x < r.t_ns; }) -
                               readings.begin());
  };
  for (const auto& [start, end] : windows) {
    const auto first = static_cast<size_t>(std::lower_bound(readings.begin(), readings.end(), start,
                                                            [](const TelemetrySample& r, int64_t x) { return r.t_ns < x; }) -
                                           readings.begin());
    if (first > 0) taken[first - 1] = 1;  // in effect at the window's start
    for (size_t i = first, last = after(end); i < last; ++i) taken[i] = 1;
  }
  std::vector<TelemetrySample> out;
  for (size_t i = 0; i < readings.size(); ++i)
    if (taken[i]) out.push_back(readings[i]);
  return out;
}

ThrottleSummary summarize_throttle(const std::vector<uint8_t>& flags, const std::vector<TelemetrySample>& telemetry,
                                   unsigned max_sm_clock) {
  ThrottleSummary out;
  out.samples = flags.size();
  for (uint8_t f : flags) out.throttled_samples += f ? 1 : 0;
  out.throttled_fraction = out.samples ? static_cast<double>(out.throttled_samples) / out.samples : 0.0;
  out.readings = telemetry.size();
  for (const auto& b : kReasonBits) out.time_per_reason.push_back({b.bit, b.name, 0.0, 0.0});
  for (size_t i = 0; i < telemetry.size(); ++i) {
    const auto& r = telemetry[i].r;
    if (is_throttled(r, max_sm_clock)) ++out.throttled_readings;
    uint64_t reasons = r.clock_event_reasons.value_or(0);
    out.reasons_seen |= reasons;
    if (i + 1 == telemetry.size()) break;
    double dt = static_cast<double>(telemetry[i + 1].t_ns - telemetry[i].t_ns) / 1e9;
    for (auto& rt : out.time_per_reason)
      if (reasons & rt.bit) rt.seconds += dt;
  }
  if (telemetry.size() >= 2)
    out.covered_s = static_cast<double>(telemetry.back().t_ns - telemetry.front().t_ns) / 1e9;
  for (auto& rt : out.time_per_reason) rt.fraction = out.covered_s > 0 ? rt.seconds / out.covered_s : 0.0;
  return out;
}

const char* load_verdict_name(LoadVerdict v) {
  switch (v) {
    case LoadVerdict::pass: return "pass";
    case LoadVerdict::warn: return "warn";
    case LoadVerdict::fail: return "fail";
    case LoadVerdict::inconclusive: return "inconclusive";
  }
  return "inconclusive";
}

// ---- sustained-load verdict: one function per rule of docs/design.md section 5 ----
//
// Each rule adds its evidence line (and its numbers) to the verdict and says what it found. FAIL rules: the median
// SM clock over the last half, the 0xE8 reasons. WARN rules: the throughput drop, the power limit.

namespace {

enum class RuleOutcome {
  not_evaluated,  // the data the rule needs is missing
  ok,
  breached,       // FAIL for a FAIL rule, WARN for a WARN rule
};

// FAIL when the median SM clock over the last half (by time) of the run is below min_clock_fraction of the maximum
// SM clock (the highest maximum reported). Exactly at the fraction is not below: ok.
RuleOutcome rule_clock_over_last_half(const std::vector<TelemetrySample>& telemetry, const SustainThresholds& th,
                                      SustainVerdict& v) {
  for (const auto& s : telemetry)
    if (s.r.max_sm_clock_mhz) v.max_sm_clock_mhz = std::max(v.max_sm_clock_mhz.value_or(0), *s.r.max_sm_clock_mhz);
  if (!telemetry.empty()) {
    int64_t t_mid = telemetry.front().t_ns + (telemetry.back().t_ns - telemetry.front().t_ns) / 2;
    std::vector<double> clocks;
    for (const auto& s : telemetry)
      if (s.t_ns >= t_mid && s.r.sm_clock_mhz) clocks.push_back(*s.r.sm_clock_mhz);
    if (!clocks.empty()) v.median_sm_clock_last_half_mhz = median(clocks);
  }
  if (!v.median_sm_clock_last_half_mhz || !v.max_sm_clock_mhz || *v.max_sm_clock_mhz == 0) {
    v.evidence.push_back("SM clock criterion not evaluated: " +
                         std::string(!v.median_sm_clock_last_half_mhz ? "no SM clock readings"
                                                                      : "maximum SM clock unsupported"));
    return RuleOutcome::not_evaluated;
  }
  double ratio = *v.median_sm_clock_last_half_mhz / *v.max_sm_clock_mhz;
  bool bad = *v.median_sm_clock_last_half_mhz < th.min_clock_fraction * *v.max_sm_clock_mhz;
  v.evidence.push_back(formatted("median SM clock over the last half %.0f MHz", *v.median_sm_clock_last_half_mhz) +
                       formatted(" = %.1f%%", ratio * 100) + formatted(" of max %.0f MHz", *v.max_sm_clock_mhz) +
                       (bad ? " (FAIL: below " : " (ok: FAIL below ") +
                       formatted("%.0f%%)", th.min_clock_fraction * 100));
  return bad ? RuleOutcome::breached : RuleOutcome::ok;
}

// FAIL when fail_reasons (0xE8) are active in more than max_reason_fraction of the readings that report reasons.
// Exactly at the fraction is not more: ok.
RuleOutcome rule_fail_reasons(const std::vector<TelemetrySample>& telemetry, const SustainThresholds& th,
                              SustainVerdict& v) {
  size_t with_reasons = 0, failing = 0;
  uint64_t seen = 0;
  for (const auto& s : telemetry) {
    if (!s.r.clock_event_reasons) continue;
    ++with_reasons;
    if (*s.r.clock_event_reasons & th.fail_reasons) {
      ++failing;
      seen |= *s.r.clock_event_reasons & th.fail_reasons;
    }
  }
  if (with_reasons == 0) {
    v.evidence.push_back("clock-event reasons criterion not evaluated: no reason readings");
    return RuleOutcome::not_evaluated;
  }
  double frac = static_cast<double>(failing) / static_cast<double>(with_reasons);
  v.fail_reason_fraction = frac;
  bool bad = frac > th.max_reason_fraction;
  char mask[32];
  std::snprintf(mask, sizeof mask, "0x%llX", static_cast<unsigned long long>(th.fail_reasons));
  v.evidence.push_back(std::string(mask) + " reasons" + (seen ? " (" + reason_names(seen) + ")" : "") + " active in " +
                       std::to_string(failing) + " of " + std::to_string(with_reasons) + " readings = " +
                       fixed_percent(frac) + (bad ? " (FAIL: above " : " (ok: FAIL above ") +
                       fixed_percent(th.max_reason_fraction) + ")");
  return bad ? RuleOutcome::breached : RuleOutcome::ok;
}

// Windows compared at each end of `n`: one compare window's worth (compare_window_s / window_s, at least 1), or,
// when the run is shorter than two compare windows, the first and last 25% (short_run; 0 below 4 windows).
size_t throughput_windows_compared(size_t n, const SustainThresholds& th, bool& short_run) {
  size_t k = static_cast<size_t>(std::floor(th.compare_window_s / th.window_s + 1e-9));
  if (k == 0) k = 1;
  short_run = n < 2 * k;
  return short_run ? n / 4 : k;
}

// WARN when the mean throughput of the last compared windows is more than max_throughput_drop below the first's.
RuleOutcome rule_throughput_drop(const std::vector<double>& window_throughputs, const SustainThresholds& th,
                                 SustainVerdict& v) {
  const size_t n = window_throughputs.size();
  const size_t k = throughput_windows_compared(n, th, v.short_run);
  if (k == 0) {
    v.evidence.push_back("throughput criterion not evaluated: " + std::to_string(n) + " window(s), at least 4 needed");
    return RuleOutcome::not_evaluated;
  }
  v.compared_windows = k;
  const auto ends = static_cast<long>(k);
  v.first_throughput = mean(std::vector<double>(window_throughputs.begin(), window_throughputs.begin() + ends));
  v.last_throughput = mean(std::vector<double>(window_throughputs.end() - ends, window_throughputs.end()));
  std::string scope = v.short_run ? "run shorter than " + formatted("%g", 2 * th.compare_window_s) +
                                        " s: compared the first and last 25% (" + std::to_string(k) + " of " +
                                        std::to_string(n) + " windows each)"
                                  : "compared the first and last " + std::to_string(k) + " windows of " +
                                        formatted("%g s", th.window_s);
  if (!(*v.first_throughput > 0)) {
    v.evidence.push_back("throughput criterion not evaluated: first windows have no throughput (" + scope + ")");
    return RuleOutcome::not_evaluated;
  }
  double drop = 1.0 - *v.last_throughput / *v.first_throughput;
  v.throughput_drop = drop;
  bool bad = *v.last_throughput < *v.first_throughput * (1.0 - th.max_throughput_drop);  // more than 5% lower
  v.evidence.push_back("throughput " + formatted("%.6g", *v.last_throughput) + " at the end vs " +
                       formatted("%.6g", *v.first_throughput) + " at the start: " +
                       (drop >= 0 ? fixed_percent(drop) + " lower" : fixed_percent(-drop) + " higher") +
                       (bad ? " (WARN: more than " : " (ok: WARN above ") + fixed_percent(th.max_throughput_drop) +
                       " lower; " + scope + ")");
  return bad ? RuleOutcome::breached : RuleOutcome::ok;
}

// WARN when the lowest enforced power limit seen is below the default limit (seed 003: power-locked cards).
RuleOutcome rule_power_limit(const std::vector<TelemetrySample>& telemetry, SustainVerdict& v) {
  for (const auto& s : telemetry) {
    if (s.r.power_limit_w) v.power_limit_w = std::min(v.power_limit_w.value_or(*s.r.power_limit_w), *s.r.power_limit_w);
    if (s.r.default_power_limit_w) v.default_power_limit_w = *s.r.default_power_limit_w;
  }
  if (!v.power_limit_w || !v.default_power_limit_w) {
    v.evidence.push_back("power limit criterion not evaluated: enforced or default limit unsupported");
    return RuleOutcome::not_evaluated;
  }
  bool bad = *v.power_limit_w < *v.default_power_limit_w;
  v.evidence.push_back(formatted("enforced power limit %.0f W", *v.power_limit_w) +
                       formatted(" vs default %.0f W", *v.default_power_limit_w) +
                       (bad ? " (WARN: below the default: power-locked)" : " (ok)"));
  return bad ? RuleOutcome::breached : RuleOutcome::ok;
}

}  // namespace

SustainVerdict sustained_load_verdict(const std::vector<TelemetrySample>& telemetry,
                                      const std::vector<double>& window_throughputs,
                                      const SustainThresholds& th) {
  SustainVerdict v;
  const RuleOutcome clock = rule_clock_over_last_half(telemetry, th, v);
  const RuleOutcome reasons = rule_fail_reasons(telemetry, th, v);
  const RuleOutcome throughput = rule_throughput_drop(window_throughputs, th, v);
  const RuleOutcome power = rule_power_limit(telemetry, v);
  if (clock == RuleOutcome::breached || reasons == RuleOutcome::breached)
    v.verdict = LoadVerdict::fail;
  else if (clock == RuleOutcome::not_evaluated && reasons == RuleOutcome::not_evaluated)
    v.verdict = LoadVerdict::inconclusive;  // throttling could not be judged at all
  else if (throughput == RuleOutcome::breached || power == RuleOutcome::breached)
    v.verdict = LoadVerdict::warn;
  else
    v.verdict = LoadVerdict::pass;
  return v;
}

// ---- sampler ----

TelemetrySampler::TelemetrySampler(Nvml& nvml, unsigned device, double hz) : nvml_(nvml), device_(device), hz_(hz) {
  if (!(hz > 0) || !std::isfinite(hz)) throw std::invalid_argument("telemetry rate must be a positive number of Hz");
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable()) throw std::logic_error("TelemetrySampler already started");
  stop_requested_ = false;
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void TelemetrySampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool TelemetrySampler::running() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_;
}

std::vector<TelemetrySample> TelemetrySampler::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

size_t TelemetrySampler::sample_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_.size();
}

std::optional<std::string> TelemetrySampler::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::vector<std::string> TelemetrySampler::notes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return notes_;
}

bool TelemetrySampler::wait_for_samples(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, timeout, [&] { return samples_.size() >= n || !running_; });
  return samples_.size() >= n;
}

void TelemetrySampler::loop() {
  using clock = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / hz_));
  auto next = clock::now();
  for (;;) {
    TelemetrySample s;
    std::optional<std::string> failure;
    try {
      int64_t t0 = monotonic_ns();
      s.r = nvml_.read_telemetry(device_);
      int64_t t1 = monotonic_ns();
      s.t_ns = t0 + (t1 - t0) / 2;
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown error while reading telemetry";
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (failure) {
      error_ = std::move(failure);
      break;
    }
    for (auto& note : s.r.unsupported)
      if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
    s.r.unsupported.clear();
    samples_.push_back(std::move(s));
    cv_.notify_all();
    next += period;
    auto now = clock::now();
    if (next < now) next = now;  // fell behind (slow NVML): skip the missed ticks rather than burst
    if (cv_.wait_until(lock, next, [&] { return stop_requested_; })) break;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
  }
  cv_.notify_all();
}

std::vector<TelemetryWindow> telemetry_windows(const std::vector<TelemetrySample>& telemetry, int64_t t0_ns,
                                               std::size_t windows, double window_s) {
  std::vector<TelemetryWindow> out(windows);
  if (!(window_s > 0.0)) return out;
  std::vector<std::vector<double>> clocks(windows), powers(windows);
  for (const auto& s : telemetry) {
    if (s.t_ns < t0_ns) continue;
    const auto k = static_cast<std::size_t>(static_cast<double>(s.t_ns - t0_ns) * 1e-9 / window_s);
    if (k >= windows) continue;
    TelemetryWindow& w = out[k];
    ++w.readings;
    if (s.r.sm_clock_mhz) clocks[k].push_back(*s.r.sm_clock_mhz);
    if (s.r.power_w) powers[k].push_back(*s.r.power_w);
    if (s.r.temperature_c) w.max_temperature_c = std::max(w.max_temperature_c.value_or(0u), *s.r.temperature_c);
    if (s.r.clock_event_reasons) w.reasons = w.reasons.value_or(0ull) | *s.r.clock_event_reasons;
  }
  for (std::size_t k = 0; k < windows; ++k) {
    if (!clocks[k].empty()) out[k].median_sm_clock_mhz = median(clocks[k]);
    if (!powers[k].empty()) out[k].mean_power_w = mean(powers[k]);
  }
  return out;
}

}  // namespace ib
