#include "reports/selftest_writer.h"

#include "harness/core/text.h"
#include "reports/json_writer.h"

#include <sstream>

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

const char* status_word(KnownAnswerStatus s) {
  switch (s) {
    case KnownAnswerStatus::ok: return "ok";
    case KnownAnswerStatus::inconclusive: return "inconclusive";
    case KnownAnswerStatus::wrong: return "WRONG";
  }
  return "WRONG";
}

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

std::string selftest_markdown(const SelftestReport& r) {
  std::ostringstream os;
  os << "## interference-bench selftest\n\n| known answer | expected | result | resolves +/- | stopped | evidence |\n"
        "|---|---|---|---|---|---|\n";
  for (const auto& k : r.known_answers) {
    const auto& d = k.aggregate ? k.aggregate->decision : std::nullopt;
    os << "| " << k.name << " | " << k.expected << " | **" << status_word(k.status) << "** | "
       << (k.resolution ? formatted("%.1f points", *k.resolution * 100.0) : std::string("n/a")) << " | "
       << (d ? std::string(d->decided ? "decided" : to_string(d->stopped_by)) + " after " + std::to_string(d->rounds) +
                   " rounds, " + formatted("%.0f s", d->seconds)
             : std::string("n/a"))
       << " | " << k.evidence << " |\n";
  }
  os << "\nSmallest P95 slowdown this machine resolves now: "
     << (r.resolvable_p95_slowdown ? signed_percent(*r.resolvable_p95_slowdown) : std::string("n/a"))
     << " (the idle case's interval bound; its true slowdown is 0).\n\nexit code " << r.exit_code << "\n";
  return os.str();
}

}  // namespace ib
