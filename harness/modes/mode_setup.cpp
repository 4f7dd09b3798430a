#include "harness/modes/mode_setup.h"

#include "harness/modes/journal.h"
#include "harness/modes/mig_layouts.h"

#include "harness/analysis/analysis.h"
#include "harness/core/errors.h"
#include "harness/core/text.h"
#include "harness/modes/mps_daemon.h"
#include "harness/process/process.h"
#include "harness/results/results_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
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

std::optional<std::string> node_readiness_refusal(const NodeReadiness& r, int device) {
  if (r.validations_present) {
    std::string missing;
    for (const std::string& f : operator_validation_files())
      if (std::find(r.validation_files.begin(), r.validation_files.end(), f) == r.validation_files.end())
        missing += (missing.empty() ? "" : ", ") + f;
    if (!missing.empty())
      return "this node is not ready: the GPU operator's validator has not passed (" + r.validations_dir + " lacks " +
             missing + "); measure once it has";
  }
  if (r.mig_mode && r.mig_mode->current != r.mig_mode->pending)
    return "this node is not ready: GPU " + std::to_string(device) + " has a MIG mode change pending (current " +
           (r.mig_mode->current ? "enabled" : "disabled") + ", pending " + (r.mig_mode->pending ? "enabled" : "disabled") +
           "): it takes effect at the next GPU reset";
  if (!r.mig_config_state.empty() && r.mig_config_state != "success")
    return "this node is not ready: the MIG manager's state is \"" + r.mig_config_state +
           "\" (IB_MIG_CONFIG_STATE), not \"success\"";
  return std::nullopt;
}

NodeReadiness read_node_readiness(ModeSetup& setup, int device) {
  NodeReadiness r;
  const char* dir = std::getenv("IB_GPU_OPERATOR_VALIDATIONS");
  r.validations_dir = dir && *dir ? dir : "/run/nvidia/validations";
  std::error_code ec;
  r.validations_present = std::filesystem::is_directory(r.validations_dir, ec);
  if (r.validations_present)
    for (const std::string& f : operator_validation_files())
      if (std::filesystem::exists(r.validations_dir + "/" + f, ec)) r.validation_files.push_back(f);
  if (setup.nvml) {
    try {
      r.mig_mode = setup.nvml->mig_mode(static_cast<unsigned>(device));
    } catch (const NvmlError&) {  // a GPU that cannot say: nothing to judge
    }
  }
  if (const char* state = std::getenv("IB_MIG_CONFIG_STATE")) r.mig_config_state = state;
  return r;
}

namespace {

// One worker of a mig scenario that needs an instance: rank `rank` of tenant `tenant`.
struct MigSeat {
  std::size_t tenant;
  int rank;
};

// Assigns instances to seats in three passes: explicit mig_instance, then mig_profile (the first free instance of
// that profile), then the first free instance. `where(seat)` names the seat's placement field for errors.
class MigSeating {
 public:
  MigSeating(const Scenario& s, const std::vector<MigInstance>& instances) : s_(s), instances_(instances) {
    for (const auto& m : instances) available_ += (available_.empty() ? "" : ", ") + std::to_string(m.index) + ":" + m.profile;
    if (available_.empty()) available_ = "none";
    for (std::size_t i = 0; i < s.tenants.size(); ++i)
      for (int r = 0; r < s.tenants[i].ranks; ++r) seats_.push_back({i, r});
    taken_.assign(seats_.size(), instances.size());
  }

  std::vector<std::vector<std::size_t>> assign() {
    for (std::size_t k = 0; k < seats_.size(); ++k) take_explicit(k);
    for (std::size_t k = 0; k < seats_.size(); ++k) take_profile(k);
    for (std::size_t k = 0; k < seats_.size(); ++k) take_any(k);
    std::vector<std::vector<std::size_t>> out(s_.tenants.size());
    for (std::size_t k = 0; k < seats_.size(); ++k) out[seats_[k].tenant].push_back(taken_[k]);
    return out;
  }

