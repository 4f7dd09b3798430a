// The comparison of two results files (harness/results/comparison.h) as Markdown, what `compare` prints.
// Formats; computes nothing.
#pragma once

#include "harness/results/comparison.h"

#include <string>

namespace ib {

std::string comparison_markdown(const Comparison& c);

}  // namespace ib
