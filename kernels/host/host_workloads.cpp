#include "kernels/host/host_workloads.h"

#include "kernels/host/gloo_collective.h"
#include "kernels/host/host_bubble.h"

#include "kernels/open_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

namespace ib {
namespace {

// Deterministic inputs in [-1, 1): never time zeros or uninitialised memory.
void fill_pseudo_random(std::vector<double>& v, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& e : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e = static_cast<double>(x >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
}

// host-compute: C = A * B on n x n float64 matrices, `reps` products per sample.
// Work per sample: 2 n^3 reps FLOP (one multiply and one add per inner-product term).
class HostCompute final : public Workload {
 public:
  explicit HostCompute(const Params& p) : n_(p.at("n").get<int>()), reps_(p.at("reps").get<int>()) {}

  void setup(const ExecContext&) override {
    const size_t nn = static_cast<size_t>(n_) * n_;
    a_.resize(nn);
    b_.resize(nn);
    c_.assign(nn, 0.0);
    fill_pseudo_random(a_, 1);
    fill_pseudo_random(b_, 2);
    multiply();
    // Reference: every element as a long-double dot product in the textbook order.
    double worst = 0.0;
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j < n_; ++j) {
        long double ref = 0.0L;
        for (int k = 0; k < n_; ++k) ref += static_cast<long double>(a_[i * n_ + k]) * b_[k * n_ + j];
        worst = std::max(worst, std::fabs(static_cast<double>(ref) - c_[i * n_ + j]));
      }
    // Inputs are in [-1, 1), so |partial sums| <= n and the float64 rounding error stays far below 1e-9 n.
    if (!(worst <= 1e-9 * n_)) throw WorkloadError("host-compute: result differs from the reference by " + std::to_string(worst));
  }

  void run_sample(const ExecContext&, SampleOutput&) override {
    for (int r = 0; r < reps_; ++r) multiply();
  }

  Work work_per_sample() const override {
    const double n = n_;
    return {2.0 * n * n * n * reps_, "FLOP"};
  }

  void teardown() override {
    a_.clear();
    b_.clear();
    c_.clear();
  }

 private:
  // i-k-j order so the inner loop streams rows of B and C (vectorisable).
  void multiply() {
    const int n = n_;
    std::fill(c_.begin(), c_.end(), 0.0);
    for (int i = 0; i < n; ++i) {
      double* ci = &c_[static_cast<size_t>(i) * n];
      for (int k = 0; k < n; ++k) {
        const double aik = a_[static_cast<size_t>(i) * n + k];
        const double* bk = &b_[static_cast<size_t>(k) * n];
        for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
      }
    }
  }

  int n_;
  int reps_;
  std::vector<double> a_, b_, c_;
};

// host-copy: memcpy of a buffer larger than the last-level cache, `reps` copies per sample.
// Work per sample: 2 * bytes * reps B, counted as bytes read + bytes written.
class HostCopy final : public Workload {
 public:
  explicit HostCopy(const Params& p)
      : bytes_(static_cast<size_t>(p.at("mib").get<int>()) << 20), reps_(p.at("reps").get<int>()) {}

  void setup(const ExecContext&) override {
    src_.resize(bytes_);
    dst_.assign(bytes_, 0);
    for (size_t i = 0; i < bytes_; ++i) src_[i] = static_cast<unsigned char>((i * 131u + 7u) & 0xFF);
    std::memcpy(dst_.data(), src_.data(), bytes_);
    if (std::memcmp(dst_.data(), src_.data(), bytes_) != 0) throw WorkloadError("host-copy: destination differs from source");
  }

  void run_sample(const ExecContext&, SampleOutput& out) override {
    // One-direction figure beside the read+written work, so neither can be misread for the other.
    out.counters["bytes_copied"] = static_cast<double>(bytes_) * reps_;
    for (int r = 0; r < reps_; ++r) {
      // Alternate direction so every copy moves data the previous one did not leave in cache.
      if (r % 2 == 0)
        std::memcpy(dst_.data(), src_.data(), bytes_);
      else
        std::memcpy(src_.data(), dst_.data(), bytes_);
    }
  }

