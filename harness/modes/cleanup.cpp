#include "harness/modes/cleanup.h"

#include "harness/modes/journal.h"
#include "harness/modes/mps_daemon.h"

#include <unistd.h>

#include <filesystem>

namespace ib {

namespace {

std::string describe(unsigned device, const CreatedMigInstance& m) {
  return "MIG instance " + m.profile + " (GPU " + std::to_string(device) + ", GI " + std::to_string(m.gpu_instance_id) +
         ", CI " + std::to_string(m.compute_instance_id) + ")";
}

// Only what the tool itself makes is ever removed: /tmp/ib-run-* (TempDir in harness/cli/app.cpp).
bool is_our_temp_dir(const std::string& path) { return path.rfind("/tmp/ib-run-", 0) == 0 && path.find("..") == std::string::npos; }

void undo_mig(const Outstanding& left, const std::function<std::unique_ptr<Nvml>()>& load_nvml, bool dry_run,
              CleanupResult& r) {
  for (const auto& [device, profile] : left.mig_unconfirmed)
    r.problems.push_back("a creation of MIG instance " + profile + " on GPU " + std::to_string(device) +
                         " was asked for but its ids were never recorded; check `nvidia-smi mig -lgi -i " +
                         std::to_string(device) + "` (nothing was destroyed for it)");
  if (left.mig_instances.empty()) return;
  std::unique_ptr<Nvml> nvml;
  try {
    if (!dry_run) nvml = load_nvml();
  } catch (const std::exception& e) {
    r.problems.push_back(std::string("cannot load NVML to destroy MIG instances: ") + e.what());
    return;
  }
  for (auto it = left.mig_instances.rbegin(); it != left.mig_instances.rend(); ++it) {
    const std::string what = describe(it->first, it->second);
    if (dry_run) {
      r.done.push_back("would destroy " + what);
      continue;
    }
    try {
      nvml->destroy_mig_instance(it->first, it->second);
      r.done.push_back("destroyed " + what);
    } catch (const std::exception& e) {
      r.problems.push_back("could not destroy " + what + ": " + e.what());
    }
  }
}

// The MPS daemons go first: a server on one of the MIG instances left behind (mode mps on a GPU in MIG mode runs on
// its first instance) holds a CUDA context there, and NVML refuses to destroy an instance a process runs on
// (NVML_ERROR_IN_USE, nvmlComputeInstanceDestroy). "quit" returns once the servers have ended.
void undo_mps(const Outstanding& left, bool dry_run, CleanupResult& r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& pipe_dir : left.mps_pipe_dirs) {
    if (!fs::exists(pipe_dir, ec)) continue;  // its folder went with the daemon
    if (dry_run) {
      r.done.push_back("would quit the MPS control daemon of " + pipe_dir);
      continue;
    }
    auto d = MpsDaemon::adopt(pipe_dir);
    d->quit();
    if (d->quit_result() == "quit") r.done.push_back("quit the MPS control daemon of " + pipe_dir);
    else r.done.push_back("no MPS control daemon answered in " + pipe_dir + " (" + d->quit_result() + ")");
  }
}

void undo_folders(const Outstanding& left, bool dry_run, CleanupResult& r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& dir : left.temp_dirs) {
    if (!is_our_temp_dir(dir)) {
      r.problems.push_back("journal names " + dir + " as a temporary folder; not removed (not /tmp/ib-run-*)");
      continue;
    }
    if (!fs::exists(fs::symlink_status(dir, ec))) continue;
    if (dry_run) {
      r.done.push_back("would remove " + dir);
      continue;
    }
    fs::remove_all(dir, ec);
    if (ec) r.problems.push_back("could not remove " + dir + ": " + ec.message());
    else r.done.push_back("removed " + dir);
  }
}

}  // namespace

CleanupResult cleanup_left_behind(const std::string& state_dir, const std::function<std::unique_ptr<Nvml>()>& load_nvml,
                                  bool dry_run) {
  CleanupResult r;
  for (const auto& path : journal_paths(state_dir)) {
    ++r.journals;
    const JournalFile f = read_journal(path);
    if (f.owner_alive() && f.pid != ::getpid()) {
      ++r.live;
      continue;
    }
    const Outstanding left = outstanding(f.entries);
    const std::size_t problems_before = r.problems.size();
    undo_mps(left, dry_run, r);
    undo_mig(left, load_nvml, dry_run, r);
    undo_folders(left, dry_run, r);
    if (!dry_run && r.problems.size() == problems_before) ::unlink(path.c_str());
  }
  return r;
}

}  // namespace ib
