#include "harness/scenario/scenario.h"
#include "harness/scenario/single_rank.h"

#include "harness/core/json_input.h"
#include "harness/core/text.h"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#ifndef IB_SOURCE_SCENARIOS
#define IB_SOURCE_SCENARIOS ""
#endif

namespace ib {

using nlohmann::json;

const std::vector<std::string>& mode_names() {
  static const std::vector<std::string> names(EnumWords<Mode>::words.begin(), EnumWords<Mode>::words.end());
  return names;
}

const char* mode_name(Mode m) { return to_string(m); }

std::optional<Mode> parse_mode(const std::string& s) { return parse_name<Mode>(s); }

std::vector<int> available_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

namespace {

// Scenario and tenant names end up in file names, Markdown tables and on terminals.
const std::regex& scenario_name_rule() {
  static const std::regex r(R"(^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}$)");
  return r;
}
const std::regex& tenant_name_rule() {
  static const std::regex r(R"(^[A-Za-z0-9][A-Za-z0-9._+#-]{0,63}$)");
  return r;
}
constexpr const char* kScenarioNameRule = "1-80 characters of letters, digits, '.', '_', '+', '-'";
constexpr const char* kTenantNameRule = "1-64 characters of letters, digits, '.', '_', '+', '#', '-'";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

// Collects the file name so every error is "<file>: <path>: <message>".
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  // "<file>: <field path>: <what was expected>", each part shortened (the line is cut to one short
  // line where it is printed).
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(printable_path(file_) + ": " + (path.empty() ? "" : printable(path, 60) + ": ") + message);
  }

  void only_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) const {
    for (const auto& [key, value] : obj.items()) {
      (void)value;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(join_path(path, key), "unknown key (expected one of: " + join(allowed) + ")");
    }
  }

  const json& required(const json& obj, const std::string& path, const std::string& key) const {
    if (!obj.contains(key)) fail(join_path(path, key), "required key is missing");
    return obj.at(key);
  }

  std::string string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string, got " + describe(v));
    return v.get<std::string>();
  }

  // A name that is safe in file names, Markdown tables and terminals: 1-`max` characters of `allowed`.
  std::string safe_name(const json& v, const std::string& path, const std::regex& allowed, const char* rule) const {
    const std::string name = string(v, path);
    if (!std::regex_match(name, allowed)) fail(path, std::string("expected ") + rule + ", got \"" + printable(name, 40) + "\"");
    return name;
  }

  int integer(const json& v, const std::string& path, long long lo, long long hi) const {
    // is_number_unsigned: a value above INT64_MAX would wrap when read as long long.
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<unsigned long long>() > 1ull << 62) ||
        v.get<long long>() < lo || v.get<long long>() > hi)
      fail(path, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describe(v));
    return static_cast<int>(v.get<long long>());
  }

  static std::string join_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  static std::string describe(const json& v) { return std::string(v.type_name()) + " " + printable(v.dump(), 40); }

  // A number in [lo, hi] (finite: NaN and infinities are not numbers in JSON, but 1e400 overflows to one).
  double number_in(const json& v, const std::string& path, double lo, double hi) const {
    if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
      fail(path, "expected a number in [" + significant(lo, 6) + ", " + significant(hi, 6) + "], got " + describe(v));
    return v.get<double>();
  }

 private:
  std::string file_;
};

