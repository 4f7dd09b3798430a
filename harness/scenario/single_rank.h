// Amplification's reference (docs/design.md section 13): a collective tenant's slowdown with a neighbour on one
// rank's CPU or GPU, set against that rank's work run alone as one rank beside the same neighbours. Here:
// finding the rank that shares, and deriving the scenario that measures the reference.
#pragma once

#include "harness/core/reference_names.h"
#include "harness/scenario/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace ib {

// The one rank of `collective` whose placement shares a CPU (placement.cpus), or on the CUDA backend a GPU
// (placement.device, else the scenario's), with another tenant of `s`; nullopt with `why` set when no rank
// or more than one does (amplification is defined for a neighbour on exactly one rank's CPU or GPU).
std::optional<int> shared_rank(const Scenario& s, const Tenant& collective, Backend backend, std::string& why);

// `scenarios`, each followed by its single-rank reference when one of its tenants asks for amplification:
// the same scenario with that tenant as one rank placed where its shared rank was (the same name, the same
// neighbours, modes, lengths and repetitions), named single_rank_reference_name.
std::vector<Scenario> with_single_rank_references(const std::vector<Scenario>& scenarios);

}  // namespace ib
