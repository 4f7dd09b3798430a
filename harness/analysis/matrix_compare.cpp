#include "harness/analysis/matrix_compare.h"

#include "harness/analysis/compare.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"

#include <algorithm>
#include <cmath>

namespace ib {

Estimate interval_difference(const Estimate& b, const Estimate& n) {
  Estimate d{n.value - b.value, kNaN, kNaN};
  const double bounds[] = {b.value, b.ci_low, b.ci_high, n.value, n.ci_low, n.ci_high};
  if (!std::all_of(std::begin(bounds), std::end(bounds), [](double v) { return std::isfinite(v); })) return d;
  d.ci_low = d.value - std::hypot(n.value - n.ci_low, b.ci_high - b.value);
  d.ci_high = d.value + std::hypot(n.ci_high - n.value, b.value - b.ci_low);
  return d;
}

namespace {

std::string cell_change_points(double v) { return std::isfinite(v) ? formatted("%+.1f", v * 100.0) : std::string("n/a"); }

std::string cell_change_words(const Estimate& c) {
  return "p95_slowdown " + cell_change_points(c.value) + " points [" + cell_change_points(c.ci_low) + ", " + cell_change_points(c.ci_high) + "]";
}

// compare's words for a class (analysis/compare.cpp), on a cell.
std::string cell_class_words(ChangeClass k, const Estimate& c, double x) {
  const std::string limit = formatted("%.1f", x * 100.0) + " points";
  switch (k) {
    case ChangeClass::worse: return cell_change_words(c) + ": the whole CI is worse than " + limit;
    case ChangeClass::better: return cell_change_words(c) + ": the whole CI is better than " + limit;
    case ChangeClass::same: return cell_change_words(c) + ": within " + limit + " on the worse side";
    case ChangeClass::inconclusive: break;
  }
  if (std::isnan(c.ci_low)) return cell_change_words(c) + ": no CI";
  return cell_change_words(c) + ": the CI reaches beyond " + limit + " but not wholly (measure the pair longer)";
}

// Why a cell has no change to classify, or "" when it has one.
std::string unjudgeable(const MatrixCell& b, const MatrixCell& n) {
  for (const auto& [cell, side] : {std::pair<const MatrixCell&, const char*>{b, "BASE"}, {n, "NEW"}}) {
    if (!cell.p95_slowdown) return std::string("not measured in ") + side + " (" + printable(cell.verdict_reason, 200) + ")";
    if (cell.source == CellSource::predicted)
      return std::string("predicted in ") + side + ": a prediction has no interval to judge a change by";
  }
  return "";
}

MatrixCellChange compare_cell(const MatrixResult& base, const MatrixCell& b, const MatrixCell& n, double x) {
  MatrixCellChange c;
  c.victim = base.workloads[b.victim].name;
  c.aggressor = base.workloads[b.aggressor].name;
  c.base = b.p95_slowdown;
  c.next = n.p95_slowdown;
  c.base_verdict = b.verdict;
  c.next_verdict = n.verdict;
  c.reason = unjudgeable(b, n);
  if (!c.reason.empty()) return c;  // inconclusive
  c.change = interval_difference(*b.p95_slowdown, *n.p95_slowdown);
  c.verdict = classify_change(c.change, x, /*higher_is_worse=*/true);
  c.reason = cell_class_words(c.verdict, c.change, x);
  return c;
}

std::optional<std::size_t> index_of(const MatrixResult& r, const std::string& name) {
  for (std::size_t i = 0; i < r.workloads.size(); ++i)
    if (r.workloads[i].name == name) return i;
  return std::nullopt;
}

// The pairs (by name, as BASE or NEW orders them) that may share, the diagonal's included.
std::vector<std::pair<std::string, std::string>> sharing_pairs(const MatrixResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [a, b] : r.may_share) out.emplace_back(r.workloads[a].name, r.workloads[b].name);
  for (std::size_t i : r.self_sharing) out.emplace_back(r.workloads[i].name, r.workloads[i].name);
  return out;
}

bool contains_pair(const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& a, const std::string& b) {
  return std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) {
    return (p.first == a && p.second == b) || (p.first == b && p.second == a);
  });
}