Placement parse_placement(const Checker& ck, const json& p, const std::string& path, Mode mode,
                          const ValidationContext& ctx, bool lenient) {
  Placement out;
  if (!p.is_object()) ck.fail(path, "expected an object, got " + Checker::describe(p));
  ck.only_keys(p, path,
               {"node", "cpus", "device", "mig_instance", "mig_profile", "mps_active_thread_percentage", "mps_pinned_mem_limit"});
  out.raw = p;
  if (p.contains("node")) out.node = ck.integer(p.at("node"), path + ".node", 0, 1023);
  if (p.contains("cpus")) {
    const std::string cp = path + ".cpus";
    const json& cpus = p.at("cpus");
    if (!cpus.is_array() || cpus.empty()) ck.fail(cp, "expected a non-empty array of CPU numbers, got " + Checker::describe(cpus));
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      const std::string ip = cp + "[" + std::to_string(i) + "]";
      const int c = ck.integer(cpus[i], ip, 0, CPU_SETSIZE - 1);
      if (!ctx.available_cpus.empty() && out.node == 0 &&  // another node's CPUs are that node's business
          std::find(ctx.available_cpus.begin(), ctx.available_cpus.end(), c) == ctx.available_cpus.end()) {
        std::string avail;
        for (int a : ctx.available_cpus) avail += (avail.empty() ? "" : ",") + std::to_string(a);
        ck.fail(ip, "impossible placement: CPU " + std::to_string(c) + " is not available here (available: " + avail + ")");
      }
      out.cpus.push_back(c);
    }
  }
  const bool mig = lenient || mode == Mode::mig, mps = lenient || mode == Mode::mps;
  if (p.contains("device")) {
    if (!lenient && (mode == Mode::mig || mode == Mode::streams))
      ck.fail(path + ".device", std::string("not valid with mode ") + mode_name(mode) +
                                    " (mig places by instance, streams runs every tenant in one process)");
    out.device = ck.integer(p.at("device"), path + ".device", 0, 63);
  }
  if (p.contains("mig_instance")) {
    if (!mig) ck.fail(path + ".mig_instance", std::string("only valid with mode mig (mode is ") + mode_name(mode) + ")");
    out.mig_instance = ck.integer(p.at("mig_instance"), path + ".mig_instance", 0, 63);
  }
  if (p.contains("mig_profile")) {
    if (!mig) ck.fail(path + ".mig_profile", std::string("only valid with mode mig (mode is ") + mode_name(mode) + ")");
    const std::string prof = ck.string(p.at("mig_profile"), path + ".mig_profile");
    static const std::regex profile_re(R"(^[0-9]+g\.[0-9]+gb(\+[a-z]+)?$|^[0-9]+c\.[0-9]+g\.[0-9]+gb$)");
    if (!std::regex_match(prof, profile_re))
      ck.fail(path + ".mig_profile", "expected a MIG profile name like \"1g.18gb\", got \"" + prof + "\"");
    out.mig_profile = prof;
  }
  if (out.mig_instance && out.mig_profile)
    ck.fail(path, "give either mig_instance or mig_profile, not both");
  if (p.contains("mps_active_thread_percentage")) {
    if (!mps)
      ck.fail(path + ".mps_active_thread_percentage", std::string("only valid with mode mps (mode is ") + mode_name(mode) + ")");
    out.mps_active_thread_percentage = ck.integer(p.at("mps_active_thread_percentage"), path + ".mps_active_thread_percentage", 1, 100);
  }
  if (p.contains("mps_pinned_mem_limit")) {
    if (!mps) ck.fail(path + ".mps_pinned_mem_limit", std::string("only valid with mode mps (mode is ") + mode_name(mode) + ")");
    const std::string lim = ck.string(p.at("mps_pinned_mem_limit"), path + ".mps_pinned_mem_limit");
    static const std::regex limit_re(R"(^[1-9][0-9]*[MG]$)");
    if (!std::regex_match(lim, limit_re))
      ck.fail(path + ".mps_pinned_mem_limit", "expected a size like \"512M\" or \"8G\", got \"" + lim + "\"");
    out.mps_pinned_mem_limit = lim;
  }
  return out;
}

}  // namespace

