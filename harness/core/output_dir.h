// A command's output folder (docs/design.md section 8): results go only into a new folder or one the user
// explicitly allows (--force), never into one another run is writing, never through a symlink.
#pragma once

#include <string>
#include <vector>

namespace ib {

// What `replace` (--force) does to the results already in the folder: removed at once (a run, which
// writes its files as it goes and must not leave an earlier run's beside them), or left for the caller
// to replace whole once the new ones are complete (merge, which writes all its files at the end: a
// refusal or failure on the way leaves the earlier report as it was).
enum class OldResults { remove_now, keep_until_replaced };

class OutputDir {
 public:
  // Creates `path` (and its parents) and takes an exclusive lock on it (flock on kLockName inside,
  // held while this object lives). Refuses with InputError (exit 2), naming `option` and the path:
  // a path that is a symlink or not a folder, a folder another run holds the lock of, one that
  // already holds any of `result_files` unless `replace` (then those and every file under logs/ are
  // removed first, without following symlinks; with OldResults::keep_until_replaced nothing is removed).
  // OutputError (exit 3) when the folder cannot be made.
  OutputDir(const std::string& option, const std::string& path, const std::vector<std::string>& result_files,
            bool replace, OldResults old = OldResults::remove_now);
  // Releases the lock. A folder this object created and nothing kept (see keep()) is removed again
  // when it is still empty, so a refusal later in set-up leaves nothing behind.
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::string& path() const { return path_; }
  // The folder holds results now: it stays.
  void keep() { keep_ = true; }

  // `prefix` + the UTC time to the second + "-" + this process's id: two runs started in the same
  // second get different folders.
  static std::string unique_default(const std::string& prefix);
  static constexpr const char* kLockName = ".interference-bench.lock";

 private:
  std::string path_;
  int lock_fd_ = -1;
  bool created_ = false;  // the folder did not exist before
  bool keep_ = false;
};

}  // namespace ib
