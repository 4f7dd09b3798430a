// How the tool writes numbers in words (messages, Markdown, evidence): one place for each format, on
// libfmt. A number that is not finite reads "n/a". Other one-off formats use fmt::format directly.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ib {

// `v` with `digits` significant digits ("%.3g"): 0.0123, 1.5e+09.
std::string significant(double v, int digits = 3);
// A fraction as a percentage with `digits` significant digits: 0.123 -> "12.3%".
std::string percent(double fraction, int digits = 3);
// A fraction as a signed percentage with `decimals` decimals: 0.123 -> "+12.3%" (a slowdown).
std::string signed_percent(double fraction, int decimals = 1);
// A fraction as a percentage with `decimals` decimals: 0.1234 -> "12.34%".
std::string fixed_percent(double fraction, int decimals = 2);
// One number in a printf format (fmt::sprintf): formatted("%.0f MiB", 1024.0) -> "1024 MiB".
std::string formatted(const char* printf_format, double v);

// `s` as it may appear in a one-line message: control characters (newlines, ANSI escapes) written as
// \n, \x1b, ..., C1 controls as \u009b, bytes that are not well-formed UTF-8 (a peer's binary) as \xNN, so
// the result is valid UTF-8 (a JSON string takes it); longer than `max_chars`: cut to `max_chars` in all, ending in "... (N characters)".
std::string printable(const std::string& s, std::size_t max_chars = 60);
// A file path as printable() writes it, but a long one is cut in the middle ("/tmp/a/.../suites/x/s1.json")
// so that the file's own name, the part a reader needs, is kept.
std::string printable_path(const std::string& path, std::size_t max_chars = 100);
// `name` as it appears in file names (worker logs): every character but letters, digits, '-' and '.'
// written '_'. Two names with one file name part would share a log: scenarios refuse that at load.
std::string file_name_part(const std::string& name);
// The parts with `sep` between them: joined({"a", "b"}, ", ") -> "a, b".
std::string joined(const std::vector<std::string>& parts, const char* sep);

}  // namespace ib
