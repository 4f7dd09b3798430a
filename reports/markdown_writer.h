// The short Markdown summary printed on the terminal and saved as summary.md.
#pragma once

#include "harness/results/results.h"

#include <string>

namespace ib {

std::string markdown_summary(const Results& results);

}  // namespace ib
