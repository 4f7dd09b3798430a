// `mig-sweep` (docs/design.md section 12): on a GPU already in MIG mode, each valid layout of the scenario's
// tenants (enumerated from NVML's GPU-instance profiles and placements, harness/modes/mig_layouts.h, or a
// --layouts list) is measured by a child run of mode mig that creates the layout's instances with
// --mig-create (journalled, destroyed on every way out of that run; pre-existing instances are never
// touched) and runs the tenants on them. Every layout's run reads the same exclusive phase as its --baseline
// (the yardstick: each tenant alone once on the GPU's largest instance, or the user's --baseline), so their
// slowdowns and STP are comparable. The layouts are compared: most tenants passing the cutoff, then the most
// system throughput (mig_sweep.cpp); the recommendation is written as a mig-parted config. This file holds the
// command: the scenario, baseline and layouts checked before anything is made, each entry's child run, the
// yardstick and references on one largest instance, the budget and the files.
#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/json_input.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "harness/modes/journal.h"
#include "harness/modes/mig_layouts.h"
#include "harness/modes/baseline.h"
#include "harness/modes/mig_instances.h"
#include "harness/modes/mig_setup.h"
#include "harness/results/mig_sweep.h"
#include "harness/scenario/scenario.h"
#include "harness/stats/stats.h"
#include "harness/vet/mig_sweep.h"
#include "harness/vet/platform.h"
#include "reports/html/mig_sweep_html.h"
#include "reports/json/mig_sweep_json.h"
#include "reports/markdown/mig_sweep_markdown.h"
#include "reports/yaml/mig_parted_yaml.h"
#include "harness/results/results_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include <unistd.h>

