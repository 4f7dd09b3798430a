// What a phase's samples are judged on (results.h): their durations, or, for samples that carry their own work
// (a command tenant's interval lines), their time per unit of work. Here, not in harness/analysis, because the
// reader of results.json sets them too, for the writers of a file read back (report --html).
#include "harness/results/results.h"

namespace ib {

bool judged_per_work(const PhaseResult& p) { return p.counter_samples.count(kSampleWorkCounter) != 0; }

double sample_value(const PhaseResult& p, std::size_t i) {
  const auto work = p.counter_samples.find(kSampleWorkCounter);
  if (work == p.counter_samples.end() || i >= work->second.size() || !(work->second[i] > 0.0)) return p.duration_s[i];
  return p.duration_s[i] / work->second[i];
}

void set_sample_values(PhaseResult& p, const std::string& work_unit) {
  p.time_per_work.clear();
  p.value_unit = "s";
  if (!judged_per_work(p)) return;
  p.value_unit = "s/" + work_unit;
  p.time_per_work.reserve(p.duration_s.size());
  for (std::size_t i = 0; i < p.duration_s.size(); ++i) p.time_per_work.push_back(sample_value(p, i));
}

}  // namespace ib
