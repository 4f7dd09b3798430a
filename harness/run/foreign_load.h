// Foreign-load control (docs/design.md section 3): how much of the machine was used by processes that are
// not this run's while a block measured, and whether that makes the block contaminated.
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/results/results.h"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// Cumulative CPU time counters of the whole machine (/proc/stat "cpu" line) and of a set of processes.
struct CpuSnapshot {
  std::int64_t t_ns = 0;                 // CLOCK_MONOTONIC when read
  unsigned long long busy_ticks = 0;     // user + nice + system + irq + softirq (guest time is inside user)
  unsigned long long steal_ticks = 0;
  unsigned long long own_ticks = 0;      // utime + stime of the processes we own (all their threads)
};

// Parses the "cpu " line of /proc/stat into busy and steal ticks; false when it is not one.
bool parse_proc_stat_cpu(const std::string& line, unsigned long long& busy, unsigned long long& steal);
// utime + stime + cutime + cstime (ticks) from the text of /proc/<pid>/stat (the children it reaped
// count as its own); nullopt when it cannot be parsed.
std::optional<unsigned long long> parse_proc_pid_cpu_ticks(const std::string& stat);
// `roots` and every process descending from one of them in `parent_of` (pid -> ppid): a command
// tenant's program and what it started are the run's own processes, not foreign load.
std::vector<pid_t> with_descendants(const std::vector<pid_t>& roots, const std::map<pid_t, pid_t>& parent_of);
// pid -> ppid of every process in /proc.
std::map<pid_t, pid_t> process_parents();

// Reads the machine's counters and the CPU time of `own` (processes that vanished count what they had).
CpuSnapshot cpu_snapshot(const std::vector<pid_t>& own);

// Foreign and steal CPUs between two snapshots (ticks at `ticks_per_s`, i.e. sysconf(_SC_CLK_TCK)).
// foreign = (busy - own) / elapsed, never below 0.
ForeignLoad foreign_load_between(const CpuSnapshot& a, const CpuSnapshot& b, double ticks_per_s);

// The default of --max-steal-cpus: 5% of the machine's online CPUs (steal is summed over all of them,
// like /proc/stat's "cpu" line), at least 0.10 CPUs. A fixed 0.10 would be 5% of a 2-vCPU VM but 0.6%
// of a 16-vCPU guest, where a hypervisor's usual background steal would contaminate every block.
double default_max_steal_cpus(long online_cpus);
double default_max_steal_cpus();  // of this machine (sysconf(_SC_NPROCESSORS_ONLN))

struct ForeignLoadLimits {
  double max_foreign_cpus = 0.25;  // --max-foreign-cpus
  double max_steal_cpus = 0.10;    // --max-steal-cpus (CPUs summed over the machine)
  int max_gpu_processes = 0;       // foreign GPU compute processes allowed
  // Counters tick at 1/ticks_per_s; `processes` counters (the machine's and ours) may each be one
  // tick off, so this many ticks over the block's length are allowed on top of the limits.
  int tick_allowance_per_counter = 1;
};

// Why the block is contaminated ("" when clean). `own_processes`: how many processes own_ticks summed.
std::string contamination_reason(const ForeignLoad& load, const ForeignLoadLimits& limits, double ticks_per_s,
                                 std::size_t own_processes);

// Waiting for our own GPU work to stop before a block's release. Between blocks every tenant is paused, but
// SIGSTOP stops a command tenant's CPU threads, not the kernels it already queued: a program that launches
// asynchronously can keep the GPU busy tens of milliseconds into the next block. NVML's per-process utilisation
// samples cover about 1/6 s each, so a process counts as quiet once its newest sample with SM activity ended at
// least kGpuQuietS ago, and none can be told quiet before kGpuQuietS after the pause (the CUDA backend's idle
// gap already lasts that long); the wait gives up after kGpuDrainLimitS.
constexpr double kGpuQuietS = 0.2;
constexpr double kGpuDrainLimitS = 2.0;
struct GpuDrain {
  std::optional<double> waited_s;  // empty: NVML could not say
  int still_busy = 0;              // our processes still running GPU work at the limit
};
// Polls `samples_since(since_us)` (ib::Nvml::process_utilization) every `poll_s` until every process of `own`
// is quiet or `limit_s` has passed. `now_us`: CLOCK_REALTIME in microseconds (NVML's sample clock); `sleep_s`
// waits. Injected so that a test can play a GPU's samples.
using ProcessSamplesFn = std::function<std::optional<std::vector<ProcessSmSample>>(unsigned long long)>;
GpuDrain drain_own_gpu_work(const ProcessSamplesFn& samples_since, const std::vector<pid_t>& own,
                            unsigned long long since_us, double limit_s, double poll_s,
                            const std::function<unsigned long long()>& now_us,
                            const std::function<void(double)>& sleep_s);

// The GPU side, read before each block's release: after an idle gap of `idle_gap_s` (none of ours
// measuring), the compute processes on `device` that are not ours and the GPU's utilisation. NVML
// averages utilisation over its own sample period (1/6 s to 1 s), which may still include the end of
// the previous block: it is recorded, not judged. A process list whose pids match none of ours (a
// container's PID namespace) is judged by count: entries beyond our worker processes are foreign.
// Then (whole GPUs) it waits for our own processes' GPU work to stop (drain_own_gpu_work), recorded in
// gpu_drain_s and gpu_own_busy_processes.
//
// With `mig_scope` (mode mig: the MIG instances this run's tenants use) each instance is asked through its own MIG
// device handle: only processes on those instances count, foreign when not ours (another user's instance shares no
// SMs or memory with ours: not foreign load), and each of our processes' memory is against its instance's.
std::function<void(ForeignLoad&, const std::vector<pid_t>&)> make_gpu_load_probe(Nvml& nvml, unsigned device,
                                                                                 double idle_gap_s = 0.2,
                                                                                 std::vector<MigInstance> mig_scope = {});

}  // namespace ib
