// host-collective: nccl-tests' collectives on gloo (TCP, this host), one sample = `reps` collectives.
// Sizes are nccl-tests' "size" S (bytes, float32 elements): allreduce and broadcast S per rank;
// allgather S of output per rank (S/n contributed); reduce_scatter S of input per rank (S/n of the sum
// kept, gloo's halving-doubling algorithm, in place); alltoall S of input and of output per rank (S/n to
// each peer). Work per sample: reps x S bytes ("B"), so the phase throughput is nccl-tests' algbw; busbw
// is algbw x the factor of harness/stats/collectives.h. Correctness (setup): one collective on known
// values, every output element checked exactly (small integers in float32 are exact).
// Ranks agree on every sample (continue_together): a one-int allgather of "I want another", untimed. Each
// sample the rank first writes its input (untimed), then is timed from its arrival at the collective. Each
// sample also reports its longest single collective (kLongestCollectiveCounter): the stall a timeout sees.
// One rank (an amplification's single-rank reference, harness/scenario/single_rank.h): gloo moves nothing
// for a group of one, so each collective is instead the rank's own S bytes copied once through memory
// (what NCCL's one-rank collectives do out of place): the rank's local traffic without the network.
#include "kernels/host/gloo_collective.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include <time.h>

#ifdef IB_HAVE_GLOO
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#endif

