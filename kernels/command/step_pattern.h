// The stdout metric: a regular expression (PCRE2, `(?P<name>...)` named groups) whose named groups say
// what a match holds: `s`, `ms` or `us` a time in that unit (a step's time, or for an interval line the
// time per unit of work, tqdm's "1.25s/it"), `rate` units per second (tqdm's "12.5it/s", a server's
// "tokens/s", sysbench's "eps:"), `total` a running count of work done so far (pv -n -b's bytes, a
// trainer's "step 1200"; interval lines only: the work of an interval is the difference of two totals).
// Several groups are alternatives, e.g. tqdm both ways: (?P<rate>[0-9.]+)it/s|(?P<s>[0-9.]+)s/it; the
// first group (in the order they open) that took part in the match gives the value.
// An interval line may also say how long its interval was, beside its value (interval lines only): `start` and
// `end` its bounds in seconds (iperf3's "1.00-2.00 sec"), `interval` its length in seconds, or `elapsed`
// (`elapsed_ms`) the program's running clock, the interval being the difference of two lines' clocks (fio's
// "(4965MiB/1882msec)"). One of these three ways at most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ib {

enum class StepValueKind { seconds, rate, total };

// What an interval line says of its own interval: its length (`interval`, or `end` - `start`), or the program's
// clock at the line (`elapsed`, `elapsed_ms`), both in seconds.
enum class SaidIntervalKind { length, clock };
struct SaidInterval {
  SaidIntervalKind kind = SaidIntervalKind::length;
  double seconds = 0.0;
};

// One match: a time in seconds, a rate in units per second, or a running total of units.
struct StepValue {
  StepValueKind kind = StepValueKind::seconds;
  double value = 0.0;
  std::optional<SaidInterval> said;  // what the line says of its interval, when the pattern reads it
  // A step line's duration: the time itself, or one step at the rate (not for a total).
  double duration_s() const { return kind == StepValueKind::seconds ? value : 1.0 / value; }
  // An interval line's throughput in units per second: the rate, or the inverse of a time per unit.
  double rate_per_s() const { return kind == StepValueKind::rate ? value : 1.0 / value; }
};

class StepPattern {
 public:
  // Compiles `regex`; nullopt with `error` set when it does not compile, has no named group, a group
  // whose name is not one of s, ms, us, rate, total (the value) or start, end, interval, elapsed, elapsed_ms (what
  // an interval line says of its interval), a total beside other value groups (a count is not an alternative to a
  // time), no value group, `start` without `end` (or the reverse), or more than one way of saying the interval.
  static std::optional<StepPattern> compile(const std::string& regex, std::string& error);
  // The first match in `line`: nullopt when it does not match or the group's text is not a finite
  // number > 0 (a "0 it/s" progress bar line is not a step; a total of 0 is no work yet), or it says its interval
  // and that is not a length > 0 or a clock >= 0 (iperf3's closing "2.00-2.00 sec" fragment). Colour and
  // cursor escape sequences (ESC [ ... letter, what a program writes to a terminal) are removed before
  // matching. Matching one line may cost at most kMatchLimit backtracking steps (PCRE2's match and depth
  // limits): a catastrophic pattern such as (a+)+$ gives up on that line (nullopt, counted by
  // lines_given_up) instead of taking seconds per line while the program's output piles up (issue 37
  // item 11).
  std::optional<StepValue> match(const std::string& line) const;
  static constexpr std::uint32_t kMatchLimit = 100000;
  std::size_t lines_given_up() const;
  // Whether its group is a running total (only an interval metric can read one).
  bool reads_a_total() const;
  // Whether it reads what a line says of its interval (only an interval metric can).
  bool reads_the_interval() const;

  StepPattern(StepPattern&&) noexcept;
  StepPattern& operator=(StepPattern&&) noexcept;
  ~StepPattern();

 private:
  struct Impl;
  explicit StepPattern(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `line` without its ANSI CSI escape sequences (ESC '[' parameters, intermediates, a final byte).
std::string without_escape_sequences(const std::string& line);

}  // namespace ib