namespace ib {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kSweepFiles = {"mig-sweep.json", "mig-sweep.md", "mig-sweep.html", "mig-parted.yaml"};

// The scenario's tenants, read only as far as the sweep needs (each child run validates all of it).
// The scenario every layout's child run reads, checked here as that run will check it (mode mig), so that a
// bad one is one refusal before anything is made (issue 37 item 9), not an error of every layout.
json read_sweep_scenario(const PlatformOptions& o) {
  const std::string& file = o.scenario;
  json s = read_json_file(file, "mig-sweep --scenario");
  if (!s.is_object() || !s.contains("tenants") || !s["tenants"].is_array() || s["tenants"].size() < 1)
    throw InputError("mig-sweep --scenario " + file + ": tenants: a list of at least one tenant was expected");
  for (std::size_t i = 0; i < s["tenants"].size(); ++i) {
    const json& t = s["tenants"][i];
    if (!t.is_object()) throw InputError("mig-sweep --scenario " + file + ": tenants: each tenant is an object");
    // A layout is one instance per tenant; a collective's ranks would each need one (mode mig places them).
    if (t.contains("ranks") && !(t["ranks"].is_number_integer() && t["ranks"].get<long long>() <= 1))
      throw InputError("mig-sweep --scenario " + file + ": tenants[" + std::to_string(i) +
                       "].ranks: a layout gives each tenant one MIG instance and a tenant with ranks needs one per "
                       "rank: measure it with --mode mig on the instances there (or --mig-create)");
  }
  if (o.registry) {
    ScenarioOverrides ov;
    ov.mode = mig_mode();
    ov.lenient_placement = true;  // a layout's run places each tenant; the scenario's own placement keys stay
    (void)parse_scenario(s, file, ov, ValidationContext{o.registry, o.backend == "host" ? Backend::host : Backend::cuda, {}});
  }
  return s;
}

// Each layout's child run reads the baseline; it is read here first, before anything is made (the references'
// instances included), so that a bad one is one refusal (exit 2) and not an error of every layout: a file that
// is not a results file, or one without an exclusive phase for each of the scenario's tenants (as the child
// runs will look for it: load_baseline, the same scenario name and workloads).
void check_sweep_baseline(const PlatformOptions& o, const json& scenario) {
  try {
    (void)read_results_file(o.baseline);
  } catch (const ResultsFileError& e) {
    throw InputError(std::string("mig-sweep --baseline ") + e.what());
  }
  if (!o.registry) return;
  ScenarioOverrides ov;
  ov.mode = mig_mode();
  ov.lenient_placement = true;
  const Scenario s = parse_scenario(scenario, o.scenario, ov,
                                    ValidationContext{o.registry, o.backend == "host" ? Backend::host : Backend::cuda, {}});
  try {
    (void)load_baseline(o.baseline, {s});
  } catch (const InputError& e) {
    throw InputError(std::string("mig-sweep ") + e.what());
  }
}

// A list of layouts is a few lines; the limit only keeps a wrong file from filling memory.
constexpr std::size_t kLayoutsMaxBytes = std::size_t{1} << 20;

// The layouts to try, in order: all valid ones, or the user's list (an invalid line is bad input).
std::vector<std::vector<std::string>> sweep_layouts(const PlatformOptions& o, const std::vector<MigGpuInstanceProfile>& profiles,
                                                    unsigned tenants) {
  std::vector<std::vector<std::string>> out;
  if (o.layouts == "all") {
    for (const MigLayout& l : enumerate_mig_layouts(profiles, tenants)) {
      std::vector<std::string> names;
      for (const auto& i : l.instances) names.push_back(i.profile);
      out.push_back(names);
    }
    if (out.empty()) throw CannotRunError("mig-sweep: no layout of " + std::to_string(tenants) + " MIG instances fits this GPU");
    return out;
  }
  std::string text;
  try {
    text = read_input_file(o.layouts, "layouts file", kLayoutsMaxBytes);
  } catch (const InputError& e) {
    throw InputError(std::string("mig-sweep --layouts ") + e.what());
  }
  for (const MigLayoutCheck& c : check_mig_layouts(text, profiles, tenants)) {
    if (!c.layout)
      throw InputError("mig-sweep --layouts " + o.layouts + ":" + std::to_string(c.line) + ": \"" + printable(c.text, 80) +
                       "\": " + c.reason);
    // The user's order is kept: tenant i runs on the i-th profile of the line as written.
    std::vector<std::string> names;
    std::stringstream parts(c.text);
    for (std::string p; std::getline(parts, p, ',');) {
      p.erase(0, p.find_first_not_of(" \t"));
      p.erase(p.find_last_not_of(" \t") + 1);
      names.push_back(p);
    }
    out.push_back(names);
  }
  if (out.empty()) throw InputError("mig-sweep --layouts " + o.layouts + ": no layout in it");
  return out;
}

// The scenario as one layout runs it: mode mig, tenant i on an instance of profiles[i].
std::string write_layout_scenario(const json& scenario, const std::vector<std::string>& profiles, const std::string& dir) {
  json s = scenario;
  s["mode"] = "mig";
  for (std::size_t i = 0; i < s["tenants"].size(); ++i) {
    json placement = json::object();
    const json& old = s["tenants"][i].value("placement", json::object());
    if (old.is_object() && old.contains("cpus")) placement["cpus"] = old["cpus"];  // the host backend's pinning
    placement["mig_profile"] = profiles[i];
    s["tenants"][i]["placement"] = placement;
  }
  const std::string path = dir + "/layout.scenario.json";
  write_file_atomic(path, s.dump(2) + "\n");
  return path;
}

// Every layout's run reads its exclusive phase from the yardstick's file: never its own largest instance.
std::vector<std::string> layout_run_args(const PlatformOptions& o, const std::string& scenario,
                                         const std::vector<std::string>& profiles, const std::string& yardstick_file) {
  std::vector<std::string> args = child_run_args(o, "mig", scenario);
  args.insert(args.end(), {"--mig-create", joined(profiles, ","), "--baseline", yardstick_file});
  return args;
}

void read_layout_results(SweepLayout& l, const Results& r) {
  std::vector<TelemetrySample> colocated;
  for (const RunResult& run : r.runs)
    for (const TenantResult& t : run.tenants)
      colocated.insert(colocated.end(), t.colocated.telemetry.begin(), t.colocated.telemetry.end());
  l.power = summarize_power(colocated);
  for (const TenantAggregate& a : r.aggregates) {
    SweepTenant t;
    t.tenant = a.tenant;
    t.workload = a.workload;
    t.verdict = a.verdict;
    t.verdict_reason = a.verdict_reason;
    if (a.metrics) t.p95_slowdown = a.metrics->p95_slowdown;
    for (const RunResult& run : r.runs) {
      t.cutoff = run.cutoff;
      for (std::size_t i = 0; i < run.tenants.size() && i < l.profiles.size(); ++i) {
        if (run.tenants[i].name != a.tenant) continue;
        t.profile = l.profiles[i];
        if (const auto& th = run.tenants[i].colocated.throttle)
          l.throttled_fraction = std::max(l.throttled_fraction.value_or(0.0), th->throttled_fraction);
      }
      if (run.system && std::isfinite(run.system->stp_exclusive)) l.stp = run.system->stp_exclusive;
    }
    l.passing += a.verdict == Verdict::pass;
    l.tenants.push_back(t);
  }
  if (l.stp && l.price) l.stp_per_price = *l.stp / *l.price;
}

// Runs one entry's child; what became of it goes into `l`. A child that says the scenario is bad is the
// sweep's bad input (every entry would say the same).
void run_entry(const PlatformOptions& o, const std::vector<std::string>& args, const std::string& dir,
               const std::vector<std::string>& env, SweepLayout& l) {
  const auto t0 = std::chrono::steady_clock::now();
  const ChildRun run = run_self(o, args, dir + "/run", o.sweep_budget_s + 600.0, env);
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  l.exit_code = run.exit_code;
  l.results_file = dir + "/run/results.json";
  if (run.exit_code == kExitBadInput) throw InputError("mig-sweep: " + l.name + ": " + child_last_line(run.output));
  if (run.exit_code == kExitInterrupted) {
    l.outcome = LayoutOutcome::interrupted;
    l.reason = "interrupted";
  } else if (run.exit_code == kExitCannotRun) {
    l.outcome = LayoutOutcome::cannot_run;
    l.reason = child_last_line(run.output);
  } else if (!run.results) {
    l.outcome = LayoutOutcome::failed;
    l.reason = "its run wrote no results: " + child_last_line(run.output);
  } else {
    l.outcome = run.exit_code == kExitWorkloadFailed ? LayoutOutcome::failed : LayoutOutcome::measured;
    if (l.outcome == LayoutOutcome::failed) l.reason = "a workload failed (exit 4): see " + l.results_file;
    read_layout_results(l, run.results->results);
  }
}

void run_layout(const PlatformOptions& o, const json& scenario, const std::string& dir, const std::string& yardstick_file,
                SweepLayout& l) {
  std::filesystem::create_directories(dir);
  const std::string file = write_layout_scenario(scenario, l.profiles, dir);
  run_entry(o, layout_run_args(o, file, l.profiles, yardstick_file), dir, {}, l);
}

// ---- the references: every tenant on the GPU's largest instance, time-sliced or as MPS clients ----

// The largest profile the GPU offers: the most compute slices, then the most memory.
const MigGpuInstanceProfile& largest_profile(const std::vector<MigGpuInstanceProfile>& profiles) {
  return *std::max_element(profiles.begin(), profiles.end(), [](const auto& a, const auto& b) {
    return std::tie(a.slice_count, a.memory_mib) < std::tie(b.slice_count, b.memory_mib);
  });
}

// --references: "none", or a comma list of timeslice and mps.
std::vector<SweepSharing> reference_sharings(const std::string& list) {
  if (list == "none") return {};
  std::vector<SweepSharing> out;
  std::stringstream parts(list);
  for (std::string p; std::getline(parts, p, ',');) {
    const auto s = parse_name<SweepSharing>(p);
    if (!s || *s == SweepSharing::mig)
      throw InputError("mig-sweep --references " + printable(list, 80) + ": \"" + printable(p, 40) +
                       "\": timeslice, mps or none was expected");
    if (std::find(out.begin(), out.end(), *s) == out.end()) out.push_back(*s);
  }
  return out;
}

// The scenario as a reference (mode timeslice or mps) or the yardstick (mode exclusive) runs it, on the one
// instance CUDA shows the workers (CUDA_VISIBLE_DEVICES, set by the sweep); the tenants' MIG placements are
// dropped, the rest kept.
std::string write_largest_instance_scenario(const json& scenario, const std::string& mode, const std::string& dir) {
  json s = scenario;
  s["mode"] = mode;
  for (json& t : s["tenants"])
    if (t.contains("placement") && t["placement"].is_object()) {
      t["placement"].erase("mig_profile");
      t["placement"].erase("mig_instance");
    }
  const std::string path = dir + "/" + mode + ".scenario.json";
  write_file_atomic(path, s.dump(2) + "\n");
  return path;
}

MigSweepResult new_sweep_result(const PlatformOptions& o, Nvml& nvml, const std::vector<MigGpuInstance>& existing) {
  MigSweepResult r;
  r.argv = o.argv;
  r.version = o.version;
  r.git_sha = o.git_sha;
  r.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  r.host = node_name();
  r.scenario_file = o.scenario;
  r.backend = o.backend;
  r.device = o.device;
  const unsigned dev = static_cast<unsigned>(o.device);
  r.gpu_name = nvml.device_name(dev);
  r.gpu_uuid = nvml.device_uuid(dev);
  r.pci_device_id = nvml.pci_device_id(dev);
  r.layouts_source = o.layouts;
  r.budget_s = o.sweep_budget_s;
  for (const MigGpuInstance& m : existing) r.preexisting.push_back(gpu_instance_label(m));
  return r;
}

// MIG mode on, or CannotRunError with what an administrator does (the sweep never changes MIG mode).
void require_mig_mode(Nvml& nvml, int device) {
  const auto state = nvml.mig_mode(static_cast<unsigned>(device));
  const std::string gpu = "GPU " + std::to_string(device) + " (" + nvml.device_name(static_cast<unsigned>(device)) + ")";
  if (!state) throw CannotRunError("mig-sweep: " + gpu + " does not support MIG");
  if (!state->current)
    throw CannotRunError("mig-sweep: MIG mode is disabled on " + gpu + ". An administrator enables it with `nvidia-smi -i " +
                         std::to_string(device) + " -mig 1` on an idle GPU (it needs a GPU reset); interference-bench "
                         "never changes MIG mode");
}

void write_sweep(const std::string& out, const MigSweepResult& r) {
  write_file_atomic(out + "/mig-sweep.json", mig_sweep_to_json(r).dump(2) + "\n");
  write_file_atomic(out + "/mig-sweep.md", mig_sweep_markdown(r));
  write_file_atomic(out + "/mig-sweep.html", mig_sweep_html(r));
  if (r.recommendation) write_file_atomic(out + "/mig-parted.yaml", mig_parted_yaml(r));
}

// Whether the next entry fits what is left of the budget, judged by the mean wall time of those run.
bool fits_budget(const MigSweepResult& r, double elapsed_s) {
  double sum = 0.0;
  int n = 0;
  for (const auto* entries : {&r.references, &r.layouts})
    for (const SweepLayout& l : *entries)
      if (l.outcome == LayoutOutcome::measured || l.outcome == LayoutOutcome::failed) {
        sum += l.seconds;
        ++n;
      }
  return n == 0 || elapsed_s + sum / n <= r.budget_s;
}

using SteadyTime = std::chrono::steady_clock::time_point;

// What stops an entry before it runs: a stop signal (then every later one too), or the budget (unless
// `exempt`). True, with `l` saying why, when it is not to run.
bool skipped_before_running(const PlatformOptions& o, MigSweepResult& r, SteadyTime t0, SweepLayout& l,
                            bool exempt = false) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.interrupted || (o.stop && o.stop())) {
    r.interrupted = true;
    l.outcome = LayoutOutcome::interrupted;
    l.reason = "the sweep was interrupted before this entry";
  } else if (!exempt && !fits_budget(r, elapsed)) {
    l.outcome = LayoutOutcome::skipped_budget;
    l.reason = "--budget " + significant(r.budget_s, 4) + " s: " + significant(elapsed, 3) +
               " s spent, and an entry takes about as long as those before it";
  } else {
    return false;
  }
  return true;
}