 private:
  const Placement& placement(std::size_t k) const { return s_.tenants[seats_[k].tenant].placement_of(seats_[k].rank); }
  std::string where(std::size_t k) const {
    const Tenant& t = s_.tenants[seats_[k].tenant];
    const std::string tenant = s_.file + ": tenants[" + std::to_string(seats_[k].tenant) + "]";
    if (t.rank_placements.empty()) return tenant + ".placement";
    return tenant + ".rank_placements[" + std::to_string(seats_[k].rank) + "]";
  }
  std::string who(std::size_t k) const {
    const Tenant& t = s_.tenants[seats_[k].tenant];
    return t.ranks > 1 ? "rank " + std::to_string(seats_[k].rank) + " of " + t.name : t.name;
  }
  std::size_t holder(std::size_t instance) const {
    return static_cast<std::size_t>(std::find(taken_.begin(), taken_.end(), instance) - taken_.begin());
  }
  void take_explicit(std::size_t k) {
    const auto& pl = placement(k);
    if (!pl.mig_instance) return;
    const auto m = static_cast<std::size_t>(*pl.mig_instance);
    if (m >= instances_.size())
      throw PlacementError(where(k) + ".mig_instance: impossible placement: there is no MIG instance " + std::to_string(m) +
                           " (instances here: " + available_ + ")");
    if (const std::size_t h = holder(m); h < seats_.size())
      throw PlacementError(where(k) + ".mig_instance: impossible placement: MIG instance " + std::to_string(m) +
                           " is already " + who(h) + "'s (each rank needs its own)");
    taken_[k] = m;
  }
  void take_profile(std::size_t k) {
    const auto& pl = placement(k);
    if (!pl.mig_profile || taken_[k] != instances_.size()) return;
    for (std::size_t m = 0; m < instances_.size() && taken_[k] == instances_.size(); ++m)
      if (instances_[m].profile == *pl.mig_profile && holder(m) == seats_.size()) taken_[k] = m;
    if (taken_[k] == instances_.size())
      throw PlacementError(where(k) + ".mig_profile: impossible placement: no free MIG instance of profile " +
                           *pl.mig_profile + " for " + who(k) + " (instances here: " + available_ + ")");
  }
  void take_any(std::size_t k) {
    for (std::size_t m = 0; m < instances_.size() && taken_[k] == instances_.size(); ++m)
      if (holder(m) == seats_.size()) taken_[k] = m;
    if (taken_[k] == instances_.size())
      throw PlacementError(where(k) + ": impossible placement: " + std::to_string(seats_.size()) +
                           " workers (tenants or ranks) need their own MIG instance and there are " +
                           std::to_string(instances_.size()) + " (" + available_ + ")");
  }

  const Scenario& s_;
  const std::vector<MigInstance>& instances_;
  std::string available_;
  std::vector<MigSeat> seats_;
  std::vector<std::size_t> taken_;  // per seat: its instance (instances_.size() while it has none)
};

// The one-process allreduce over several GPUs (params.gpus > 1) cannot span MIG instances; ranks can.
void refuse_one_process_collective(const Scenario& s) {
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const Tenant& t = s.tenants[i];
    if (t.workload == "allreduce" && t.params.is_object() && t.params.value("gpus", 1) > 1)
      throw PlacementError(s.file + ": tenants[" + std::to_string(i) +
                           "].params.gpus: one process cannot drive NCCL over several MIG instances (no P2P, NVLink or "
                           "CUDA IPC between them): give the tenant \"ranks\" instead, one worker per MIG instance "
                           "(NCCL 2.31 or later)");
  }
}

}  // namespace

MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances) {
  refuse_one_process_collective(s);
  MigPlan plan;
  plan.instances = instances;
  plan.rank_instance = MigSeating(s, instances).assign();
  for (std::size_t k = 1; k < instances.size(); ++k) {
    const auto& a = instances[k];
    const auto& b = instances[plan.largest];
    if (a.sm_count > b.sm_count || (a.sm_count == b.sm_count && a.memory_bytes > b.memory_bytes)) plan.largest = k;
  }
  return plan;
}

