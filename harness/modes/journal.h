// What a run changes outside itself and must undo (docs/design.md section 7): MIG instances made by
// --mig-create, private MPS control daemons, its temporary folder. Each change is recorded (appended
// and fsync'd) before it is made and again once it is made or undone, in a journal file of its own
// under the state folder. A run that ends, however it ends short of SIGKILL, undoes everything and
// removes its journal; after a SIGKILL (or a power cut of the host process) `interference-bench
// cleanup` reads the journals of runs that no longer live and undoes exactly what they record.
#pragma once

#include "harness/core/names.h"
#include "harness/nvml/nvml.h"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace ib {

// $INTERFERENCE_BENCH_STATE_DIR, else /run/interference-bench for root, else
// $XDG_RUNTIME_DIR/interference-bench, else /tmp/interference-bench-<uid>.
std::string default_state_dir();

// One journal entry. Kinds: mig_intent (a creation is about to be asked for), mig_created,
// mig_not_created (NVML refused it: nothing was made), mig_destroyed, mps_intent (a private daemon is about to start in `path`), mps_quit, temp_dir
// (a folder to remove), temp_dir_removed.
enum class JournalEvent {
  mig_intent, mig_created, mig_not_created, mig_destroyed, mps_intent, mps_quit, temp_dir, temp_dir_removed
};
template <>
struct EnumWords<JournalEvent> {
  static constexpr std::array<const char*, 8> words = {"mig_intent", "mig_created", "mig_not_created",
                                                       "mig_destroyed", "mps_intent", "mps_quit",
                                                       "temp_dir", "temp_dir_removed"};
};

struct JournalEntry {
  JournalEvent event = JournalEvent::temp_dir;
  unsigned device = 0;
  CreatedMigInstance mig;  // mig_*: the profile (and, once made, its ids)
  std::string path;        // mps_*: the pipe folder; temp_dir*: the folder
};

// What a journal still asks to be undone.
struct Outstanding {
  std::vector<std::pair<unsigned, CreatedMigInstance>> mig_instances;  // created, not destroyed
  std::vector<std::pair<unsigned, std::string>> mig_unconfirmed;       // asked for, no id recorded
  std::vector<std::string> mps_pipe_dirs;                              // started (or starting), not quit
  std::vector<std::string> temp_dirs;                                  // made, not removed
  bool empty() const {
    return mig_instances.empty() && mig_unconfirmed.empty() && mps_pipe_dirs.empty() && temp_dirs.empty();
  }
};
Outstanding outstanding(const std::vector<JournalEntry>& entries);

// A journal file: the owner's pid and start time, then one JSON line per entry.
struct JournalFile {
  std::string path;
  pid_t pid = 0;
  unsigned long long start_ticks = 0;  // /proc/<pid>/stat starttime: a reused pid is another process
  std::vector<JournalEntry> entries;
  bool owner_alive() const;
};
// Reads one journal; a line that does not parse (a write cut by the kill) ends it.
JournalFile read_journal(const std::string& path);
// Every journal under `state_dir` (none when it does not exist).
std::vector<std::string> journal_paths(const std::string& state_dir);

// This process's journal. The file is made at the first record (a run that changes nothing outside
// itself leaves none) and removed when the journal goes with nothing outstanding; with something
// outstanding (a destroy that failed) it stays for `cleanup`.
class Journal {
 public:
  explicit Journal(std::string state_dir);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  // Appends and fsyncs `e`; throws CannotRunError when the journal cannot be written (then the change
  // must not be made).
  void record(const JournalEntry& e);
  const std::string& path() const { return path_; }

 private:
  std::string state_dir_, path_;
  int fd_ = -1;
  std::vector<JournalEntry> entries_;
};

}  // namespace ib
