#include "kernels/host/host_bubble.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ib {
namespace {

std::int64_t bubble_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// Sleeps until `deadline_ns` on CLOCK_MONOTONIC (an absolute deadline, so an interrupted sleep resumes to it).
void bubble_sleep_until_ns(std::int64_t deadline_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000LL);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000LL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

constexpr std::size_t kBubbleCacheLine = 64;
constexpr std::size_t kBubbleStreamChunk = 256 * 1024;  // bytes streamed between two looks at the clock (tens of us)

class HostBubble final : public Workload {
 public:
  explicit HostBubble(const Params& p)
      : level_(p.at("level").get<double>()),
        period_ns_(static_cast<std::int64_t>(p.at("period_ms").get<double>() * 1e6)),
        bytes_(static_cast<std::size_t>(p.at("mib").get<int>()) << 20) {}

  void setup(const ExecContext&) override {
    buffer_.assign(bytes_, 0);
    for (std::size_t i = 0; i < bytes_; i += kBubbleCacheLine) buffer_[i] = static_cast<unsigned char>(i / kBubbleCacheLine);
  }

  // One period: busy until level x period after the sample's start (spinning or streaming), then asleep until
  // the period's end. The busy span is wall time: beside a neighbour on its core the bubble holds the core for
  // its share of that span, as a CPU-bound tenant would.
  void run_sample(const ExecContext&, SampleOutput& out) override {
    const std::int64_t start = bubble_now_ns();
    const std::int64_t busy_end = start + static_cast<std::int64_t>(level_ * static_cast<double>(period_ns_));
    double streamed = 0.0;
    std::int64_t now = start;
    while (now < busy_end) {
      if (bytes_ > 0)
        streamed += stream_chunk();
      else
        spin();
      now = bubble_now_ns();
    }
    out.counters["busy_s"] = static_cast<double>(now - start) * 1e-9;
    out.counters["bytes_streamed"] = streamed;
    bubble_sleep_until_ns(start + period_ns_);
  }

  Work work_per_sample() const override { return {1.0, "period"}; }
  void teardown() override { buffer_.clear(); }

 private:
  // Reads and writes one byte of each cache line of the next chunk: the line travels both ways.
  double stream_chunk() {
    const std::size_t end = std::min(bytes_, cursor_ + kBubbleStreamChunk);
    for (std::size_t i = cursor_; i < end; i += kBubbleCacheLine) buffer_[i] = static_cast<unsigned char>(buffer_[i] + 1);
    const double moved = 2.0 * static_cast<double>(end - cursor_);
    cursor_ = end == bytes_ ? 0 : end;
    return moved;
  }

  // A short dependent chain of integer arithmetic the compiler cannot drop (its result is kept).
  void spin() {
    std::uint64_t x = sink_ | 1;
    for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink_ = x;
  }

  double level_;
  std::int64_t period_ns_;
  std::size_t bytes_;
  std::vector<unsigned char> buffer_;
  std::size_t cursor_ = 0;
  std::uint64_t sink_ = 1;
};

Support bubble_always_supported(const Params&, const ExecContext&) { return {}; }

}  // namespace

void register_host_bubble(Registry& registry) {
  using T = ParamSpec::Type;
  registry.add({"host-bubble", Backend::host,
                "Calibrated pressure for matrix --predict: busy for `level` of every period (spinning, or streaming "
                "`mib` MiB), asleep the rest (periods)",
                {{"level", T::number, 0.5, 0.0, 1.0, {}, "share of each period it is busy (its core share)"},
                 {"period_ms", T::number, 10.0, 1.0, 1000.0, {}, "one period = one sample"},
                 {"mib", T::integer, 0, 0, 16384, {}, "buffer its busy time streams (0: spin on the core only)"}},
                bubble_always_supported,
                [](const Params& p) { return std::make_unique<HostBubble>(p); }});
}

}  // namespace ib
