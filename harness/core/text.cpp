#include "harness/core/text.h"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ib {

std::string significant(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}g}", v, digits) : "n/a";
}

std::string percent(double fraction, int digits) {
  return std::isfinite(fraction) ? fmt::format("{:.{}g}%", fraction * 100.0, digits) : "n/a";
}

std::string signed_percent(double fraction, int decimals) {
  return std::isfinite(fraction) ? fmt::format("{:+.{}f}%", fraction * 100.0, decimals) : "n/a";
}

std::string fixed_percent(double fraction, int decimals) {
  return std::isfinite(fraction) ? fmt::format("{:.{}f}%", fraction * 100.0, decimals) : "n/a";
}

namespace {
bool continues_utf8(const std::string& s, std::size_t i) {
  return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
}

// The length of the well-formed UTF-8 character at s[i] (RFC 3629: no overlong form, no surrogate, at most
// U+10FFFF), 0 when the bytes there are not one.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = at(i);
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

// Control characters as \n, \t, \xNN (C1 controls, U+0080..U+009F, as \u0080..: CSI among them); a byte
// that is not part of well-formed UTF-8 (a peer's binary, a file in Latin-1) as \xNN, so the text is valid
// UTF-8 wherever it goes (a JSON string, a terminal).
std::string escaped(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    if (c < 0x80) {
      if (c >= 0x20 && c != 0x7f) out += static_cast<char>(c);
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(s, i);
    if (n == 0) out += fmt::format("\\x{:02x}", c);
    else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
    else out.append(s, i, n);
    i += n == 0 ? 1 : n;
  }
  return out;
}
}  // namespace

std::string printable(const std::string& s, std::size_t max_chars) {
  const std::string out = escaped(s);
  if (out.size() <= max_chars) return out;
  const std::string tail = "... (" + std::to_string(s.size()) + " characters)";
  std::size_t cut = max_chars > tail.size() ? max_chars - tail.size() : 0;
  while (cut > 0 && continues_utf8(out, cut)) --cut;  // not inside a UTF-8 character
  return out.substr(0, cut) + tail;
}

namespace {
// `out` (already escaped) cut to `max_chars` by dropping its middle for `gap`; `head_chars` of the room
// keep the start, the rest the end. Never splits a UTF-8 character.
std::string cut_middle(const std::string& out, std::size_t max_chars, const std::string& gap, std::size_t head_chars) {
  std::size_t head = std::min(head_chars, max_chars - gap.size());
  std::size_t tail_from = out.size() - (max_chars - gap.size() - head);
  while (head > 0 && continues_utf8(out, head)) --head;
  while (continues_utf8(out, tail_from)) ++tail_from;
  return out.substr(0, head) + gap + out.substr(tail_from);
}
}  // namespace

std::string printable_path(const std::string& path, std::size_t max_chars) {
  const std::string gap = "/.../";
  if (max_chars <= gap.size() + 2) return printable(path, max_chars);
  const std::string out = escaped(path);
  if (out.size() <= max_chars) return out;
  // A third of the room for the start (where the path is rooted), the rest for its end.
  return cut_middle(out, max_chars, gap, (max_chars - gap.size()) / 3);
}

std::string file_name_part(const std::string& name) {
  std::string out;
  for (const char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

std::string formatted(const char* printf_format, double v) {
  return std::isfinite(v) ? fmt::sprintf(printf_format, v) : "n/a";
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace ib
