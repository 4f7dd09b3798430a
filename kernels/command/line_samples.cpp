#include "kernels/command/line_samples.h"

#include <algorithm>
#include <cmath>

namespace ib {

void LineSamples::resumed() { open_ = false; }

std::optional<LineSample> LineSamples::line(const StepValue& v, std::int64_t at_ns) {
  auto out = !per_interval_ ? step_line(v, at_ns) : v.said ? said_interval_line(v, at_ns) : interval_line(v, at_ns);
  last_arrival_ns_ = at_ns;
  return out;
}

std::optional<LineSample> LineSamples::step_line(const StepValue& v, std::int64_t at_ns) {
  // The program's own time is the measurement; where it lies is known only up to the output's delay. Lines
  // read in one burst share an arrival time, so a step is placed no earlier than the previous one ended:
  // samples never overlap each other (their coverage stays a fraction).
  LineSample s;
  const auto duration = static_cast<std::int64_t>(v.duration_s() * 1e9);
  s.start_ns = std::max(at_ns - duration, last_end_ns_);
  s.end_ns = s.start_ns + duration;
  s.lines_in_burst = at_ns == last_arrival_ns_ ? 1 : 0;
  last_end_ns_ = s.end_ns;
  return s;
}

LineSample LineSamples::placed(double seconds, double work, std::int64_t at_ns) {
  LineSample s;
  const auto length = static_cast<std::int64_t>(std::llround(seconds * 1e9));
  s.start_ns = std::max(at_ns - length, last_end_ns_);
  s.end_ns = s.start_ns + length;
  s.work = work;
  s.lines_in_burst = at_ns == last_arrival_ns_ ? 1 : 0;
  last_end_ns_ = s.end_ns;
  return s;
}

std::optional<LineSample> LineSamples::said_interval_line(const StepValue& v, std::int64_t at_ns) {
  const bool total = v.kind == StepValueKind::total, clock = v.said->kind == SaidIntervalKind::clock;
  // After a stop (or the start) the interval the line reports straddles it, as with arrivals: it only opens.
  if (!open_ || (total && v.value < open_total_) || (clock && v.said->seconds < open_clock_s_)) {
    open_ = true;
    open_total_ = total ? v.value : 0.0;
    open_clock_s_ = clock ? v.said->seconds : 0.0;
    last_end_ns_ = std::max(last_end_ns_, at_ns);  // no sample reaches back over the stop
    return std::nullopt;
  }
  const double seconds = clock ? v.said->seconds - open_clock_s_ : v.said->seconds;
  const double work = total ? v.value - open_total_ : v.rate_per_s() * seconds;
  if (!(seconds > 0.0) || !(work > 0.0) || !std::isfinite(work)) return std::nullopt;  // the next spans both
  open_total_ = total ? v.value : 0.0;
  open_clock_s_ = clock ? v.said->seconds : 0.0;
  return placed(seconds, work, at_ns);
}

std::optional<LineSample> LineSamples::interval_line(const StepValue& v, std::int64_t at_ns) {
  const bool total = v.kind == StepValueKind::total;
  if (!open_ || (total && v.value < open_total_)) {  // a new interval starts here
    open_ = true;
    open_at_ns_ = at_ns;
    open_total_ = total ? v.value : 0.0;
    return std::nullopt;
  }
  if (at_ns <= open_at_ns_) {  // read with the line that opened the interval: how long it was is not known
    ++pending_burst_lines_;
    return std::nullopt;
  }
  const double seconds = static_cast<double>(at_ns - open_at_ns_) * 1e-9;
  if (total && seconds < shortest_total_s_) return std::nullopt;  // too short to time: the next spans both
  const double work = total ? v.value - open_total_ : v.rate_per_s() * seconds;
  if (!(work > 0.0) || !std::isfinite(work)) return std::nullopt;  // the interval stays open: the next spans both
  LineSample s;
  s.start_ns = open_at_ns_;
  s.end_ns = at_ns;
  s.work = work;
  s.lines_in_burst = pending_burst_lines_;
  pending_burst_lines_ = 0;
  open_at_ns_ = at_ns;
  open_total_ = total ? v.value : 0.0;
  return s;
}

}  // namespace ib
