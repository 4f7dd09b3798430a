// `interference-bench cleanup`: undoes what killed runs left, exactly what their journals record
// (harness/modes/journal.h) and nothing else: MIG instances they created, private MPS daemons they
// started, their temporary folders. Journals of runs still alive are left alone.
#pragma once

#include "harness/nvml/nvml.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ib {

struct CleanupResult {
  int journals = 0;                   // journals found
  int live = 0;                       // of runs still running: not touched
  std::vector<std::string> done;      // what was undone (or, dry run, would be)
  std::vector<std::string> problems;  // what could not be undone, or may need a look
  bool ok() const { return problems.empty(); }
};

// `load_nvml` is called only when a journal holds MIG instances. A journal whose every entry was
// undone is removed (not in a dry run); one with problems stays for the next cleanup.
CleanupResult cleanup_left_behind(const std::string& state_dir, const std::function<std::unique_ptr<Nvml>()>& load_nvml,
                                  bool dry_run);

}  // namespace ib
