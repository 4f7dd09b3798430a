// Which GPUs a build's kernels can run on (plain C++, no CUDA): the architectures the build compiled
// (CMAKE_CUDA_ARCHITECTURES, e.g. "80-real;90-real;100-real;120") against a GPU's compute capability,
// by CUDA's compatibility rules:
//   - a cubin for sm_XY runs on a GPU of the same major X and minor >= Y (sm_80 runs on 8.6 and 8.9);
//     an arch-specific cubin (sm_90a) runs only on exactly 9.0; a family one (sm_100f) on major 10,
//     minor >= its own;
//   - PTX for compute_XY is compiled by the driver for any GPU of capability >= X.Y (not for 'a' PTX).
// A GPU that no entry covers fails its first kernel launch with "no kernel image is available for
// execution on the device"; the tool refuses it at start-up instead, in one line (exit 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ib::cuda {

// One entry of CMAKE_CUDA_ARCHITECTURES: "90" (cubin + PTX), "90-real" (cubin), "90-virtual" (PTX),
// "90a-real" (arch-specific).
struct BuiltArchitecture {
  int arch = 0;            // major*10 + minor, e.g. 90
  char suffix = 0;         // 0, 'a' (arch-specific) or 'f' (family-specific)
  bool cubin = true;       // machine code for sm_<arch>
  bool ptx = false;        // PTX for compute_<arch>, compiled by the driver for newer GPUs
};

// Parses a CMake architecture list ("80-real;90", or with commas); nullopt when an entry is not a number with an
// optional suffix (the special values "native", "all", "all-major" are resolved at build time and
// cannot be checked here).
std::optional<std::vector<BuiltArchitecture>> parse_architectures(const std::string& list);

// Whether a GPU of compute capability `cc` (major*10 + minor) can run code built for `built`.
bool architecture_covered(int cc, const std::vector<BuiltArchitecture>& built);

// "sm_80, sm_90, sm_120 + PTX compute_120": the built set in words.
std::string architectures_text(const std::vector<BuiltArchitecture>& built);

// nullopt when the GPU can run the build's kernels, else the one-line refusal naming the GPU, its
// compute capability, the built set and the rebuild command.
std::optional<std::string> architecture_refusal(const std::string& gpu_name, int device, int cc,
                                                const std::vector<BuiltArchitecture>& built);

}  // namespace ib::cuda
