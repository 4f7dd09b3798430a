// What the matching lines of a program's output become (the stdout metric, docs/heartbeat.md): a step line is
// one step of the time it says, placed so that it ends when the line arrived; an interval line (metric
// interval_s) reports the program's throughput since its previous line, so it is the interval between the two
// arrivals with the work rate x interval (or the difference of two running totals). Pure: no process, no
// clock; kernels/command/command_workload.cpp feeds it the lines and their arrival times.
#pragma once

#include "kernels/command/step_pattern.h"

#include <cstdint>
#include <optional>

namespace ib {

struct LineSample {
  std::int64_t start_ns = 0, end_ns = 0;
  std::optional<double> work;  // an interval line: the work done in the interval (> 0)
  // Matching lines of this sample that were read in one piece with the line before them (a program that
  // buffers its output): one for a step line in such a burst; for an interval line, also the lines before it
  // whose interval was unknown for that reason (they share an arrival time, so no interval lies between them).
  int lines_in_burst = 0;
};

class LineSamples {
 public:
  // `interval_s`: the metric's interval_s (interval lines), or nullopt (step lines).
  explicit LineSamples(std::optional<double> interval_s)
      : per_interval_(interval_s.has_value()), shortest_total_s_(interval_s.value_or(0.0) / 2) {}
  // The program was started, or continued after a stop: the next interval line only opens an interval (the
  // interval it reports straddles the stop, or the program's start).
  void resumed();
  // A matching line that arrived at `at_ns` (CLOCK_MONOTONIC): its sample, or nullopt for an interval line
  // that opens an interval, shares its arrival with the previous line, or reports no work (a total that did not
  // move: the next interval spans both; one that went back: the program restarted its count, a new interval).
  // A total is the work between two arrivals, so the arrivals' jitter (the program or its reader not running
  // for a moment) is part of it: a total less than half interval_s after the interval opened (a late line and
  // the next, on time) keeps the interval open, and the next spans both.
  // A line that says its interval (v.said) is timed by it, not by the arrivals: a sample as long as the line says
  // (its length, or the difference of two lines' clocks), ending at its arrival or, in a burst, where the previous
  // one ended; a clock that did not move keeps the interval open, one that went back opens a new one.
  std::optional<LineSample> line(const StepValue& v, std::int64_t at_ns);

 private:
  std::optional<LineSample> step_line(const StepValue& v, std::int64_t at_ns);
  std::optional<LineSample> interval_line(const StepValue& v, std::int64_t at_ns);
  std::optional<LineSample> said_interval_line(const StepValue& v, std::int64_t at_ns);
  // The sample of `seconds` with `work`, ending at `at_ns` or, in a burst, where the previous one ended.
  LineSample placed(double seconds, double work, std::int64_t at_ns);

  bool per_interval_;
  double shortest_total_s_;            // totals: the shortest interval timed on its own (half interval_s)
  std::int64_t last_arrival_ns_ = -1;  // the previous matching line's arrival (bursts)
  std::int64_t last_end_ns_ = 0;       // step lines: where the previous step ended
  bool open_ = false;                  // interval lines: an interval is open since open_at_ns_
  std::int64_t open_at_ns_ = 0;
  double open_total_ = 0.0;            // the total the open interval started from
  double open_clock_s_ = 0.0;          // said clocks: the program's clock when the open interval started
  int pending_burst_lines_ = 0;        // interval lines in a burst since the last sample
};

}  // namespace ib
