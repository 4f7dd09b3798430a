// Files the tool writes.
#pragma once

#include <string>

namespace ib {

// Writes `text` to `path` atomically: a temporary file in the same folder, fsync, then rename,
// so a reader (or an interrupted run) never sees a half-written file, and nothing is written through a
// symlink or a file planted under the temporary name. Throws OutputError.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace ib