namespace {

[[noreturn]] void refuse_baseline(const std::string& path, const std::string& why) {
  throw InputError("--baseline " + path + ": " + why);
}

// A baseline's exclusive phase as this run uses it: the samples with their blocks and counted flags
// and the per-request latencies, the figures recomputed from them; the rest of the file's phase
// (telemetry, the flags of its run's analysis) stays behind.
BaselinePhase baseline_phase(const TenantResult& t, const RunResult& run, const Meta& meta, const std::string& path) {
  const PhaseResult& from = t.exclusive;
  BaselinePhase b;
  b.workload = t.workload;
  b.work = t.work;
  PhaseResult& p = b.phase;
  p.source = PhaseSource::baseline;
  p.outcome.status = WorkerStatus::ok;
  p.outcome.resolved = from.outcome.resolved;
  p.outcome.message = "from " + path + " (" + run.mode + " run of " + meta.start_time + ")";
  p.start_ns = from.start_ns;
  p.duration_s = from.duration_s;
  p.block = from.block;
  p.counted = from.counted;
  p.measure_start_ns = from.measure_start_ns;
  p.measure_end_ns = from.measure_end_ns;
  p.latencies_s = from.latencies_s;  // a latency-type workload is judged on its per-request latencies
  p.latency_count = from.latency_count;
  summarize_phase(p, b.work, {});
  return b;
}

// Every "<scenario>/<tenant>" exclusive phase of the file: from the first repetition that measured it.
std::map<std::string, BaselinePhase> baseline_phases(const std::string& path) {
  ResultsDocument doc;
  try {
    doc = read_results_file(path);
  } catch (const ResultsFileError& e) {
    throw InputError(std::string("--baseline ") + e.what());
  }
  std::map<std::string, BaselinePhase> found;
  for (const RunResult& run : doc.results.runs) {
    if (run.status != RunStatus::ok) continue;
    if (run.mode == "mig") refuse_baseline(path, "written by a mig run; the baseline must come from a whole GPU");
    for (const TenantResult& t : run.tenants) {
      const std::string key = run.scenario + "/" + t.name;
      if (found.count(key) || t.exclusive.outcome.status != WorkerStatus::ok) continue;
      // An exclusive run on one MIG instance is accepted (mode mig has no whole GPU to compare with; it is
      // what mig-sweep measures its yardstick with, on the GPU's largest instance), and the run says so.
      if (t.exclusive.source != PhaseSource::measured && t.exclusive.source != PhaseSource::mig_instance)
        refuse_baseline(path, key + ": the exclusive phase was not measured on a whole GPU or one MIG instance (" +
                                  to_string(t.exclusive.source) + ")");
      if (!doc.raw_samples) refuse_baseline(path, key + " has no raw samples (the file was written with --no-raw)");
      BaselinePhase b = baseline_phase(t, run, doc.results.meta, path);
      if (t.exclusive.source == PhaseSource::mig_instance)
        b.measured_on = run.mode_config.exclusive_source.value_or("one MIG instance, not a whole GPU");
      found.emplace(key, std::move(b));
    }
  }
  return found;
}

}  // namespace

std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios) {
  const std::map<std::string, BaselinePhase> found = baseline_phases(path);
  std::map<std::string, BaselinePhase> out;
  for (const auto& s : scenarios)
    for (const auto& t : s.tenants) {
      const std::string key = s.name + "/" + t.name;
      const auto it = found.find(key);
      if (it == found.end())
        refuse_baseline(path, "no exclusive phase for scenario \"" + s.name + "\" tenant \"" + t.name +
                                  "\" (run the same scenarios with --mode exclusive on a whole GPU to make one)");
      if (it->second.work.amount <= 0.0 || it->second.phase.stats.n == 0) refuse_baseline(path, key + " has no samples");
      if (it->second.workload != t.workload)
        refuse_baseline(path, key + " ran " + it->second.workload + " there, " + t.workload + " here: not comparable");
      out.emplace(key, it->second);
    }
  return out;
}

namespace {

// "1g.18gb (MIG-...) at memory slices 6-6, ...": the pre-existing instances, for a refusal they cause.
std::string instances_text(const std::vector<MigGpuInstance>& instances) {
  std::string out;
  for (const MigGpuInstance& m : instances) {
    out += (out.empty() ? "" : ", ") + gpu_instance_label(m);
    if (m.placement) out += " at memory slices " + slices_text(*m.placement);
  }
  return out;
}

// Where each of `profiles` is to be created beside the instances already there, worked out before anything is
// made so that a layout that fits is never refused for the order it was asked in (a 1g.18gb created first
// wherever NVML likes can leave no room for a 4g.71gb). None when NVML cannot say where the instances there sit
// or which placements the profiles take: then NVML places each as it is created. CannotRunError, naming the
// instances in the way, when they cannot all be created.
std::vector<std::optional<MigPlacement>> creation_placements(Nvml& nvml, unsigned device,
                                                             const std::vector<std::string>& profiles) {
  std::vector<std::optional<MigPlacement>> none(profiles.size());
  std::vector<MigGpuInstanceProfile> gpu_profiles;
  std::vector<MigGpuInstance> existing;  // with or without a compute instance: each takes its slices
  try {
    gpu_profiles = nvml.mig_gpu_instance_profiles(device);
    existing = nvml.mig_gpu_instances(device);
  } catch (const NvmlError&) {
    return none;
  }
  std::vector<MigPlacement> occupied;
  for (const MigGpuInstance& m : existing) {
    if (!m.placement) return none;
    occupied.push_back(*m.placement);
  }
  const MigCreationPlan plan = plan_mig_creation(profiles, gpu_profiles, occupied);
  const std::string list = joined(profiles, ",");
  if (plan.check.problem == MigLayoutProblem::blocked_by_existing)
    throw CannotRunError("--mig-create " + list + ": " + plan.check.reason + "; in the way: " + instances_text(existing) +
                         ". Nothing was created");
  if (!plan.check.layout) throw CannotRunError("--mig-create " + list + ": " + plan.check.reason + ". Nothing was created");
  return {plan.placements.begin(), plan.placements.end()};
}

}  // namespace

