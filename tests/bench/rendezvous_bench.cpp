// Google Benchmark (not a timed test): what the worker protocol costs a tenant with ranks (issue 35), on one
// thread, pipes and scheduling left out: the rendezvous of 8 ranks (each publishes its address and reads the
// 7 others': every kv_put and kv_get written and parsed, the harness's answer written, parsed and applied to
// the rank's WorkerControl, and waited for) and one block's release to 8 ranks ("go" written, parsed,
// applied, taken). And the conductor's own cost per block in a run across 8 nodes (issue 36): each node's
// clock re-measured (8 exchanges on its control connection, a socket pair here, answered by a thread as a
// node's harness answers) and the block's go, its start time moved onto each node's clock, written to each.
// Figures in docs/performance.md.
#include "harness/process/process.h"
#include "harness/nodes/clock_link.h"
#include "harness/run/launcher.h"
#include "harness/worker/messages.h"
#include "harness/nodes/node_protocol.h"
#include "harness/worker/protocol.h"
#include "harness/nodes/remote_launcher.h"
#include "harness/worker/worker.h"
#include "harness/core/clock.h"

#include <benchmark/benchmark.h>

#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
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

// A node's harness as far as the conductor's per-block work sees it: answers clock requests, reads go lines,
// ends at "end" (the launcher's, when it goes) or end of file.
void answer_as_a_node(int fd) {
  ib::LineReader reader(ib::kMaxNodeLine);
  for (;;) {
    std::vector<std::string> lines;
    const ib::ReadStatus s = ib::read_lines(fd, reader, lines);
    const std::int64_t read_at = ib::monotonic_ns();
    for (const auto& line : lines) {
      if (const auto answer = ib::clock_answer_line(line, read_at, ib::monotonic_ns)) {
        if (!ib::write_all(fd, *answer)) return;
      } else if (line.find("\"end\"") != std::string::npos) {
        return;
      } else {
        benchmark::DoNotOptimize(ib::parse_control_message(line));
      }
    }
    if (s != ib::ReadStatus::open) return;
  }
}

void BM_ConductorPerBlockOverEightNodes(benchmark::State& state) {
  std::vector<ib::JoinedNodeLink> nodes;
  std::vector<int> node_ends;
  std::vector<std::thread> threads;
  for (int r = 1; r <= kRanks; ++r) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return state.SkipWithError("socketpair");
    nodes.push_back({r, "node-" + std::to_string(r), fds[0], {}, {}});
    node_ends.push_back(fds[1]);
    threads.emplace_back(answer_as_a_node, fds[1]);
  }
  {
    ib::ProcessLauncher local;
    ib::NodesLauncher launcher(local, "127.0.0.1", -1, "bench", nodes, 1.0);
    ib::GoCommand go{0, 1.0, {0}};
    for (auto _ : state) {
      launcher.remeasure_clocks(8);
      go.at_ns = ib::monotonic_ns() + 20'000'000;
      const std::string line = ib::to_line(ib::ControlMessage{go});
      for (const auto& n : nodes) ib::write_all(n.control_fd, ib::shift_go_time(line, n.offset.offset_ns));
      ++go.block;
    }
  }  // the launcher says "end" to every node and closes its ends
  for (auto& t : threads) t.join();
  for (int fd : node_ends) ::close(fd);
}
BENCHMARK(BM_ConductorPerBlockOverEightNodes)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
