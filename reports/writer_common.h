// Formatting helpers that more than one writer uses: a JSON number (null when not finite), a Markdown
// table cell, an estimate with its interval in words. They format; they compute nothing.
#pragma once

#include "harness/results/results.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace ib {

// A number, or null when it is not finite (JSON has no NaN).
nlohmann::ordered_json json_number(double v);

// A number, or null when absent or not finite.
nlohmann::ordered_json optional_json_number(const std::optional<double>& v);

// `s` made printable, cut at `max_chars`, with its '|' escaped so it stays one Markdown table cell.
std::string markdown_cell(const std::string& s, std::size_t max_chars);

// "+12.3% [+10.1%, +14.0%]", or "n/a" without an estimate.
std::string p95_words(const std::optional<Estimate>& e);

}  // namespace ib
