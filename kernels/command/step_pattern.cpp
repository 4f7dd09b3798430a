#include "kernels/command/step_pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ib {

// One named group: its number, what it holds and the factor to seconds (s, ms, us) or 1 (rate, total).
struct StepPatternGroup {
  int number = 0;
  StepValueKind kind = StepValueKind::seconds;
  double scale = 1.0;
};

// The groups that say an interval line's own interval (group numbers, 0 when absent).
struct SaidIntervalGroups {
  int start = 0, end = 0, interval = 0, elapsed = 0;
  double elapsed_scale = 1.0;  // elapsed_ms: 1e-3
  bool any() const { return start || end || interval || elapsed; }
};

struct StepPattern::Impl {
  pcre2_code* code = nullptr;
  pcre2_match_context* limits = nullptr;  // kMatchLimit (match and depth)
  std::atomic<std::size_t> given_up{0};
  std::vector<StepPatternGroup> groups;  // by group number
  SaidIntervalGroups said;
  ~Impl() {
    if (code) pcre2_code_free(code);
    if (limits) pcre2_match_context_free(limits);
  }
};

StepPattern::StepPattern(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StepPattern::StepPattern(StepPattern&&) noexcept = default;
StepPattern& StepPattern::operator=(StepPattern&&) noexcept = default;
StepPattern::~StepPattern() = default;

namespace {

using Group = StepPatternGroup;

// The named groups of `code` as (number, name), in the order of their numbers.
std::vector<std::pair<int, std::string>> named_groups(pcre2_code* code) {
  uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  std::vector<std::pair<int, std::string>> out;
  for (uint32_t i = 0; i < count; ++i) {
    // An entry is the group number (two bytes, big-endian) and the zero-terminated name; the table is
    // sorted by name.
    const PCRE2_SPTR entry = table + static_cast<std::size_t>(i) * entry_size;
    out.emplace_back((entry[0] << 8) | entry[1], reinterpret_cast<const char*>(entry + 2));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Group> group_of(int number, const std::string& name) {
  if (name == "s" || name == "ms" || name == "us")
    return Group{number, StepValueKind::seconds, name == "s" ? 1.0 : name == "ms" ? 1e-3 : 1e-6};
  if (name == "rate") return Group{number, StepValueKind::rate, 1.0};
  if (name == "total") return Group{number, StepValueKind::total, 1.0};
  return std::nullopt;
}

// The number group `number` holds in `line` when it took part in the match and is finite.
std::optional<double> number_of(int number, const std::string& line, const PCRE2_SIZE* ov) {
  const PCRE2_SIZE begin = ov[2 * number], end = ov[2 * number + 1];
  if (begin == PCRE2_UNSET || end <= begin || end - begin >= 64) return std::nullopt;
  const std::string text = line.substr(begin, end - begin);
  char* stop = nullptr;
  const double v = std::strtod(text.c_str(), &stop);
  if (stop != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The value of group `g` in `line` when it took part in the match and is a finite number > 0.
std::optional<StepValue> value_of(const Group& g, const std::string& line, const PCRE2_SIZE* ov) {
  const auto v = number_of(g.number, line, ov);
  if (!v || *v <= 0.0) return std::nullopt;
  return StepValue{g.kind, *v * g.scale, std::nullopt};
}

// What the line says of its interval: a length > 0 (interval, or end - start), or a clock >= 0 (elapsed).
std::optional<SaidInterval> said_of(const SaidIntervalGroups& g, const std::string& line, const PCRE2_SIZE* ov) {
  if (g.elapsed) {
    const auto clock = number_of(g.elapsed, line, ov);
    if (!clock || *clock < 0.0) return std::nullopt;
    return SaidInterval{SaidIntervalKind::clock, *clock * g.elapsed_scale};
  }
  std::optional<double> length = g.interval ? number_of(g.interval, line, ov) : std::nullopt;
  if (g.start) {
    const auto a = number_of(g.start, line, ov), b = number_of(g.end, line, ov);
    if (a && b) length = *b - *a;
  }
  if (!length || !(*length > 0.0)) return std::nullopt;
  return SaidInterval{SaidIntervalKind::length, *length};
}

// Records `name` as a group that says the interval; false when it is not one of those names.
bool said_group(SaidIntervalGroups& g, int number, const std::string& name) {
  if (name == "start") g.start = number;
  else if (name == "end") g.end = number;
  else if (name == "interval") g.interval = number;
  else if (name == "elapsed" || name == "elapsed_ms") g.elapsed = number, g.elapsed_scale = name == "elapsed" ? 1.0 : 1e-3;
  else return false;
  return true;
}

// Why the groups that say the interval cannot be read together, or "".
std::string said_problem(const SaidIntervalGroups& g, int elapsed_groups) {
  if ((g.start != 0) != (g.end != 0)) return "start and end go together (the interval's bounds in seconds)";
  const int ways = (g.start ? 1 : 0) + (g.interval ? 1 : 0) + elapsed_groups;
  if (ways > 1) return "give one way of saying the interval: start and end, interval, or elapsed (elapsed_ms)";
  return "";
}

}  // namespace

std::optional<StepPattern> StepPattern::compile(const std::string& regex, std::string& error) {
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  auto impl = std::make_unique<Impl>();
  impl->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(), PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
                             &code_error, &offset, nullptr);
  if (!impl->code) {
    PCRE2_UCHAR text[256];
    pcre2_get_error_message(code_error, text, sizeof(text));
    error = "not a valid regular expression at offset " + std::to_string(offset) + ": " +
            reinterpret_cast<const char*>(text);
    return std::nullopt;
  }
  const auto named = named_groups(impl->code);
  if (named.empty()) {
    error = "expected a named group (or several, as alternatives), e.g. (?P<ms>[0-9.]+) or (?P<rate>[0-9.]+)";
    return std::nullopt;
  }
  int elapsed_groups = 0;
  for (const auto& [number, name] : named) {
    if (said_group(impl->said, number, name)) {
      elapsed_groups += name == "elapsed" || name == "elapsed_ms";
      continue;
    }
    const auto g = group_of(number, name);
    if (!g) {
      error = "the named group is \"" + name + "\"; expected one of s, ms, us (a time), rate (per second) or total (a running "
              "count), and for an interval line start and end, interval or elapsed (what it says of its interval)";
      return std::nullopt;
    }
    impl->groups.push_back(*g);
  }
  const bool total = std::any_of(impl->groups.begin(), impl->groups.end(), [](const Group& g) { return g.kind == StepValueKind::total; });
  if (total && impl->groups.size() > 1) {
    error = "a total (a running count of work) cannot be an alternative to another group: give it alone";
    return std::nullopt;
  }
  if (impl->groups.empty()) {
    error = "expected a group for the value (s, ms, us, rate or total) beside what the line says of its interval";
    return std::nullopt;
  }
  if (const std::string why = said_problem(impl->said, elapsed_groups); !why.empty()) {
    error = why;
    return std::nullopt;
  }
  // JIT where the library has it: a 10 kHz program's every line goes through match().
  pcre2_jit_compile(impl->code, PCRE2_JIT_COMPLETE);
  impl->limits = pcre2_match_context_create(nullptr);
  if (!impl->limits) {
    error = "no memory for the expression's match limits";
    return std::nullopt;
  }
  pcre2_set_match_limit(impl->limits, kMatchLimit);
  pcre2_set_depth_limit(impl->limits, kMatchLimit);
  return StepPattern(std::move(impl));
}

std::optional<StepValue> StepPattern::match(const std::string& raw) const {
  const std::string line = raw.find('\x1b') == std::string::npos ? raw : without_escape_sequences(raw);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (!md) return std::nullopt;
  std::optional<StepValue> out;
  const int rc =
      pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(line.data()), line.size(), 0, 0, md, impl_->limits);
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) ++impl_->given_up;
  if (rc > 0) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    for (const Group& g : impl_->groups)  // alternatives: the first that took part decides
      if (g.number < rc && ov[2 * g.number] != PCRE2_UNSET) {
        out = value_of(g, line, ov);
        break;
      }
    // A line of a pattern that reads its interval is a sample only when it says one (a group that did not take
    // part reads as unset: number_of gives nothing).
    if (out && impl_->said.any() && !(out->said = said_of(impl_->said, line, ov))) out.reset();
  }
  pcre2_match_data_free(md);
  return out;
}

std::size_t StepPattern::lines_given_up() const { return impl_->given_up.load(); }

bool StepPattern::reads_the_interval() const { return impl_->said.any(); }

bool StepPattern::reads_a_total() const {
  return impl_->groups.size() == 1 && impl_->groups.front().kind == StepValueKind::total;
}

std::string without_escape_sequences(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b' || i + 1 >= line.size() || line[i + 1] != '[') {
      out.push_back(line[i]);
      continue;
    }
    // ECMA-48 CSI: parameter bytes 0x30-0x3f, intermediate bytes 0x20-0x2f, one final byte 0x40-0x7e.
    std::size_t j = i + 2;
    while (j < line.size() && line[j] >= 0x20 && line[j] <= 0x3f) ++j;
    if (j < line.size() && line[j] >= 0x40 && line[j] <= 0x7e) i = j;  // dropped, final byte included
    else out.push_back(line[i]);  // not a whole sequence: kept as it is
  }
  return out;
}

}  // namespace ib
