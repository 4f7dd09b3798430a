// The node-to-conductor clock offset (harness/nodes/clock_sync.h): known answers on synthetic exchanges
// whose true offset and one-way delays are chosen here.
#include "harness/nodes/clock_sync.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace ib {
namespace {

// An exchange between a node and a conductor whose clock reads `offset` more than the node's: the
// request takes `up` ns, the conductor answers after `service` ns, the answer takes `down` ns.
ClockExchange exchange(std::int64_t node_send, std::int64_t offset, std::int64_t up, std::int64_t service,
                       std::int64_t down) {
  ClockExchange e;
  e.t0 = node_send;
  e.t1 = node_send + up + offset;
  e.t2 = e.t1 + service;
  e.t3 = e.t2 - offset + down;
  return e;
}

TEST(ClockSync, SymmetricDelaysGiveTheOffsetExactly) {
  const auto o = offset_of(exchange(1'000'000, 5'000'000'000'000, 40'000, 7'000, 40'000));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->offset_ns, 5'000'000'000'000);
  EXPECT_EQ(o->rtt_ns, 80'000);  // the conductor's 7 us of service is not on the wire
  EXPECT_EQ(o->uncertainty_ns, 40'000);
}

// All the delay on one way: the estimate is off by exactly half the round trip, the bound it states.
TEST(ClockSync, TheWorstAsymmetryIsAtTheBoundItStates) {
  const std::int64_t offset = -123'456'789;
  const auto o = offset_of(exchange(10, offset, 0, 5, 1000));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->offset_ns - offset, -500);
  EXPECT_EQ(o->uncertainty_ns, 500);
  const auto odd = offset_of(exchange(10, offset, 1001, 5, 0));  // an odd round trip: the bound rounds up
  ASSERT_TRUE(odd);
  EXPECT_LE(odd->offset_ns - offset, odd->uncertainty_ns);
  EXPECT_GE(odd->offset_ns - offset, -odd->uncertainty_ns);
  EXPECT_EQ(odd->uncertainty_ns, 501);
}

// 200 exchanges with random one-way delays (10 us to 2 ms each way, a loaded network): the estimate is
// the exchange with the smallest round trip, and the true offset is within its uncertainty.
TEST(ClockSync, TheMinimumRoundTripIsChosenAndItsBoundHolds) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> delay(10'000, 2'000'000), service(1'000, 50'000);
  const std::int64_t offset = 987'654'321'000;
  std::vector<ClockExchange> xs;
  std::int64_t now = 0, smallest = std::numeric_limits<std::int64_t>::max();
  for (int i = 0; i < 200; ++i) {
    const std::int64_t up = delay(rng), down = delay(rng);
    smallest = std::min(smallest, up + down);
    xs.push_back(exchange(now, offset, up, service(rng), down));
    now += 10'000'000;
  }
  const auto o = estimate_offset(xs);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->exchanges, 200u);
  EXPECT_EQ(o->rtt_ns, smallest);
  EXPECT_LE(std::llabs(o->offset_ns - offset), o->uncertainty_ns);
  EXPECT_LT(o->uncertainty_ns, 200'000) << "the best of 200 draws is near the 10 us floor";
}

TEST(ClockSync, ExchangesOutOfOrderAreLeftOutAndNoneIsNoEstimate) {
  ClockExchange backwards = exchange(100, 0, 10, 10, 10);
  backwards.t3 = 50;  // answered before it was asked
  ClockExchange slow_service = exchange(100, 0, 10, 10, 10);
  slow_service.t2 = slow_service.t1 + 1000;  // the conductor claims more time than the whole round trip
  ClockExchange reversed = exchange(100, 0, 10, 10, 10);
  reversed.t2 = reversed.t1 - 1;
  EXPECT_FALSE(offset_of(backwards));
  EXPECT_FALSE(offset_of(slow_service));
  EXPECT_FALSE(offset_of(reversed));
  EXPECT_FALSE(estimate_offset({backwards, slow_service, reversed}));
  EXPECT_FALSE(estimate_offset({}));
  const auto one = estimate_offset({backwards, exchange(100, 42, 10, 10, 10), reversed});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->offset_ns, 42);
  EXPECT_EQ(one->exchanges, 1u);
}

// Two hosts' CLOCK_MONOTONIC may differ by almost anything an int64 holds: no overflow.
TEST(ClockSync, FarApartClocksDoNotOverflow) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  const auto o = offset_of(exchange(-big, big, 1000, 10, 1000));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->offset_ns, big);
  EXPECT_EQ(to_conductor_time(-big, *o), 0);
}

}  // namespace
}  // namespace ib
