// `run` across nodes, the cli's part (run_nodes.h).
#include "harness/cli/run_nodes.h"

#include "harness/core/errors.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/text.h"
#include "harness/nvml/nvml.h"
#include "harness/process/process.h"
#include "harness/results/results_reader.h"
#include "harness/nodes/node_agent.h"
#include "harness/vet/devices.h"
#include "reports/json/results_json.h"

#include <algorithm>
#include <iostream>

namespace ib {

namespace {

// What a node says it has in its hello: its host, and every GPU its NVML sees (none without NVML).
nlohmann::json node_devices() {
  std::vector<DeviceRecord> out{this_host_record()};
  try {
    const auto nvml = Nvml::load();
    for (unsigned i = 0; i < nvml->device_count(); ++i) out.push_back(gpu_device_record(*nvml, i, out.front().node));
  } catch (const NvmlError&) {
    // no NVML on this node: its host alone
  }
  return nlohmann::json::parse(devices_to_json(out).dump());
}

// "0-3,8,10-11" (`cpus` sorted).
std::string cpu_ranges(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t k = 0; k < cpus.size();) {
    std::size_t last = k;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[k]) + (last > k ? "-" + std::to_string(cpus[last]) : "");
    k = last + 1;
  }
  return out;
}

}  // namespace

int serve_as_node(const NodeParts& nodes, StopSignals& stop) {
  NodeAgentOptions a;
  a.conductor_host = nodes.role.host;
  a.conductor_port = nodes.role.port;
  a.node_rank = nodes.role.node_rank;
  a.nodes = nodes.role.nodes;
  a.token = nodes.role.token;
  a.join_timeout_s = nodes.join_timeout_s;
  a.worker_exe = nodes.worker_exe;
  a.log_dir = nodes.log_dir;
  a.devices = node_devices();
  a.cpus = available_cpus();
  make_dirs(a.log_dir, "--out");
  return run_node_agent(a, {stop.fd(), stop.check()});
}

void check_placed_nodes(const std::vector<Scenario>& scenarios, int nodes) {
  for (const Scenario& s : scenarios)
    for (const Tenant& t : s.tenants)
      for (int r = 0; r < t.ranks; ++r)
        if (t.placement_of(r).node >= nodes)
          throw InputError(s.file + ": tenant " + t.name + " is placed on node " + std::to_string(t.placement_of(r).node) +
                           (nodes == 1 ? ", which needs --nodes" : ", not one of the run's --nodes " + std::to_string(nodes)));
}

void check_node_cpus(const std::vector<Scenario>& scenarios, const std::vector<JoinedNodeLink>& nodes) {
  for (const JoinedNodeLink& n : nodes) {
    if (n.cpus.empty()) continue;  // a node that did not say (before issue 49): its worker refuses what it lacks
    for (const Scenario& s : scenarios)
      for (std::size_t i = 0; i < s.tenants.size(); ++i) {
        const Tenant& t = s.tenants[i];
        for (int r = 0; r < t.ranks; ++r) {
          const Placement& p = t.placement_of(r);
          if (p.node != n.node_rank) continue;
          for (std::size_t k = 0; k < p.cpus.size(); ++k) {
            if (std::find(n.cpus.begin(), n.cpus.end(), p.cpus[k]) != n.cpus.end()) continue;
            // Short: a line of bad input is cut at 200 characters (app.cpp), the node's CPUs last.
            throw PlacementError(s.file + ": tenants[" + std::to_string(i) + "]." +
                                 (t.rank_placements.empty() ? std::string("placement") : "rank_placements[" + std::to_string(r) + "]") +
                                 ".cpus[" + std::to_string(k) + "]: impossible placement: node " + std::to_string(n.node_rank) +
                                 " (" + printable(n.host, 24) + ") has no CPU " + std::to_string(p.cpus[k]) +
                                 " for it (its CPUs: " + cpu_ranges(n.cpus) + ")");
          }
        }
      }
  }
}

ConductedNodes::~ConductedNodes() {
  launcher.reset();  // says "end" to every node first
  close_fd(open.listen_fd);
}

std::unique_ptr<ConductedNodes> conduct_nodes(const NodeParts& nodes, Launcher& local, Meta& meta, StopSignals& stop) {
  const NodeRole& role = nodes.role;
  auto c = std::make_unique<ConductedNodes>();
  ConductorOptions co{role.host, role.port, role.nodes, role.token, nodes.join_timeout_s};
  co.stop = {stop.fd(), stop.check()};
  co.on_refused = [](const std::string& r) { std::cerr << "interference-bench: refused a connection: " << r << "\n"; };
  c->open = open_conductor(co);
  for (const JoinedNodeLink& n : c->open.nodes) {
    std::cerr << "interference-bench: " << describe_node(n) << "\n";
    NodeRecord record;
    record.node_rank = n.node_rank;
    record.host = n.host;
    record.clock_offset_ns = n.offset.offset_ns;
    record.clock_uncertainty_ns = n.offset.uncertainty_ns;
    record.clock_rtt_ns = n.offset.rtt_ns;
    try {
      record.devices = devices_from_json(nlohmann::ordered_json::parse(n.devices.dump()),
                                         "node " + std::to_string(n.node_rank) + "'s hello");
    } catch (const ResultsFileError& e) {  // a node's description is for the record: the run goes on without it
      std::cerr << "interference-bench: " << e.what() << " (its devices are not recorded)\n";
    }
    meta.nodes.push_back(std::move(record));
  }
  c->launcher = std::make_unique<NodesLauncher>(local, role.host, c->open.listen_fd, role.token, c->open.nodes, 30.0, co.stop);
  return c;
}

void attach_nodes(ConductedNodes& nodes, OrchestratorOptions& oo) {
  oo.launcher = nodes.launcher.get();
  oo.before_block = [l = nodes.launcher.get()] { l->remeasure_clocks(kClockExchangesPerBlock); };
  for (const JoinedNodeLink& n : nodes.open.nodes)
    oo.start_lead_s = std::max(oo.start_lead_s, 0.02 + 2e-9 * static_cast<double>(n.offset.rtt_ns));
}

void record_node_clocks(const NodesLauncher& launcher, Meta& meta) {
  for (const NodesLauncher::NodeClock& c : launcher.clocks())
    for (NodeRecord& n : meta.nodes)
      if (n.node_rank == c.node_rank) {
        n.clock_measurements = c.measurements;
        n.clock_offset_span_ns = c.highest_offset_ns - c.lowest_offset_ns;
      }
}

}  // namespace ib
