// `matrix`'s judgement (docs/design.md section 14), pure functions over the workloads and the measured cells:
// the workload list, the pairs to run, which pairs may share, the packing and the exit code. The command
// itself is matrix_command.cpp (platform.h: matrix_command); --predict's model is matrix_predict.h.
#pragma once

#include "harness/results/matrix.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// The most workloads a matrix takes: N(N+1)/2 runs (136 at 16), and the packing's exact search is 2^N.
constexpr std::size_t kMatrixMaxWorkloads = 16;

// --workloads LIST: items separated by ',', each a built-in workload with its params as
// NAME[:KEY=VALUE[:KEY=VALUE...]] (a value that reads as a JSON number, true or false is one, else a string),
// e.g. "host-compute:n=128:reps=8,host-copy,host-idle". Each becomes a tenant {"workload", "params"}; its name
// is the item as written. Throws InputError naming the item (empty, duplicate, a key without '=').
std::vector<MatrixWorkload> matrix_workloads_from_list(const std::string& list);

// The tenants of a scenario file (its "tenants", each a workload or a command, with params and placement as
// written) under their names. Throws InputError naming the file and field.
std::vector<MatrixWorkload> matrix_workloads_from_scenario(const nlohmann::json& scenario, const std::string& file);

// Every unordered pair with the diagonal, in row order: {0,0}, {0,1}, ..., {0,n-1}, {1,1}, ...
std::vector<MatrixPair> plan_matrix_pairs(std::size_t n);

// The scenario one pair's run gets: both workloads as tenants (a: "victim", b: "aggressor"; each is judged),
// named by their index so that a workload beside a copy of itself has two names ("w0", "w0-copy").
nlohmann::json pair_scenario(const MatrixResult& r, const MatrixPair& p, const nlohmann::json& timing);
// The tenant name pair_scenario gives workload `i` as the first (`copy` false) or second tenant of its pair.
std::string pair_tenant_name(std::size_t i, bool copy);

// A largest set of disjoint edges of the graph on n vertices (exact: n <= kMatrixMaxWorkloads), in the order
// they are found; ties go to the edge with the smaller indices first.
std::vector<std::pair<std::size_t, std::size_t>> maximum_matching(std::size_t n,
                                                                  const std::vector<std::pair<std::size_t, std::size_t>>& edges);

// Fills may_share, self_sharing and the packing from the cells: a pair may share when both of its directions
// pass the cutoff (an inconclusive, failed or unmeasured direction does not); the packing puts each matched
// pair on one device and every other workload alone; with prices, each shared workload's cost by seed 000's
// rule (its median slowdown as the time ratio).
void judge_matrix(MatrixResult& r);

// 130 interrupted; 4 a run's workload failed; 3 no pair could be measured; 5 a measured cell is inconclusive
// (the packing treats it as not sharing); else 0. Failing cells are answers, not errors.
int matrix_exit_code(const MatrixResult& r);

}  // namespace ib
