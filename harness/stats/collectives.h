// The figures of a collective tenant (docs/design.md sections 7 and 13), one function each, on plain numbers:
// nccl-tests' bandwidths, the sample as the max over ranks, the straggler (the last rank to arrive),
// amplification, blast radius and the longest stall against a timeout. Nothing here measures; the collective
// workloads and the analysis call these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib {

enum class Collective { allreduce, allgather, reduce_scatter, alltoall, broadcast };
const char* collective_name(Collective c);
std::optional<Collective> parse_collective(const std::string& name);

// nccl-tests' bus-bandwidth factor for `ranks` ranks: busbw = algbw x factor. allreduce 2(n-1)/n;
// allgather, reduce-scatter and alltoall (n-1)/n; broadcast 1. With one rank the data moves nowhere:
// 0 for all but broadcast. Throws std::invalid_argument for ranks < 1.
double busbw_factor(Collective c, int ranks);

// nccl-tests' algorithm bandwidth, bytes / seconds, where `bytes` is nccl-tests' "size" of the
// collective: the per-rank buffer for allreduce and broadcast, the whole gathered output for allgather,
// the whole input for reduce-scatter and alltoall (count x ranks x element size).
double algbw(double bytes, double seconds);
double busbw(Collective c, int ranks, double bytes, double seconds);  // algbw x busbw_factor

// A collective tenant's sample (nccl-tests -I): the slowest rank's duration of that iteration.
// `per_rank` holds one duration per rank; throws std::invalid_argument when empty.
double collective_sample(const std::vector<double>& per_rank);

// The straggler: the rank that arrived last. Every rank's duration of an iteration runs from its own
// arrival (its start) to a completion all ranks share, so the rank that arrives first and waits has the
// longest duration and the late rank, the one that held the others up, the shortest: the maximum duration
// names the wrong rank. Per iteration the last to arrive is the rank with the latest arrival (the lowest
// such rank on an exact tie); the straggler is the rank that was last most often (the lowest on a tie in
// counts), with the fraction of iterations it was. `arrival_ns` is [rank][iteration] on one clock (equal
// lengths); throws std::invalid_argument with no rank, no iteration or unequal lengths.
struct Straggler {
  int rank = 0;
  double share = 0.0;  // fraction of the iterations in which it arrived last
};
Straggler straggler_rank(const std::vector<std::vector<std::int64_t>>& arrival_ns);

// Amplification: the collective tenant's slowdown with an aggressor on one rank's GPU, over the same
// aggressor's slowdown of that rank's work on one GPU alone (both as P95(C)/P95(E) - 1). 1: the job
// suffers what one GPU suffers; n: the sharing of one GPU costs the job n times as much. Undefined
// (nullopt) when the single-GPU slowdown is below `min_single` (nothing to amplify).
std::optional<double> amplification(double collective_slowdown, double single_gpu_slowdown, double min_single = 0.01);

// Blast radius: how many ranks' iterations slowed, i.e. whose median colocated duration exceeds their
// median exclusive one by more than `threshold` (a fraction). [rank][iteration] in each phase.
int blast_radius(const std::vector<std::vector<double>>& exclusive, const std::vector<std::vector<double>>& colocated,
                 double threshold);

// The longest single collective stall (the largest sample) and its margin to a timeout the user names:
// timeout / stall (2: the stall was half the timeout). A margin below 1 means the job would have been
// killed by that timeout.
struct StallMargin {
  double longest_stall_s = 0.0;
  double timeout_s = 0.0;
  double margin = 0.0;
};
StallMargin stall_margin(const std::vector<double>& samples, double timeout_s);

}  // namespace ib
