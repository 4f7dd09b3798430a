#include "kernels/command/step_pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace ib {

struct StepPattern::Impl {
  pcre2_code* code = nullptr;
  pcre2_match_context* limits = nullptr;  // kMatchLimit (match and depth)
  std::atomic<std::size_t> given_up{0};
  int group = 0;  // the named group's number
  StepValueKind kind = StepValueKind::seconds;
  double scale = 1.0;  // to seconds (s, ms, us) or 1 (rate)
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

// The one named group of `code`: its number and name; false when there is not exactly one.
bool only_named_group(pcre2_code* code, int& number, std::string& name) {
  uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &count);
  if (count != 1) return false;
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  // An entry is the group number (two bytes, big-endian) and the zero-terminated name.
  number = (table[0] << 8) | table[1];
  name = reinterpret_cast<const char*>(table + 2);
  return true;
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
  std::string name;
  if (!only_named_group(impl->code, impl->group, name)) {
    error = "expected exactly one named group, e.g. (?P<ms>[0-9.]+) or (?P<rate>[0-9.]+)";
    return std::nullopt;
  }
  if (name == "s" || name == "ms" || name == "us") {
    impl->kind = StepValueKind::seconds;
    impl->scale = name == "s" ? 1.0 : name == "ms" ? 1e-3 : 1e-6;
  } else if (name == "rate") {
    impl->kind = StepValueKind::rate;
  } else {
    error = "the named group is \"" + name + "\"; expected one of s, ms, us (a step time) or rate (per second)";
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

std::optional<StepValue> StepPattern::match(const std::string& line) const {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (!md) return std::nullopt;
  std::optional<StepValue> out;
  const int rc =
      pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(line.data()), line.size(), 0, 0, md, impl_->limits);
  if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) ++impl_->given_up;
  if (rc > impl_->group) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const PCRE2_SIZE begin = ov[2 * impl_->group], end = ov[2 * impl_->group + 1];
    if (begin != PCRE2_UNSET && end > begin && end - begin < 64) {
      const std::string text = line.substr(begin, end - begin);
      char* stop = nullptr;
      const double v = std::strtod(text.c_str(), &stop);
      if (stop == text.c_str() + text.size() && std::isfinite(v) && v > 0.0)
        out = StepValue{impl_->kind, v * impl_->scale};
    }
  }
  pcre2_match_data_free(md);
  return out;
}

std::size_t StepPattern::lines_given_up() const { return impl_->given_up.load(); }

}  // namespace ib