// The price of an entry's instances (none without --prices); a profile without a price is bad input.
std::optional<double> price_of(const MigSweepResult& r, const std::vector<std::string>& profiles) {
  if (r.prices.empty()) return std::nullopt;
  double sum = 0.0;
  for (const std::string& p : profiles) {
    const auto it = r.prices.find(p);
    if (it == r.prices.end())
      throw InputError("mig-sweep --prices " + r.prices_file + ": no price for " + p + " (a layout or reference uses it)");
    sum += it->second;
  }
  return sum;
}

// Every entry the sweep will try, pending: the references (on the GPU's largest instance, whose one
// instance is what is paid for), then the layouts.
void plan_entries(MigSweepResult& r, const std::vector<SweepSharing>& sharings, const MigGpuInstanceProfile& largest,
                  const std::vector<std::vector<std::string>>& layouts, unsigned tenants) {
  for (SweepSharing sharing : sharings) {
    SweepLayout l;
    l.sharing = sharing;
    l.name = std::string(to_string(sharing)) + " on " + largest.name;
    l.profiles.assign(tenants, largest.name);
    l.outcome = LayoutOutcome::pending;
    l.price = price_of(r, {largest.name});
    r.references.push_back(l);
  }
  for (const auto& profiles : layouts) {
    SweepLayout l;
    l.profiles = profiles;
    l.name = joined(profiles, ",");
    l.outcome = LayoutOutcome::pending;
    l.price = price_of(r, profiles);
    r.layouts.push_back(l);
  }
}

