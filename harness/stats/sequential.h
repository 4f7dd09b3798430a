// Stopping a run when it has decided, without raising the error rate of its verdicts (docs/design.md
// section 4, "Deciding"; docs/methodology.md, "Running until decided").
//
// A run looks at its estimates after its first rounds and then after every further pair of rounds, up
// to a planned last look. Judging each look's 95% interval would decide wrongly far more often than a
// fixed-length run (every look is one more chance for noise to cross the cutoff). Instead each look k
// has its own boundary z_k on the standardised distance from the cutoff, of O'Brien-Fleming shape:
//   z_k = c * sqrt(n_K / n_k),   n_k: the rounds counted at look k, n_K at the last planned look,
// with c chosen so that, for an estimate whose truth lies exactly at the cutoff and whose error behaves
// like a Brownian motion in the information n_k (the standard group-sequential model), the probability
// of crossing the upper boundary at any look is alpha / 2, and the same for the lower one: at most
// alpha wrongly decided verdicts in all, as a fixed-length run at level 1 - alpha. c comes from the
// recursive numerical integration of Armitage, McPherson and Rowe (1969). O'Brien-Fleming spends little
// alpha early: a clear case still stops at the first look (its distance from the cutoff is large),
// while a run that goes to its last look is judged at almost the fixed-length 1.96.
#pragma once

#include <vector>

namespace ib {

// P(W(t_k) >= u_k * sqrt(t_k) for some k) for a standard Brownian motion W observed at 0 < t_1 < ...
// < t_K, i.e. the probability that the standardised statistic W(t_k)/sqrt(t_k) crosses z_k = u_k at
// some look. Trapezoid integration on a grid of `step` in W.
double upper_crossing_probability(const std::vector<double>& t, const std::vector<double>& z, double step = 0.02);

// The alpha a run that looks spends: 0.03, 1.5% per side by the Brownian model. Less than a
// fixed-length run's 0.05 on purpose: the round bootstrap's interval errs a little more often than its
// nominal level (a single 95% interval on rounds of known truth: 2.3-3.4% per side, its standard error
// some 5-9% small), and the looks add to that; with 0.03 the rule's realised wrong decisions at the
// cutoff measure 1.75-2.4% per side over 2000 seeded sequences, within a fixed-length 95% verdict's
// 2.5% (docs/methodology.md, "Running until decided"; tests/unit/sequential_test.cpp).
constexpr double kSequentialAlpha = 0.03;

// The O'Brien-Fleming boundaries z_k = c sqrt(n_K / n_k) for looks after n_1 < ... < n_K rounds, with
// upper_crossing_probability = alpha / 2. One look: z = 1.95996 (alpha 0.05). Throws
// std::invalid_argument for an empty or non-increasing list or alpha outside (0, 1).
std::vector<double> obrien_fleming_boundaries(const std::vector<int>& rounds_at_look, double alpha = 0.05);

// The looks of a run: after `first` rounds, then every `step` more, up to `last` (always a look).
// first >= last gives one look at `first` (a fixed-length run).
std::vector<int> planned_looks(int first, int step, int last);

}  // namespace ib