namespace {

// The scenario's own settings, then the command line's overrides.
void parse_settings(const Checker& ck, const json& doc, const ScenarioOverrides& ov, Scenario& s) {
  s.name = ck.safe_name(ck.required(doc, "", "name"), "name", scenario_name_rule(), kScenarioNameRule);
  if (doc.contains("description")) s.description = ck.string(doc.at("description"), "description");
  if (s.description.size() > 2000) ck.fail("description", "at most 2000 characters, got " + std::to_string(s.description.size()));
  const std::string mode_text = ck.string(ck.required(doc, "", "mode"), "mode");
  const auto mode = parse_mode(mode_text);
  if (!mode) ck.fail("mode", "expected one of " + join(mode_names()) + ", got \"" + printable(mode_text, 40) + "\"");
  s.mode = ov.mode.value_or(*mode);
  if (doc.contains("device")) s.device = ck.integer(doc.at("device"), "device", 0, 63);
  if (doc.contains("warmup_s")) s.warmup_s = ck.number_in(doc.at("warmup_s"), "warmup_s", kMinWarmupS, kMaxWarmupS);
  if (doc.contains("duration_s"))
    s.duration_s = ck.number_in(doc.at("duration_s"), "duration_s", kMinDurationS, kMaxDurationS);
  if (doc.contains("repetitions")) s.repetitions = ck.integer(doc.at("repetitions"), "repetitions", 1, kMaxRepetitions);
  if (doc.contains("cutoff")) {
    s.cutoff = ck.number_in(doc.at("cutoff"), "cutoff", 0.0, kMaxCutoff);
    if (s.cutoff <= 0.0) ck.fail("cutoff", "expected a number > 0, got 0");
  }
  if (ov.warmup_s) s.warmup_s = *ov.warmup_s;
  if (ov.duration_s) s.duration_s = *ov.duration_s;
  if (ov.repetitions) s.repetitions = *ov.repetitions;
  if (ov.cutoff) s.cutoff = *ov.cutoff;
  if (ov.collective_timeout_s) s.collective_timeout_s = *ov.collective_timeout_s;
}

// A user's program (`command` instead of `workload` and `params`): the registered "command" workload,
// its params the command object, validated by it (kernels/command/command_spec.h).
const WorkloadSpec& command_workload(const Checker& ck, const json& t, const std::string& tp, const ValidationContext& ctx,
                                     Tenant& tenant) {
  for (const char* other : {"workload", "params"})
    if (t.contains(other)) ck.fail(tp + "." + other, "a tenant has either \"workload\" (with \"params\") or \"command\", not both");
  const WorkloadSpec* spec = ctx.registry ? ctx.registry->find(kCommandWorkload) : nullptr;
  if (!spec) ck.fail(tp + ".command", "this build has no command tenants");
  std::string perr;
  auto params = validate_params(*spec, t.at("command"), perr);
  if (!params) {
    const std::size_t colon = perr.find(": ");
    const std::string key = perr.substr(0, colon);
    ck.fail(tp + ".command" + (key.empty() ? "" : "." + key), perr.substr(colon + 2));
  }
  tenant.workload = kCommandWorkload;
  tenant.params = *params;
  return *spec;
}

// The registered workload a tenant names, on this backend, with its params validated.
const WorkloadSpec& tenant_workload(const Checker& ck, const json& t, const std::string& tp, const ValidationContext& ctx,
                                    Tenant& tenant) {
  if (t.contains("command")) return command_workload(ck, t, tp, ctx, tenant);
  tenant.workload = ck.string(ck.required(t, tp, "workload"), tp + ".workload");
  const WorkloadSpec* spec = ctx.registry ? ctx.registry->find(tenant.workload) : nullptr;
  if (!spec) {
    std::vector<std::string> known;
    if (ctx.registry)
      for (const auto* w : ctx.registry->all()) known.push_back(w->name);
    ck.fail(tp + ".workload", "unknown workload \"" + printable(tenant.workload, 40) + "\" (known: " + join(known) + ")");
  }
  if (spec->backend != ctx.backend)
    ck.fail(tp + ".workload", "\"" + tenant.workload + "\" is a " + backend_name(spec->backend) +
                                  " workload but the backend is " + backend_name(ctx.backend));
  std::string perr;
  auto params = validate_params(*spec, t.contains("params") ? t.at("params") : json::object(), perr);
  if (!params) {
    // validate_params reports "<key>: <message>", or ": <message>" for the params object itself.
    const std::size_t colon = perr.find(": ");
    const std::string key = perr.substr(0, colon);
    ck.fail(tp + ".params" + (key.empty() ? "" : "." + key), perr.substr(colon + 2));
  }
  tenant.params = *params;
  return *spec;
}

// "ranks" (a collective workload's, 1..kMaxRanks) and "rank_placements" (one placement per rank).
void parse_ranks(const Checker& ck, const json& t, const std::string& tp, const Scenario& s,
                 const ValidationContext& ctx, bool lenient_placement, Tenant& tenant) {
  if (!t.contains("ranks")) {
    if (t.contains("rank_placements")) ck.fail(tp + ".rank_placements", "needs \"ranks\"");
    return;
  }
  const WorkloadSpec* spec = ctx.registry ? ctx.registry->find(tenant.workload) : nullptr;
  if (spec && !spec->collective)
    ck.fail(tp + ".ranks", "\"" + tenant.workload + "\" is not a collective: only a collective workload has ranks");
  tenant.ranks = ck.integer(t.at("ranks"), tp + ".ranks", 1, kMaxRanks);
  if (tenant.ranks > 1 && s.mode == Mode::streams)
    ck.fail(tp + ".ranks", "ranks are worker processes; mode streams runs every tenant as a thread of one process "
                           "(use exclusive, timeslice, mps or mig)");
  if (!t.contains("rank_placements")) return;
  const std::string rp = tp + ".rank_placements";
  const json& list = t.at("rank_placements");
  if (!list.is_array() || list.size() != static_cast<std::size_t>(tenant.ranks))
    ck.fail(rp, "expected an array of " + std::to_string(tenant.ranks) + " placements (one per rank), got " +
                    Checker::describe(list));
  for (std::size_t r = 0; r < list.size(); ++r)
    tenant.rank_placements.push_back(
        parse_placement(ck, list[r], rp + "[" + std::to_string(r) + "]", s.mode, ctx, lenient_placement));
}

Tenant parse_tenant(const Checker& ck, const json& t, std::size_t i, const Scenario& s, const ValidationContext& ctx,
                    bool lenient_placement) {
  const std::string tp = "tenants[" + std::to_string(i) + "]";
  if (!t.is_object()) ck.fail(tp, "expected an object (a tenant), got " + Checker::describe(t));
  ck.only_keys(t, tp,
               {"name", "role", "workload", "params", "command", "placement", "ranks", "rank_placements", "amplification"});
  Tenant tenant;
  tenant_workload(ck, t, tp, ctx, tenant);
  tenant.name = tenant.workload + "#" + std::to_string(i);
  if (tenant.workload == kCommandWorkload && s.mode == Mode::streams)
    ck.fail(tp + ".command", "mode streams runs tenants as threads of one process; a command is a process of its own "
                             "(use timeslice, mps or mig)");
  if (t.contains("name")) tenant.name = ck.safe_name(t.at("name"), tp + ".name", tenant_name_rule(), kTenantNameRule);
  if (t.contains("role")) {
    tenant.role = ck.string(t.at("role"), tp + ".role");
    if (tenant.role != "victim" && tenant.role != "aggressor")
      ck.fail(tp + ".role", "expected one of victim, aggressor, got \"" + printable(tenant.role, 40) + "\"");
  }
  tenant.placement = parse_placement(ck, t.contains("placement") ? t.at("placement") : json::object(),
                                     tp + ".placement", s.mode, ctx, lenient_placement);
  parse_ranks(ck, t, tp, s, ctx, lenient_placement, tenant);
  if (t.contains("amplification")) {
    if (!t.at("amplification").is_boolean())
      ck.fail(tp + ".amplification", "expected true or false, got " + Checker::describe(t.at("amplification")));
    tenant.amplification = t.at("amplification").get<bool>();
    if (tenant.amplification && tenant.ranks < 2)
      ck.fail(tp + ".amplification", "needs a collective tenant with \"ranks\" of 2 or more");
  }
  return tenant;
}

// Names are unique within the scenario (they name log files and results); explicit MIG instances too.
void check_tenant_is_unique(const Checker& ck, const Scenario& s, const Tenant& tenant, std::size_t i) {
  const std::string tp = "tenants[" + std::to_string(i) + "]";
  for (std::size_t k = 0; k < s.tenants.size(); ++k) {
    const Tenant& other = s.tenants[k];
    if (other.name == tenant.name) ck.fail(tp + ".name", "duplicate tenant name \"" + tenant.name + "\"");
    if (file_name_part(other.name) == file_name_part(tenant.name))
      ck.fail(tp + ".name", "\"" + tenant.name + "\" and tenants[" + std::to_string(k) + "] \"" + other.name +
                                "\" have one log file name (\"" + file_name_part(tenant.name) +
                                "\"): names must differ in letters, digits, '-' or '.'");
    if (tenant.placement.mig_instance && other.placement.mig_instance == tenant.placement.mig_instance)
      ck.fail(tp + ".placement.mig_instance", "impossible placement: MIG instance " +
                                                  std::to_string(*tenant.placement.mig_instance) +
                                                  " is already taken by tenants[" + std::to_string(k) + "]");
  }
}

}  // namespace

