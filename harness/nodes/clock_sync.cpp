// NTP-style clock offset from request/reply exchanges, minimum round trip (clock_sync.h).
#include "harness/nodes/clock_sync.h"

#include <limits>

namespace ib {

namespace {
// 128 bits (GCC and Clang): CLOCK_MONOTONIC values of two hosts may differ by anything an int64 holds.
__extension__ typedef __int128 Wide;
}  // namespace

std::optional<ClockOffset> offset_of(const ClockExchange& e) {
  if (e.t3 < e.t0 || e.t2 < e.t1) return std::nullopt;
  const Wide t0 = e.t0, t1 = e.t1, t2 = e.t2, t3 = e.t3;
  const Wide rtt = (t3 - t0) - (t2 - t1);
  if (rtt < 0) return std::nullopt;
  const Wide sum = (t1 - t0) + (t2 - t3);
  const Wide offset = sum >= 0 ? sum / 2 : -((-sum + 1) / 2);  // rounded toward -infinity
  constexpr Wide kMax = std::numeric_limits<std::int64_t>::max(), kMin = std::numeric_limits<std::int64_t>::min();
  if (offset > kMax || offset < kMin || rtt > kMax - 1) return std::nullopt;
  ClockOffset o;
  o.offset_ns = static_cast<std::int64_t>(offset);
  o.rtt_ns = static_cast<std::int64_t>(rtt);
  o.uncertainty_ns = (o.rtt_ns + 1) / 2;  // rounded up: the bound must hold
  o.exchanges = 1;
  return o;
}

std::optional<ClockOffset> estimate_offset(const std::vector<ClockExchange>& exchanges) {
  std::optional<ClockOffset> best;
  std::size_t valid = 0;
  for (const ClockExchange& e : exchanges) {
    const auto o = offset_of(e);
    if (!o) continue;
    ++valid;
    if (!best || o->rtt_ns < best->rtt_ns) best = o;
  }
  if (best) best->exchanges = valid;
  return best;
}

}  // namespace ib