std::string uuid_of(Nvml& nvml, unsigned device, const CreatedMigInstance& c) {
  for (const MigInstance& m : nvml.mig_instances(device))
    if (m.gpu_instance_id == c.gpu_instance_id && m.compute_instance_id == c.compute_instance_id) return m.uuid;
  throw CannotRunError("mig-sweep: the " + c.profile + " instance it made is not listed by NVML");
}

// The yardstick's run: every tenant alone once (mode exclusive) on the instance `uuid`; its results.json is
// every layout's --baseline. Exempt from the budget: without it no layout can be judged.
void run_yardstick(const PlatformOptions& o, const json& scenario, const std::string& out, const std::string& uuid,
                   MigSweepResult& r) {
  SweepYardstick& y = r.yardstick;
  y.uuid = uuid;
  if (r.interrupted || (o.stop && o.stop())) {
    r.interrupted = true;
    y.outcome = LayoutOutcome::interrupted;
    y.reason = "the sweep was interrupted before the yardstick";
    return;
  }
  const std::string dir = out + "/yardstick";
  std::filesystem::create_directories(dir);
  const std::string file = write_largest_instance_scenario(scenario, "exclusive", dir);
  std::cerr << "interference-bench: mig-sweep: yardstick: every tenant alone on " << y.profile << "\n";
  SweepLayout l;
  l.name = "yardstick on " + y.profile;
  l.profiles = {y.profile};
  run_entry(o, child_run_args(o, "exclusive", file), dir, {"CUDA_VISIBLE_DEVICES=" + uuid}, l);
  y.exit_code = l.exit_code;
  y.seconds = l.seconds;
  y.outcome = l.outcome;
  if (!l.reason.empty()) y.reason = l.reason;  // else the plan's (why not the GPU's largest profile)
  y.baseline_file = l.results_file;
  if (l.outcome == LayoutOutcome::interrupted) r.interrupted = true;
}

