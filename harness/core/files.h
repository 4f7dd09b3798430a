// Files the tool writes, and the one rule for every file a user gives it to read.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// Writes `text` to `path` atomically: a temporary file in the same folder, fsync, then rename,
// so a reader (or an interrupted run) never sees a half-written file, and nothing is written through a
// symlink or a file planted under the temporary name. Throws OutputError.
void write_file_atomic(const std::string& path, const std::string& text);

// Writes a set of files (path, text) that belong together (a report in several formats): every one to
// a temporary beside it first, and only when all are complete are they renamed over the old ones, so a
// failure leaves the old set whole. Throws OutputError.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

// Reads a file the user gives a command (a scenario, a results file, a list of nodes or layouts): only
// a regular file of at most max_bytes. A FIFO, device, socket or folder is refused before anything is
// read from it (a FIFO without a writer would block for ever, /dev/zero never ends), and a file that
// grows while it is read is refused at max_bytes + 1, so no input can block a command or exhaust its
// memory. `what` names the option or the kind of file ("merge --expect-nodes file"). Throws InputError
// (exit 2), one line: "PATH: not a regular file (a WHAT must be one)".
std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes);

// Creates the folder `path` and its parents (an existing one is fine). Throws InputError naming `option`
// (e.g. "--out") and why.
void make_dirs(const std::string& path, const std::string& option);

}  // namespace ib
