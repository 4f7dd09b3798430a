// Small helpers every unit test file may use: tolerances, time units and string checks. One definition
// here, so files that share a unity-build batch (CMAKE_UNITY_BUILD) do not define them twice.
#pragma once

#include <cstdint>
#include <string>

namespace ib::test {

inline constexpr double kTol = 1e-12;
inline constexpr std::int64_t kMs = 1'000'000;
inline constexpr std::int64_t kSec = 1'000'000'000;

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace ib::test
