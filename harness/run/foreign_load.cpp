#include "harness/run/foreign_load.h"

#include "harness/core/clock.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace ib {

bool parse_proc_stat_cpu(const std::string& line, unsigned long long& busy, unsigned long long& steal) {
  std::istringstream in(line);
  std::string label;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are already inside user/nice)
  unsigned long long v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (!(in >> label) || label != "cpu") return false;
  for (auto& x : v)
    if (!(in >> x)) return false;
  busy = v[0] + v[1] + v[2] + v[5] + v[6];
  steal = v[7];
  return true;
}

std::optional<unsigned long long> parse_proc_pid_cpu_ticks(const std::string& stat) {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  unsigned long long ticks = 0;
  // After ')': state(3) ppid(4) ... utime is field 14, stime 15, and the children it reaped cutime 16,
  // cstime 17 (a command tenant's wall runs, reaped by their worker, are this run's too).
  for (int f = 3; f <= 17; ++f) {
    if (!(in >> field)) {
      if (f <= 15) return std::nullopt;
      break;
    }
    try {
      if (f >= 14) ticks += std::stoull(field);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return ticks;
}

std::vector<pid_t> with_descendants(const std::vector<pid_t>& roots, const std::map<pid_t, pid_t>& parent_of) {
  std::vector<pid_t> out = roots;
  // Parents before children is not guaranteed by pid order: repeat until nothing is added.
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent_of)
      if (std::find(out.begin(), out.end(), ppid) != out.end() && std::find(out.begin(), out.end(), pid) == out.end()) {
        out.push_back(pid);
        grew = true;
      }
  }
  return out;
}

std::map<pid_t, pid_t> process_parents() {
  std::map<pid_t, pid_t> parents;
  DIR* d = opendir("/proc");
  if (!d) return parents;
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (fields >> state >> ppid) parents[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
  }
  closedir(d);
  return parents;
}

namespace {
std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

CpuSnapshot cpu_snapshot(const std::vector<pid_t>& own) {
  CpuSnapshot s;
  s.t_ns = monotonic_ns();
  parse_proc_stat_cpu(read_first_line("/proc/stat"), s.busy_ticks, s.steal_ticks);
  for (pid_t p : own)
    if (const auto t = parse_proc_pid_cpu_ticks(read_first_line("/proc/" + std::to_string(p) + "/stat")))
      s.own_ticks += *t;
  return s;
}

double default_max_steal_cpus(long online_cpus) { return std::max(0.10, 0.05 * static_cast<double>(online_cpus)); }

double default_max_steal_cpus() { return default_max_steal_cpus(sysconf(_SC_NPROCESSORS_ONLN)); }

ForeignLoad foreign_load_between(const CpuSnapshot& a, const CpuSnapshot& b, double ticks_per_s) {
  ForeignLoad l;
  l.seconds = static_cast<double>(b.t_ns - a.t_ns) * 1e-9;
  if (l.seconds <= 0.0 || ticks_per_s <= 0.0) return l;
  const double busy = static_cast<double>(b.busy_ticks) - static_cast<double>(a.busy_ticks);
  // A process that exited between the readings makes own_ticks drop: count what is left as ours.
  const double own = std::max(0.0, static_cast<double>(b.own_ticks) - static_cast<double>(a.own_ticks));
  const double steal = static_cast<double>(b.steal_ticks) - static_cast<double>(a.steal_ticks);
  l.own_cpus = own / ticks_per_s / l.seconds;
  l.foreign_cpus = std::max(0.0, busy - own) / ticks_per_s / l.seconds;
  l.steal_cpus = std::max(0.0, steal) / ticks_per_s / l.seconds;
  return l;
}

std::string contamination_reason(const ForeignLoad& load, const ForeignLoadLimits& limits, double ticks_per_s,
                                 std::size_t own_processes) {
  char buf[256];
  if (load.seconds > 0.0 && ticks_per_s > 0.0) {
    // One tick of slack per counter read (the machine's, and each of our processes'), over the block.
    const double slack = static_cast<double>((own_processes + 1) * limits.tick_allowance_per_counter) / ticks_per_s / load.seconds;
    if (load.foreign_cpus > limits.max_foreign_cpus + slack) {
      std::snprintf(buf, sizeof(buf), "processes that are not this run's used %.2f CPUs (limit %.2f + %.2f counter resolution)",
                    load.foreign_cpus, limits.max_foreign_cpus, slack);
      return buf;
    }
    if (load.steal_cpus > limits.max_steal_cpus + 1.0 / ticks_per_s / load.seconds) {
      std::snprintf(buf, sizeof(buf), "the hypervisor stole %.2f CPUs, summed over the machine's CPUs (limit %.2f)",
                    load.steal_cpus, limits.max_steal_cpus);
      return buf;
    }
  }
  if (load.gpu_own_busy_processes && *load.gpu_own_busy_processes > 0) {
    std::snprintf(buf, sizeof(buf),
                  "%d of this run's processes still ran GPU work %.1f s after the previous block ended (SIGSTOP "
                  "pauses a program's CPU threads, not the kernels it queued)",
                  *load.gpu_own_busy_processes, load.gpu_drain_s.value_or(0.0));
    return buf;
  }
  if (load.gpu_foreign_processes && *load.gpu_foreign_processes > limits.max_gpu_processes) {
    std::snprintf(buf, sizeof(buf), "%d GPU compute process(es) that are not this run's", *load.gpu_foreign_processes);
    return buf;
  }
  return "";
}

namespace {

// Which of the `listed` GPU processes are ours and which are not, into `load`.
void count_gpu_processes(const std::vector<ComputeProcess>& listed, const std::vector<pid_t>& own, ForeignLoad& load) {
  int foreign = 0, matched = 0;
  unsigned long long memory = 0;
  for (const ComputeProcess& p : listed) {
    if (std::find(own.begin(), own.end(), static_cast<pid_t>(p.pid)) != own.end()) {
      ++matched;
      if (p.used_bytes) load.gpu_own_process_memory.emplace_back(static_cast<int>(p.pid), *p.used_bytes);
      continue;
    }
    ++foreign;
    memory += p.used_bytes.value_or(0);
  }
  const int our_workers = static_cast<int>(own.size()) - 1;  // own[0] is the harness
  if (matched == 0 && foreign > 0) foreign = std::max(0, foreign - our_workers);
  load.gpu_foreign_processes = foreign;
  if (matched > 0) load.gpu_foreign_memory_bytes = memory;
}

// Mode mig: each of the run's instances through its MIG device handle; unknown (fields left empty) when NVML
// cannot list one of them.
void probe_mig_instances(Nvml& nvml, unsigned device, const std::vector<MigInstance>& scope, ForeignLoad& load,
                         const std::vector<pid_t>& own) {
  std::vector<ComputeProcess> listed;
  std::map<int, unsigned long long> total_by_pid;
  for (const MigInstance& m : scope) {
    const MigInstanceUsage u = nvml.mig_instance_usage(device, m.gpu_instance_id, m.compute_instance_id);
    if (!u.processes) return;
    for (const ComputeProcess& p : *u.processes) {
      listed.push_back(p);
      total_by_pid[static_cast<int>(p.pid)] = u.memory_total_bytes.value_or(m.memory_bytes);
    }
  }
  count_gpu_processes(listed, own, load);
  load.gpu_memory_total_by_pid = std::move(total_by_pid);
}

unsigned long long realtime_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<unsigned long long>(ts.tv_sec) * 1000000ull + static_cast<unsigned long long>(ts.tv_nsec) / 1000;
}

}  // namespace