bool ranks_share_a_gpu(const Tenant& t, int scenario_device) {
  const auto where = [&](int r) {
    const Placement& p = t.placement_of(r);
    return std::make_pair(p.node, p.device.value_or(scenario_device));
  };
  for (int rank = 0; rank < t.ranks; ++rank)
    for (int other = 0; other < rank; ++other)
      if (where(other) == where(rank)) return true;
  return false;
}

int local_rank(const Tenant& t, int rank) {
  int before = 0;
  for (int other = 0; other < rank; ++other)
    if (t.placement_of(other).node == t.placement_of(rank).node) ++before;
  return before;
}

TenantAllowances tenant_allowances_s(const Tenant& t) {
  if (t.workload != kCommandWorkload || !t.params.is_object()) return {};
  return {t.params.value("ready_timeout_s", 0.0), t.params.value("step_timeout_s", 0.0)};
}

Scenario parse_scenario(const json& doc, const std::string& file, const ScenarioOverrides& ov,
                        const ValidationContext& ctx) {
  const Checker ck(file);
  if (!doc.is_object()) ck.fail("", "expected a JSON object (a scenario), got " + Checker::describe(doc));
  ck.only_keys(doc, "",
               {"name", "description", "mode", "device", "warmup_s", "duration_s", "repetitions", "cutoff", "tenants"});
  Scenario s;
  s.file = file;
  parse_settings(ck, doc, ov, s);
  const json& tenants = ck.required(doc, "", "tenants");
  if (!tenants.is_array()) ck.fail("tenants", "expected an array of tenants, got " + Checker::describe(tenants));
  if (tenants.empty()) ck.fail("tenants", "expected at least one tenant, got an empty list");
  if (tenants.size() > kMaxTenants)
    ck.fail("tenants", "at most " + std::to_string(kMaxTenants) + " tenants, got " + std::to_string(tenants.size()));
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    Tenant tenant = parse_tenant(ck, tenants[i], i, s, ctx, ov.lenient_placement);
    check_tenant_is_unique(ck, s, tenant, i);
    s.tenants.push_back(std::move(tenant));
  }
  std::size_t asking = 0;
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    if (!s.tenants[i].amplification) continue;
    const std::string path = "tenants[" + std::to_string(i) + "].amplification";
    if (++asking > 1) ck.fail(path, "only one tenant of a scenario may ask for its amplification");
    if (is_single_rank_reference_name(s.name))
      ck.fail("name", std::string("a scenario whose name ends in \"") + kSingleRankSuffix + "\" cannot ask for amplification");
    std::string why;
    const auto rank = shared_rank(s, s.tenants[i], ctx.backend, why);
    if (!rank) ck.fail(path, why);
    s.tenants[i].shared_rank = *rank;
  }
  return s;
}

