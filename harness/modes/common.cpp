// Pieces every plan shares (plan.h), and the device facts of ModeContext as the results record them.
#include "harness/modes/plan.h"

#include <map>
#include <string>

namespace ib {

std::vector<std::size_t> all_tenants(const Scenario& s) {
  std::vector<std::size_t> all(s.tenants.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

std::vector<std::vector<std::size_t>> one_process_per_tenant(const Scenario& s) {
  std::vector<std::vector<std::size_t>> p;
  for (std::size_t i = 0; i < s.tenants.size(); ++i) p.push_back({i});
  return p;
}

std::vector<BlockSpec> exclusive_blocks(const Scenario& s, std::size_t set) {
  std::vector<BlockSpec> b;
  for (std::size_t i = 0; i < s.tenants.size(); ++i) b.push_back({Phase::exclusive, set, {i}});
  return b;
}

PhaseResult reference_to(const PhaseResult& p, PhaseSource source) {
  PhaseResult r = p;
  r.source = source;
  r.start_ns.clear();
  r.duration_s.clear();
  r.block.clear();
  r.in_window.clear();
  r.counted.clear();
  r.outlier.clear();
  r.coverage.clear();
  r.latencies_s.clear();
  r.latency_count.clear();
  r.counter_samples.clear();
  return r;
}

void alone_is_exclusive(Plan& p) {
  p.after = [](RunResult& r) {
    for (auto& t : r.tenants) t.alone = reference_to(t.exclusive, PhaseSource::exclusive);
  };
}

ModeDeviceFacts mode_device_facts(const nlohmann::json& device) {
  using Text = std::optional<std::string> ModeDeviceFacts::*;
  static const std::map<std::string, Text> texts = {
      {"nvml", &ModeDeviceFacts::nvml},     {"name", &ModeDeviceFacts::name},
      {"uuid", &ModeDeviceFacts::uuid},     {"compute_mode", &ModeDeviceFacts::compute_mode},
      {"compute_policy", &ModeDeviceFacts::compute_policy}, {"measures", &ModeDeviceFacts::measures}};
  ModeDeviceFacts f;
  if (!device.is_object()) return f;
  for (const auto& [key, value] : device.items()) {
    const auto text = texts.find(key);
    if (text != texts.end() && value.is_string()) {
      f.*(text->second) = value.get<std::string>();
    } else if (key == "mig_mode" && value.is_object()) {
      f.mig_mode = MigModeState{value.value("current", false), value.value("pending", false)};
    } else if (key == "mig_created" && value.is_array()) {
      f.mig_created.emplace();
      for (const auto& c : value)
        f.mig_created->push_back({c.value("profile", std::string()), c.value("gpu_instance_id", 0u),
                                  c.value("compute_instance_id", 0u)});
    } else {
      f.unmapped[key] = value;
    }
  }
  return f;
}

}  // namespace ib