namespace ib {

namespace {

enum class Op { allreduce, allgather, reduce_scatter, alltoall, broadcast };

Op op_of(const std::string& name) {
  if (name == "allgather") return Op::allgather;
  if (name == "reduce_scatter") return Op::reduce_scatter;
  if (name == "alltoall") return Op::alltoall;
  if (name == "broadcast") return Op::broadcast;
  return Op::allreduce;
}

#ifdef IB_HAVE_GLOO

// gloo's store on the harness's rendezvous. gloo's keys are ranks' numbers; values its pairs' addresses.
class RendezvousStore final : public gloo::rendezvous::Store {
 public:
  RendezvousStore(Rendezvous& r, double timeout_s) : r_(r), timeout_s_(timeout_s) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    r_.put(name(key), std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const std::string v = r_.get(name(key), timeout_s_);
    return {v.begin(), v.end()};
  }
  void wait(const std::vector<std::string>& keys) override {
    for (const auto& k : keys) r_.get(name(k), timeout_s_);
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override { wait(keys); }

 private:
  // Keys as the rendezvous accepts them: gloo's own when they fit, else hex.
  static std::string name(const std::string& key) {
    bool plain = !key.empty() && key.size() < 150;
    for (char c : key) plain &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (plain) return "gloo/" + key;
    static const char* digits = "0123456789abcdef";
    std::string hex = "gloo/x";
    for (unsigned char c : key.substr(0, 90)) {
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    return hex;
  }
  Rendezvous& r_;
  double timeout_s_;
};

class GlooCollective final : public Workload {
 public:
  explicit GlooCollective(const Params& p)
      : op_(op_of(p.at("op").get<std::string>())),
        bytes_(static_cast<std::size_t>(p.at("kib").get<std::int64_t>()) * 1024),
        reps_(p.at("reps").get<int>()),
        input_passes_(p.at("input_passes").get<int>()),
        timeout_(std::chrono::milliseconds(static_cast<std::int64_t>(p.at("timeout_s").get<double>() * 1000))) {}

  void setup(const ExecContext& ctx) override {
    if (!ctx.rendezvous) throw WorkloadError("host-collective: no rendezvous (run by the harness only)");
    rank_ = ctx.rank.rank;
    n_ = ctx.rank.world_size;
    if (bytes_ % (4u * static_cast<std::size_t>(n_)) != 0)
      throw WorkloadError("host-collective: kib x 1024 must split into " + std::to_string(n_) + " ranks of float32");
    gloo::transport::tcp::attr attr;
    // Ranks of one node: loopback only; across nodes, the address the node's harness reaches its conductor by
    // (set by the harness, nodes/node_agent.h).
    const char* node_address = std::getenv("IB_NODE_ADDRESS");
    attr.hostname = node_address && *node_address ? node_address : "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank_, n_);
    context->setTimeout(timeout_);
    RendezvousStore store(*ctx.rendezvous, timeout_.count() / 1000.0);
    try {
      context->connectFullMesh(store, device);
    } catch (const std::exception& e) {
      throw WorkloadError(std::string("host-collective: rank ") + std::to_string(rank_) + " could not connect: " + e.what());
    }
    context_ = context;
    const std::size_t elems = bytes_ / 4;
    in_.assign(op_ == Op::allgather ? elems / static_cast<std::size_t>(n_) : elems, 0.0f);
    out_.assign(elems, 0.0f);
    if (op_ == Op::reduce_scatter)  // in place on out_; each rank keeps its S/n
      reduce_scatter_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
          context_, std::vector<float*>{out_.data()}, static_cast<int>(elems),
          std::vector<int>(static_cast<std::size_t>(n_), static_cast<int>(elems / static_cast<std::size_t>(n_))));
    check();
    if (n_ == 1) copy_.assign(out_.size(), 0.0f);
  }

  // The rank first writes its input (its own part of the iteration, as a training step writes the gradients
  // it then reduces), then arrives at the collective: the sample is timed from that arrival to the rank's
  // completion. Without a part of its own between the ranks' vote and the collective, every rank would
  // arrive when the vote released it: at the same moment up to the vote's fixed order (rank 1 about 40 us
  // after rank 0 on loopback, with or without a neighbour), so the arrivals could not tell which rank a
  // neighbour slowed (docs/methodology.md, the straggler).
  void run_sample(const ExecContext&, SampleOutput& out) override {
    prepare();
    const std::int64_t arrived = monotonic_now_ns();
    std::int64_t longest_ns = 0;  // the longest single collective: the stall a timeout sees
    for (int r = 0; r < reps_; ++r) {
      const std::int64_t t0 = monotonic_now_ns();
      if (n_ == 1) {
        std::memcpy(copy_.data(), out_.data(), out_.size() * sizeof(float));
        std::swap(copy_, out_);  // the next copy reads what this one wrote: it cannot be skipped
      } else {
        collective();
      }
      longest_ns = std::max(longest_ns, monotonic_now_ns() - t0);
    }
    out.counters[kLongestCollectiveCounter] = static_cast<double>(longest_ns) * 1e-9;
    out.reported_time = SampleOutput::ReportedTime{arrived, monotonic_now_ns()};
  }

  // Every rank's "I want another" gathered (an allgather of one int, not an allreduce: gloo's allreduce of one
  // element let rank 1 go about 40 us after rank 0 on loopback every time, a fixed order that would make
  // rank 1 look late in every sample; in the allgather's exchange no rank is released in a fixed order).
  bool continue_together(bool mine) override {
    if (n_ == 1) return mine;
    int flag = mine ? 1 : 0;
    votes_.assign(static_cast<std::size_t>(n_), 0);
    gloo::AllgatherOptions opts(context_);
    opts.setInput(&flag, 1);
    opts.setOutput(votes_.data(), votes_.size());
    opts.setTag(kVoteTag);
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
    return std::all_of(votes_.begin(), votes_.end(), [](int v) { return v == 1; });
  }

  Work work_per_sample() const override { return {static_cast<double>(bytes_) * reps_, "B"}; }

  void teardown() override {
    reduce_scatter_.reset();
    context_.reset();
    in_.clear();
    out_.clear();
    copy_.clear();
  }

 private:
  static constexpr std::uint32_t kDataTag = 1, kVoteTag = 2;

  // CLOCK_MONOTONIC, the clock every sample's start is on (harness/exec/host_executor.cpp).
  static std::int64_t monotonic_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }

  // The rank's input written `input_passes` times: the buffer the collective reads (in place: out_), every
  // element rank + 1 in the end. More passes are more of the rank's own work per iteration (a training step
  // computes for milliseconds before it reduces), so a neighbour on its core shows as lateness beyond the
  // few milliseconds a woken task runs before it shares its core (CFS's sleeper credit).
  void prepare() {
    std::vector<float>& input = op_ == Op::allreduce || op_ == Op::reduce_scatter || n_ == 1 ? out_ : in_;
    for (int pass = input_passes_ - 1; pass >= 0; --pass) {
      std::fill(input.begin(), input.end(), static_cast<float>(rank_ + 1 + pass));
      asm volatile("" : : : "memory");  // every pass's stores happen: none is dead to the compiler
    }
  }