MigInstancesGuard::MigInstancesGuard(Nvml& nvml, unsigned device, const std::vector<std::string>& profiles,
                                     Journal* journal)
    : nvml_(nvml), device_(device), journal_(journal) {
  const auto placements = creation_placements(nvml_, device_, profiles);
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const std::string& p = profiles[i];
    try {
      if (journal_) journal_->record({JournalEvent::mig_intent, device_, {p, 0, 0}, ""});
      created_.push_back(nvml_.create_mig_instance(device_, p, placements[i]));
      if (journal_) journal_->record({JournalEvent::mig_created, device_, created_.back(), ""});
    } catch (const CannotRunError&) {  // the journal cannot be written: create nothing more
      destroy_all();
      throw;
    } catch (const NvmlError& e) {
      try {
        if (journal_) journal_->record({JournalEvent::mig_not_created, device_, {p, 0, 0}, ""});
      } catch (const CannotRunError&) {  // the journal then keeps the intent, which cleanup only reports
      }
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
      if (journal_) journal_->record({JournalEvent::mig_destroyed, device_, c, ""});
    } catch (const std::exception& e) {
      problems_.push_back("could not destroy MIG instance " + c.profile + " (GI " + std::to_string(c.gpu_instance_id) +
                          ", CI " + std::to_string(c.compute_instance_id) + "): " + e.what());
    }
  }
}

MigInstancesGuard::~MigInstancesGuard() { destroy_all(); }

void ensure_nvml(ModeSetup& setup, int device) {
  if (setup.nvml_tried) return;
  setup.nvml_tried = true;
  try {
    setup.nvml = Nvml::load();
    setup.device["nvml"] = setup.nvml->library_path();
    setup.device["name"] = setup.nvml->device_name(static_cast<unsigned>(device));
    setup.device["uuid"] = setup.nvml->device_uuid(static_cast<unsigned>(device));
  } catch (const NvmlError& e) {
    setup.nvml.reset();
    setup.nvml_error = e.what();
    setup.device["nvml"] = "unavailable: " + setup.nvml_error;
  }
}

