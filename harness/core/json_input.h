// JSON documents from files the user gives (scenarios, suites, results files): limits checked before
// anything is parsed into memory, so no input can exhaust memory or the stack, and duplicate keys (which
// the JSON library would silently resolve to the last one) are refused. Errors are one line naming the
// file, InputError (exit 2).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ib {

struct JsonLimits {
  std::size_t max_bytes = 4u << 20;  // a scenario is a few kB; results files pass their own limit
  int max_depth = 32;                // nesting of objects and arrays
};

// Parses `text`; `where` names it in errors ("<where>: ..."). Throws InputError on a syntax error,
// nesting deeper than max_depth, text longer than max_bytes, or a key given twice in one object
// (the error names the key's path, e.g. "tenants[1].params: key \"n\" given twice").
nlohmann::json parse_json_text(const std::string& text, const std::string& where, const JsonLimits& limits = {});

// Reads a regular file of at most max_bytes (a FIFO, device or folder is refused before it is opened,
// so nothing blocks) and parses it as above. `what` says what the file should be ("scenario file").
nlohmann::json read_json_file(const std::string& path, const std::string& what, const JsonLimits& limits = {});

// The same, keeping the order of keys (results files, which are written again byte for byte).
nlohmann::ordered_json parse_ordered_json_text(const std::string& text, const std::string& where,
                                               const JsonLimits& limits = {});
nlohmann::ordered_json read_ordered_json_file(const std::string& path, const std::string& what,
                                              const JsonLimits& limits = {});

// `v` as an int when it is a JSON integer that fits one; nullopt otherwise (a string, a fraction, or an integer
// such as 2^32 + 1 that get<int>() would wrap to 1: a peer's line is untrusted).
std::optional<int> int_value(const nlohmann::json& v);
// The same for an int64 (a time in nanoseconds): 2^63 and above, which get<std::int64_t>() would wrap, is nullopt.
std::optional<std::int64_t> int64_value(const nlohmann::json& v);

}  // namespace ib