  void collective() {
    switch (op_) {
      case Op::allreduce: {
        gloo::AllreduceOptions opts(context_);
        opts.setOutput(out_.data(), out_.size());
        opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
        opts.setTag(kDataTag);
        opts.setTimeout(timeout_);
        gloo::allreduce(opts);
        return;
      }
      case Op::allgather: {
        gloo::AllgatherOptions opts(context_);
        opts.setInput(in_.data(), in_.size());
        opts.setOutput(out_.data(), out_.size());
        opts.setTag(kDataTag);
        opts.setTimeout(timeout_);
        gloo::allgather(opts);
        return;
      }
      case Op::reduce_scatter: reduce_scatter_->run(); return;
      case Op::alltoall: {
        gloo::AlltoallOptions opts(context_);
        opts.setInput(in_.data(), in_.size());
        opts.setOutput(out_.data(), out_.size());
        opts.setTag(kDataTag);
        opts.setTimeout(timeout_);
        gloo::alltoall(opts);
        return;
      }
      case Op::broadcast: {
        gloo::BroadcastOptions opts(context_);
        if (rank_ == 0) opts.setInput(in_.data(), in_.size());
        opts.setOutput(out_.data(), out_.size());
        opts.setRoot(0);
        opts.setTag(kDataTag);
        opts.setTimeout(timeout_);
        gloo::broadcast(opts);
        return;
      }
    }
  }

  // One collective on known values, each output element against what it must be.
  void check() {
    const std::size_t chunk = out_.size() / static_cast<std::size_t>(n_);
    for (std::size_t j = 0; j < in_.size(); ++j)  // alltoall: the j-th element goes to rank j / chunk
      in_[j] = static_cast<float>(op_ == Op::alltoall ? 1000 * (rank_ + 1) + static_cast<int>(j / chunk) : rank_ + 1);
    const bool in_place = op_ == Op::allreduce || op_ == Op::reduce_scatter;
    for (std::size_t j = 0; j < out_.size(); ++j) out_[j] = in_place ? static_cast<float>(rank_ + 1) : -1.0f;
    collective();
    for (std::size_t j = 0; j < out_.size(); ++j) {
      const int from = static_cast<int>(j / chunk);
      if (op_ == Op::reduce_scatter && from != rank_) continue;  // only this rank's part is defined
      float want = 0.0f;
      switch (op_) {
        case Op::allreduce:
        case Op::reduce_scatter: want = static_cast<float>(n_ * (n_ + 1) / 2); break;
        case Op::allgather: want = static_cast<float>(from + 1); break;
        case Op::alltoall: want = static_cast<float>(1000 * (from + 1) + rank_); break;
        case Op::broadcast: want = 1.0f; break;
      }
      if (out_[j] != want)
        throw WorkloadError("host-collective: rank " + std::to_string(rank_) + " element " + std::to_string(j) + " is " +
                            std::to_string(out_[j]) + ", expected " + std::to_string(want));
    }
  }

  Op op_;
  std::size_t bytes_;
  int reps_;
  int input_passes_;  // times the input is written before each sample (the rank's own part of an iteration)
  std::chrono::milliseconds timeout_;
  int rank_ = 0, n_ = 1;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<float>> reduce_scatter_;
  std::vector<float> in_, out_, copy_;  // copy_: one rank only (run_sample)
  std::vector<int> votes_;                // continue_together: every rank's flag
};

Support gloo_supported(const Params&, const ExecContext&) { return {}; }
std::unique_ptr<Workload> make_gloo(const Params& p) { return std::make_unique<GlooCollective>(p); }

#else

Support gloo_supported(const Params&, const ExecContext&) {
  return {false, "built without gloo (Debian/Ubuntu: apt-get install libgloo-dev, then rebuild)"};
}
std::unique_ptr<Workload> make_gloo(const Params&) { throw WorkloadError("host-collective: built without gloo"); }

#endif

}  // namespace

void register_gloo_workloads(Registry& registry) {
  using T = ParamSpec::Type;
  WorkloadSpec spec{"host-collective", Backend::host,
                    "A collective of the tenant's ranks on gloo over TCP (nccl-tests' sizes; B/s = algbw)",
                    {{"op", T::string, "allreduce", {}, {}, {"allreduce", "allgather", "reduce_scatter", "alltoall",
                                                              "broadcast"},
                      "the collective"},
                     {"kib", T::integer, 1024, 1, 1048576, {}, "nccl-tests' size S in KiB (see docs/workloads.md)"},
                     {"reps", T::integer, 1, 1, 10000, {}, "collectives per sample"},
                     {"input_passes", T::integer, 1, 1, 1000, {},
                      "times each rank writes its input before a sample (its own work per iteration, untimed)"},
                     {"timeout_s", T::number, 30.0, 0.1, 3600, {}, "gloo's timeout for set-up and each collective"}},
                    gloo_supported,
                    make_gloo};
  spec.collective = true;
  registry.add(std::move(spec));
}

}  // namespace ib