Scenario load_scenario(const std::string& path, const ScenarioOverrides& overrides, const ValidationContext& ctx) {
  return parse_scenario(read_json_file(path, "scenario file"), path, overrides, ctx);
}

std::vector<std::string> default_aggressors(Backend backend) {
  if (backend == Backend::cuda) return {"gemm", "copy", "latency"};
  return {"host-compute", "host-copy"};
}

namespace {

// --victim-metric's text as a command's "metric".
json victim_metric(const std::string& text) {
  if (text == "heartbeat" || text == "wall") return text;
  if (text.rfind("stdout:", 0) == 0) return json{{"stdout", text.substr(7)}};
  throw InputError("--victim-metric: expected heartbeat, wall or stdout:REGEX, got \"" + printable(text, 40) + "\"");
}

}  // namespace

std::vector<Scenario> victim_command_scenarios(const VictimCommand& v, const ScenarioOverrides& ov,
                                               const ValidationContext& ctx) {
  json command = {{"argv", v.argv}, {"metric", victim_metric(v.metric)}};
  if (const WorkloadSpec* spec = ctx.registry ? ctx.registry->find(kCommandWorkload) : nullptr) {
    std::string error;  // said by the option that carries it, not by a scenario the user never wrote
    if (!validate_params(*spec, command, error)) {
      const bool metric = error.rfind("metric", 0) == 0;
      throw InputError(std::string(metric ? "--victim-metric: " : "--victim-command: ") +
                       error.substr(error.find(": ") + 2));
    }
  }
  std::vector<Scenario> out;
  for (const std::string& a : v.aggressors.empty() ? default_aggressors(ctx.backend) : v.aggressors) {
    const WorkloadSpec* spec = ctx.registry ? ctx.registry->find(a) : nullptr;
    if (!spec || spec->any_backend || spec->backend != ctx.backend) {
      std::vector<std::string> known;
      if (ctx.registry)
        for (const auto* w : ctx.registry->all())
          if (w->backend == ctx.backend && !w->any_backend) known.push_back(w->name);
      throw InputError("--aggressors: unknown workload \"" + printable(a, 40) + "\" for the " +
                       backend_name(ctx.backend) + " backend (known: " + join(known) + ")");
    }
    const json doc = {{"name", "command+" + a},
                      {"description", "the user's command beside " + a + " (--victim-command)"},
                      {"mode", "timeslice"},
                      {"tenants", {{{"name", "command"}, {"role", "victim"}, {"command", command}},
                                   {{"name", a}, {"role", "aggressor"}, {"workload", a}}}}};
    out.push_back(parse_scenario(doc, "--victim-command", ov, ctx));
  }
  return out;
}