  Work work_per_sample() const override { return {2.0 * static_cast<double>(bytes_) * reps_, "B"}; }

  void teardown() override {
    src_.clear();
    dst_.clear();
  }

 private:
  size_t bytes_;
  int reps_;
  std::vector<unsigned char> src_, dst_;
};

// host-latency: the CPU stand-in for the CUDA `latency` workload. A request is one n x n float64
// matrix product; requests arrive open-loop (Poisson at `rate`, or at `load` x the capacity measured
// in setup) and one server runs them in arrival order, so a request that arrives while the server is
// busy queues. The arrivals are one continuous schedule per block, from begin_block's release (or
// the first sample); a sample is the next slice of requests / rate seconds of it, so `requests` is
// the expected count per sample and the actual count (Poisson, possibly 0) is counters["requests"].
// Per-request latency = completion - intended arrival, queueing included, also behind requests of an
// earlier sample that ended late, goes into SampleOutput::latencies_s.
class HostLatency final : public Workload {
 public:
  explicit HostLatency(const Params& p)
      : product_(Params{{"n", p.at("n")}, {"reps", 1}}),
        load_(p.at("load").get<double>()),
        rate_(p.at("rate").get<double>()),
        requests_(p.at("requests").get<int>()),
        seed_(p.at("seed").get<std::uint64_t>()) {}

  void setup(const ExecContext& ctx) override {
    product_.setup(ctx);  // checks the product against its reference
    if (rate_ <= 0) rate_ = load_ / median_service_s(ctx);
    schedule_.emplace(rate_, static_cast<double>(requests_), seed_);
  }

  void begin_block(std::int64_t release_ns) override {
    if (schedule_) schedule_->start(release_ns);
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    if (!schedule_->started()) schedule_->start(open_loop_now_ns());
    const ArrivalSlice slice = schedule_->next_slice();
    SampleOutput ignored;
    out.latencies_s = serve_slice(slice, [&](std::size_t) { product_.run_sample(ctx, ignored); });
    out.counters["requests"] = static_cast<double>(slice.arrival_ns.size());
  }

  // The expected requests per sample (constant); the actual count is counters["requests"].
  Work work_per_sample() const override { return {static_cast<double>(requests_), "request"}; }
  Params resolved_params() const override { return {{"rate", rate_}}; }
  void teardown() override { product_.teardown(); }

 private:
  // Capacity: the median service time of back-to-back requests after a few unmeasured ones.
  double median_service_s(const ExecContext& ctx) {
    SampleOutput ignored;
    std::vector<double> service(25);
    for (int i = 0; i < 5; ++i) product_.run_sample(ctx, ignored);
    for (auto& s : service) {
      const std::int64_t t0 = open_loop_now_ns();
      product_.run_sample(ctx, ignored);
      s = static_cast<double>(open_loop_now_ns() - t0) * 1e-9;
    }
    std::nth_element(service.begin(), service.begin() + service.size() / 2, service.end());
    return service[service.size() / 2];
  }

  HostCompute product_;
  double load_;
  double rate_;
  int requests_;
  std::uint64_t seed_;
  std::optional<OpenLoopSchedule> schedule_;  // built in setup, once the rate is known
};

// host-fault: fault injection for testing the harness's error paths (crash, hang, exit, throw).
// Each sample spins for sample_ms; the fault fires at sample number `at_sample`, counted from the
// first sample this process runs (warm-up included) or, with `at_block` = k > 0, from the start of the
// measurement of the k-th block this process measures (so where it fires does not depend on how many
// samples fit a block on a loaded machine); during setup when at_sample is 0. With `at_ms` > 0 (and at_block > 0)
// it fires instead at the first sample that starts at_ms after that measurement began: on a loaded machine a
// block holds fewer samples than on an idle one, so a sample number can fall past the block's end while a time
// into it cannot (the tests' faults must fire in the block they name, beside a CPU hog too). begin_block() is called
// at the start of warm-up, then of each block's re-warm and of its measurement (kernels/workload.h):
// the k-th measurement is call 2k + 1.
// With `count_file` set, only the `at_start`-th process of this tenant faults (each start adds a
// line to the file), so a test can let the exclusive phase pass and fault in the colocated one.
// `children` > 0: setup forks that many processes that only wait for a signal (and hold the worker's
// pipes), to test that nothing a worker starts outlives it.
class HostFault final : public Workload {
 public:
  explicit HostFault(const Params& p)
      : action_(p.at("action").get<std::string>()),
        at_sample_(p.at("at_sample").get<int>()),
        sample_ms_(p.at("sample_ms").get<double>()),
        count_file_(p.at("count_file").get<std::string>()),
        at_start_(p.at("at_start").get<int>()),
        at_block_(p.at("at_block").get<int>()),
        at_ms_(p.at("at_ms").get<double>()),
        children_(p.at("children").get<int>()) {}

