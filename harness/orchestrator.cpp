#include "harness/orchestrator.h"

#include "harness/analysis.h"
#include "harness/executor.h"
#include "harness/mps.h"
#include "harness/process.h"
#include "harness/protocol.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>

namespace ib {

using nlohmann::json;

namespace {

PhaseResult& phase_of(TenantResult& t, const std::string& phase) {
  if (phase == "exclusive") return t.exclusive;
  if (phase == "alone") return t.alone;
  return t.colocated;
}

std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

// One tenant inside a worker process, and what it has told us so far.
struct Slot {
  std::size_t tenant = 0;  // index in the scenario
  bool ready = false, started = false, done = false, waived = false;
  std::int64_t started_ns = 0;
};

// One worker process of a phase: one tenant, or (mode streams, colocated) all of them.
struct LiveWorker {
  std::vector<Slot> slots;
  ChildProcess proc;
  std::unique_ptr<LineReader> reader;
  bool eof = false, exited = false, timed_out = false, stopped_by_us = false, interrupted = false;
  std::string error;
  ExitStatus exit;
  std::string log;

  bool all(bool Slot::*flag) const {
    for (const auto& s : slots)
      if (!(s.*flag)) return false;
    return true;
  }
  bool any(bool Slot::*flag) const {
    for (const auto& s : slots)
      if (s.*flag) return true;
    return false;
  }
  bool failed() const {
    if (any(&Slot::waived) || stopped_by_us || interrupted) return false;
    if (timed_out || !error.empty()) return true;
    const bool done = all(&Slot::done);
    if (exited && (!done || exit.signal || exit.exit_code.value_or(1) != 0)) return true;
    return eof && !done;  // closed its report pipe without finishing
  }
};

// `device` is the CUDA device index inside the worker (0 when CUDA_VISIBLE_DEVICES names a MIG device).
// Each tenant's params are the scenario's, overridden by what an earlier phase resolved.
std::vector<std::string> worker_args(const Scenario& s, const RunResult& run, const std::vector<Slot>& slots,
                                     Backend backend, int device) {
  std::vector<std::string> a = {"worker", "--backend", backend_name(backend), "--device", std::to_string(device),
                                "--warmup", std::to_string(s.warmup_s), "--duration", std::to_string(s.duration_s)};
  for (const Slot& slot : slots) {
    const Tenant& t = s.tenants[slot.tenant];
    a.push_back("--tenant");
    nlohmann::json params = t.params;
    params.update(run.tenants[slot.tenant].resolved_params);
    a.push_back(nlohmann::json{{"workload", t.workload}, {"params", params}, {"cpus", t.placement.cpus}}.dump());
  }
  return a;
}

// A worker's MPS settings are the harness's decision alone: the CUDA_MPS_* variables of the user's
// shell are dropped, and a phase that runs without MPS points CUDA_MPS_PIPE_DIRECTORY at an empty
// private folder, so that a system-wide MPS daemon (default pipe /tmp/nvidia-mps) cannot make it an
// MPS client: a CUDA program that cannot reach a control daemon "continues to run as it normally
// would without MPS" (nvidia-cuda-mps-control(1)). (CUDA_VISIBLE_DEVICES is inherited, except where
// MIG placement sets it.)
std::vector<std::string> with_mps_decided(std::vector<std::string> env, const std::string& no_mps_pipe_dir) {
  const bool mps = std::any_of(env.begin(), env.end(),
                               [](const std::string& kv) { return kv.rfind("CUDA_MPS_PIPE_DIRECTORY=", 0) == 0; });
  if (!mps && !no_mps_pipe_dir.empty()) env.push_back("CUDA_MPS_PIPE_DIRECTORY=" + no_mps_pipe_dir);
  return env;
}

std::string sanitize(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return o;
}

}  // namespace

bool Orchestrator::poll_signal(int timeout_ms) {
  if (o_.signal_fd < 0) return false;
  pollfd p{o_.signal_fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0) {
    signalfd_siginfo info;
    if (::read(o_.signal_fd, &info, sizeof(info)) > 0) interrupted_ = true;
  }
  return interrupted_;
}

Orchestrator::GroupResult Orchestrator::run_group(const Scenario& s, RunResult& run,
                                                  const std::vector<std::size_t>& tenants, const std::string& phase,
                                                  const std::function<std::vector<std::string>(std::size_t)>& env) {
  GroupResult g;
  std::string no_mps_pipe_dir;  // empty: no private folder to point at (no run directory)
  if (!o_.run_dir.empty()) {
    no_mps_pipe_dir = o_.run_dir + "/no-mps";
    if (mkdir(no_mps_pipe_dir.c_str(), 0700) != 0 && errno != EEXIST) no_mps_pipe_dir.clear();
  }
  // Mode streams runs the colocated tenants as threads of one process; otherwise a process each.
  const bool one_process = s.mode == Mode::streams && phase == "colocated";
  std::vector<LiveWorker> workers(one_process ? 1 : tenants.size());
  for (std::size_t k = 0; k < tenants.size(); ++k) workers[one_process ? 0 : k].slots.push_back({tenants[k]});
  for (LiveWorker& w : workers) {
    const std::string who = one_process ? "all" : sanitize(s.tenants[w.slots[0].tenant].name);
    w.log = o_.log_dir + "/" + sanitize(s.name) + "-r" + std::to_string(run.repetition) + "-" + phase + "-" + who + ".log";
    try {
      const std::vector<std::string> e = env(w.slots[0].tenant);
      bool mig_device = false;
      for (const auto& kv : e) mig_device |= kv.rfind("CUDA_VISIBLE_DEVICES=MIG-", 0) == 0;
      SpawnSpec spec{o_.worker_exe, worker_args(s, run, w.slots, o_.backend, mig_device ? 0 : s.device),
                     with_mps_decided(e, no_mps_pipe_dir), w.log, kInheritedMpsSettings};
      w.proc = spawn_process(spec);
    } catch (const std::exception& e) {
      w.error = e.what();
      w.exited = w.eof = true;
      continue;
    }
    fcntl(w.proc.report_fd, F_SETFL, fcntl(w.proc.report_fd, F_GETFL) | O_NONBLOCK);
    w.reader = std::make_unique<LineReader>(w.proc.report_fd);
  }

  // NVML telemetry beside the phase, from before the workers start until they are gone.
  std::unique_ptr<TelemetrySampler> sampler;
  if (o_.nvml && o_.telemetry_hz > 0.0) {
    sampler = std::make_unique<TelemetrySampler>(*o_.nvml, o_.telemetry_device, o_.telemetry_hz);
    sampler->start();
  }

  const auto now = [] { return monotonic_ns(); };
  const auto secs = [](double s_) { return static_cast<std::int64_t>(s_ * 1e9); };
  const std::int64_t phase_start = now();
  std::int64_t deadline = phase_start + secs(s.warmup_s + o_.timeout_margin_s);
  std::int64_t release_ns = 0, kill_at = 0;
  bool released = false, aborting = false;

  auto stop_all = [&](bool because_interrupted) {
    if (aborting) return;
    aborting = true;
    for (auto& w : workers) {
      if (w.exited || w.failed()) continue;
      if (because_interrupted) w.interrupted = true;
      else w.stopped_by_us = true;
      write_all(w.proc.control_fd, "stop\n");
      close_fd(w.proc.control_fd);
    }
    kill_at = now() + secs(o_.stop_grace_s);
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<LiveWorker*> owners;
    for (auto& w : workers)
      if (w.proc.report_fd >= 0) {
        fds.push_back({w.proc.report_fd, POLLIN, 0});
        owners.push_back(&w);
      }
    if (o_.signal_fd >= 0) fds.push_back({o_.signal_fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 50);

    if (o_.signal_fd >= 0 && fds.back().revents && poll_signal(0)) stop_all(true);
    for (std::size_t k = 0; k < owners.size(); ++k) {
      if (!fds[k].revents) continue;
      LiveWorker& w = *owners[k];
      std::vector<std::string> lines;
      const bool open = w.reader->read_some(lines);
      for (const auto& line : lines) try {
        json m = json::parse(line, nullptr, false);
        const std::size_t k_slot = m.is_object() ? m.value("slot", std::size_t{0}) : 0;
        if (m.is_discarded() || !m.is_object() || !m.contains("type") || k_slot >= w.slots.size()) {
          w.error = "malformed message from worker: " + line.substr(0, 100);
          continue;
        }
        Slot& slot = w.slots[k_slot];
        PhaseResult& pr = phase_of(run.tenants[slot.tenant], phase);
        const std::string type = m.value("type", "");
        if (type == "ready") {
          slot.ready = true;
          if (m.contains("env")) pr.outcome.env = m.at("env").get<std::map<std::string, std::string>>();
          if (m.contains("resolved") && m.at("resolved").is_object()) {
            pr.outcome.resolved = m.at("resolved");
            auto& first = run.tenants[slot.tenant].resolved_params;
            if (first.empty()) first = pr.outcome.resolved;
          }
          run.tenants[slot.tenant].work = {m.value("work", 0.0), m.value("unit", std::string())};
        } else if (type == "waived") {
          slot.waived = true;
          pr.outcome.message = m.value("reason", std::string());
        } else if (type == "error") {
          w.error = (w.slots.size() > 1 ? s.tenants[slot.tenant].name + ": " : std::string()) +
                    m.value("message", std::string("unknown error"));
        } else if (type == "started") {
          slot.started = true;
          slot.started_ns = m.value("t_ns", std::int64_t{0});
        } else if (type == "samples") {
          const auto st = m.at("start_ns").get<std::vector<std::int64_t>>();
          const auto du = m.at("duration_s").get<std::vector<double>>();
          if (m.contains("counters"))
            for (const auto& [name, column] : m.at("counters").items()) {
              auto& all = pr.counter_samples[name];
              all.resize(pr.start_ns.size(), 0.0);  // samples before this counter first appeared
              const auto values = column.get<std::vector<double>>();
              all.insert(all.end(), values.begin(), values.end());
            }
          pr.start_ns.insert(pr.start_ns.end(), st.begin(), st.end());
          for (auto& [name, all] : pr.counter_samples) all.resize(pr.start_ns.size(), 0.0);
          pr.duration_s.insert(pr.duration_s.end(), du.begin(), du.end());
          // Per-sample request counts keep latencies attributable to samples (and the window).
          const auto lc = m.contains("latency_count") ? m.at("latency_count").get<std::vector<std::uint32_t>>()
                                                      : std::vector<std::uint32_t>(st.size(), 0);
          pr.latency_count.insert(pr.latency_count.end(), lc.begin(), lc.end());
          if (m.contains("latencies_s")) {
            const auto la = m.at("latencies_s").get<std::vector<double>>();
            pr.latencies_s.insert(pr.latencies_s.end(), la.begin(), la.end());
          }
        } else if (type == "done") {
          slot.done = true;
          pr.measure_start_ns = m.value("measure_start_ns", std::int64_t{0});
          pr.measure_end_ns = m.value("measure_end_ns", std::int64_t{0});
        }
      } catch (const json::exception& e) {
        w.error = std::string("malformed message from worker: ") + e.what();
      }
      if (!open) {
        w.eof = true;
        close_fd(w.proc.report_fd);
      }
    }
    for (auto& w : workers)
      if (!w.exited && w.proc.pid > 0)
        if (auto st = try_wait(w.proc.pid)) {
          w.exited = true;
          w.exit = *st;
        }

    bool any_failed = false, any_waived = false, all_ready = true, all_finished = true;
    for (auto& w : workers) {
      any_failed |= w.failed();
      any_waived |= w.any(&Slot::waived);
      all_ready &= w.all(&Slot::ready);
      all_finished &= w.exited;
    }
    if ((any_failed || any_waived) && !aborting) stop_all(false);
    if (!released && all_ready && !aborting) {
      release_ns = now();
      for (auto& w : workers) write_all(w.proc.control_fd, "go\n");
      released = true;
      deadline = release_ns + secs(s.duration_s + o_.timeout_margin_s);
    }
    if (all_finished) break;
    const std::int64_t t = now();
    if (!aborting && t > deadline) {
      for (auto& w : workers)
        if (!w.exited && !(released ? w.all(&Slot::done) : w.all(&Slot::ready))) {
          w.timed_out = true;
          kill_process_group(w.proc.pid, SIGKILL);
        }
      stop_all(false);
    }
    if (aborting && t > kill_at)
      for (auto& w : workers)
        if (!w.exited) kill_process_group(w.proc.pid, SIGKILL);
    if (o_.progress) {
      std::ostringstream os;
      os.precision(1);
      os << std::fixed << s.name << " rep " << run.repetition << "/" << s.repetitions << " " << phase;
      if (released) os << " " << (t - release_ns) * 1e-9 << "/" << s.duration_s << " s";
      else os << " warming up";
      o_.progress(os.str());
    }
  }

  // Record outcomes, the process's for each of its tenants. Precedence: timeout, interrupted,
  // waived, error, crashed/exited, stopped, ok.
  std::int64_t win_start = 0, win_end = INT64_MAX, skew_lo = INT64_MAX, skew_hi = 0;
  bool all_done = true;
  for (auto& w : workers) {
    close_fd(w.proc.control_fd);
    close_fd(w.proc.report_fd);
    const std::string tail = last_log_line(w.log);
    const bool done = w.all(&Slot::done);
    for (const Slot& slot : w.slots) {
      PhaseResult& pr = phase_of(run.tenants[slot.tenant], phase);
      WorkerOutcome& oc = pr.outcome;
      oc.exit_code = w.exit.exit_code;
      oc.signal = w.exit.signal;
      oc.log_file = w.log;
      if (w.timed_out) {
        oc.status = "timeout";
        oc.message = "no " + std::string(released ? "end of measurement" : "ready") + " within " +
                     std::to_string(released ? s.duration_s : s.warmup_s) + " s + a " +
                     std::to_string(o_.timeout_margin_s) + " s margin; killed";
      } else if (w.interrupted) {
        oc.status = "interrupted";
        oc.message = "stopped by SIGINT/SIGTERM";
      } else if (slot.waived) {
        oc.status = "waived";
      } else if (!w.error.empty()) {
        oc.status = "error";
        oc.message = w.error;
      } else if (w.exit.signal) {
        oc.status = "crashed";
        oc.message = w.exit.describe() + (tail.empty() ? "" : "; last log line: " + tail);
      } else if (w.exit.exit_code.value_or(0) != 0 || (!done && !w.stopped_by_us)) {
        oc.status = "exited";
        oc.message = w.exit.describe() + (done ? "" : " before finishing the phase") +
                     (tail.empty() ? "" : "; last log line: " + tail);
      } else if (w.stopped_by_us) {
        oc.status = "stopped";
        oc.message = "stopped by the harness because another worker of this phase failed";
      } else {
        oc.status = "ok";
      }
      if (oc.status != "ok") g.ok = false;
      all_done &= slot.done && oc.status == "ok";
      win_start = std::max(win_start, pr.measure_start_ns);
      win_end = std::min(win_end, pr.measure_end_ns);
      if (slot.started) {
        skew_lo = std::min(skew_lo, slot.started_ns);
        skew_hi = std::max(skew_hi, slot.started_ns);
      }
    }
  }
  const bool colocated = phase == "colocated";
  if (colocated && skew_hi >= skew_lo && skew_lo != INT64_MAX) g.barrier_skew_s = (skew_hi - skew_lo) * 1e-9;
  if (colocated && all_done && win_end > win_start) {
    g.overlap_start_ns = win_start;
    g.overlap_end_ns = win_end;
  }
  if (sampler) sampler->stop();
  for (std::size_t i : tenants) {
    TenantResult& tr = run.tenants[i];
    PhaseResult& pr = phase_of(tr, phase);
    if (colocated && !g.overlap_start_ns) {
      // No overlap window (a worker failed): nothing counts as co-located.
      summarize_phase(pr, tr.work, std::int64_t{1}, std::int64_t{0});
    } else {
      summarize_phase(pr, tr.work, g.overlap_start_ns, g.overlap_end_ns);
    }
    if (sampler) {
      attach_telemetry(pr, sampler->samples());
      if (const auto err = sampler->error()) pr.telemetry_error = *err;
      pr.telemetry_unsupported = sampler->notes();
    }
  }
  return g;
}

namespace {
// A phase that is by definition another one (alone under time-slicing is exclusive): its outcome
// and statistics, no repeated samples.
PhaseResult reference_to(const PhaseResult& p, const std::string& source) {
  PhaseResult r = p;
  r.source = source;
  r.start_ns.clear();
  r.duration_s.clear();
  r.in_window.clear();
  r.outlier.clear();
  r.latencies_s.clear();
  r.latency_count.clear();
  r.counter_samples.clear();
  return r;
}

std::vector<std::string> mps_client_env(const Scenario& s, const Tenant& t, const MpsDaemon& d) {
  std::vector<std::string> env = d.client_env();
  if (t.placement.mps_active_thread_percentage)
    env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + std::to_string(*t.placement.mps_active_thread_percentage));
  if (t.placement.mps_pinned_mem_limit)
    env.push_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + std::to_string(s.device) + "=" + *t.placement.mps_pinned_mem_limit);
  return env;
}

nlohmann::json instance_json(const MigInstance& m) {
  return {{"index", m.index}, {"gpu_instance_id", m.gpu_instance_id}, {"compute_instance_id", m.compute_instance_id},
          {"profile", m.profile}, {"uuid", m.uuid}, {"sm_count", m.sm_count}, {"memory_bytes", m.memory_bytes}};
}
}  // namespace

