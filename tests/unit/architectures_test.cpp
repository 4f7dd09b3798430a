// The start-up architecture check (kernels/cuda/architectures.h): which GPUs a build's kernels run on.
#include "kernels/cuda/architectures.h"

#include <gtest/gtest.h>

namespace ib::cuda {
namespace {

std::vector<BuiltArchitecture> built(const std::string& list) {
  const auto parsed = parse_architectures(list);
  EXPECT_TRUE(parsed.has_value()) << list;
  return parsed.value_or(std::vector<BuiltArchitecture>{});
}

TEST(Architectures, ParsesCMakeEntries) {
  const auto a = built("80-real;90a-real;100-virtual;120");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].arch, 80);
  EXPECT_TRUE(a[0].cubin);
  EXPECT_FALSE(a[0].ptx);
  EXPECT_EQ(a[1].suffix, 'a');
  EXPECT_FALSE(a[2].cubin);
  EXPECT_TRUE(a[2].ptx);
  EXPECT_TRUE(a[3].cubin && a[3].ptx);
  EXPECT_EQ(built("80-real,90-real,120").size(), 3u);  // as the build passes it
  for (const char* bad : {"native", "all-major", "", "90-fast", "9", "sm_90"})
    EXPECT_FALSE(parse_architectures(bad).has_value()) << bad;
}

TEST(Architectures, AnAmpereGpuAgainstAHopperOnlyBuildIsRefusedWithTheRebuildLine) {
  const auto why = architecture_refusal("NVIDIA A100-SXM4-80GB", 0, 80, built("90"));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why,
            "GPU 0 (NVIDIA A100-SXM4-80GB, compute capability 8.0) cannot run this build's kernels, built for "
            "sm_90 + PTX compute_90; rebuild for it: cmake --preset default -DCMAKE_CUDA_ARCHITECTURES=80 && "
            "cmake --build --preset default (or -DCMAKE_CUDA_ARCHITECTURES=native on this machine)");
}

TEST(Architectures, HopperAndALaterGpuThroughPtxAreAccepted) {
  EXPECT_FALSE(architecture_refusal("NVIDIA H200", 0, 90, built("90-real")).has_value());
  // 10.0 has no cubin in "80-real;90": it runs the compute_90 PTX, compiled by the driver.
  EXPECT_FALSE(architecture_refusal("NVIDIA B200", 1, 100, built("80-real;90")).has_value());
  // Without the PTX it cannot.
  EXPECT_TRUE(architecture_refusal("NVIDIA B200", 1, 100, built("80-real;90-real")).has_value());
}

TEST(Architectures, CubinsRunWithinTheirMajorOnly) {
  const auto a = built("80-real");
  EXPECT_TRUE(architecture_covered(86, a));   // A10G, RTX 3090
  EXPECT_TRUE(architecture_covered(89, a));   // L4, L40S, RTX 4090
  EXPECT_FALSE(architecture_covered(90, a));  // H100: another major, no PTX
  EXPECT_FALSE(architecture_covered(75, a));  // older than the cubin
  EXPECT_FALSE(architecture_covered(86, built("89-real")));
}

TEST(Architectures, ArchSpecificCodeRunsOnItsOwnArchitectureOnly) {
  EXPECT_TRUE(architecture_covered(90, built("90a")));
  EXPECT_FALSE(architecture_covered(100, built("90a")));  // 'a' PTX is not forward-compatible
  EXPECT_TRUE(architecture_covered(103, built("100f-real")));
  EXPECT_FALSE(architecture_covered(120, built("100f")));
}

TEST(Architectures, TheDefaultSetCoversEveryGpuFromAmpereOn) {
  // What cmake/cuda.cmake chooses with CUDA 13: every major from sm_80, PTX of the newest.
  const auto a = built("80-real;90-real;100-real;110-real;120");
  for (int cc : {80, 86, 87, 89, 90, 100, 103, 110, 120, 121, 130}) EXPECT_TRUE(architecture_covered(cc, a)) << cc;
  EXPECT_FALSE(architecture_covered(75, a));
  EXPECT_EQ(architectures_text(a), "sm_80, sm_90, sm_100, sm_110, sm_120 + PTX compute_120");
}

}  // namespace
}  // namespace ib::cuda