GpuDrain drain_own_gpu_work(const ProcessSamplesFn& samples_since, const std::vector<pid_t>& own,
                            unsigned long long since_us, double limit_s, double poll_s,
                            const std::function<unsigned long long()>& now_us,
                            const std::function<void(double)>& sleep_s) {
  const unsigned long long start = now_us();
  const auto quiet_us = static_cast<unsigned long long>(kGpuQuietS * 1e6);
  std::map<unsigned, unsigned long long> last_busy;  // our pid -> end of its newest sample with SM activity
  for (;;) {
    const auto samples = samples_since(since_us);
    if (!samples) return {};
    for (const ProcessSmSample& s : *samples)
      if (s.sm_pct > 0 && std::find(own.begin(), own.end(), static_cast<pid_t>(s.pid)) != own.end())
        last_busy[s.pid] = std::max(last_busy[s.pid], s.timestamp_us);
    const unsigned long long now = now_us();
    int busy = 0;
    for (const auto& [pid, at] : last_busy)
      if (at + quiet_us > now) ++busy;
    const double waited = static_cast<double>(now - std::min(now, start)) * 1e-6;
    // Quiet cannot be told before a quiet period has passed since the pause: NVML's samples of it are not out yet.
    const bool settled = now >= since_us + quiet_us;
    if ((busy == 0 && settled) || waited >= limit_s) return {waited, busy};
    sleep_s(poll_s);
  }
}

std::function<void(ForeignLoad&, const std::vector<pid_t>&)> make_gpu_load_probe(Nvml& nvml, unsigned device,
                                                                                 double idle_gap_s,
                                                                                 std::vector<MigInstance> mig_scope) {
  return [&nvml, device, idle_gap_s, scope = std::move(mig_scope)](ForeignLoad& load, const std::vector<pid_t>& own) {
    const unsigned long long ended_us = realtime_us();  // every tenant of ours is paused from here on
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_gap_s));
    try {
      if (scope.empty()) {  // NVML keeps no per-process utilisation for MIG instances
        const GpuDrain drain = drain_own_gpu_work(
            [&](unsigned long long since) { return nvml.process_utilization(device, since); }, own, ended_us,
            kGpuDrainLimitS, 0.05, realtime_us,
            [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); });
        load.gpu_drain_s = drain.waited_s;
        if (drain.waited_s) load.gpu_own_busy_processes = drain.still_busy;
      }
      load.gpu_idle_util_pct = nvml.read_telemetry(device).util_gpu_pct;
      if (!scope.empty()) {
        probe_mig_instances(nvml, device, scope, load, own);
        return;
      }
      const DeviceFacts facts = nvml.device_facts(device);
      if (!facts.processes) return;
      load.gpu_memory_total_bytes = facts.memory_total_bytes;
      count_gpu_processes(*facts.processes, own, load);
    } catch (const std::exception&) {
      // NVML could not say: the GPU fields stay empty (unknown), the CPU check still applies.
    }
  };
}

}  // namespace ib
