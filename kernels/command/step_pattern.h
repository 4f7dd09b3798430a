// The stdout metric: a regular expression (PCRE2, `(?P<name>...)` named groups) with exactly one named
// group, whose name says what a match holds: `s`, `ms` or `us` a step time in that unit, `rate` steps
// (or work units) per second, e.g. tqdm's "12.5it/s" or a server's "tokens/s".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ib {

enum class StepValueKind { seconds, rate };

// One match: a step time in seconds, or a rate in steps per second.
struct StepValue {
  StepValueKind kind = StepValueKind::seconds;
  double value = 0.0;
  // The step's duration: the time itself, or one step at the rate.
  double duration_s() const { return kind == StepValueKind::seconds ? value : 1.0 / value; }
};

class StepPattern {
 public:
  // Compiles `regex`; nullopt with `error` set when it does not compile, has no or several named
  // groups, or its group's name is not one of s, ms, us, rate.
  static std::optional<StepPattern> compile(const std::string& regex, std::string& error);
  // The first match in `line`: nullopt when it does not match or the group's text is not a finite
  // number > 0 (a "0 it/s" progress bar line is not a step). Matching one line may cost at most
  // kMatchLimit backtracking steps (PCRE2's match and depth limits): a catastrophic pattern such as
  // (a+)+$ gives up on that line (nullopt, counted by lines_given_up) instead of taking seconds per line
  // while the program's output piles up (issue 37 item 11).
  std::optional<StepValue> match(const std::string& line) const;
  static constexpr std::uint32_t kMatchLimit = 100000;
  std::size_t lines_given_up() const;

  StepPattern(StepPattern&&) noexcept;
  StepPattern& operator=(StepPattern&&) noexcept;
  ~StepPattern();

 private:
  struct Impl;
  explicit StepPattern(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ib