std::string direction_words(const MatrixResult& r, std::size_t v, std::size_t a) {
  const MatrixCell& c = r.cell(v, a);
  return r.workloads[v].name + " beside " + r.workloads[a].name + ": " + verdict_name(c.verdict) +
         (c.p95_slowdown ? " (" + signed_percent(c.p95_slowdown->value) + ")" : std::string());
}

// A pair whose sharing changed: NEW's two directions say why (decided: one fails, or both pass).
MatrixSharingChange sharing_change(const MatrixResult& next, const std::string& a, const std::string& b) {
  const std::size_t ia = *index_of(next, a), ib = *index_of(next, b);
  MatrixSharingChange s{a, b, false, direction_words(next, ia, ib)};
  const bool fails = next.cell(ia, ib).verdict == Verdict::fail || next.cell(ib, ia).verdict == Verdict::fail;
  const bool passes = next.cell(ia, ib).verdict == Verdict::pass && next.cell(ib, ia).verdict == Verdict::pass;
  if (ia != ib) s.reason += "; " + direction_words(next, ib, ia);
  s.decided = fails || passes;
  return s;
}

// The pairs that may share in `from` and not in `to`, among the workloads both have; NEW says why.
std::vector<MatrixSharingChange> lost_pairs(const MatrixResult& from, const MatrixResult& to, const MatrixResult& next) {
  std::vector<MatrixSharingChange> out;
  const auto in_to = sharing_pairs(to);
  for (const auto& [a, b] : sharing_pairs(from))
    if (index_of(to, a) && index_of(to, b) && !contains_pair(in_to, a, b)) out.push_back(sharing_change(next, a, b));
  return out;
}

void count(MatrixComparison& m) {
  for (const MatrixCellChange& c : m.cells) {
    switch (c.verdict) {
      case ChangeClass::better: ++m.better; break;
      case ChangeClass::same: ++m.same; break;
      case ChangeClass::worse: ++m.worse; break;
      case ChangeClass::inconclusive: ++m.inconclusive; break;
    }
  }
  const auto decided = [](const MatrixSharingChange& s) { return s.decided; };
  const bool stopped = std::any_of(m.stopped_sharing.begin(), m.stopped_sharing.end(), decided);
  const bool undecided = !std::all_of(m.stopped_sharing.begin(), m.stopped_sharing.end(), decided);
  m.exit_code = m.worse > 0 || stopped                            ? kExitVerdictFailed
                : m.inconclusive > 0 || undecided || m.cells.empty() ? kExitInconclusive
                                                                     : kExitPass;
}

}  // namespace

MatrixComparison compare_matrices(const MatrixResult& base, const MatrixResult& next, double x) {
  MatrixComparison m;
  m.max_regression = x;
  m.base_mode = base.mode;
  m.next_mode = next.mode;
  m.base_workloads = base.workloads.size();
  m.next_workloads = next.workloads.size();
  if (base.packing) m.base_devices = base.packing->devices.size();
  if (next.packing) m.next_devices = next.packing->devices.size();
  for (const auto& w : base.workloads)
    if (!index_of(next, w.name)) m.only_in_base.push_back(w.name);
  for (const auto& w : next.workloads)
    if (!index_of(base, w.name)) m.only_in_next.push_back(w.name);
  if (base.mode == next.mode && base.backend == next.backend) {
    for (const MatrixCell& b : base.cells) {
      const auto v = index_of(next, base.workloads[b.victim].name), a = index_of(next, base.workloads[b.aggressor].name);
      if (v && a) m.cells.push_back(compare_cell(base, b, next.cell(*v, *a), x));
    }
    m.stopped_sharing = lost_pairs(base, next, next);
    m.started_sharing = lost_pairs(next, base, next);
  }
  count(m);
  return m;
}

}  // namespace ib
