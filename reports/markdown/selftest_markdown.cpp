#include "reports/markdown/selftest_markdown.h"

#include "harness/core/text.h"

#include <sstream>

namespace ib {

namespace {

const char* status_word(KnownAnswerStatus s) {
  switch (s) {
    case KnownAnswerStatus::ok: return "ok";
    case KnownAnswerStatus::inconclusive: return "inconclusive";
    case KnownAnswerStatus::wrong: return "WRONG";
  }
  return "WRONG";
}

}  // namespace

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
