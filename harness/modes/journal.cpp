#include "harness/modes/journal.h"

#include "harness/core/errors.h"
#include "harness/core/names.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ib {

namespace {

// Field 22 of /proc/<pid>/stat (after the parenthesised command, which may hold spaces); 0 when the
// process does not exist or has ended (a zombie, Z or X in field 3: a killed run whose parent died too
// waits for a reaper that may never come, and can undo nothing).
unsigned long long start_ticks_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  if (!(rest >> field) || field == "Z" || field == "X") return 0;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  rest >> ticks;
  return ticks;
}

nlohmann::json entry_json(const JournalEntry& e) {
  nlohmann::json j{{"event", to_string(e.event)}};
  switch (e.event) {
    case JournalEvent::mig_intent:
    case JournalEvent::mig_created:
    case JournalEvent::mig_not_created:
    case JournalEvent::mig_destroyed:
      j["device"] = e.device;
      j["profile"] = e.mig.profile;
      if (e.event == JournalEvent::mig_created || e.event == JournalEvent::mig_destroyed) {
        j["gpu_instance_id"] = e.mig.gpu_instance_id;
        j["compute_instance_id"] = e.mig.compute_instance_id;
      }
      break;
    default:
      j["path"] = e.path;
  }
  return j;
}

JournalEntry entry_of(const nlohmann::json& j) {
  JournalEntry e;
  const auto event = parse_name<JournalEvent>(j.at("event").get<std::string>());
  if (!event) throw std::runtime_error("unknown journal event");
  e.event = *event;
  e.device = j.value("device", 0u);
  e.mig.profile = j.value("profile", std::string());
  e.mig.gpu_instance_id = j.value("gpu_instance_id", 0u);
  e.mig.compute_instance_id = j.value("compute_instance_id", 0u);
  e.path = j.value("path", std::string());
  return e;
}

bool same_instance(const std::pair<unsigned, CreatedMigInstance>& a, unsigned device, const CreatedMigInstance& b) {
  return a.first == device && a.second.gpu_instance_id == b.gpu_instance_id &&
         a.second.compute_instance_id == b.compute_instance_id;
}

template <class T>
void erase_first(std::vector<T>& v, const T& x) {
  if (auto it = std::find(v.begin(), v.end(), x); it != v.end()) v.erase(it);
}

}  // namespace

std::string default_state_dir() {
  if (const char* d = std::getenv("INTERFERENCE_BENCH_STATE_DIR"); d && *d) return d;
  if (geteuid() == 0) return "/run/interference-bench";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/interference-bench";
  return "/tmp/interference-bench-" + std::to_string(geteuid());
}

Outstanding outstanding(const std::vector<JournalEntry>& entries) {
  Outstanding o;
  for (const JournalEntry& e : entries) {
    const std::pair<unsigned, std::string> intent{e.device, e.mig.profile};
    switch (e.event) {
      case JournalEvent::mig_intent: o.mig_unconfirmed.push_back(intent); break;
      case JournalEvent::mig_created:
        erase_first(o.mig_unconfirmed, intent);
        o.mig_instances.emplace_back(e.device, e.mig);
        break;
      case JournalEvent::mig_not_created: erase_first(o.mig_unconfirmed, intent); break;
      case JournalEvent::mig_destroyed: {
        auto& v = o.mig_instances;
        v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& x) { return same_instance(x, e.device, e.mig); }),
                v.end());
        break;
      }
      case JournalEvent::mps_intent: o.mps_pipe_dirs.push_back(e.path); break;
      case JournalEvent::mps_quit: erase_first(o.mps_pipe_dirs, e.path); break;
      case JournalEvent::temp_dir: o.temp_dirs.push_back(e.path); break;
      case JournalEvent::temp_dir_removed: erase_first(o.temp_dirs, e.path); break;
    }
  }
  return o;
}

bool JournalFile::owner_alive() const { return pid > 0 && start_ticks != 0 && start_ticks_of(pid) == start_ticks; }

JournalFile read_journal(const std::string& path) {
  JournalFile f;
  f.path = path;
  std::ifstream in(path);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) break;
    try {
      if (header) {
        f.pid = j.at("pid").get<pid_t>();
        f.start_ticks = j.at("start_ticks").get<unsigned long long>();
        header = false;
      } else {
        f.entries.push_back(entry_of(j));
      }
    } catch (const std::exception&) {
      break;
    }
  }
  return f;
}

std::vector<std::string> journal_paths(const std::string& state_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(state_dir, ec))
    if (e.path().extension() == ".journal" && e.is_regular_file(ec)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Journal::Journal(std::string state_dir) : state_dir_(std::move(state_dir)) {}

void Journal::record(const JournalEntry& e) {
  if (fd_ < 0) {
    std::error_code ec;
    std::filesystem::create_directories(state_dir_, ec);
    ::chmod(state_dir_.c_str(), 0700);
    path_ = state_dir_ + "/run-" + std::to_string(::getpid()) + ".journal";
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND, 0600);
    if (fd_ < 0) throw CannotRunError("cannot write the journal " + path_ + ": " + std::strerror(errno));
    const std::string head =
        nlohmann::json{{"pid", ::getpid()}, {"start_ticks", start_ticks_of(::getpid())}}.dump() + "\n";
    if (::write(fd_, head.data(), head.size()) != static_cast<ssize_t>(head.size()))
      throw CannotRunError("cannot write the journal " + path_ + ": " + std::strerror(errno));
  }
  const std::string line = entry_json(e).dump() + "\n";
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fsync(fd_) != 0)
    throw CannotRunError("cannot write the journal " + path_ + ": " + std::strerror(errno));
  entries_.push_back(e);
}

Journal::~Journal() {
  if (fd_ < 0) return;
  ::close(fd_);
  if (outstanding(entries_).empty()) ::unlink(path_.c_str());
}

}  // namespace ib
