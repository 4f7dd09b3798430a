// libFuzzer target: the scenario parser (harness/core/json_input + harness/scenario). Any input must end
// in a parsed scenario or an InputError (exit 2); anything else (a crash, a sanitizer report, another
// exception, a hang) is a finding. Seeds: tests/fuzz/corpus/scenario (the shipped scenarios and command
// tenants of each metric).
#include "harness/core/errors.h"
#include "harness/core/json_input.h"
#include "harness/scenario/scenario.h"
#include "kernels/command/command_workload.h"
#include "harness/exec/cuda_module.h"
#include "kernels/host/host_workloads.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

const ib::Registry& registry() {
  static const ib::Registry r = [] {
    ib::Registry reg;
    ib::register_host_workloads(reg);
    ib::register_cuda_workloads(reg);
    ib::register_command_workload(reg);  // command tenants: argv, env, the stdout metric's regex (PCRE2)
    return reg;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ib::ValidationContext ctx{&registry(), ib::Backend::host, {0, 1}};
  for (const bool lenient : {false, true}) {
    ib::ScenarioOverrides ov;
    ov.lenient_placement = lenient;
    try {
      const ib::Scenario s = ib::parse_scenario(ib::parse_json_text(text, "fuzz.json"), "fuzz.json", ov, ctx);
      if (s.tenants.empty() || s.name.empty()) __builtin_trap();  // a parsed scenario always has both
    } catch (const ib::InputError&) {
    }
  }
  return 0;
}
