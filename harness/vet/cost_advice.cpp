// The cost advice of the platform commands (probe.h, cost_advice): cost per unit of work of an exclusive and a
// shared card from their throughputs and prices, and which to take given the P95 cutoff.
#include "harness/vet/probe.h"

#include "harness/core/text.h"

#include <cmath>

namespace ib {

const char* recommendation_name(Recommendation r) {
  switch (r) {
    case Recommendation::exclusive: return "exclusive";
    case Recommendation::shared: return "shared";
    case Recommendation::undecided: return "undecided";
  }
  return "undecided";
}

CostAdvice cost_advice(double throughput_exclusive, double throughput_shared, double price_exclusive_per_h,
                       double price_shared_per_h, bool p95_cutoff_passed) {
  CostAdvice a;
  a.p95_cutoff_passed = p95_cutoff_passed;
  a.exclusive.throughput = throughput_exclusive;
  a.exclusive.price_per_h = price_exclusive_per_h;
  a.shared.throughput = throughput_shared;
  a.shared.price_per_h = price_shared_per_h;
  auto valid_tp = [](double t) { return std::isfinite(t) && t > 0; };
  auto valid_price = [](double p) { return std::isfinite(p) && p >= 0; };
  if (!valid_tp(throughput_exclusive) || !valid_tp(throughput_shared)) {
    a.reason = "throughputs must be positive and finite (exclusive " + formatted("%g", throughput_exclusive) +
               ", shared " + formatted("%g", throughput_shared) + ")";
    return a;
  }
  if (!valid_price(price_exclusive_per_h) || !valid_price(price_shared_per_h)) {
    a.reason = "prices must be non-negative and finite (exclusive " + formatted("%g", price_exclusive_per_h) + ", shared " +
               formatted("%g", price_shared_per_h) + ")";
    return a;
  }
  for (CostOption* o : {&a.exclusive, &a.shared}) {
    o->time_per_unit_s = 1.0 / o->throughput;
    o->cost_per_unit = o->price_per_h / 3600.0 / o->throughput;
  }
  a.shared_to_exclusive_cost = a.exclusive.cost_per_unit > 0 ? a.shared.cost_per_unit / a.exclusive.cost_per_unit
                                                             : (a.shared.cost_per_unit > 0 ? INFINITY : 1.0);
  std::string costs = "cost per unit of work: exclusive " + formatted("%.6g", a.exclusive.cost_per_unit) + ", shared " +
                      formatted("%.6g", a.shared.cost_per_unit);
  bool shared_cheaper = a.shared.cost_per_unit < a.exclusive.cost_per_unit;
  if (!p95_cutoff_passed) {
    a.recommendation = Recommendation::exclusive;
    a.reason = costs + "; the shared option did not pass the P95 cutoff (failed, inconclusive or not compared), so it is not recommended" +
               (shared_cheaper ? " even though it is cheaper" : "");
  } else if (shared_cheaper) {
    a.recommendation = Recommendation::shared;
    a.reason = costs + "; shared is cheaper per unit of work (" + formatted("%.1f%%", 100 * (1 - a.shared_to_exclusive_cost)) +
               " less) and passed the P95 cutoff";
  } else {
    a.recommendation = Recommendation::exclusive;
    a.reason = costs + "; exclusive costs " + (a.shared.cost_per_unit == a.exclusive.cost_per_unit ? "the same (tie "
                                                                                                       "goes to "
                                                                                                       "exclusive)"
                                                                                                     : "less") +
               " (seed 000: switch when T_share x P_share > T_excl x P_excl)";
  }
  return a;
}

}  // namespace ib
