// The results reader's meta: the run's tool, host, devices (meta.devices[]), backend, stopping rule, limits and
// scheduler; and a run's mode_config (the device facts, MPS, MIG instances and their assignment).
#include "harness/results/results_reading.h"

#include <cstdint>
#include <utility>

namespace ib::results_reading {

namespace {

std::optional<CurrentPending> read_current_pending(const Field& f) {
  if (f.is_null()) return std::nullopt;
  return CurrentPending{f["current"].boolean(), f["pending"].boolean()};
}

// meta.devices[i] (schema 2.1; reports/json/results_json.cpp device_json).
DeviceRecord read_device(const Field& f) {
  DeviceRecord d;
  d.kind = f["kind"].word<DeviceKind>();
  d.index = f["index"].optional_integer<int>();
  d.name = f["name"].string();
  d.uuid = optional_string(f["uuid"]);
  d.node = f["node"].string();
  d.driver_version = optional_string(f["driver_version"]);
  d.cuda_version = optional_string(f["cuda_version"]);
  d.vbios_version = optional_string(f["vbios_version"]);
  d.compute_mode = optional_string(f["compute_mode"]);
  d.mig_mode = read_current_pending(f["mig_mode"]);
  d.ecc = read_current_pending(f["ecc"]);
  d.power_limit_w = f["power_limit_w"]["enforced"].optional_number();
  d.default_power_limit_w = f["power_limit_w"]["default"].optional_number();
  const Field pcie = f["pcie"];
  d.pcie_gen_current = pcie["gen_current"].optional_integer<unsigned>();
  d.pcie_width_current = pcie["width_current"].optional_integer<unsigned>();
  d.pcie_gen_max = pcie["gen_max"].optional_integer<unsigned>();
  d.pcie_width_max = pcie["width_max"].optional_integer<unsigned>();
  d.memory_total_bytes = f["memory_total_bytes"].optional_integer<unsigned long long>();
  d.cores_online = f["cores"]["online"].optional_integer<unsigned>();
  d.cores_usable = f["cores"]["usable"].optional_integer<unsigned>();
  d.error = f["error"].string();
  d.unsupported = f["unsupported"].strings();
  return d;
}

// runs[].mode_config (reports/json/results_json.cpp mode_config_json): every key the writer writes has a
// field; a device fact the reader does not know is kept in `unmapped`, as the writer would write it.
ModeDeviceFacts read_device_facts(const Field& f) {
  ModeDeviceFacts d;
  const std::pair<const char*, std::optional<std::string>*> texts[] = {
      {"nvml", &d.nvml}, {"name", &d.name}, {"uuid", &d.uuid}, {"compute_mode", &d.compute_mode},
      {"compute_policy", &d.compute_policy}, {"measures", &d.measures}};
  f.each_member([&](const std::string& key, const Field& v) {
    for (const auto& [k, field] : texts)
      if (key == k) {
        *field = v.string();
        return;
      }
    if (key == "mig_mode") {
      d.mig_mode = MigModeState{v["current"].boolean(), v["pending"].boolean()};
    } else if (key == "mig_created") {
      d.mig_created.emplace();
      for (std::size_t i = 0; i < v.size(); ++i)
        d.mig_created->push_back({v[i]["profile"].string(), v[i]["gpu_instance_id"].integer<unsigned>(),
                                  v[i]["compute_instance_id"].integer<unsigned>()});
    } else {
      d.unmapped[key] = v.free_form();
    }
  });
  return d;
}

}  // namespace

Meta read_meta(const Field& f, bool& raw_samples) {
  if (f["tool"].string() != "interference-bench") f["tool"].fail("\"" + f["tool"].string() + "\" is not interference-bench");
  Meta m;
  m.version = f["version"].string();
  m.git_sha = f["git_sha"].string();
  m.argv = f["argv"].strings();
  m.start_time = f["start_time"].string();
  m.host = f["host"]["hostname"].string();
  m.host_cpus = f["host"]["cpus"].integer<int>();
  if (f.has("devices"))  // schema 2.1; a 2.0 file has none
    for (std::size_t i = 0; i < f["devices"].size(); ++i) m.devices.push_back(read_device(f["devices"][i]));
  m.backend = f["backend"].string();
  m.backend_requested = f["backend_requested"].string();
  m.backend_note = f["backend_note"].string();
  m.suite = f["suite"].string();
  m.bootstrap_seed = f["bootstrap"]["seed"].integer<std::uint64_t>();
  m.bootstrap_resamples = f["bootstrap"]["resamples"].integer<int>();
  if (f.has("stopping")) {
    const Field st = f["stopping"];
    m.until = st["until"].word<StopRule>();
    m.rounds = st["rounds"].integer<int>();
    m.max_duration_s = st["max_duration_s"].optional_number();
    m.resolution = st["resolution"].number();
  }
  const Field limits = f["foreign_load_limits"];
  m.max_foreign_cpus = limits["max_foreign_cpus"].number();
  m.max_steal_cpus = limits["max_steal_cpus"].number();
  m.max_reruns = limits["max_reruns"].integer<int>();
  m.telemetry = f["telemetry"].free_form();
  raw_samples = f["raw_samples"].boolean();
  if (f.has("scheduler")) {  // schema 2.4, and only when a scheduler launched the run
    const Field s = f["scheduler"];
    const std::string kind = s["kind"].string();
    if (kind != "slurm" && kind != "kubernetes") s["kind"].fail("\"" + kind + "\" is not slurm or kubernetes");
    m.scheduler = SchedulerFacts{kind, s["job_id"].string(), s["array_job_id"].string(),
                                 s["task_index"].optional_integer<int>(), s["node"].string()};
  }
  if (f.has("nodes"))  // schema 2.5, and only in a run across nodes
    for (std::size_t i = 0; i < f["nodes"].size(); ++i) {
      const Field n = f["nodes"][i];
      NodeRecord r;
      r.node_rank = n["node_rank"].integer<int>();
      r.host = n["host"].string();
      r.clock_offset_ns = n["clock_offset_ns"].integer<std::int64_t>();
      r.clock_uncertainty_ns = n["clock_uncertainty_ns"].integer<std::int64_t>();
      r.clock_rtt_ns = n["clock_rtt_ns"].integer<std::int64_t>();
      if (n.has("clock_measurements")) {  // schema 2.6
        r.clock_measurements = n["clock_measurements"].integer<int>();
        r.clock_offset_span_ns = n["clock_offset_span_ns"].integer<std::int64_t>();
        for (std::size_t d = 0; d < n["devices"].size(); ++d) r.devices.push_back(read_device(n["devices"][d]));
      }
      m.nodes.push_back(std::move(r));
    }
  return m;
}

ModeConfig read_mode_config(const Field& f) {
  ModeConfig c;
  c.mode = f["mode"].string();
  if (f.has("device")) c.device = read_device_facts(f["device"]);
  if (f.has("mps")) {
    const Field m = f["mps"];
    c.mps = MpsDaemonInfo{m["pipe_directory"].string(), m["log_directory"].string(), m["daemon"].string(),
                          m["fault_propagation"].string()};
  }
  if (f.has("mig")) {
    c.mig.emplace();
    const Field instances = f["mig"]["instances"];
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const Field x = instances[i];
      MigInstance m;
      m.index = x["index"].integer<int>();
      m.gpu_instance_id = x["gpu_instance_id"].integer<unsigned>();
      m.compute_instance_id = x["compute_instance_id"].integer<unsigned>();
      m.profile = x["profile"].string();
      m.uuid = x["uuid"].string();
      m.sm_count = x["sm_count"].integer<unsigned>();
      m.memory_bytes = x["memory_bytes"].integer<unsigned long long>();
      c.mig->instances.push_back(m);
    }
    f["mig"]["assignment"].each_member([&](const std::string& k, const Field& v) { c.mig->assignment[k] = v.string(); });
    if (f["mig"].has("rank_assignment"))
      f["mig"]["rank_assignment"].each_member([&](const std::string& k, const Field& ranks) {
        for (std::size_t r = 0; r < ranks.size(); ++r) c.mig->rank_assignment[k].push_back(ranks[r].string());
      });
  }
  if (f.has("exclusive_source")) c.exclusive_source = f["exclusive_source"].string();
  return c;
}

}  // namespace ib::results_reading

namespace ib {

std::vector<DeviceRecord> devices_from_json(const nlohmann::ordered_json& devices, const std::string& origin) {
  using namespace results_reading;
  const Source source{origin, ""};
  const Field list(devices, "devices", source);
  std::vector<DeviceRecord> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(read_device(list[i]));
  return out;
}

}  // namespace ib
