// Telemetry: NVML telemetry/facts bindings against the fake NVML, throttling classification, sample flagging, time
// per reason, the sustained-load verdicts and the sampler thread. Every expected number is computed by hand in a
// comment next to it.
#include "harness/nvml/telemetry.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "harness/nvml/nvml.h"
#include "tests/unit/fake_nvml_env.h"
#include "tests/unit/test_support.h"

using nlohmann::json;

namespace {

using namespace ib::test;

constexpr int64_t kS = 1'000'000'000;

ib::TelemetryReading reading(std::optional<unsigned> sm, std::optional<unsigned> max, std::optional<uint64_t> reasons) {
  ib::TelemetryReading r;
  r.sm_clock_mhz = sm;
  r.max_sm_clock_mhz = max;
  r.clock_event_reasons = reasons;
  return r;
}

ib::TelemetrySample sample(int64_t t_ns, ib::TelemetryReading r) { return {t_ns, std::move(r)}; }


std::string all(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// NVML bindings (fake NVML)

class NvmlTelemetryTest : public ib_test::FakeNvmlEnv {};

json h200_series() {
  return json::array({
      // 0: fine, SwPowerCap only (normal boost behaviour)
      {{"sm_clock", 1980}, {"mem_clock", 3201}, {"max_sm_clock", 1980}, {"power_w", 650.5}, {"power_limit_w", 700},
       {"default_power_limit_w", 700}, {"temp_c", 60}, {"reasons", 4}, {"util_gpu", 100}, {"util_mem", 40},
       {"memory_used_mb", 1024}, {"power_violation_ns", 5000}, {"thermal_violation_ns", 0},
       {"violation_ref_us", 123456}},
      // 1: power-capped but fine: 1940 MHz = 97.98% of 1980 with SwPowerCap (0x4)
      {{"sm_clock", 1940}, {"reasons", 4}},
      // 2: thermal: HwThermalSlowdown (0x40) at full clock
      {{"sm_clock", 1980}, {"reasons", 0x40}},
      // 3: low clock: 1188 MHz = 60% of 1980, no reason
      {{"sm_clock", 1188}, {"reasons", 0}},
  });
}

TEST_F(NvmlTelemetryTest, ReadsEveryFieldAndStepsThroughTheSeries) {
  write_config({{"devices", json::array({{{"name", "NVIDIA H200"}, {"memory_mb", 143771},
                                          {"telemetry", h200_series()}}})}});
  auto nvml = ib::Nvml::load();
  ib::TelemetryReading r = nvml->read_telemetry(0);
  EXPECT_TRUE(r.unsupported.empty()) << all(r.unsupported);
  EXPECT_EQ(r.sm_clock_mhz, 1980u);
  EXPECT_EQ(r.mem_clock_mhz, 3201u);
  EXPECT_EQ(r.max_sm_clock_mhz, 1980u);
  ASSERT_TRUE(r.power_w);
  EXPECT_DOUBLE_EQ(*r.power_w, 650.5);  // 650500 mW / 1000
  EXPECT_DOUBLE_EQ(*r.power_limit_w, 700.0);
  EXPECT_DOUBLE_EQ(*r.default_power_limit_w, 700.0);
  EXPECT_EQ(r.temperature_c, 60u);
  EXPECT_EQ(r.clock_event_reasons, 4ull);
  EXPECT_EQ(r.util_gpu_pct, 100u);
  EXPECT_EQ(r.util_memory_pct, 40u);
  EXPECT_EQ(r.memory_used_bytes, 1024ull << 20);
  ASSERT_TRUE(r.power_violation);
  EXPECT_EQ(r.power_violation->violation_ns, 5000u);
  EXPECT_EQ(r.power_violation->reference_us, 123456u);
  ASSERT_TRUE(r.thermal_violation);
  EXPECT_EQ(r.thermal_violation->violation_ns, 0u);

  // Readings 1..3 then stay on the last entry; absent keys take the defaults (max 1980, limits 700 W).
  std::vector<bool> throttled = {ib::is_throttled(r, 0)};
  for (int i = 0; i < 4; ++i) throttled.push_back(ib::is_throttled(nvml->read_telemetry(0), 0));
  // fine (0x4), power-capped 98% (0x4), thermal (0x40), 60% clock, 60% clock again (last entry)
  EXPECT_EQ(throttled, (std::vector<bool>{false, false, true, true, true}));
}

TEST_F(NvmlTelemetryTest, UnsupportedFieldsAreEmptyWithANote) {
  json dev = {{"name", "NVIDIA H200"},
              {"telemetry", {{"util_gpu", nullptr}, {"power_violation_ns", nullptr}, {"temp_c", nullptr}}}};
  write_config({{"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  auto r = nvml->read_telemetry(0);
  EXPECT_FALSE(r.util_gpu_pct);
  EXPECT_FALSE(r.util_memory_pct);
  EXPECT_FALSE(r.power_violation);
  EXPECT_FALSE(r.temperature_c);
  EXPECT_TRUE(r.thermal_violation);
  EXPECT_EQ(r.sm_clock_mhz, 1980u);  // default
  ASSERT_EQ(r.unsupported.size(), 3u) << all(r.unsupported);
  EXPECT_EQ(r.unsupported[0], "temperature: nvmlDeviceGetTemperature: Not Supported (3)");
  EXPECT_EQ(r.unsupported[1], "utilization: nvmlDeviceGetUtilizationRates: Not Supported (3)");
  EXPECT_EQ(r.unsupported[2], "power_violation: nvmlDeviceGetViolationStatus: Not Supported (3)");
}

TEST_F(NvmlTelemetryTest, ReasonsFallBackToThrottleReasonsAndOtherErrorsThrow) {
  json dev = {{"name", "NVIDIA A100-SXM4-80GB"},
              {"telemetry", {{"reasons", 0x20}}},
              {"fail", {{"nvmlDeviceGetCurrentClocksEventReasons", "FUNCTION_NOT_FOUND"}}}};
  write_config({{"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(nvml->read_telemetry(0).clock_event_reasons, 0x20ull);  // from ...ThrottleReasons

  dev["fail"] = {{"nvmlDeviceGetPowerUsage", "GPU_IS_LOST"}};
  write_config({{"devices", json::array({dev})}});
  nvml = ib::Nvml::load();
  try {
    nvml->read_telemetry(0);
    FAIL() << "expected NvmlError";
  } catch (const ib::NvmlError& e) {
    EXPECT_STREQ(e.what(), "nvmlDeviceGetPowerUsage: GPU is lost (15)");
  }
}

TEST_F(NvmlTelemetryTest, DeviceFacts) {
  json dev = {{"name", "NVIDIA H200"},
              {"uuid", "GPU-12345678-aaaa-bbbb-cccc-1234567890ab"},
              {"memory_mb", 143771},
              {"telemetry", {{"memory_used_mb", 512}}},
              {"cc", "9.0"},
              {"ecc", {{"current", 1}, {"pending", 0}}},
              {"virtualization_mode", 1},
              {"pcie", {{"gen", 1}, {"width", 16}, {"max_gen", 5}, {"max_width", 16}}},
              {"nvlink", {{"links", 18}, {"up", 4}}},
              {"processes", json::array({{{"pid", 4242}, {"used_mb", 1024}},
                                         {{"pid", 77}, {"used_mb", 2048}, {"gi", 1}, {"ci", 0}}})},
              {"sm", 132},
              {"attributes_on_device", true}};
  write_config({{"driver_version", "550.90.07"}, {"cuda_driver_version", 12040}, {"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  ib::DeviceFacts f = nvml->device_facts(0);
  EXPECT_TRUE(f.unsupported.empty()) << all(f.unsupported);
  EXPECT_EQ(f.name, "NVIDIA H200");
  EXPECT_EQ(f.uuid, "GPU-12345678-aaaa-bbbb-cccc-1234567890ab");
  EXPECT_EQ(f.driver_version, "550.90.07");
  EXPECT_EQ(f.cuda_driver_version, 12040);
  EXPECT_EQ(f.cc_major, 9);
  EXPECT_EQ(f.cc_minor, 0);
  EXPECT_EQ(f.memory_total_bytes, 143771ull << 20);
  EXPECT_EQ(f.memory_used_bytes, 512ull << 20);
  EXPECT_EQ(f.ecc_current, true);
  EXPECT_EQ(f.ecc_pending, false);
  EXPECT_EQ(f.virtualization, ib::VirtualizationMode::passthrough);
  EXPECT_STREQ(ib::virtualization_mode_name(*f.virtualization), "PASSTHROUGH");
  EXPECT_EQ(f.pcie_gen_current, 1u);
  EXPECT_EQ(f.pcie_width_current, 16u);
  EXPECT_EQ(f.pcie_gen_max, 5u);
  EXPECT_EQ(f.pcie_width_max, 16u);
  EXPECT_EQ(f.nvlink_links_up, 4u);
  EXPECT_EQ(f.nvlink_links_queried, 18u);
  ASSERT_TRUE(f.processes);
  ASSERT_EQ(f.processes->size(), 2u);
  EXPECT_EQ((*f.processes)[0].pid, 4242u);
  EXPECT_EQ((*f.processes)[0].used_bytes, 1024ull << 20);
  EXPECT_FALSE((*f.processes)[0].gpu_instance_id);  // 0xFFFFFFFF outside MIG
  EXPECT_EQ((*f.processes)[1].gpu_instance_id, 1u);
  EXPECT_EQ((*f.processes)[1].compute_instance_id, 0u);
  EXPECT_EQ(f.sm_count, 132u);
}

TEST_F(NvmlTelemetryTest, DeviceFactsUnsupported) {
  // Device 0: a PCIe card without NVLink ("nvlink" absent), ECC and virtualisation mode unsupported, max PCIe
  // generation unsupported, process list not permitted, no CUDA library behind NVML, attributes refused on a whole
  // GPU (NVML's documented behaviour). Device 1: an A100 with 12 NVLink links.
  json dev = {{"name", "NVIDIA L4"}, {"ecc", nullptr}, {"virtualization_mode", nullptr},
              {"pcie", {{"max_gen", nullptr}}}, {"fail", {{"nvmlDeviceGetComputeRunningProcesses_v3", 4}}}};
  write_config({{"fail", {{"nvmlSystemGetCudaDriverVersion_v2", "LIBRARY_NOT_FOUND"}}},
                {"devices", json::array({dev, {{"name", "NVIDIA A100-SXM4-40GB"}, {"nvlink", {{"links", 12}}}}})}});
  auto nvml = ib::Nvml::load();
  ib::DeviceFacts f = nvml->device_facts(0);
  EXPECT_FALSE(f.ecc_current);
  EXPECT_FALSE(f.virtualization);
  EXPECT_FALSE(f.pcie_gen_max);
  EXPECT_EQ(f.pcie_gen_current, 5u);
  EXPECT_FALSE(f.nvlink_links_up);
  EXPECT_FALSE(f.processes);
  EXPECT_FALSE(f.cuda_driver_version);
  EXPECT_FALSE(f.sm_count);
  std::string notes = all(f.unsupported);
  EXPECT_TRUE(contains(notes, "processes: nvmlDeviceGetComputeRunningProcesses_v3: Insufficient Permissions (4)"))
      << notes;
  EXPECT_TRUE(contains(notes, "cuda_driver_version: nvmlSystemGetCudaDriverVersion_v2: NVML Shared Library Not "
                              "Found (12)"))
      << notes;
  EXPECT_TRUE(contains(notes, "nvlink: nvmlDeviceGetNvLinkState: Not Supported (3)")) << notes;
  EXPECT_TRUE(contains(notes, "ecc: nvmlDeviceGetEccMode: Not Supported (3)")) << notes;
  EXPECT_TRUE(contains(notes, "sm_count: nvmlDeviceGetAttributes_v2: Not Supported (3)")) << notes;

  // 12 links (A100): links 12..17 answer INVALID_ARGUMENT and end the count; all up by default.
  ib::DeviceFacts a100 = nvml->device_facts(1);
  EXPECT_EQ(a100.nvlink_links_up, 12u);
  EXPECT_EQ(a100.nvlink_links_queried, 12u);
  ASSERT_TRUE(a100.processes);
  EXPECT_TRUE(a100.processes->empty());
}

// ---------------------------------------------------------------------------------------------------------------
// Classification

TEST(TelemetryThrottle, ThermalPowerCappedAndLowClockCases) {
  // Thermal: HwThermalSlowdown 0x40 at full clock -> throttled (0x40 is in 0xE8).
  EXPECT_TRUE(ib::is_throttled(reading(1980, 1980, 0x40), 0));
  // Power-capped but fine: SwPowerCap 0x4 at 1940 MHz = 97.98% of 1980 -> not throttled (0x4 not in 0xE8, clock
  // above 70%).
  EXPECT_FALSE(ib::is_throttled(reading(1940, 1980, 0x4), 0));
  // Low clock: 1188 MHz = 60% of 1980 < 70% -> throttled with no reason.
  EXPECT_TRUE(ib::is_throttled(reading(1188, 1980, 0), 0));
}

TEST(TelemetryThrottle, ClockBoundaryAndReasonBits) {
  // 70% of 1980 = 1386: 1386 is not below it, 1385 is.
  EXPECT_FALSE(ib::is_throttled(reading(1386, 1980, 0), 0));
  EXPECT_TRUE(ib::is_throttled(reading(1385, 1980, 0), 0));
  // The explicit maximum overrides the reading's: 1386 of 2000 -> 69.3% -> throttled.
  EXPECT_TRUE(ib::is_throttled(reading(1386, 1980, 0), 2000));
  // 0xE8 = HwSlowdown 0x8 | SwThermalSlowdown 0x20 | HwThermalSlowdown 0x40 | HwPowerBrakeSlowdown 0x80.
  for (uint64_t bit : {0x8ull, 0x20ull, 0x40ull, 0x80ull}) EXPECT_TRUE(ib::is_throttled(reading(1980, 1980, bit), 0));
  for (uint64_t bit : {0x1ull, 0x2ull, 0x4ull, 0x10ull}) EXPECT_FALSE(ib::is_throttled(reading(1980, 1980, bit), 0));
  // No SM clock: judged on reasons alone; nothing at all: not throttled.
  EXPECT_TRUE(ib::is_throttled(reading(std::nullopt, std::nullopt, 0x8), 0));
  EXPECT_FALSE(ib::is_throttled(reading(std::nullopt, std::nullopt, std::nullopt), 0));
  EXPECT_FALSE(ib::is_throttled(reading(1000, std::nullopt, 0), 0));  // no maximum known
  EXPECT_EQ(ib::reason_names(0x4C), "SwPowerCap|HwSlowdown|HwThermalSlowdown");
  EXPECT_EQ(ib::reason_names(0), "none");
  EXPECT_EQ(ib::reason_names(0x104), "SwPowerCap|0x100");
}

TEST(TelemetryFlags, SamplesCoveredByAThrottledReading) {
  // Readings at 0, 100, 200, 300 ms; only the one at 200 ms is throttled (0x40).
  std::vector<ib::TelemetrySample> tel = {sample(0, reading(1980, 1980, 0)), sample(100 * kMs, reading(1980, 1980, 0)),
                                          sample(200 * kMs, reading(1980, 1980, 0x40)),
                                          sample(300 * kMs, reading(1980, 1980, 0))};
  std::vector<int64_t> start = {10 * kMs, 190 * kMs, 210 * kMs, 310 * kMs, 250 * kMs, 100 * kMs};
  std::vector<double> dur = {0.020, 0.020, 0.020, 0.010, 0.100, 0.100};
  // [10,30]: none during, held reading 0 fine -> 0
  // [190,210]: 200 during -> 1
  // [210,230]: none during, held reading 200 (10 ms old) throttled -> 1 (0 without hold)
  // [310,320]: held reading 300 fine -> 0
  // [250,350]: 300 during (fine), held 200 throttled -> 1 (0 without hold)
  // [100,200]: 200 at the inclusive end -> 1
  EXPECT_EQ(ib::flag_throttled_samples(start, dur, tel), (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));
  ib::FlagOptions strict;
  strict.hold_ns = 0;
  EXPECT_EQ(ib::flag_throttled_samples(start, dur, tel, strict), (std::vector<uint8_t>{0, 1, 0, 0, 0, 1}));
  // A held reading older than hold_ns does not count: reading 200 is 1.8 s old at 2.0 s.
  EXPECT_EQ(ib::flag_throttled_samples({2 * kS}, {0.01}, {sample(200 * kMs, reading(1980, 1980, 0x40))}),
            (std::vector<uint8_t>{0}));
  EXPECT_THROW(ib::flag_throttled_samples({0, 1}, {0.1}, tel), std::invalid_argument);
  EXPECT_EQ(ib::flag_throttled_samples({0}, {0.1}, {}), (std::vector<uint8_t>{0}));
}

// A phase's readings: those taken during its blocks, and the one in effect at each block's start, so that the
// block's first samples, before the sampler's next reading, are judged by it (they were once never flagged).
TEST(TelemetryFlags, APhaseKeepsTheReadingInEffectAtEachBlocksStart) {
  std::vector<ib::TelemetrySample> all;
  for (int64_t t : {0, 100, 200, 300, 400, 500, 600, 700}) all.push_back(sample(t * kMs, reading(1400, 1980, 0x40)));
  // Blocks [150, 320] and [620, 700] (given out of order): 100 and 600 are in effect at their starts; 400 and 500
  // belong to neither.
  const auto mine = ib::readings_of_blocks(all, {{620 * kMs, 700 * kMs}, {150 * kMs, 320 * kMs}});
  std::vector<int64_t> t;
  for (const auto& x : mine) t.push_back(x.t_ns / kMs);
  EXPECT_EQ(t, (std::vector<int64_t>{100, 200, 300, 600, 700}));
  // A block's first sample, [150, 160], has no reading during it: it is throttled by the one in effect (100 ms).
  EXPECT_EQ(ib::flag_throttled_samples({150 * kMs, 620 * kMs}, {0.01, 0.01}, mine), (std::vector<uint8_t>{1, 1}));
  // A reading exactly at a block's start is taken during it, not before; nothing before the first reading.
  const auto at_start = ib::readings_of_blocks(all, {{200 * kMs, 210 * kMs}, {-50 * kMs, -10 * kMs}});
  ASSERT_EQ(at_start.size(), 2u);
  EXPECT_EQ(at_start[0].t_ns, 100 * kMs);
  EXPECT_EQ(at_start[1].t_ns, 200 * kMs);
  EXPECT_TRUE(ib::readings_of_blocks({}, {{0, 1}}).empty());
}

TEST(TelemetrySummary, ThrottledFractionAndTimePerReason) {
  // Readings at 0, 0.1, 0.3, 0.6 s with reasons 0x4, 0x4|0x40, 0, 0x8.
  std::vector<ib::TelemetrySample> tel = {sample(0, reading(1980, 1980, 0x4)),
                                          sample(100 * kMs, reading(1980, 1980, 0x44)),
                                          sample(300 * kMs, reading(1980, 1980, 0)),
                                          sample(600 * kMs, reading(1980, 1980, 0x8))};
  auto s = ib::summarize_throttle({1, 0, 0, 1, 1}, tel);
  EXPECT_EQ(s.samples, 5u);
  EXPECT_EQ(s.throttled_samples, 3u);
  EXPECT_DOUBLE_EQ(s.throttled_fraction, 0.6);  // 3 / 5
  EXPECT_EQ(s.readings, 4u);
  EXPECT_EQ(s.throttled_readings, 2u);  // 0x44 (has 0x40) and 0x8
  EXPECT_DOUBLE_EQ(s.covered_s, 0.6);
  EXPECT_EQ(s.reasons_seen, 0x4Cull);
  ASSERT_EQ(s.time_per_reason.size(), 8u);
  auto by = [&](uint64_t bit) {
    for (const auto& r : s.time_per_reason)
      if (r.bit == bit) return r;
    return ib::ReasonTime{};
  };
  // [0,0.1) -> 0x4; [0.1,0.3) -> 0x4 and 0x40; [0.3,0.6) -> none; the last reading starts no interval.
  EXPECT_NEAR(by(0x4).seconds, 0.3, 1e-12);  // 0.1 + 0.2
  EXPECT_EQ(by(0x4).name, "SwPowerCap");
  EXPECT_NEAR(by(0x4).fraction, 0.5, 1e-12);  // 0.3 / 0.6
  EXPECT_NEAR(by(0x40).seconds, 0.2, 1e-12);
  EXPECT_NEAR(by(0x40).fraction, 1.0 / 3.0, 1e-12);  // 0.2 / 0.6
  EXPECT_EQ(by(0x8).seconds, 0.0);
  EXPECT_EQ(s.time_per_reason[7].name, "HwPowerBrakeSlowdown");

  auto empty = ib::summarize_throttle({}, {});
  EXPECT_EQ(empty.throttled_fraction, 0.0);
  EXPECT_EQ(empty.covered_s, 0.0);
}

// ---------------------------------------------------------------------------------------------------------------
// Sustained-load verdict

// n readings at 1 Hz (t = i s) with the given SM clock per reading, max 1980, limits 700/700.
std::vector<ib::TelemetrySample> series(size_t n, const std::function<unsigned(size_t)>& clock,
                                        const std::function<uint64_t(size_t)>& reasons = [](size_t) { return 4; }) {
  std::vector<ib::TelemetrySample> out;
  for (size_t i = 0; i < n; ++i) {
    auto r = reading(clock(i), 1980, reasons(i));
    r.power_limit_w = 700;
    r.default_power_limit_w = 700;
    out.push_back(sample(static_cast<int64_t>(i) * kS, r));
  }
  return out;
}

std::vector<double> flat(size_t n, double v) { return std::vector<double>(n, v); }

TEST(TelemetryWindows, ClockMedianPowerMeanTemperatureMaxAndReasonsPerWindow) {
  const int64_t t0 = 5 * kS;  // the series starts with the first sample, not at 0
  auto r = [](unsigned clock, double power, unsigned temp, unsigned long long reasons) {
    ib::TelemetryReading x = reading(clock, 1980, reasons);
    x.power_w = power;
    x.temperature_c = temp;
    return x;
  };
  std::vector<ib::TelemetrySample> tel = {
      sample(t0 - 100 * kMs, r(100, 1, 1, 0x80)),                                  // before the series: ignored
      sample(t0, r(1980, 600, 60, 0x4)), sample(t0 + 400 * kMs, r(1900, 700, 61, 0)),
      sample(t0 + 900 * kMs, r(1000, 650, 70, 0x40)),                            // window 0: 3 readings
      sample(t0 + 1500 * kMs, r(1800, 500, 65, 0)),                              // window 1: 1 reading
      sample(t0 + 3 * kS, r(1980, 600, 60, 0))};                                 // window 3: beyond the 3 asked for
  const auto w = ib::telemetry_windows(tel, t0, 3);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].readings, 3u);
  EXPECT_DOUBLE_EQ(*w[0].median_sm_clock_mhz, 1900.0);
  EXPECT_DOUBLE_EQ(*w[0].mean_power_w, 650.0);
  EXPECT_EQ(*w[0].max_temperature_c, 70u);
  EXPECT_EQ(*w[0].reasons, 0x44ull);
  EXPECT_EQ(w[1].readings, 1u);
  EXPECT_DOUBLE_EQ(*w[1].median_sm_clock_mhz, 1800.0);
  EXPECT_EQ(*w[1].reasons, 0ull);
  EXPECT_EQ(w[2].readings, 0u);  // no reading: nothing made up
  EXPECT_FALSE(w[2].median_sm_clock_mhz || w[2].mean_power_w || w[2].max_temperature_c || w[2].reasons);
}

TEST(SustainVerdict, PassOnSteadyRunWithSwPowerCap) {
  auto v = ib::sustained_load_verdict(series(300, [](size_t) { return 1980u; }), flat(300, 100.0));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
  EXPECT_EQ(v.median_sm_clock_last_half_mhz, 1980.0);
  EXPECT_EQ(v.max_sm_clock_mhz, 1980u);
  EXPECT_EQ(v.fail_reason_fraction, 0.0);  // 0x4 is not in 0xE8
  EXPECT_EQ(v.compared_windows, 60u);      // 300 windows >= 2 x 60: first and last 60
  EXPECT_FALSE(v.short_run);
  EXPECT_EQ(v.throughput_drop, 0.0);
  EXPECT_STREQ(ib::load_verdict_name(v.verdict), "pass");
}

TEST(SustainVerdict, FailOnLowMedianClockOverTheLastHalf) {
  // 300 readings, t = 0..299 s: t_mid = 149.5 s, the last half is i = 150..299, all at 1300 MHz.
  // 1300 / 1980 = 65.66% < 70% -> FAIL.
  auto v = ib::sustained_load_verdict(series(300, [](size_t i) { return i < 150 ? 1980u : 1300u; }), flat(300, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::fail) << all(v.evidence);
  EXPECT_EQ(v.median_sm_clock_last_half_mhz, 1300.0);
  EXPECT_TRUE(contains(v.evidence[0], "65.7% of max 1980 MHz (FAIL")) << v.evidence[0];
  // At exactly 70% (1386 MHz) it is not below: PASS.
  v = ib::sustained_load_verdict(series(300, [](size_t i) { return i < 150 ? 1980u : 1386u; }), flat(300, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
  // The first half does not count: low clocks early, full clocks late -> PASS.
  v = ib::sustained_load_verdict(series(300, [](size_t i) { return i < 150 ? 1000u : 1980u; }), flat(300, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
}

TEST(SustainVerdict, FailReasonsOnePercentBoundary) {
  auto full = [](size_t) { return 1980u; };
  // 100 readings, 1 with HwSlowdown (0x8): 1 / 100 = 1.00%, not more than 1% -> PASS.
  auto v = ib::sustained_load_verdict(series(100, full, [](size_t i) { return i == 50 ? 0x8u : 0x4u; }),
                                      flat(100, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
  EXPECT_DOUBLE_EQ(*v.fail_reason_fraction, 0.01);
  // 2 with 0x8: 2 / 100 = 2.00% > 1% -> FAIL.
  v = ib::sustained_load_verdict(series(100, full, [](size_t i) { return i == 50 || i == 60 ? 0x8u : 0x4u; }),
                                 flat(100, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::fail) << all(v.evidence);
  EXPECT_DOUBLE_EQ(*v.fail_reason_fraction, 0.02);
  EXPECT_TRUE(contains(all(v.evidence), "0xE8 reasons (HwSlowdown) active in 2 of 100 readings = 2.00% (FAIL"))
      << all(v.evidence);
}

TEST(SustainVerdict, WarnOnThroughputDrop) {
  auto full = [](size_t) { return 1980u; };
  // 180 windows: first 60 at 100, middle 60 at 100, last 60 at 94: 1 - 94/100 = 6% > 5% -> WARN.
  std::vector<double> tp = flat(120, 100);
  tp.insert(tp.end(), 60, 94.0);
  auto v = ib::sustained_load_verdict(series(180, full), tp);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::warn) << all(v.evidence);
  EXPECT_DOUBLE_EQ(*v.first_throughput, 100.0);
  EXPECT_DOUBLE_EQ(*v.last_throughput, 94.0);
  EXPECT_NEAR(*v.throughput_drop, 0.06, 1e-12);
  // Exactly 5% lower (95): not more than 5% -> PASS.
  std::fill(tp.begin() + 120, tp.end(), 95.0);
  v = ib::sustained_load_verdict(series(180, full), tp);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
}

TEST(SustainVerdict, ShortRunComparesQuartersAndSaysSo) {
  // 80 windows < 2 x 60: k = 80 / 4 = 20; first 20 at 100, last 20 at 90: 10% lower -> WARN.
  std::vector<double> tp = flat(60, 100);
  tp.insert(tp.end(), 20, 90.0);
  auto v = ib::sustained_load_verdict(series(80, [](size_t) { return 1980u; }), tp);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::warn) << all(v.evidence);
  EXPECT_TRUE(v.short_run);
  EXPECT_EQ(v.compared_windows, 20u);
  EXPECT_NEAR(*v.throughput_drop, 0.10, 1e-12);
  EXPECT_TRUE(contains(all(v.evidence), "run shorter than 120 s: compared the first and last 25% (20 of 80 windows"))
      << all(v.evidence);
  // 3 windows: too few to compare (k = 0) -> not judged, still PASS on the rest.
  v = ib::sustained_load_verdict(series(3, [](size_t) { return 1980u; }), {100, 50, 10});
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
  EXPECT_FALSE(v.throughput_drop);
}

TEST(SustainVerdict, WarnOnPowerLimitBelowDefault) {
  auto tel = series(120, [](size_t) { return 1980u; });
  tel[70].r.power_limit_w = 600;  // lowest enforced limit 600 W < default 700 W -> WARN
  auto v = ib::sustained_load_verdict(tel, flat(120, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::warn) << all(v.evidence);
  EXPECT_EQ(v.power_limit_w, 600.0);
  EXPECT_EQ(v.default_power_limit_w, 700.0);
  EXPECT_TRUE(contains(all(v.evidence), "enforced power limit 600 W vs default 700 W (WARN: below the default: "
                                        "power-locked)"));
}

TEST(SustainVerdict, FailWinsOverWarnAndNoDataIsInconclusive) {
  auto tel = series(120, [](size_t) { return 1000u; });  // 1000/1980 = 50.5% -> FAIL
  tel[0].r.power_limit_w = 500;                          // also WARN
  auto v = ib::sustained_load_verdict(tel, flat(120, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::fail);
  std::vector<ib::TelemetrySample> blind = {sample(0, ib::TelemetryReading{}), sample(kS, ib::TelemetryReading{})};
  v = ib::sustained_load_verdict(blind, flat(120, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::inconclusive) << all(v.evidence);
  EXPECT_STREQ(ib::load_verdict_name(v.verdict), "inconclusive");
}

TEST(SustainVerdict, ThresholdsAreOptions) {
  ib::SustainThresholds th;
  th.max_throughput_drop = 0.10;  // 6% drop is fine now
  th.min_clock_fraction = 0.5;    // 1300/1980 = 65.7% is fine now
  std::vector<double> tp = flat(120, 100);
  tp.insert(tp.end(), 60, 94.0);
  auto v = ib::sustained_load_verdict(series(180, [](size_t i) { return i < 90 ? 1980u : 1300u; }), tp, th);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
}

// Each rule of docs/design.md section 5 on its own, with its evidence line, at and around its boundary. The verdict
// always names the rules in the same order: clock, reasons, throughput, power limit.

// Throughput windows: for each {n, value}, n windows at that value, in order.
std::vector<double> levels(std::initializer_list<std::pair<size_t, double>> runs) {
  std::vector<double> out;
  for (const auto& [n, value] : runs) out.insert(out.end(), n, value);
  return out;
}

TEST(SustainRules, EvidenceNamesEveryRuleInOrderWithItsNumbers) {
  // 300 readings at 1980 of 1980 MHz with SwPowerCap only, 300 windows at 100, limits 700/700: every rule ok.
  auto v = ib::sustained_load_verdict(series(300, [](size_t) { return 1980u; }), flat(300, 100.0));
  ASSERT_EQ(v.evidence.size(), 4u) << all(v.evidence);
  EXPECT_EQ(v.evidence[0], "median SM clock over the last half 1980 MHz = 100.0% of max 1980 MHz (ok: FAIL below 70%)");
  EXPECT_EQ(v.evidence[1], "0xE8 reasons active in 0 of 300 readings = 0.00% (ok: FAIL above 1.00%)");
  EXPECT_EQ(v.evidence[2], "throughput 100 at the end vs 100 at the start: 0.00% lower (ok: WARN above 5.00% lower; "
                           "compared the first and last 60 windows of 1 s)");
  EXPECT_EQ(v.evidence[3], "enforced power limit 700 W vs default 700 W (ok)");
}

TEST(SustainRules, ClockExactlySeventyPercentIsNotBelow) {
  // The rule FAILs when the median is *below* 70% of the maximum: 0.70 x 1980 = 1386 MHz exactly (in doubles too).
  // Last half (i = 150..299) at 1386: 1386 / 1980 = 70.0%, not below -> ok (the boundary falls on the ok side).
  auto v = ib::sustained_load_verdict(series(300, [](size_t i) { return i < 150 ? 1980u : 1386u; }), flat(300, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass);
  EXPECT_EQ(v.evidence[0], "median SM clock over the last half 1386 MHz = 70.0% of max 1980 MHz (ok: FAIL below 70%)");
  // One MHz lower: 1385 / 1980 = 69.95% -> FAIL.
  v = ib::sustained_load_verdict(series(300, [](size_t i) { return i < 150 ? 1980u : 1385u; }), flat(300, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::fail);
  EXPECT_EQ(v.evidence[0], "median SM clock over the last half 1385 MHz = 69.9% of max 1980 MHz (FAIL: below 70%)");
}

TEST(SustainRules, LastHalfStartsAtTheMidpointInclusiveAndMaxIsTheHighestSeen) {
  // Readings at t = 0, 1, 2 s: t_mid = 0 + (2 - 0) / 2 = 1 s, so the last half is t >= 1 s: {1000, 1980} with median
  // (1000 + 1980) / 2 = 1490 (an exclusive midpoint would give 1980; the whole run, 1980).
  std::vector<ib::TelemetrySample> tel = {sample(0, reading(1980, 1800, 0)), sample(kS, reading(1000, 1980, 0)),
                                          sample(2 * kS, reading(1980, 1800, 0))};
  auto v = ib::sustained_load_verdict(tel, {});
  EXPECT_EQ(v.median_sm_clock_last_half_mhz, 1490.0);
  // The maximum is the highest reported (1980), not the last (1800): 1490 / 1980 = 75.25% -> ok (against 1800 it
  // would be 82.8%, so the number tells them apart).
  EXPECT_EQ(v.max_sm_clock_mhz, 1980u);
  EXPECT_TRUE(contains(v.evidence[0], "1490 MHz = 75.3% of max 1980 MHz (ok")) << v.evidence[0];
  // Without any maximum the rule is not evaluated (and it is the only data: INCONCLUSIVE).
  for (auto& s : tel) s.r.max_sm_clock_mhz.reset();
  for (auto& s : tel) s.r.clock_event_reasons.reset();
  v = ib::sustained_load_verdict(tel, {});
  EXPECT_EQ(v.evidence[0], "SM clock criterion not evaluated: maximum SM clock unsupported");
  EXPECT_EQ(v.verdict, ib::LoadVerdict::inconclusive);
}

TEST(SustainRules, ReasonFractionExactlyOnePercentIsNotMore) {
  auto full = [](size_t) { return 1980u; };
  // The rule FAILs when 0xE8 reasons are active in *more* than 1% of the readings: 1 of 100 = 1.00% (1 / 100 == 0.01
  // in doubles) is not more -> ok (the boundary falls on the ok side).
  auto v = ib::sustained_load_verdict(series(100, full, [](size_t i) { return i == 7 ? 0x40u : 0u; }), {});
  EXPECT_EQ(v.evidence[1],
            "0xE8 reasons (HwThermalSlowdown) active in 1 of 100 readings = 1.00% (ok: FAIL above 1.00%)");
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass);
  // The fraction is of the readings that report reasons: with 50 of the 100 reporting none, 1 of 50 = 2.00% -> FAIL
  // (counting all 100 readings would give 1.00% and pass).
  auto tel = series(100, full, [](size_t i) { return i == 7 ? 0x40u : 0u; });
  for (size_t i = 50; i < 100; ++i) tel[i].r.clock_event_reasons.reset();
  v = ib::sustained_load_verdict(tel, {});
  EXPECT_DOUBLE_EQ(*v.fail_reason_fraction, 0.02);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::fail);
  // SwPowerCap (0x4) and SyncBoost (0x10) are outside 0xE8: in every reading, still 0 of 100.
  v = ib::sustained_load_verdict(series(100, full, [](size_t) { return 0x14u; }), {});
  EXPECT_EQ(*v.fail_reason_fraction, 0.0);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass);
}

TEST(SustainRules, ThroughputComparesOneCompareWindowAtEachEnd) {
  auto full = [](size_t) { return 1980u; };
  // window_s 0.5 s: a 60 s compare window is 60 / 0.5 = 120 windows. 300 windows: first 60 at 100, next 60 at 90,
  // 120 in the middle at 100, then 60 at 100 and the last 60 at 90. First 120: mean 95; last 120: mean 95 -> 0.00%
  // lower, ok. (Comparing 60 windows instead would give 100 vs 90 = 10% lower and WARN.)
  const std::vector<double> tp = levels({{60, 100}, {60, 90}, {120, 100}, {60, 90}});
  ib::SustainThresholds th;
  th.window_s = 0.5;
  auto v = ib::sustained_load_verdict(series(300, full), tp, th);
  EXPECT_EQ(v.compared_windows, 120u);
  EXPECT_FALSE(v.short_run);
  EXPECT_DOUBLE_EQ(*v.first_throughput, 95.0);
  EXPECT_DOUBLE_EQ(*v.last_throughput, 95.0);
  EXPECT_EQ(v.verdict, ib::LoadVerdict::pass) << all(v.evidence);
  EXPECT_TRUE(contains(v.evidence[2], "compared the first and last 120 windows of 0.5 s")) << v.evidence[2];
  // Exactly 5% lower is not more than 5% (100 x 0.95 == 95 in doubles): ok; 5.1% lower: WARN.
  v = ib::sustained_load_verdict(series(120, full), levels({{60, 100}, {60, 95}}));
  EXPECT_TRUE(contains(v.evidence[2], "5.00% lower (ok: WARN above 5.00% lower")) << v.evidence[2];
  v = ib::sustained_load_verdict(series(120, full), levels({{60, 100}, {60, 94.9}}));
  EXPECT_TRUE(contains(v.evidence[2], "5.10% lower (WARN: more than 5.00% lower")) << v.evidence[2];
  EXPECT_EQ(v.verdict, ib::LoadVerdict::warn);
}

TEST(SustainRules, WarnRulesCannotJudgeThrottlingAlone) {
  // No SM clock and no reasons: the run is INCONCLUSIVE even though the power limit is locked (a WARN rule) —
  // throttling, the question the test asks, was never judged.
  std::vector<ib::TelemetrySample> tel;
  for (int i = 0; i < 120; ++i) {
    ib::TelemetryReading r;
    r.power_limit_w = 600;
    r.default_power_limit_w = 700;
    tel.push_back(sample(i * kS, r));
  }
  auto v = ib::sustained_load_verdict(tel, flat(120, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::inconclusive) << all(v.evidence);
  EXPECT_EQ(v.evidence[0], "SM clock criterion not evaluated: no SM clock readings");
  EXPECT_EQ(v.evidence[1], "clock-event reasons criterion not evaluated: no reason readings");
  // Reasons alone are enough to judge throttling: then the power-limit WARN counts.
  for (auto& s : tel) s.r.clock_event_reasons = 0;
  v = ib::sustained_load_verdict(tel, flat(120, 100));
  EXPECT_EQ(v.verdict, ib::LoadVerdict::warn) << all(v.evidence);
  EXPECT_EQ(v.evidence[3], "enforced power limit 600 W vs default 700 W (WARN: below the default: power-locked)");
}

// ---------------------------------------------------------------------------------------------------------------
// Sampler (fake NVML)

class TelemetrySamplerTest : public ib_test::FakeNvmlEnv {};

TEST_F(TelemetrySamplerTest, SamplesAtAboutTheRateBetweenStartAndStop) {
  write_config({{"devices", json::array({{{"name", "NVIDIA H200"}, {"telemetry", h200_series()}}})}});
  auto nvml = ib::Nvml::load();
  ib::TelemetrySampler sampler(*nvml, 0, 50.0);  // 20 ms period
  EXPECT_FALSE(sampler.running());
  sampler.start();
  EXPECT_THROW(sampler.start(), std::logic_error);
  ASSERT_TRUE(sampler.wait_for_samples(10, std::chrono::seconds(10)));
  sampler.stop();
  EXPECT_FALSE(sampler.running());
  auto s = sampler.samples();
  ASSERT_GE(s.size(), 10u);
  EXPECT_EQ(sampler.sample_count(), s.size());  // nothing more after stop()
  EXPECT_FALSE(sampler.error());
  for (size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i].t_ns, s[i - 1].t_ns);
  double mean_interval_ms = static_cast<double>(s.back().t_ns - s.front().t_ns) / 1e6 / (s.size() - 1);
  EXPECT_GE(mean_interval_ms, 15.0);   // never faster than the rate (20 ms, minus timer jitter)
  EXPECT_LE(mean_interval_ms, 100.0);  // and not far slower, even on a loaded machine
  // The series: reading 0 is the first entry, reading 2 the thermal one.
  EXPECT_EQ(s[0].r.clock_event_reasons, 4ull);
  EXPECT_EQ(s[2].r.clock_event_reasons, 0x40ull);
  EXPECT_EQ(s[3].r.sm_clock_mhz, 1188u);
  sampler.stop();  // idempotent
}

TEST_F(TelemetrySamplerTest, FirstErrorIsRecordedAndSamplingStops) {
  json series = h200_series();
  series.push_back({{"fail", {{"nvmlDeviceGetPowerUsage", "GPU_IS_LOST"}}}});  // entry 4 fails, and stays
  write_config({{"devices", json::array({{{"name", "NVIDIA H200"}, {"telemetry", series}}})}});
  auto nvml = ib::Nvml::load();
  ib::TelemetrySampler sampler(*nvml, 0, 200.0);
  sampler.start();
  // Readings 0..3 succeed, reading 4 throws inside the thread: the wait ends when the sampler stops itself.
  EXPECT_FALSE(sampler.wait_for_samples(100, std::chrono::seconds(10)));
  EXPECT_FALSE(sampler.running());
  EXPECT_EQ(sampler.sample_count(), 4u);
  ASSERT_TRUE(sampler.error());
  EXPECT_EQ(*sampler.error(), "nvmlDeviceGetPowerUsage: GPU is lost (15)");
  sampler.stop();
}

TEST_F(TelemetrySamplerTest, UnsupportedUtilisationIsNotedOnce) {
  // A MIG-enabled GPU: NVML gives no utilisation.
  json dev = {{"name", "NVIDIA H200"}, {"fail", {{"nvmlDeviceGetUtilizationRates", "NOT_SUPPORTED"}}}};
  write_config({{"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  ib::TelemetrySampler sampler(*nvml, 0, 100.0);
  sampler.start();
  ASSERT_TRUE(sampler.wait_for_samples(3, std::chrono::seconds(10)));
  sampler.stop();
  EXPECT_FALSE(sampler.error());
  for (const auto& s : sampler.samples()) {
    EXPECT_FALSE(s.r.util_gpu_pct);
    EXPECT_TRUE(s.r.unsupported.empty());
  }
  EXPECT_EQ(sampler.notes(),
            (std::vector<std::string>{"utilization: nvmlDeviceGetUtilizationRates: Not Supported (3)"}));
}

TEST_F(TelemetrySamplerTest, RejectsABadRate) {
  write_config({{"devices", json::array({{{"name", "NVIDIA H200"}}})}});
  auto nvml = ib::Nvml::load();
  EXPECT_THROW(ib::TelemetrySampler(*nvml, 0, 0.0), std::invalid_argument);
  EXPECT_THROW(ib::TelemetrySampler(*nvml, 0, -1.0), std::invalid_argument);
}

}  // namespace