  void setup(const ExecContext&) override {
    for (int i = 0; i < children_; ++i) {
      const pid_t pid = ::fork();
      if (pid < 0) throw WorkloadError(std::string("host-fault: fork: ") + std::strerror(errno));
      if (pid == 0)
        for (;;) ::pause();  // async-signal-safe: the only thing a child of a threaded process may do here
    }
    if (!count_file_.empty()) {
      armed_ = count_start() == at_start_;
    }
    if (at_sample_ == 0) fire();
  }

  void begin_block(std::int64_t) override {
    if (++begin_block_calls_ == 2 * at_block_ + 1) {  // the at_block-th measurement starts
      samples_ = 0;
      block_start_ = std::chrono::steady_clock::now();
    }
  }

  void run_sample(const ExecContext&, SampleOutput&) override {
    const bool counting = at_block_ == 0 || begin_block_calls_ >= 2 * at_block_ + 1;
    ++samples_;
    if (counting && at_ms_ > 0 && at_block_ > 0) {
      if (std::chrono::steady_clock::now() - block_start_ >= std::chrono::duration<double, std::milli>(at_ms_)) fire();
    } else if (samples_ == at_sample_ && counting) {
      fire();
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(sample_ms_);
    while (std::chrono::steady_clock::now() < end) {
    }
  }

  Work work_per_sample() const override { return {sample_ms_ / 1e3, "s"}; }
  void teardown() override {}

 private:
  void fire() {
    if (!armed_) return;
    if (action_ == "crash") std::abort();
    if (action_ == "segfault") std::raise(SIGSEGV);
    if (action_ == "exit") ::_exit(3);
    if (action_ == "throw") throw WorkloadError("host-fault: injected failure");
    if (action_ == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }

  std::string action_;
  int at_sample_;
  double sample_ms_;
  std::string count_file_;
  int at_start_;

  // Appends one line to count_file and returns how many lines it has now. A test workload must not be
  // a way to append to any file: the name must end in kCountFileSuffix and the file is never followed
  // through a symlink.
  int count_start() const {
    static const std::string kCountFileSuffix = ".ib-fault-count";
    if (count_file_.size() <= kCountFileSuffix.size() ||
        count_file_.compare(count_file_.size() - kCountFileSuffix.size(), kCountFileSuffix.size(), kCountFileSuffix) != 0)
      throw WorkloadError("count_file must end in " + kCountFileSuffix);
    const int fd = ::open(count_file_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw WorkloadError("cannot open count_file: " + std::string(std::strerror(errno)));
    int lines = 1;  // this start
    char c;
    while (::read(fd, &c, 1) == 1) lines += c == '\n';
    const bool written = ::write(fd, "start\n", 6) == 6;
    ::close(fd);
    if (!written) throw WorkloadError("cannot write count_file");
    return lines;
  }
  int at_block_;
  double at_ms_;
  std::chrono::steady_clock::time_point block_start_{};
  int begin_block_calls_ = 0;
  int children_;
  bool armed_ = true;
  int samples_ = 0;
};

// host-idle: the idle neighbour of the self-test. Each sample sleeps `sample_ms` and does no work, so a
// process exists beside the victim but takes no CPU time from it.
class HostIdle final : public Workload {
 public:
  explicit HostIdle(const Params& p) : sample_ms_(p.at("sample_ms").get<double>()) {}
  void setup(const ExecContext&) override {}
  void run_sample(const ExecContext&, SampleOutput&) override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sample_ms_));
  }
  Work work_per_sample() const override { return {1.0, "sample"}; }
  void teardown() override {}

