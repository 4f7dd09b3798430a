// This machine's node name, as the results, the device records and the history store it.
#pragma once

#include <unistd.h>

#include <optional>
#include <string>

namespace ib {

// gethostname(2), "" when it fails.
inline std::string host_name() {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

// The scheduler that launched this run (results schema 2.4: meta.scheduler; docs/design.md section 10):
// Slurm's SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and SLURMD_NODENAME; a Kubernetes
// Indexed Job's JOB_COMPLETION_INDEX with NODE_NAME (the downward API's spec.nodeName) and JOB_NAME.
struct SchedulerFacts {
  std::string kind;                  // "slurm" or "kubernetes"
  std::string job_id;                // "" when not set
  std::string array_job_id;          // Slurm arrays; "" otherwise
  std::optional<int> task_index;     // the array task id / completion index
  std::string node;                  // the node the scheduler placed the run on ("" when not set)
};

// The facts of the scheduler that launched this process, read from the environment it set; none when
// neither Slurm (SLURM_JOB_ID) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) is in it.
std::optional<SchedulerFacts> scheduler_from_env();

// The node this process runs on as a fleet names it: the scheduler's node name, else host_name().
std::string node_name();

}  // namespace ib