namespace {

// Which modes the scenarios use.
struct ModesUsed {
  bool mig = false, mps = false, timeslice = false, whole_gpu = false;  // whole_gpu: any mode but mig
};

ModesUsed modes_used(const std::vector<Scenario>& scenarios) {
  ModesUsed m;
  for (const auto& s : scenarios) {
    m.mig |= s.mode == Mode::mig;
    m.mps |= s.mode == Mode::mps;
    m.timeslice |= s.mode == Mode::timeslice;
    m.whole_gpu |= s.mode != Mode::mig;
  }
  return m;
}

// An option for a mode no scenario uses is a mistake (except under --mode all, where every mode runs).
void refuse_options_of_unused_modes(const ModeRequest& o, const ModesUsed& used) {
  if (!o.baseline.empty() && !used.mig)
    throw InputError("--baseline: only used with mode mig, where the exclusive phase cannot be measured");
  if (!o.mig_create.empty() && !used.mig) throw InputError("--mig-create: only used with mode mig");
  if (!o.mps_pipe_dir.empty() && !used.mps) throw InputError("--mps-pipe-dir: only used with mode mps");
}

int common_device(const std::vector<Scenario>& scenarios) {
  const int device = scenarios.front().device;
  for (const auto& s : scenarios)
    if (s.device != device) throw InputError(s.file + ": device: all scenarios of one run must use the same device");
  return device;
}

// Time-slicing and MPS on a GPU: the compute mode allows them, the slice length is recorded.
void check_compute_mode(ModeSetup& setup, int device, const ModesUsed& used) {
  const ComputeMode cm = setup.nvml->compute_mode(static_cast<unsigned>(device));
  setup.device["compute_mode"] = compute_mode_name(cm);
  if (used.timeslice)
    if (const auto why = timeslice_refusal(cm, device)) throw CannotRunError(*why);
  // The time-slice length is a driver setting; record it where nvidia-smi shows it, never change it.
  const CommandResult policy = run_helper_command({"nvidia-smi", "compute-policy", "-l"}, {}, "", 5.0);
  setup.device["compute_policy"] = policy.ok() ? policy.output : "not available";
}

// With --mig-create the run uses only the instances it made, for its tenants and its exclusive phase: a
// pre-existing instance (another user's, perhaps busy) is never touched, whatever its id or size. Indexed
// anew (placement.mig_instance counts the made ones). CannotRunError when NVML does not list one it made.
std::vector<MigInstance> only_created(const std::vector<MigInstance>& listed, const std::vector<CreatedMigInstance>& made) {
  std::vector<MigInstance> out;
  for (const CreatedMigInstance& c : made) {
    const auto it = std::find_if(listed.begin(), listed.end(), [&c](const MigInstance& m) {
      return m.gpu_instance_id == c.gpu_instance_id && m.compute_instance_id == c.compute_instance_id;
    });
    if (it == listed.end())
      throw CannotRunError("--mig-create: the " + c.profile + " instance it made (GPU instance " +
                           std::to_string(c.gpu_instance_id) + ") is not listed by NVML");
    out.push_back(*it);
  }
  std::sort(out.begin(), out.end(), [](const MigInstance& a, const MigInstance& b) { return a.index < b.index; });
  for (std::size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
  return out;
}

// Mode mig needs MIG mode on and instances (made here with --mig-create, as root).
std::vector<MigInstance> mig_instances_for_run(const ModeRequest& o, ModeSetup& setup, int device) {
  if (!setup.nvml) throw CannotRunError("mode mig needs NVML to find the MIG instances: " + setup.nvml_error);
  const unsigned dev = static_cast<unsigned>(device);
  const auto state = setup.nvml->mig_mode(dev);
  const std::string gpu = "GPU " + std::to_string(device) + " (" + setup.device.value("name", std::string()) + ")";
  if (!state) throw CannotRunError("mode mig: " + gpu + " does not support MIG");
  setup.device["mig_mode"] = {{"current", state->current}, {"pending", state->pending}};
  if (!state->current)
    throw CannotRunError("mode mig: MIG mode is disabled on " + gpu + " (current: disabled, pending: " +
                         (state->pending ? "enabled, after a GPU reset" : "disabled") +
                         "). An administrator enables it with `nvidia-smi -i " + std::to_string(device) +
                         " -mig 1` on an idle GPU (it needs a GPU reset) and creates instances with `nvidia-smi mig -i " +
                         std::to_string(device) + " -cgi <profiles> -C`; interference-bench never changes MIG mode");
  if (!o.mig_create.empty() && !setup.created) {
    if (geteuid() != 0) throw CannotRunError("--mig-create: creating MIG instances needs root");
    setup.created = std::make_unique<MigInstancesGuard>(*setup.nvml, dev, o.mig_create, setup.journal);
    nlohmann::json made = nlohmann::json::array();
    for (const auto& c : setup.created->created())
      made.push_back({{"profile", c.profile}, {"gpu_instance_id", c.gpu_instance_id}, {"compute_instance_id", c.compute_instance_id}});
    setup.device["mig_created"] = made;
  }
  auto instances = setup.nvml->mig_instances(dev);
  if (setup.created) instances = only_created(instances, setup.created->created());
  if (instances.empty())
    throw CannotRunError("mode mig: MIG mode is enabled on " + gpu +
                         " but no MIG instances exist: create them (nvidia-smi mig -cgi ... -C) or use --mig-create");
  return instances;
}

// The placement of every mig scenario, and the baseline its exclusive phases come from.
void prepare_mig(const ModeRequest& o, const std::vector<Scenario>& scenarios, ModeSetup& setup, ModeContext& ctx,
                 int device) {
  std::vector<Scenario> mig_scenarios;
  for (const auto& s : scenarios)
    if (s.mode == Mode::mig) mig_scenarios.push_back(s);
  // The baseline is checked before --mig-create changes the GPU.
  if (!o.baseline.empty()) {
    ctx.baseline = load_baseline(o.baseline, mig_scenarios);
    ctx.baseline_file = o.baseline;
  }
  const auto instances = mig_instances_for_run(o, setup, device);
  for (const auto& s : mig_scenarios) ctx.mig_plans[s.name] = plan_mig(s, instances);
}

// A GPU in MIG mode has no whole device: the other modes run on the one MIG instance CUDA shows a
// worker. That is what someone renting a MIG slice wants measured (and what vet's steps run), so it
// is not refused, but it must not pass for a whole GPU: the results say what was measured.
void note_mig_instance(ModeSetup& setup, int device) {
  ensure_nvml(setup, device);
  if (!setup.nvml) return;
  const auto state = setup.nvml->mig_mode(static_cast<unsigned>(device));
  if (!state || !state->current) return;
  setup.device["mig_mode"] = {{"current", state->current}, {"pending", state->pending}};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  setup.mig_instance_note =
      "one MIG instance, not a whole GPU: GPU " + std::to_string(device) + " is in MIG mode, so CUDA shows a worker " +
      (visible && *visible ? "CUDA_VISIBLE_DEVICES=" + std::string(visible) : std::string("its first MIG instance")) +
      "; slowdowns are against that instance";
  setup.device["measures"] = setup.mig_instance_note;
  std::cerr << "interference-bench: note: " << setup.mig_instance_note << "\n";
}

// Modes mps and mig set up on node 0 what every worker uses (the MPS daemon and its pipe folder, the MIG
// instances NVML lists there): a worker placed on another node could not reach them, and would run unshared.
void refuse_other_nodes(const std::vector<Scenario>& scenarios) {
  for (const Scenario& s : scenarios) {
    if (s.mode != Mode::mps && s.mode != Mode::mig) continue;
    for (std::size_t i = 0; i < s.tenants.size(); ++i) {
      const Tenant& t = s.tenants[i];
      for (int r = 0; r < t.ranks; ++r)
        if (const int node = t.placement_of(r).node; node != 0)
          throw PlacementError(s.file + ": tenants[" + std::to_string(i) + "]." +
                               (t.rank_placements.empty() ? std::string("placement") : "rank_placements[" + std::to_string(r) + "]") +
                               ".node: mode " + mode_name(s.mode) + " sets up node 0 only (its " +
                               (s.mode == Mode::mps ? "MPS daemon" : "MIG instances") + "); node " + std::to_string(node) +
                               " runs in mode exclusive or timeslice");
    }
  }
}

}  // namespace

void prepare_modes(const ModeRequest& o, Backend backend, const std::vector<Scenario>& scenarios, ModeSetup& setup,
                   ModeContext& ctx, bool all_modes) {
  refuse_other_nodes(scenarios);
  const ModesUsed used = modes_used(scenarios);
  if (!all_modes) refuse_options_of_unused_modes(o, used);
  const int device = common_device(scenarios);
  const bool gpu_sharing = backend == Backend::cuda && (used.timeslice || used.mps);
  if (backend == Backend::cuda || used.mig) {
    ensure_nvml(setup, device);
    NodeReadiness readiness = read_node_readiness(setup, device);
    // MIG disabled for mode mig: prepare_mig says so, with what an administrator does.
    if (used.mig && readiness.mig_mode && !readiness.mig_mode->current) readiness.mig_mode.reset();
    if (const auto why = node_readiness_refusal(readiness, device)) throw CannotRunError(*why);
  }
  if (setup.nvml && gpu_sharing) check_compute_mode(setup, device, used);
  if (used.mps && o.mps_pipe_dir.empty() && find_on_path(kMpsControl).empty())
    throw CannotRunError(std::string("mode mps needs the MPS control daemon, but ") + kMpsControl +
                         " is not on PATH (it ships with the NVIDIA driver)");
  if (used.mig) prepare_mig(o, scenarios, setup, ctx, device);
  if (backend == Backend::cuda && used.whole_gpu && setup.mig_instance_note.empty()) note_mig_instance(setup, device);
  ctx.device = setup.device;
  ctx.mig_instance_note = setup.mig_instance_note;
}

}  // namespace ib