// The yardstick and the references, on one instance of the largest profile made for them (journalled like
// --mig-create's, destroyed on every way out of here) and shown to each child as CUDA_VISIBLE_DEVICES. When
// pre-existing instances leave no room for the largest profile the references are skipped and the
// yardstick's instance is the largest that fits (plan_yardstick).
void run_on_largest_instance(const PlatformOptions& o, const json& scenario, Nvml& nvml, const std::string& out,
                             MigSweepResult& r, SteadyTime t0) {
  std::vector<SweepLayout*> pending;
  for (SweepLayout& l : r.references)
    if (l.outcome == LayoutOutcome::pending) pending.push_back(&l);
  const bool yardstick = r.yardstick.outcome == LayoutOutcome::pending;
  if (pending.empty() && !yardstick) return;
  const std::string profile = yardstick ? r.yardstick.profile : pending.front()->profiles.front();
  const unsigned dev = static_cast<unsigned>(o.device);
  Journal journal(default_state_dir());
  std::unique_ptr<MigInstancesGuard> guard;
  std::string uuid;
  try {
    guard = std::make_unique<MigInstancesGuard>(nvml, dev, std::vector<std::string>{profile}, &journal);
    uuid = uuid_of(nvml, dev, guard->created().front());
  } catch (const CannotRunError& e) {
    for (SweepLayout* l : pending) {
      l->outcome = LayoutOutcome::cannot_run;
      l->reason = e.what();
    }
    if (yardstick) {
      r.yardstick.outcome = LayoutOutcome::cannot_run;
      r.yardstick.reason = e.what();
    }
    return;
  }
  if (yardstick) {
    run_yardstick(o, scenario, out, uuid, r);
    write_sweep(out, r);
  }
  for (SweepLayout* l : pending) {
    if (skipped_before_running(o, r, t0, *l)) continue;
    const std::string dir = out + "/references/" + to_string(l->sharing);
    std::filesystem::create_directories(dir);
    const std::string file = write_largest_instance_scenario(scenario, to_string(l->sharing), dir);
    std::cerr << "interference-bench: mig-sweep: reference: " << l->name << "\n";
    run_entry(o, child_run_args(o, to_string(l->sharing), file), dir, {"CUDA_VISIBLE_DEVICES=" + uuid}, *l);
    if (l->outcome == LayoutOutcome::interrupted) r.interrupted = true;
    write_sweep(out, r);
  }
  guard->destroy_all();
  for (const std::string& p : guard->problems()) std::cerr << "interference-bench: mig-sweep: " << p << "\n";
}

