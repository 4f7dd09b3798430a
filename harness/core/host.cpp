#include "harness/core/host.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace ib {

namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A non-negative decimal index, or none (unset, empty or not a number: a malformed variable is not
// a reason to refuse a run, it is only not recorded).
std::optional<int> env_index(const char* name) {
  const std::string text = env_text(name);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

std::optional<SchedulerFacts> scheduler_from_env() {
  if (!env_text("SLURM_JOB_ID").empty())
    return SchedulerFacts{"slurm", env_text("SLURM_JOB_ID"), env_text("SLURM_ARRAY_JOB_ID"),
                          env_index("SLURM_ARRAY_TASK_ID"), env_text("SLURMD_NODENAME")};
  if (!env_text("JOB_COMPLETION_INDEX").empty())
    return SchedulerFacts{"kubernetes", env_text("JOB_NAME"), "", env_index("JOB_COMPLETION_INDEX"),
                          env_text("NODE_NAME")};
  return std::nullopt;
}

std::string node_name() {
  const auto facts = scheduler_from_env();
  return facts && !facts->node.empty() ? facts->node : host_name();
}

}  // namespace ib
