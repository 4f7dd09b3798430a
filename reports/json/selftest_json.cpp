#include "reports/json/selftest_json.h"

#include "reports/json/results_json.h"

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson known_answer_json(const KnownAnswer& k) {
  return {{"name", k.name},
          {"expected", k.expected},
          {"ok", k.status == KnownAnswerStatus::ok},
          {"inconclusive", k.status == KnownAnswerStatus::inconclusive},
          {"evidence", k.evidence},
          {"resolution", k.resolution ? json_number(*k.resolution) : ojson(nullptr)},
          {"stopped", k.aggregate && k.aggregate->decision
                          ? ojson{{"by", to_string(k.aggregate->decision->stopped_by)},
                                  {"rounds", k.aggregate->decision->rounds},
                                  {"seconds", json_number(k.aggregate->decision->seconds)}}
                          : ojson(nullptr)},
          {"aggregate", k.aggregate ? aggregate_to_json(*k.aggregate) : ojson(nullptr)}};
}

}  // namespace

ojson selftest_to_json(const SelftestReport& r) {
  ojson answers = ojson::array();
  for (const auto& k : r.known_answers) answers.push_back(known_answer_json(k));
  return {{"tool", "interference-bench selftest"},
          {"backend", r.backend},
          {"budget_s", r.budget_s},
          {"duration_s", r.duration_s},
          {"exit_code", r.exit_code},
          {"known_answers", answers},
          {"resolvable_p95_slowdown",
           r.resolvable_p95_slowdown ? json_number(*r.resolvable_p95_slowdown) : ojson(nullptr)}};
}

}  // namespace ib