RunResult new_run_result(const Scenario& s, int repetition) {
  RunResult r;
  r.scenario = s.name;
  r.scenario_file = s.file;
  r.mode = mode_name(s.mode);
  r.device = s.device;
  r.repetition = repetition;
  r.repetitions = s.repetitions;
  r.warmup_s = s.warmup_s;
  r.duration_s = s.duration_s;
  r.cutoff = s.cutoff;
  r.mode_config = {{"mode", r.mode}};
  for (const auto& t : s.tenants) {
    TenantResult tr;
    tr.name = t.name;
    tr.role = t.role;
    tr.workload = t.workload;
    tr.params = t.params;
    tr.placement = t.placement.raw;
    r.tenants.push_back(std::move(tr));
  }
  return r;
}

RunResult Orchestrator::run(const Scenario& s, int repetition) {
  RunResult r = new_run_result(s, repetition);
  r.mode_config["device"] = o_.device;
  auto finish = [&](const std::string& status, const std::string& message) {
    r.status = status;
    r.message = message;
    return r;
  };
  const auto no_env = [](std::size_t) { return std::vector<std::string>{}; };
  std::vector<std::size_t> all(s.tenants.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;

  // Runs `tenants` of one phase; returns an error/interrupted/waived RunResult status or "".
  auto phase = [&](const std::vector<std::size_t>& tenants, const std::string& name,
                   const std::function<std::vector<std::string>(std::size_t)>& env) -> std::string {
    const std::string who = tenants.size() == 1 ? " of " + s.tenants[tenants[0]].name : "";
    if (poll_signal(0)) {
      r.message = "interrupted before the " + name + " phase" + who;
      return "interrupted";
    }
    const GroupResult g = run_group(s, r, tenants, name, env);
    if (name == "colocated") {
      r.barrier_skew_s = g.barrier_skew_s;
      r.overlap_start_ns = g.overlap_start_ns;
      r.overlap_end_ns = g.overlap_end_ns;
    }
    if (interrupted_) {
      r.message = "interrupted during the " + name + " phase" + who;
      return "interrupted";
    }
    if (g.ok) return "";
    std::string failed;
    bool waived = false;
    for (std::size_t i : tenants) {
      const WorkerOutcome& oc = phase_of(r.tenants[i], name).outcome;
      if (oc.status == "ok" || oc.status == "stopped") continue;
      waived |= oc.status == "waived";
      failed += (failed.empty() ? "" : "; ") + s.tenants[i].name + " " + oc.status + ": " + oc.message;
    }
    r.message = name + " phase failed: " + failed;
    return waived ? "waived" : "error";
  };

  // MIG: where each tenant runs, and where the exclusive phase runs without a baseline.
  const MigPlan* mig = nullptr;
  if (s.mode == Mode::mig) {
    const auto it = o_.mig_plans.find(s.name);
    if (it == o_.mig_plans.end()) return finish("error", "no MIG placement was resolved for this scenario");
    mig = &it->second;
    nlohmann::json instances = nlohmann::json::array(), assignment = nlohmann::json::object();
    for (const auto& m : mig->instances) instances.push_back(instance_json(m));
    for (std::size_t i = 0; i < s.tenants.size(); ++i)
      assignment[s.tenants[i].name] = mig->instances[mig->tenant_instance[i]].uuid;
    r.mode_config["mig"] = {{"instances", instances}, {"assignment", assignment}};
  }
  const auto mig_env = [&](std::size_t i) {
    return std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + mig->instances[mig->tenant_instance[i]].uuid};
  };

  // exclusive: each tenant alone on the whole device, one after another. A GPU in MIG mode has no
  // whole device: take the saved baseline, or the largest MIG instance, and say which.
  if (mig && !o_.baseline.empty()) {
    for (std::size_t i = 0; i < s.tenants.size(); ++i) {
      const BaselinePhase& b = o_.baseline.at(s.name + "/" + s.tenants[i].name);
      r.tenants[i].exclusive = b.phase;
      r.tenants[i].resolved_params = b.phase.outcome.resolved;  // the same offered load as the baseline
      r.tenants[i].work = b.work;
    }
    r.mode_config["exclusive_source"] = "baseline file " + o_.baseline_file;
  } else {
    std::function<std::vector<std::string>(std::size_t)> env = no_env;
    if (mig) {
      const MigInstance& big = mig->instances[mig->largest];
      env = [&big](std::size_t) { return std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + big.uuid}; };
      r.mode_config["exclusive_source"] = "largest MIG instance " + big.profile + " (" + big.uuid + ", " +
                                          std::to_string(big.sm_count) +
                                          " SMs): slowdowns are against that instance, not a whole GPU";
    }
    // Not mode mig, but a GPU in MIG mode (prepare_modes noted it): the phase ran on a MIG instance.
    const bool on_mig_instance = !mig && !o_.mig_instance_note.empty();
    if (on_mig_instance) r.mode_config["exclusive_source"] = o_.mig_instance_note;
    for (std::size_t i = 0; i < s.tenants.size(); ++i) {
      const std::string st = phase({i}, "exclusive", env);
      if (mig) r.tenants[i].exclusive.source = "largest_mig_instance";
      if (on_mig_instance) r.tenants[i].exclusive.source = "mig_instance";
      if (!st.empty()) return finish(st, r.message);
    }
  }
  if (s.mode == Mode::exclusive) return finish("ok", "");

  // alone and colocated, per mode.
  std::unique_ptr<MpsDaemon> daemon;  // quit by its destructor on every way out of this function
  std::function<std::vector<std::string>(std::size_t)> shared_env = no_env;
  switch (s.mode) {
    case Mode::timeslice:
    case Mode::streams:
      // A tenant alone on a time-sliced GPU (or alone in its process) is the exclusive phase by definition.
      for (auto& t : r.tenants) t.alone = reference_to(t.exclusive, "exclusive");
      break;
    case Mode::mps: {
      const std::string n = std::to_string(++mps_starts_);
      daemon = o_.mps_pipe_dir.empty() ? MpsDaemon::start(o_.run_dir + "/mps" + n, o_.log_dir + "/mps" + n)
                                       : MpsDaemon::attach(o_.mps_pipe_dir);
      r.mode_config["mps"] = daemon->describe();
      shared_env = [&](std::size_t i) { return mps_client_env(s, s.tenants[i], *daemon); };
      break;
    }
    case Mode::mig:
      shared_env = mig_env;
      break;
    case Mode::exclusive:
      break;
  }
  if (s.mode != Mode::timeslice && s.mode != Mode::streams)
    for (std::size_t i = 0; i < s.tenants.size(); ++i)
      if (const std::string st = phase({i}, "alone", shared_env); !st.empty()) return finish(st, r.message);
  if (const std::string st = phase(all, "colocated", shared_env); !st.empty()) return finish(st, r.message);
  return finish("ok", "");
}

}  // namespace ib
