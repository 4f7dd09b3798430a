// Google Benchmark (not a timed test): what the worker protocol costs a tenant with ranks (issue 35), on one
// thread, pipes and scheduling left out: the rendezvous of 8 ranks (each publishes its address and reads the
// 7 others': every kv_put and kv_get written and parsed, the harness's answer written, parsed and applied to
// the rank's WorkerControl, and waited for) and one block's release to 8 ranks ("go" written, parsed,
// applied, taken). Figures in docs/performance.md.
#include "harness/run/messages.h"
#include "harness/run/worker.h"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kRanks = 8;

std::string without_newline(std::string line) {
  line.pop_back();
  return line;
}

void BM_RendezvousOfEightRanks(benchmark::State& state) {
  const std::string address(64, 'a');  // about what gloo publishes for one pair
  const ib::NowFn now = [] { return std::int64_t{0}; };
  for (auto _ : state) {
    std::vector<std::unique_ptr<ib::WorkerControl>> ranks;
    for (int r = 0; r < kRanks; ++r) ranks.push_back(std::make_unique<ib::WorkerControl>(1));
    std::map<std::string, std::string> harness;  // the tenant's published values
    for (int r = 0; r < kRanks; ++r) {
      const auto put = ib::parse_worker_message(
          without_newline(ib::to_line(ib::WorkerMessage{0, ib::KvPutMessage{"gloo/" + std::to_string(r), address}})), {1, 0});
      const auto& p = std::get<ib::KvPutMessage>(put.body);
      harness[p.key] = p.value;
    }
    for (int r = 0; r < kRanks; ++r)
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == r) continue;
        const auto get = ib::parse_worker_message(
            without_newline(ib::to_line(ib::WorkerMessage{0, ib::KvGetMessage{"gloo/" + std::to_string(peer)}})), {1, 0});
        const std::string& key = std::get<ib::KvGetMessage>(get.body).key;
        const auto answer = ib::parse_control_message(without_newline(ib::to_line(ib::ControlMessage{ib::KvCommand{key, harness[key]}})));
        ranks[r]->apply(*answer);
        benchmark::DoNotOptimize(ranks[r]->kv_wait(key, 1, now));
      }
  }
}
BENCHMARK(BM_RendezvousOfEightRanks)->Unit(benchmark::kMicrosecond);

void BM_ReleaseOfOneBlockToEightRanks(benchmark::State& state) {
  std::vector<std::unique_ptr<ib::WorkerControl>> ranks;
  for (int r = 0; r < kRanks; ++r) ranks.push_back(std::make_unique<ib::WorkerControl>(1));
  int block = 0;
  for (auto _ : state) {
    for (auto& rank : ranks) {
      const auto go = ib::parse_control_message(without_newline(ib::to_line(ib::ControlMessage{ib::GoCommand{block, 1.0, {0}}})));
      rank->apply(*go);
      benchmark::DoNotOptimize(rank->next_block(0));
    }
    ++block;
  }
}
BENCHMARK(BM_ReleaseOfOneBlockToEightRanks)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