 private:
  double sample_ms_;
};

Support always_supported(const Params&, const ExecContext&) { return {}; }

}  // namespace

void register_host_workloads(Registry& registry) {
  register_gloo_workloads(registry);
  register_host_bubble(registry);
  using T = ParamSpec::Type;
  registry.add({"host-compute", Backend::host,
                "CPU-bound: float64 n x n matrix product on one core (FLOP/s)",
                {{"n", T::integer, 256, 16, 2048, {}, "matrix order"},
                 {"reps", T::integer, 1, 1, 1000, {}, "products per sample"}},
                always_supported,
                [](const Params& p) { return std::make_unique<HostCompute>(p); }});
  registry.add({"host-copy", Backend::host,
                "Memory-bandwidth-bound: memcpy of a buffer larger than the LLC (B/s, read+written)",
                {{"mib", T::integer, 64, 1, 16384, {}, "buffer size in MiB"},
                 {"reps", T::integer, 1, 1, 1000, {}, "copies per sample"}},
                always_supported,
                [](const Params& p) { return std::make_unique<HostCopy>(p); }});
  registry.add({"host-latency", Backend::host,
                "Latency-sensitive stand-in: open-loop Poisson requests (one n x n product each) served in order; "
                "per-request latency incl. queueing (requests/s, P50/P95/P99)",
                {{"n", T::integer, 64, 16, 1024, {}, "matrix order of one request"},
                 {"load", T::number, 0.5, 0.01, 2.0, {},
                  "arrival rate as a fraction of the capacity measured at setup (used when rate is 0)"},
                 {"rate", T::number, 0.0, 0.0, 1e7, {}, "arrival rate in requests/s (0: use load)"},
                 {"requests", T::integer, 200, 10, 100000, {},
                  "expected requests per sample: a sample is a slice of requests / rate seconds of one continuous "
                  "arrival schedule (the count in a slice is Poisson)"},
                 {"seed", T::integer, 1, 0, 1e9, {}, "arrival-process seed"}},
                always_supported,
                [](const Params& p) { return std::make_unique<HostLatency>(p); }});
  registry.add({"host-idle", Backend::host, "An idle neighbour: each sample sleeps (no CPU work); for the self-test",
                {{"sample_ms", T::number, 10.0, 0.1, 1000, {}, "sleep per sample"}},
                always_supported,
                [](const Params& p) { return std::make_unique<HostIdle>(p); }});
  registry.add({"host-fault", Backend::host,
                "Fault injection for testing the harness: spins, then crashes, hangs, exits or throws",
                {{"action", T::string, "crash", {}, {}, {"crash", "segfault", "hang", "exit", "throw", "none"}, "what to do"},
                 {"at_sample", T::integer, 10, 0, 1e9, {}, "sample number that faults (0: during setup)"},
                 {"sample_ms", T::number, 5.0, 0.1, 1000, {}, "spin time per sample"},
                 {"count_file", T::string, "", {}, {}, {}, "file counting process starts (empty: every start faults)", ".ib-fault-count"},
                 {"at_start", T::integer, 1, 1, 1000, {}, "with count_file: which process start faults"},
                 {"at_block", T::integer, 0, 0, 1000, {}, "count at_sample from this measured block's start (0: from the first sample)"},
                 {"at_ms", T::number, 0.0, 0, 60000, {}, "with at_block: fault at the first sample this long into that block's measurement (0: at_sample)"},
                 {"children", T::integer, 0, 0, 8, {}, "processes forked in setup that only wait (and must not outlive the worker)"}},
                always_supported,
                [](const Params& p) { return std::make_unique<HostFault>(p); }});
}

}  // namespace ib