void run_layouts(const PlatformOptions& o, const json& scenario, const std::string& out, MigSweepResult& r, SteadyTime t0) {
  const SweepYardstick& y = r.yardstick;
  for (std::size_t i = 0; i < r.layouts.size(); ++i) {
    SweepLayout& l = r.layouts[i];
    if (l.outcome != LayoutOutcome::pending) continue;
    // The budget never skips the first layout that can run: a sweep that measured none recommends none.
    const bool first = std::none_of(r.layouts.begin(), r.layouts.end(), [](const SweepLayout& x) {
      return x.outcome == LayoutOutcome::measured || x.outcome == LayoutOutcome::failed;
    });
    if (!skipped_before_running(o, r, t0, l, first)) {
      if (y.outcome != LayoutOutcome::measured) {
        // Against its own largest instance it would not be comparable with the others: not run at all.
        l.outcome = LayoutOutcome::cannot_run;
        l.reason = "no common yardstick to judge it against (" + y.reason + "); give one with --baseline";
      } else {
        std::cerr << "interference-bench: mig-sweep: layout " << i + 1 << " of " << r.layouts.size() << ": " << l.name << "\n";
        run_layout(o, scenario, out + "/layouts/" + std::to_string(i + 1) + "-" + file_name_part(l.name), y.baseline_file, l);
        if (l.outcome == LayoutOutcome::interrupted) r.interrupted = true;
      }
    }
    write_sweep(out, r);  // after each layout: an interrupted sweep keeps what it finished
  }
}

}  // namespace

int mig_sweep_command(const PlatformOptions& o) {
  if (o.scenario.empty()) throw InputError("mig-sweep: --scenario FILE is required");
  const json scenario = read_sweep_scenario(o);
  const unsigned tenants = static_cast<unsigned>(scenario["tenants"].size());
  const auto sharings = reference_sharings(o.references);
  auto prices = o.prices.empty() ? std::map<std::string, double>{} : read_sweep_prices(o.prices);
  if (!o.baseline.empty()) check_sweep_baseline(o, scenario);
  auto nvml = platform_nvml("mig-sweep", o.device);
  require_mig_mode(*nvml, o.device);
  if (geteuid() != 0) throw CannotRunError("mig-sweep: it creates each layout's MIG instances, which needs root");
  const auto gpu_profiles = nvml->mig_gpu_instance_profiles(static_cast<unsigned>(o.device));
  const auto layouts = sweep_layouts(o, gpu_profiles, tenants);
  const std::string out_dir = o.out.empty() ? platform_default_out("mig-sweep") : o.out;
  platform_check_outputs(o, out_dir, kSweepFiles);
  OutputDir folder("--out", out_dir, kSweepFiles, o.force);
  const std::string& out = folder.path();
  folder.keep();
  // Every GPU instance, those without a compute instance too: each takes its memory slices.
  const auto existing = nvml->mig_gpu_instances(static_cast<unsigned>(o.device));
  MigSweepResult r = new_sweep_result(o, *nvml, existing);
  r.prices_file = o.prices;
  r.prices = std::move(prices);
  plan_entries(r, sharings, largest_profile(gpu_profiles), layouts, tenants);
  skip_blocked_entries(r, gpu_profiles, existing);
  plan_yardstick(o.baseline, r.yardstick, gpu_profiles, existing);
  write_sweep(out, r);
  const auto t0 = std::chrono::steady_clock::now();
  run_on_largest_instance(o, scenario, *nvml, out, r, t0);
  nvml.reset();  // the layouts' children load their own
  run_layouts(o, scenario, out, r, t0);
  r.recommendation = recommend_layout(r.layouts, tenants);
  r.exit_code = sweep_exit_code(r, tenants);
  write_sweep(out, r);
  std::cout << mig_sweep_markdown(r) << "\nresults: " << out << "/mig-sweep.json\n";
  return r.exit_code;
}

}  // namespace ib
