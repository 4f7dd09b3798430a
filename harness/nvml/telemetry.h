// Telemetry (docs/design.md section 5): an NVML sampler thread beside a phase, and the pure definitions built on its
// series — throttled readings, throttled workload samples, time per clock-event reason, and the sustained-load
// verdict. Definitions, formulas and thresholds are documented in docs/telemetry.md.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/clock.h"
#include "harness/nvml/nvml.h"

namespace ib {

struct TelemetrySample {
  int64_t t_ns = 0;  // CLOCK_MONOTONIC, midpoint of the NVML calls of this reading
  TelemetryReading r;
};

// ---- clock-event (throttle) reason bits ----
constexpr uint64_t kReasonGpuIdle = 0x1;
constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
constexpr uint64_t kReasonSwPowerCap = 0x4;
constexpr uint64_t kReasonHwSlowdown = 0x8;
constexpr uint64_t kReasonSyncBoost = 0x10;
constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
// The reasons DCGM fails a GPU on: HwSlowdown | SwThermalSlowdown | HwThermalSlowdown | HwPowerBrakeSlowdown.
constexpr uint64_t kThrottleFailReasons = 0xE8;
// SM clock below this fraction of the maximum SM clock counts as throttled (seed 002).
constexpr double kThrottleClockFraction = 0.70;

// Name of one reason bit ("SwPowerCap"), or nullptr for a bit without a name here.
const char* reason_name(uint64_t bit);
// "SwPowerCap|HwSlowdown" for a mask ("none" for 0; unnamed bits as "0x100").
std::string reason_names(uint64_t mask);

// A reading is throttled when its SM clock is below 70% of `max_sm_clock` (0: use the reading's own
// max_sm_clock_mhz) or any 0xE8 reason is active. A reading without an SM clock (or without a maximum) is judged on
// its reasons alone; a reading with neither is not throttled. A reading with GpuIdle set is idle, never throttled.
bool is_throttled(const TelemetryReading& r, unsigned max_sm_clock);

struct FlagOptions {
  // The latest telemetry reading at or before a sample's start also covers the sample (its state holds until the
  // next reading) when it is at most this old at the start. 0: only readings taken during the sample count.
  int64_t hold_ns = 1'000'000'000;
  unsigned max_sm_clock = 0;  // passed to is_throttled (0: each reading's own maximum)
};

// One flag per workload sample (1 = throttled): a sample [start, start + duration] is throttled when a telemetry
// reading taken during it is throttled, or (hold_ns > 0) the reading in effect at its start is. `telemetry` must be
// sorted by t_ns. start_ns and duration_s have one entry per sample.
std::vector<uint8_t> flag_throttled_samples(const std::vector<int64_t>& start_ns, const std::vector<double>& duration_s,
                                            const std::vector<TelemetrySample>& telemetry,
                                            const FlagOptions& options = {});

// The readings that belong to a phase that ran in `windows` (its blocks, [start_ns, end_ns], in any order): those
// taken during a window, and the one in effect at each window's start (the latest before it), which
// flag_throttled_samples holds over the block's first samples when none was taken during them yet. Sorted by
// t_ns, each reading once; `readings` must be sorted by t_ns.
std::vector<TelemetrySample> readings_of_blocks(const std::vector<TelemetrySample>& readings,
                                                const std::vector<std::pair<int64_t, int64_t>>& windows);

struct ReasonTime {
  uint64_t bit = 0;
  std::string name;
  double seconds = 0;   // telemetry time with this bit set
  double fraction = 0;  // seconds / covered_s
};

struct ThrottleSummary {
  size_t samples = 0;             // workload samples
  size_t throttled_samples = 0;   // flagged samples
  double throttled_fraction = 0;  // throttled_samples / samples (0 with no samples)
  size_t readings = 0;            // telemetry readings
  size_t throttled_readings = 0;  // readings for which is_throttled holds
  double covered_s = 0;           // t_last - t_first of the telemetry
  std::vector<ReasonTime> time_per_reason;  // the eight named bits, in bit order (zero seconds included)
  uint64_t reasons_seen = 0;      // OR of every reading's reasons
};

// Fraction of throttled workload samples (from `flags`) and time per reason bit: each telemetry interval
// [t_i, t_{i+1}) is attributed, whole, to every reason bit set in reading i.
ThrottleSummary summarize_throttle(const std::vector<uint8_t>& flags, const std::vector<TelemetrySample>& telemetry,
                                   unsigned max_sm_clock = 0);

// ---- sustained-load verdict ----
enum class LoadVerdict { pass, warn, fail, inconclusive };
const char* load_verdict_name(LoadVerdict v);

struct SustainThresholds {
  double min_clock_fraction = 0.70;      // FAIL: median SM clock over the last half below this fraction of max
  uint64_t fail_reasons = kThrottleFailReasons;
  double max_reason_fraction = 0.01;     // FAIL: fail_reasons active in more than this fraction of readings
  double max_throughput_drop = 0.05;     // WARN: last-minute mean more than this fraction below the first minute's
  double compare_window_s = 60;          // "minute" in the rule above
  double window_s = 1;                   // length of one throughput window
};

struct SustainVerdict {
  LoadVerdict verdict = LoadVerdict::inconclusive;
  std::vector<std::string> evidence;       // one line per rule, with the numbers and the threshold
  std::optional<double> median_sm_clock_last_half_mhz;
  std::optional<unsigned> max_sm_clock_mhz;
  std::optional<double> fail_reason_fraction;   // readings with fail_reasons / readings with reasons
  std::optional<double> first_throughput, last_throughput;  // means of the compared windows
  std::optional<double> throughput_drop;   // 1 - last / first
  size_t compared_windows = 0;             // windows in each compared group
  bool short_run = false;                  // compared the first and last 25% (run shorter than 2 compare windows)
  std::optional<double> power_limit_w, default_power_limit_w;  // lowest enforced limit seen; default limit
};

// FAIL: median SM clock over the last half (by time) of the telemetry below min_clock_fraction × max SM clock, or
// fail_reasons active in more than max_reason_fraction of the readings. WARN: mean throughput of the last
// compare window more than max_throughput_drop below the first's (runs shorter than two compare windows compare
// the first and last 25% of the windows and say so), or an enforced power limit below the default limit.
// PASS otherwise. INCONCLUSIVE when there is no SM clock and no reason data to judge throttling on.
SustainVerdict sustained_load_verdict(const std::vector<TelemetrySample>& telemetry,
                                      const std::vector<double>& window_throughputs,
                                      const SustainThresholds& thresholds = {});

// The telemetry of one window of the sustained-load series, beside that window's throughput. Empty
// when no reading of the window reported the field.
struct TelemetryWindow {
  std::size_t readings = 0;
  std::optional<double> median_sm_clock_mhz;
  std::optional<double> mean_power_w;
  std::optional<unsigned> max_temperature_c;
  std::optional<unsigned long long> reasons;  // OR of the readings' clock-event reasons
};

// Readings in [t0_ns + k window_s, t0_ns + (k+1) window_s) for k = 0 .. windows-1: the same windows as
// window_throughputs (whose t0 is the first sample's start).
std::vector<TelemetryWindow> telemetry_windows(const std::vector<TelemetrySample>& telemetry, int64_t t0_ns,
                                               std::size_t windows, double window_s = 1.0);

// ---- the sampler ----
// Samples `device` through `nvml` at `hz` on its own thread between start() and stop(). The first reading is taken
// at start(). Never throws out of the thread: the first error (NvmlError or other) is recorded in error() and
// sampling stops. Notes about unsupported fields are collected once (notes()) and cleared from the stored samples.
class TelemetrySampler {
 public:
  TelemetrySampler(Nvml& nvml, unsigned device, double hz = 10.0);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();  // throws std::logic_error when already started
  void stop();   // joins the thread; idempotent
  bool running() const;

  std::vector<TelemetrySample> samples() const;
  size_t sample_count() const;
  std::optional<std::string> error() const;
  std::vector<std::string> notes() const;  // distinct unsupported-field notes, in first-seen order

  // Waits until at least `n` samples exist, the sampler stopped (error or stop()), or `timeout` passed; returns
  // whether `n` samples exist.
  bool wait_for_samples(size_t n, std::chrono::milliseconds timeout) const;
  double hz() const { return hz_; }

 private:
  void loop();

  Nvml& nvml_;
  unsigned device_;
  double hz_;
  std::thread thread_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool stop_requested_ = false;
  bool running_ = false;
  std::vector<TelemetrySample> samples_;
  std::optional<std::string> error_;
  std::vector<std::string> notes_;
};

}  // namespace ib
