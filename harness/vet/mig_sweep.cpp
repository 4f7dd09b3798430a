// `mig-sweep` (DESIGN.md section 12): on a GPU already in MIG mode, each valid layout of the scenario's
// tenants (enumerated from NVML's GPU-instance profiles and placements, harness/modes/mig_layouts.h, or a
// --layouts list) is measured by a child run of mode mig that creates the layout's instances with
// --mig-create (journalled, destroyed on every way out of that run; pre-existing instances are never
// touched) and runs the tenants on them. The layouts are compared: most tenants passing the cutoff, then
// the most system throughput; the recommendation is written as a mig-parted config.
#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/json_input.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "harness/modes/mig_layouts.h"
#include "harness/results/mig_sweep.h"
#include "harness/vet/platform.h"
#include "reports/mig_sweep_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

namespace ib {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kSweepFiles = {"mig-sweep.json", "mig-sweep.md", "mig-sweep.html", "mig-parted.yaml"};

// The scenario's tenants, read only as far as the sweep needs (each child run validates all of it).
json read_sweep_scenario(const std::string& file) {
  json s = read_json_file(file, "mig-sweep --scenario");
  if (!s.is_object() || !s.contains("tenants") || !s["tenants"].is_array() || s["tenants"].size() < 1)
    throw InputError("mig-sweep --scenario " + file + ": tenants: a list of at least one tenant was expected");
  for (const json& t : s["tenants"])
    if (!t.is_object()) throw InputError("mig-sweep --scenario " + file + ": tenants: each tenant is an object");
  return s;
}

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
  std::ifstream in(o.layouts);
  if (!in) throw InputError("mig-sweep --layouts " + o.layouts + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  for (const MigLayoutCheck& c : check_mig_layouts(text.str(), profiles, tenants)) {
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

std::vector<std::string> layout_run_args(const PlatformOptions& o, const std::string& scenario,
                                         const std::vector<std::string>& profiles) {
  std::vector<std::string> args = {"--mode", "mig", "--backend", o.backend, "--device", std::to_string(o.device),
                                   "--scenario", scenario, "--mig-create", joined(profiles, ","),
                                   "--telemetry-hz", fmt::format("{}", o.telemetry_hz), "--cutoff", fmt::format("{}", o.cutoff)};
  if (!o.baseline.empty()) args.insert(args.end(), {"--baseline", o.baseline});
  if (o.phase_s) args.insert(args.end(), {"--duration", fmt::format("{}", *o.phase_s)});
  if (o.rounds) args.insert(args.end(), {"--rounds", std::to_string(*o.rounds), "--until", "fixed"});
  return args;
}

// The last line of a child's output: what it said when it refused.
std::string last_line(const std::string& output) {
  std::string line, last;
  std::stringstream ss(output);
  while (std::getline(ss, line))
    if (!line.empty()) last = line;
  return printable(last, 300);
}

void read_layout_results(SweepLayout& l, const Results& r) {
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
}

// Runs one layout; what became of it goes into `l`. A child that says the scenario is bad is the
// sweep's bad input (every layout would say the same).
void run_layout(const PlatformOptions& o, const json& scenario, const std::string& dir, SweepLayout& l) {
  std::filesystem::create_directories(dir);
  const std::string file = write_layout_scenario(scenario, l.profiles, dir);
  const auto t0 = std::chrono::steady_clock::now();
  const ChildRun run = run_self(o, layout_run_args(o, file, l.profiles), dir + "/run", o.sweep_budget_s + 600.0);
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  l.exit_code = run.exit_code;
  l.results_file = dir + "/run/results.json";
  if (run.exit_code == kExitBadInput) throw InputError("mig-sweep: layout " + l.name + ": " + last_line(run.output));
  if (run.exit_code == kExitInterrupted) {
    l.outcome = LayoutOutcome::interrupted;
    l.reason = "interrupted";
  } else if (run.exit_code == kExitCannotRun) {
    // Its instances could not be made: pre-existing instances (never touched) hold the space it needs.
    l.outcome = LayoutOutcome::skipped_existing;
    l.reason = last_line(run.output);
  } else if (!run.results) {
    l.outcome = LayoutOutcome::failed;
    l.reason = "its run wrote no results: " + last_line(run.output);
  } else {
    l.outcome = run.exit_code == kExitWorkloadFailed ? LayoutOutcome::failed : LayoutOutcome::measured;
    if (l.outcome == LayoutOutcome::failed) l.reason = "a workload failed (exit 4): see " + l.results_file;
    read_layout_results(l, run.results->results);
  }
}

}  // namespace

namespace {

bool intervals_overlap(const std::optional<Estimate>& a, const std::optional<Estimate>& b) {
  if (!a || !b) return true;  // nothing to tell them apart with
  return a->ci_low <= b->ci_high && b->ci_low <= a->ci_high;
}

// Whether every tenant's interval overlaps between the two layouts (tenants matched by name).
bool indistinguishable(const SweepLayout& a, const SweepLayout& b) {
  for (const SweepTenant& t : a.tenants)
    for (const SweepTenant& u : b.tenants)
      if (t.tenant == u.tenant && !intervals_overlap(t.p95_slowdown, u.p95_slowdown)) return false;
  return true;
}

}  // namespace

std::optional<SweepRecommendation> recommend_layout(const std::vector<SweepLayout>& layouts, unsigned tenants) {
  std::vector<const SweepLayout*> measured;
  for (const SweepLayout& l : layouts)
    if (l.outcome == LayoutOutcome::measured) measured.push_back(&l);
  if (measured.empty()) return std::nullopt;
  std::stable_sort(measured.begin(), measured.end(), [](const SweepLayout* a, const SweepLayout* b) {
    if (a->passing != b->passing) return a->passing > b->passing;
    return a->stp.value_or(0.0) > b->stp.value_or(0.0);
  });
  const SweepLayout& best = *measured.front();
  SweepRecommendation r{best.name, best.profiles, "", true, ""};
  r.reason = std::to_string(best.passing) + " of " + std::to_string(tenants) + " tenants pass the cutoff" +
             (best.stp ? ", system throughput " + significant(*best.stp, 3) + " (STP against the exclusive card)" : "");
  if (measured.size() > 1) {
    const SweepLayout& next = *measured[1];
    r.runner_up = next.name;
    if (next.passing == best.passing && indistinguishable(best, next)) {
      r.distinguishable = false;
      r.reason += "; " + next.name + " has as many tenants passing and every tenant's P95 interval overlaps: the runs "
                                     "cannot tell the two apart (measure longer)";
    } else {
      r.reason += "; runner-up " + next.name + ": " + std::to_string(next.passing) + " passing" +
                  (next.stp ? ", STP " + significant(*next.stp, 3) : "");
    }
  }
  return r;
}

int sweep_exit_code(const MigSweepResult& result, unsigned tenants) {
  if (result.interrupted) return kExitInterrupted;
  for (const SweepLayout& l : result.layouts)
    if (l.outcome == LayoutOutcome::failed) return kExitWorkloadFailed;
  if (!result.recommendation) return kExitCannotRun;
  const SweepLayout* best = nullptr;
  for (const SweepLayout& l : result.layouts)
    if (l.name == result.recommendation->layout) best = &l;
  if (!best || best->passing < static_cast<int>(tenants)) {
    for (const SweepTenant& t : best ? best->tenants : std::vector<SweepTenant>{})
      if (t.verdict == Verdict::fail) return kExitVerdictFailed;
    return kExitInconclusive;
  }
  return result.recommendation->distinguishable ? kExitPass : kExitInconclusive;
}

namespace {

MigSweepResult new_sweep_result(const PlatformOptions& o, Nvml& nvml) {
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
  for (const MigInstance& m : nvml.mig_instances(dev)) r.preexisting.push_back(m.profile + " (" + m.uuid + ")");
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

// Whether the next layout fits what is left of the budget, judged by the mean wall time of those run.
bool fits_budget(const MigSweepResult& r, double elapsed_s) {
  double sum = 0.0;
  int n = 0;
  for (const SweepLayout& l : r.layouts)
    if (l.outcome == LayoutOutcome::measured || l.outcome == LayoutOutcome::failed) {
      sum += l.seconds;
      ++n;
    }
  return n == 0 || elapsed_s + sum / n <= r.budget_s;
}

}  // namespace

int mig_sweep_command(const PlatformOptions& o) {
  if (o.scenario.empty()) throw InputError("mig-sweep: --scenario FILE is required");
  const json scenario = read_sweep_scenario(o.scenario);
  const unsigned tenants = static_cast<unsigned>(scenario["tenants"].size());
  auto nvml = platform_nvml("mig-sweep", o.device);
  require_mig_mode(*nvml, o.device);
  const auto layouts = sweep_layouts(o, nvml->mig_gpu_instance_profiles(static_cast<unsigned>(o.device)), tenants);
  const std::string out_dir = o.out.empty() ? platform_default_out("mig-sweep") : o.out;
  platform_check_outputs(o, out_dir, kSweepFiles);
  OutputDir folder("--out", out_dir, kSweepFiles, o.force);
  const std::string& out = folder.path();
  folder.keep();
  MigSweepResult r = new_sweep_result(o, *nvml);
  nvml.reset();  // the children load their own
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    SweepLayout l;
    l.profiles = layouts[i];
    l.name = joined(l.profiles, ",");
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.interrupted || (o.stop && o.stop())) {
      r.interrupted = true;
      l.outcome = LayoutOutcome::interrupted;
      l.reason = "the sweep was interrupted before this layout";
    } else if (!fits_budget(r, elapsed)) {
      l.outcome = LayoutOutcome::skipped_budget;
      l.reason = "--budget " + significant(o.sweep_budget_s, 4) + " s: " + significant(elapsed, 3) +
                 " s spent, and a layout takes about as long as those before it";
    } else {
      std::cerr << "interference-bench: mig-sweep: layout " << i + 1 << " of " << layouts.size() << ": " << l.name << "\n";
      run_layout(o, scenario, out + "/layouts/" + std::to_string(i + 1) + "-" + file_name_part(l.name), l);
      if (l.outcome == LayoutOutcome::interrupted) r.interrupted = true;
    }
    r.layouts.push_back(l);
    write_sweep(out, r);  // after each layout: an interrupted sweep keeps what it finished
  }
  r.recommendation = recommend_layout(r.layouts, tenants);
  r.exit_code = sweep_exit_code(r, tenants);
  write_sweep(out, r);
  std::cout << mig_sweep_markdown(r) << "\nresults: " << out << "/mig-sweep.json\n";
  return r.exit_code;
}

}  // namespace ib
