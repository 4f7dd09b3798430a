#include "harness/vet/matrix.h"

#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>

namespace ib {

namespace {

using json = nlohmann::json;

// A param's value as written: a JSON number, true or false where it reads as one, else the text.
json param_value(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  try {
    std::size_t used = 0;
    const long long i = std::stoll(text, &used);
    if (used == text.size()) return i;
  } catch (const std::exception&) {
  }
  try {
    std::size_t used = 0;
    const double d = std::stod(text, &used);
    if (used == text.size()) return d;
  } catch (const std::exception&) {
  }
  return text;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);) parts.push_back(p);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

MatrixWorkload workload_from_item(const std::string& item) {
  const std::string where = "matrix --workloads: \"" + printable(item, 80) + "\": ";
  const std::vector<std::string> parts = split(item, ':');
  if (parts.empty() || parts[0].empty()) throw InputError(where + "a workload name was expected (NAME[:KEY=VALUE...])");
  MatrixWorkload w;
  w.name = item;
  w.workload = parts[0];
  json params = json::object();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(where + "\"" + printable(parts[i], 40) + "\": KEY=VALUE was expected");
    const std::string key = parts[i].substr(0, eq);
    if (params.contains(key)) throw InputError(where + "\"" + printable(key, 40) + "\" is given twice");
    params[key] = param_value(parts[i].substr(eq + 1));
  }
  w.tenant = {{"workload", w.workload}, {"params", params}};
  return w;
}

void refuse_bad_count(std::size_t n, const std::string& where) {
  if (n < 2) throw InputError(where + ": at least two workloads were expected (a matrix of one is its diagonal: use run)");
  if (n > kMatrixMaxWorkloads)
    throw InputError(where + ": at most " + std::to_string(kMatrixMaxWorkloads) + " workloads (" + std::to_string(n) +
                     " given: " + std::to_string(n * (n + 1) / 2) + " runs)");
}

}  // namespace

std::vector<MatrixWorkload> matrix_workloads_from_list(const std::string& list) {
  std::vector<MatrixWorkload> out;
  std::set<std::string> names;
  for (const std::string& raw : split(list, ',')) {
    std::string item = raw;
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw InputError("matrix --workloads \"" + printable(list, 80) + "\": an empty item");
    if (!names.insert(item).second)
      throw InputError("matrix --workloads: \"" + printable(item, 80) + "\" is listed twice (its diagonal cell is the "
                                                                           "workload beside a copy of itself)");
    out.push_back(workload_from_item(item));
  }
  refuse_bad_count(out.size(), "matrix --workloads \"" + printable(list, 80) + "\"");
  return out;
}

std::vector<MatrixWorkload> matrix_workloads_from_scenario(const json& scenario, const std::string& file) {
  const std::string where = "matrix --workloads " + file;
  if (!scenario.is_object() || !scenario.contains("tenants") || !scenario["tenants"].is_array())
    throw InputError(where + ": tenants: a list of tenants was expected");
  std::vector<MatrixWorkload> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < scenario["tenants"].size(); ++i) {
    const json& t = scenario["tenants"][i];
    const std::string field = where + ": tenants[" + std::to_string(i) + "]";
    if (!t.is_object()) throw InputError(field + ": an object was expected");
    if (!t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty())
      throw InputError(field + ".name: a name was expected (it names the workload's row and column)");
    MatrixWorkload w;
    w.name = t["name"].get<std::string>();
    if (!names.insert(w.name).second) throw InputError(field + ".name: \"" + printable(w.name, 80) + "\" is used twice");
    // A user's program is a tenant with "command"; a built-in one names its workload (checked by each run).
    w.workload = t.contains("command") ? "command" : t.value("workload", std::string());
    if (w.workload.empty()) throw InputError(field + ": \"workload\" or \"command\" was expected");
    if (t.contains("ranks") && !(t["ranks"].is_number_integer() && t["ranks"].get<long long>() <= 1))
      throw InputError(field + ".ranks: a matrix pairs single processes; measure a collective tenant with run");
    w.tenant = t;
    w.tenant.erase("name");
    w.tenant.erase("role");
    out.push_back(w);
  }
  refuse_bad_count(out.size(), where);
  return out;
}

std::vector<MatrixPair> plan_matrix_pairs(std::size_t n) {
  std::vector<MatrixPair> pairs;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a; b < n; ++b) {
      MatrixPair p;
      p.a = a;
      p.b = b;
      pairs.push_back(p);
    }
  return pairs;
}

std::string pair_tenant_name(std::size_t i, bool copy) { return "w" + std::to_string(i) + (copy ? "-copy" : ""); }

json pair_scenario(const MatrixResult& r, const MatrixPair& p, const json& timing) {
  json s = timing;
  s["name"] = "matrix-" + std::to_string(p.a) + "-" + std::to_string(p.b);
  s["description"] = r.workloads[p.a].name + " beside " + r.workloads[p.b].name;
  s["mode"] = r.mode;
  json a = r.workloads[p.a].tenant, b = r.workloads[p.b].tenant;
  a["name"] = pair_tenant_name(p.a, false);
  a["role"] = "victim";
  b["name"] = pair_tenant_name(p.b, p.a == p.b);
  b["role"] = "aggressor";
  s["tenants"] = json::array({a, b});
  return s;
}

