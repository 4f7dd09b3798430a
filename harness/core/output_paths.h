// One rule for every file a command writes (docs/reliability.md, "What an output may replace"): an
// output goes only to a regular file or a new path; never onto a device, FIFO, socket, folder or
// symlink, never onto one of the command's inputs or another of its outputs, and onto an existing file
// outside the command's own output folder only with --force. Checked before anything is measured.
#pragma once

#include <string>
#include <vector>

namespace ib {

// A path a command names, with the option that named it (for the message).
struct NamedPath {
  std::string option;  // "--junit", "--scenario", "RESULTS" for a positional argument
  std::string path;
  bool appends = false;  // an output that is added to, not replaced (the history database)
};

struct OutputPlan {
  std::vector<NamedPath> outputs;  // every file the command will write
  std::vector<NamedPath> inputs;   // every file it reads: scenarios, suites, baselines, results
  std::string own_folder;          // the command's output folder ("" for none): files in it may be replaced
  bool force = false;              // --force: an existing file elsewhere may be replaced too
};

// Throws InputError (exit 2), one line naming the option and the path, at the first output that breaks
// the rule. Two paths are the same file when they have the same device and inode (where the file
// exists) or the same normalised absolute path (where it does not yet).
void check_output_paths(const OutputPlan& plan);

}  // namespace ib
