// meta.devices[] (harness/vet/devices.h): the host from /proc text, a GPU through the fake NVML.
#include "harness/vet/devices.h"
#include "harness/core/host.h"
#include "tests/unit/fake_nvml_env.h"

#include <gtest/gtest.h>

namespace {

using nlohmann::json;

TEST(Devices, CpuModelIsTheFirstModelNameLine) {
  const std::string x86 =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor  \n\n"
      "processor\t: 1\nmodel name\t: something else\n";
  EXPECT_EQ(ib::parse_cpu_model(x86), "AMD EPYC 9654 96-Core Processor");
  // arm64 kernels have no "model name"; older ones say "Processor".
  EXPECT_EQ(ib::parse_cpu_model("processor : 0\nBogoMIPS : 50.00\nProcessor : AArch64 Processor rev 1\n"),
            "AArch64 Processor rev 1");
  EXPECT_EQ(ib::parse_cpu_model("processor : 0\nBogoMIPS : 50.00\n"), "");
  EXPECT_EQ(ib::parse_cpu_model(""), "");
}

TEST(Devices, CudaVersionFromNvmlsInteger) {
  EXPECT_EQ(ib::cuda_version_text(12040), "12.4");
  EXPECT_EQ(ib::cuda_version_text(11080), "11.8");
  EXPECT_EQ(ib::cuda_version_text(12000), "12.0");
}

TEST(Devices, TheHostRecordCarriesCoresMemoryAndNode) {
  ib::HostFacts h;
  h.online_cores = 8;
  h.usable_cores = 2;
  h.memory_total_bytes = 16ULL << 30;
  const ib::DeviceRecord d = ib::host_device_record(h, "Intel Xeon", "node3");
  EXPECT_EQ(d.kind, ib::DeviceKind::host);
  EXPECT_EQ(d.name, "Intel Xeon");
  EXPECT_EQ(d.node, "node3");
  EXPECT_EQ(d.cores_online, 8u);
  EXPECT_EQ(d.cores_usable, 2u);
  EXPECT_EQ(d.memory_total_bytes, 16ULL << 30);
  EXPECT_FALSE(d.uuid);
  EXPECT_TRUE(d.unsupported.empty());
  EXPECT_EQ(ib::host_device_record(h, "", "n").name, "unknown CPU");
}

TEST(Devices, TheHostBackendDescribesTheHostOnly) {
  const auto devices = ib::describe_run_devices(ib::Backend::host, {0}, nullptr, "");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].kind, ib::DeviceKind::host);
  EXPECT_EQ(devices[0].node, ib::host_name());
  EXPECT_GT(*devices[0].cores_online, 0u);
}

TEST(Devices, WithoutNvmlEachGpuSaysWhy) {
  const auto devices = ib::describe_run_devices(ib::Backend::cuda, {1, 0, 1}, nullptr, "NVML not available: x");
  ASSERT_EQ(devices.size(), 2u);  // each index once, in order
  EXPECT_EQ(devices[0].index, 1);
  EXPECT_EQ(devices[1].index, 0);
  EXPECT_EQ(devices[0].error, "NVML not available: x");
  EXPECT_EQ(devices[0].kind, ib::DeviceKind::gpu);
}

class DevicesNvmlTest : public ib_test::FakeNvmlEnv {};

TEST_F(DevicesNvmlTest, AGpuRecordHoldsWhatNvmlSays) {
  json dev = {{"name", "NVIDIA H200"},
              {"uuid", "GPU-abc"},
              {"memory_mb", 143771},
              {"compute_mode", 3},
              {"vbios", "96.00.99.00.01"},
              {"ecc", {{"current", 1}, {"pending", 0}}},
              {"mig", {{"supported", true}, {"current", 0}, {"pending", 1}}},
              {"telemetry", {{{"power_limit_w", 600}, {"default_power_limit_w", 700}}}},
              {"pcie", {{"gen", 4}, {"width", 8}, {"max_gen", 5}, {"max_width", 16}}}};
  write_config({{"devices", json::array({dev})}, {"driver_version", "560.35.03"}, {"cuda_driver_version", 12060}});
  auto nvml = ib::Nvml::load();
  const ib::DeviceRecord d = ib::gpu_device_record(*nvml, 0, "gpu-node-1");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.kind, ib::DeviceKind::gpu);
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.uuid, "GPU-abc");
  EXPECT_EQ(d.node, "gpu-node-1");
  EXPECT_EQ(d.driver_version, "560.35.03");
  EXPECT_EQ(d.cuda_version, "12.6");
  EXPECT_EQ(d.vbios_version, "96.00.99.00.01");
  EXPECT_EQ(d.compute_mode, std::string(ib::compute_mode_name(ib::ComputeMode::exclusive_process)));
  ASSERT_TRUE(d.ecc);
  EXPECT_TRUE(d.ecc->current);
  EXPECT_FALSE(d.ecc->pending);
  ASSERT_TRUE(d.mig_mode);
  EXPECT_FALSE(d.mig_mode->current);
  EXPECT_TRUE(d.mig_mode->pending);
  EXPECT_EQ(d.power_limit_w, 600.0);
  EXPECT_EQ(d.default_power_limit_w, 700.0);
  EXPECT_EQ(d.pcie_gen_current, 4u);
  EXPECT_EQ(d.pcie_width_current, 8u);
  EXPECT_EQ(d.pcie_gen_max, 5u);
  EXPECT_EQ(d.pcie_width_max, 16u);
  EXPECT_EQ(d.memory_total_bytes, 143771ULL << 20);
}

TEST_F(DevicesNvmlTest, WhatNvmlDoesNotReportIsAbsentAndNamed) {
  json dev = {{"name", "NVIDIA A10"}, {"vbios", nullptr}, {"ecc", nullptr}};
  write_config({{"devices", json::array({dev})}});
  auto nvml = ib::Nvml::load();
  const ib::DeviceRecord d = ib::gpu_device_record(*nvml, 0, "n");
  EXPECT_FALSE(d.vbios_version);
  EXPECT_FALSE(d.ecc);
  bool named = false;
  for (const auto& u : d.unsupported) named |= u.rfind("vbios_version: nvmlDeviceGetVbiosVersion", 0) == 0;
  EXPECT_TRUE(named);
  // A device index NVML does not have: the error is recorded, not thrown.
  const ib::DeviceRecord missing = ib::gpu_device_record(*nvml, 5, "n");
  EXPECT_FALSE(missing.error.empty());
  EXPECT_EQ(missing.index, 5);
}

}  // namespace