namespace {

// The largest matching of the vertices in `free` (a bit each), by exact search: the lowest free vertex is
// either left alone or matched to one of its free neighbours. `memo` holds each subset's answer.
int matching_size(std::uint32_t free, const std::vector<std::uint32_t>& adjacent, std::vector<int>& memo) {
  if (free == 0) return 0;
  if (memo[free] >= 0) return memo[free];
  int v = 0;
  while (!(free >> v & 1u)) ++v;
  const std::uint32_t rest = free & ~(1u << v);
  int best = matching_size(rest, adjacent, memo);
  for (std::uint32_t u = rest & adjacent[v]; u; u &= u - 1) {
    const int w = __builtin_ctz(u);
    best = std::max(best, 1 + matching_size(rest & ~(1u << w), adjacent, memo));
  }
  return memo[free] = best;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> maximum_matching(std::size_t n,
                                                                  const std::vector<std::pair<std::size_t, std::size_t>>& edges) {
  if (n > kMatrixMaxWorkloads) throw std::invalid_argument("maximum_matching: at most 16 vertices");
  std::vector<std::uint32_t> adjacent(n, 0);
  for (const auto& [a, b] : edges)
    if (a != b && a < n && b < n) {
      adjacent[a] |= 1u << b;
      adjacent[b] |= 1u << a;
    }
  std::vector<int> memo(std::size_t{1} << n, -1);
  std::uint32_t free = n == 0 ? 0 : static_cast<std::uint32_t>((std::uint64_t{1} << n) - 1);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  // Walk the optimum back: keep the first choice (alone first, then the smallest neighbour) that attains it.
  while (free) {
    int v = 0;
    while (!(free >> v & 1u)) ++v;
    const std::uint32_t rest = free & ~(1u << v);
    const int target = matching_size(free, adjacent, memo);
    if (matching_size(rest, adjacent, memo) == target) {
      free = rest;
      continue;
    }
    for (std::uint32_t u = rest & adjacent[v]; u; u &= u - 1) {
      const int w = __builtin_ctz(u);
      if (1 + matching_size(rest & ~(1u << w), adjacent, memo) == target) {
        out.emplace_back(static_cast<std::size_t>(v), static_cast<std::size_t>(w));
        free = rest & ~(1u << w);
        break;
      }
    }
  }
  return out;
}

namespace {

MatrixPacking pack(const MatrixResult& r) {
  const std::size_t n = r.workloads.size();
  MatrixPacking p;
  p.exclusive_devices = n;
  std::vector<bool> placed(n, false);
  for (const auto& [a, b] : maximum_matching(n, r.may_share)) {
    p.devices.push_back({a, b});
    placed[a] = placed[b] = true;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!placed[i]) p.devices.push_back({i});
  std::sort(p.devices.begin(), p.devices.end());
  p.saved = n - p.devices.size();
  if (r.price_exclusive && r.price_shared) {
    p.exclusive_price_per_hour = *r.price_exclusive * static_cast<double>(n);
    double packed = 0.0;
    for (const auto& d : p.devices) packed += d.size() > 1 ? *r.price_shared * static_cast<double>(d.size()) : *r.price_exclusive;
    p.packed_price_per_hour = packed;
    // Seed 000's rule per shared workload: an hour of its exclusive work costs P_e; shared it takes
    // (1 + median slowdown) hours at P_s (the price of one share of a device).
    for (const auto& d : p.devices) {
      if (d.size() < 2) continue;
      for (std::size_t k = 0; k < d.size(); ++k) {
        const MatrixCell& c = r.cell(d[k], d[1 - k]);
        MatrixPacking::WorkloadCost wc;
        wc.workload = d[k];
        wc.exclusive_cost_per_hour_of_work = *r.price_exclusive;
        wc.shared_cost_per_hour_of_work = *r.price_shared * (1.0 + c.median_slowdown.value_or(0.0));
        wc.shared_cheaper = wc.shared_cost_per_hour_of_work < wc.exclusive_cost_per_hour_of_work;
        p.costs.push_back(wc);
      }
    }
  }
  return p;
}

}  // namespace

void judge_matrix(MatrixResult& r) {
  const std::size_t n = r.workloads.size();
  r.may_share.clear();
  r.self_sharing.clear();
  for (std::size_t a = 0; a < n; ++a) {
    if (r.cell(a, a).verdict == Verdict::pass) r.self_sharing.push_back(a);
    for (std::size_t b = a + 1; b < n; ++b)
      if (r.cell(a, b).verdict == Verdict::pass && r.cell(b, a).verdict == Verdict::pass) r.may_share.emplace_back(a, b);
  }
  r.packing = pack(r);
}

int matrix_exit_code(const MatrixResult& r) {
  if (r.interrupted) return kExitInterrupted;
  bool measured = false, failed = false, inconclusive = false;
  for (const MatrixPair& p : r.pairs) {
    measured |= p.run.outcome == MatrixRunOutcome::measured || p.run.outcome == MatrixRunOutcome::failed;
    failed |= p.run.outcome == MatrixRunOutcome::failed;
  }
  for (const MatrixCell& c : r.cells) inconclusive |= c.source == CellSource::measured && c.verdict == Verdict::inconclusive;
  if (failed) return kExitWorkloadFailed;
  if (!measured && !r.prediction) return kExitCannotRun;
  if (inconclusive) return kExitInconclusive;
  return kExitPass;
}

}  // namespace ib
