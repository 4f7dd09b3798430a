#include "harness/mode_setup.h"

#include "harness/analysis.h"

#include <fstream>
#include <set>

namespace ib {

std::optional<std::string> timeslice_refusal(ComputeMode mode, int device) {
  if (mode == ComputeMode::exclusive_process || mode == ComputeMode::prohibited)
    return std::string("mode timeslice: GPU ") + std::to_string(device) + " is in compute mode " +
           compute_mode_name(mode) +
           ", where processes cannot share it without MPS; interference-bench never changes the compute mode (an "
           "administrator could set DEFAULT with nvidia-smi -c 0)";
  return std::nullopt;
}

MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances) {
  MigPlan plan;
  plan.instances = instances;
  plan.tenant_instance.assign(s.tenants.size(), instances.size());
  std::set<std::size_t> used;
  auto where = [&](std::size_t i) { return s.file + ": tenants[" + std::to_string(i) + "]"; };
  std::string available;
  for (const auto& m : instances) available += (available.empty() ? "" : ", ") + std::to_string(m.index) + ":" + m.profile;
  if (available.empty()) available = "none";
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const auto& pl = s.tenants[i].placement;
    if (s.tenants[i].workload == "allreduce")
      throw InputError(where(i) + ".workload: allreduce cannot run in mode mig: NCCL cannot build a communicator "
                                  "across MIG instances (no P2P, NVLink or CUDA IPC between them)");
    if (!pl.mig_instance) continue;
    const auto k = static_cast<std::size_t>(*pl.mig_instance);
    if (k >= instances.size())
      throw InputError(where(i) + ".placement.mig_instance: impossible placement: there is no MIG instance " +
                       std::to_string(k) + " (instances here: " + available + ")");
    plan.tenant_instance[i] = k;
    used.insert(k);
  }
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const auto& pl = s.tenants[i].placement;
    if (!pl.mig_profile) continue;
    for (std::size_t k = 0; k < instances.size() && plan.tenant_instance[i] == instances.size(); ++k)
      if (instances[k].profile == *pl.mig_profile && !used.count(k)) {
        plan.tenant_instance[i] = k;
        used.insert(k);
      }
    if (plan.tenant_instance[i] == instances.size())
      throw InputError(where(i) + ".placement.mig_profile: impossible placement: no free MIG instance of profile " +
                       *pl.mig_profile + " (instances here: " + available + ")");
  }
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    if (plan.tenant_instance[i] != instances.size()) continue;
    for (std::size_t k = 0; k < instances.size() && plan.tenant_instance[i] == instances.size(); ++k)
      if (!used.count(k)) {
        plan.tenant_instance[i] = k;
        used.insert(k);
      }
    if (plan.tenant_instance[i] == instances.size())
      throw InputError(where(i) + ".placement: impossible placement: " + std::to_string(s.tenants.size()) +
                       " tenants need their own MIG instance and there are " + std::to_string(instances.size()) +
                       " (" + available + ")");
  }
  for (std::size_t k = 1; k < instances.size(); ++k) {
    const auto& a = instances[k];
    const auto& b = instances[plan.largest];
    if (a.sm_count > b.sm_count || (a.sm_count == b.sm_count && a.memory_bytes > b.memory_bytes)) plan.largest = k;
  }
  return plan;
}

std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios) {
  std::ifstream in(path);
  if (!in) throw InputError("--baseline " + path + ": cannot open");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError("--baseline " + path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
    throw InputError("--baseline " + path + ": not an interference-bench results file (no runs[])");
  std::map<std::string, BaselinePhase> found;
  try {
    for (const auto& run : doc["runs"]) {
      if (run.value("status", "") != "ok") continue;
      if (run.value("mode", "") == "mig")
        throw InputError("--baseline " + path + ": written by a mig run; the baseline must come from a whole GPU");
      for (const auto& t : run.at("tenants")) {
        const std::string key = run.at("scenario").get<std::string>() + "/" + t.at("name").get<std::string>();
        const auto& ph = t.at("phases").at("exclusive");
        if (found.count(key) || ph.at("worker").at("status") != "ok") continue;  // first good repetition
        if (ph.value("source", "measured") != "measured")
          throw InputError("--baseline " + path + ": " + key + ": the exclusive phase was not measured on a whole GPU (" +
                           ph.value("source", "") + ")");
        if (!ph.contains("samples"))
          throw InputError("--baseline " + path + ": " + key + " has no raw samples (the file was written with --no-raw)");
        BaselinePhase b;
        b.work = {t.at("work_per_sample").at("value").get<double>(), t.at("work_per_sample").at("unit").get<std::string>()};
        b.phase.source = "baseline";
        b.phase.outcome.status = "ok";
        b.phase.outcome.resolved = ph.at("worker").value("resolved", nlohmann::json::object());
        b.phase.outcome.message = "from " + path + " (" + run.value("mode", "") + " run of " +
                                  doc.at("meta").value("start_time", "") + ")";
        b.phase.start_ns = ph.at("samples").at("start_ns").get<std::vector<std::int64_t>>();
        b.phase.duration_s = ph.at("samples").at("duration_s").get<std::vector<double>>();
        b.phase.measure_start_ns = ph.value("measure_start_ns", std::int64_t{0});
        b.phase.measure_end_ns = ph.value("measure_end_ns", std::int64_t{0});
        if (b.phase.start_ns.size() != b.phase.duration_s.size())
          throw InputError("--baseline " + path + ": " + key + ": start_ns and duration_s differ in length");
        summarize_phase(b.phase, b.work, std::nullopt, std::nullopt);
        found.emplace(key, std::move(b));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError("--baseline " + path + ": not an interference-bench results file: " + e.what());
  }
  std::map<std::string, BaselinePhase> out;
  for (const auto& s : scenarios)
    for (const auto& t : s.tenants) {
      const std::string key = s.name + "/" + t.name;
      const auto it = found.find(key);
      if (it == found.end())
        throw InputError("--baseline " + path + ": no exclusive phase for scenario \"" + s.name + "\" tenant \"" +
                         t.name + "\" (run the same scenarios with --mode exclusive on a whole GPU to make one)");
      if (it->second.work.amount <= 0.0 || it->second.phase.stats.n == 0)
        throw InputError("--baseline " + path + ": " + key + " has no samples");
      out.emplace(key, it->second);
    }
  return out;
}

MigInstancesGuard::MigInstancesGuard(Nvml& nvml, unsigned device, const std::vector<std::string>& profiles)
    : nvml_(nvml), device_(device) {
  for (const auto& p : profiles) {
    try {
      created_.push_back(nvml_.create_mig_instance(device_, p));
    } catch (const NvmlError& e) {
      destroy_all();
      throw CannotRunError("--mig-create " + p + ": " + e.what() + " (instances created so far were destroyed)");
    }
  }
}

void MigInstancesGuard::destroy_all() noexcept {
  // Newest first, each exactly once; a failure is recorded and the others are still destroyed.
  while (!created_.empty()) {
    const CreatedMigInstance c = created_.back();
    created_.pop_back();
    try {
      nvml_.destroy_mig_instance(device_, c);
    } catch (const std::exception& e) {
      problems_.push_back("could not destroy MIG instance " + c.profile + " (GI " + std::to_string(c.gpu_instance_id) +
                          ", CI " + std::to_string(c.compute_instance_id) + "): " + e.what());
    }
  }
}

MigInstancesGuard::~MigInstancesGuard() { destroy_all(); }

}  // namespace ib