void check_unique_scenario_names(const std::vector<Scenario>& scenarios) {
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (file_name_part(scenarios[i].name) == file_name_part(scenarios[k].name) && scenarios[i].name != scenarios[k].name)
        throw InputError(printable_path(scenarios[i].file) + ": name: \"" + scenarios[i].name + "\" shares its log file name \"" +
                         file_name_part(scenarios[i].name) + "\" with \"" + scenarios[k].name + "\" (" +
                         printable(std::filesystem::path(scenarios[k].file).filename().string(), 60) +
                         "); names must differ in letters, digits, '-' or '.'");
      else if (scenarios[i].name == scenarios[k].name)
        throw InputError(printable_path(scenarios[i].file) + ": name: \"" + scenarios[i].name +
                         "\" is also the name of " + printable_path(scenarios[k].file) +
                         " (scenario names must be unique in a run: they name its results and logs)");
}

namespace {
// The suite files in `dir`/suites, sorted.
std::vector<std::string> suite_files(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir((dir + "/suites").c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files.push_back(dir + "/suites/" + n);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

SuiteInfo parse_suite(const std::string& dir, const std::string& file) {
  const json doc = read_json_file(file, "suite file");
  const Checker ck(file);
  if (!doc.is_object()) ck.fail("", "expected a JSON object (a suite)");
  ck.only_keys(doc, "", {"name", "description", "repetitions", "scenarios"});
  SuiteInfo s;
  s.file = file;
  s.name = ck.string(ck.required(doc, "", "name"), "name");
  if (doc.contains("description")) s.description = ck.string(doc.at("description"), "description");
  if (doc.contains("repetitions")) s.repetitions = ck.integer(doc.at("repetitions"), "repetitions", 1, kMaxRepetitions);
  const json& sc = ck.required(doc, "", "scenarios");
  if (!sc.is_object()) ck.fail("scenarios", "expected an object of backend -> scenario files");
  ck.only_keys(sc, "scenarios", {"host", "cuda"});
  for (const auto& [backend, list] : sc.items()) {
    const std::string bp = "scenarios." + backend;
    if (!list.is_array()) ck.fail(bp, "expected an array of scenario files");
    if (list.size() > 1000) ck.fail(bp, "at most 1000 scenario files, got " + std::to_string(list.size()));
    std::vector<std::string> files;
    for (std::size_t i = 0; i < list.size(); ++i)
      files.push_back(dir + "/" + ck.string(list[i], bp + "[" + std::to_string(i) + "]"));
    s.scenarios_by_backend.emplace_back(backend, files);
  }
  return s;
}
}  // namespace

SuiteInfo load_suite(const std::string& dir, const std::string& name) {
  static const std::regex name_re(R"(^[A-Za-z0-9._-]+$)");
  if (!std::regex_match(name, name_re)) throw InputError("--suite: invalid suite name \"" + printable(name, 40) + "\"");
  const std::string file = dir + "/suites/" + name + ".json";
  if (access(file.c_str(), R_OK) != 0) {
    // The names from the files' names, none parsed: a broken suite beside it is not what is wrong here.
    std::vector<std::string> known;
    for (const auto& f : suite_files(dir)) known.push_back(std::filesystem::path(f).stem().string());
    throw InputError("--suite: unknown suite \"" + name + "\" (known: " + join(known) + "; looked in " + dir + "/suites)");
  }
  return parse_suite(dir, file);
}

std::vector<SuiteInfo> list_suites(const std::string& dir) {
  const std::vector<std::string> files = suite_files(dir);
  std::vector<SuiteInfo> out;
  for (const auto& f : files) out.push_back(parse_suite(dir, f));
  return out;
}

std::string find_scenarios_dir() {
  if (const char* env = std::getenv("INTERFERENCE_BENCH_SCENARIOS"); env && *env) return env;
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    std::string exe(buf, static_cast<std::size_t>(n));
    const std::string bin_dir = exe.substr(0, exe.rfind('/'));
    const std::string installed = bin_dir + "/../share/interference-bench/scenarios";
    if (access((installed + "/suites").c_str(), R_OK) == 0) return installed;
  }
  return IB_SOURCE_SCENARIOS;
}

}  // namespace ib
