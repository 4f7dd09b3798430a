// The node role from the options and the launcher's variables (node_role.h).
#include "harness/cli/node_role.h"

#include "harness/core/errors.h"
#include "harness/core/text.h"

#include <cstdlib>

namespace ib {

namespace {

std::string env_of(const std::map<std::string, std::string>& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// A whole decimal number in [lo, hi], or -1.
long whole_number(const std::string& s, long lo, long hi) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  const long v = std::strtol(s.c_str(), nullptr, 10);
  return v < lo || v > hi ? -1 : v;
}

int node_rank_of(const RunRequest& o, const std::map<std::string, std::string>& env) {
  if (o.node_rank) return *o.node_rank;
  for (const char* name : {"SLURM_PROCID", "JOB_COMPLETION_INDEX", "RANK"}) {
    const std::string v = env_of(env, name);
    if (v.empty()) continue;
    const long r = whole_number(v, 0, 1023);
    if (r < 0) throw InputError("--node-rank: " + std::string(name) + "=\"" + printable(v, 20) + "\" is not a node rank");
    return static_cast<int>(r);
  }
  throw InputError("--node-rank: --nodes " + std::to_string(o.nodes) +
                   " needs this node's rank (or SLURM_PROCID, JOB_COMPLETION_INDEX or RANK)");
}

void conductor_address(const RunRequest& o, const std::map<std::string, std::string>& env, NodeRole& r) {
  std::string text = o.conductor;
  if (text.empty() && !env_of(env, "MASTER_ADDR").empty()) text = env_of(env, "MASTER_ADDR") + ":" + env_of(env, "MASTER_PORT");
  if (text.empty()) throw InputError("--conductor: --nodes " + std::to_string(o.nodes) + " needs HOST:PORT (or MASTER_ADDR and MASTER_PORT)");
  const std::size_t colon = text.rfind(':');
  const long port = colon == std::string::npos ? -1 : whole_number(text.substr(colon + 1), 1, 65535);
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);  // [v6]:port
  if (host.empty() || port < 0) throw InputError("--conductor: \"" + printable(text, 80) + "\" is not HOST:PORT with a port 1-65535");
  r.host = host;
  r.port = static_cast<int>(port);
}

}  // namespace

NodeRole resolve_node_role(const RunRequest& o, const std::map<std::string, std::string>& env) {
  NodeRole r;
  r.nodes = o.nodes;
  if (o.nodes == 1) {
    if (o.node_rank.value_or(0) != 0 || !o.conductor.empty())
      throw InputError("--node-rank/--conductor: only with --nodes above 1");
    return r;
  }
  r.node_rank = node_rank_of(o, env);
  if (r.node_rank >= o.nodes)
    throw InputError("--node-rank: " + std::to_string(r.node_rank) + " is not one of 0.." + std::to_string(o.nodes - 1));
  conductor_address(o, env, r);
  r.token = o.token;
  if (r.token.empty() && !env_of(env, "SLURM_JOB_ID").empty())
    r.token = env_of(env, "SLURM_JOB_ID") + "." + env_of(env, "SLURM_STEP_ID");
  if (r.token.empty()) throw InputError("--token: --nodes " + std::to_string(o.nodes) + " needs the run's token (or SLURM_JOB_ID)");
  return r;
}

}  // namespace ib
