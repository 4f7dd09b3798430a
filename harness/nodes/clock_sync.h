// One timeline across nodes (docs/design.md section 13, issue 36): each node's CLOCK_MONOTONIC offset to the
// conductor's, estimated as NTP does from request/reply exchanges. An exchange: the node sends at t0 (its
// clock), the conductor stamps t1 when it reads the request and t2 when it answers (its clock), the node
// reads the answer at t3. Then the offset (conductor - node) is ((t1 - t0) + (t2 - t3)) / 2 and the round
// trip spent on the wire rtt = (t3 - t0) - (t2 - t1). Whatever the two one-way delays, the true offset lies
// within rtt / 2 of the estimate, so the exchange with the smallest round trip gives the tightest bound
// (the "minimum filter"); that bound is recorded as the offset's uncertainty.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ib {

struct ClockExchange {
  std::int64_t t0 = 0;  // node: request sent
  std::int64_t t1 = 0;  // conductor: request read
  std::int64_t t2 = 0;  // conductor: answer sent
  std::int64_t t3 = 0;  // node: answer read
};

struct ClockOffset {
  std::int64_t offset_ns = 0;       // conductor time = node time + offset_ns
  std::int64_t uncertainty_ns = 0;  // the true offset is within +-this (the chosen exchange's rtt / 2)
  std::int64_t rtt_ns = 0;          // the chosen exchange's round trip on the wire
  std::size_t exchanges = 0;        // the valid exchanges it was chosen from
};

// The exchange's offset and round trip; nullopt when its times are not in order (t3 < t0, t2 < t1, or a
// round trip below 0: a clock that stepped, or a garbled answer).
std::optional<ClockOffset> offset_of(const ClockExchange& e);

// The minimum-round-trip estimate over `exchanges` (ties: the earlier); nullopt when none is valid.
std::optional<ClockOffset> estimate_offset(const std::vector<ClockExchange>& exchanges);

// A node time on the conductor's timeline.
inline std::int64_t to_conductor_time(std::int64_t node_ns, const ClockOffset& o) { return node_ns + o.offset_ns; }

}  // namespace ib
