#include "harness/core/files.h"

#include "harness/core/errors.h"

#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <utility>
#include <vector>

namespace ib {

namespace {

[[noreturn]] void refuse(const std::string& path, int err) {
  throw OutputError(path, "cannot write " + path + ": " + std::strerror(err));
}

bool write_all_to(int fd, const std::string& text) {
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// The folder holding `path`, synced so that the rename itself survives a crash.
void sync_folder_of(const std::string& path) {
  std::vector<char> copy(path.begin(), path.end());
  copy.push_back('\0');
  const int dir = ::open(::dirname(copy.data()), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;  // the file is written; only its durability across a power cut is less sure
  (void)::fsync(dir);
  ::close(dir);
}

}  // namespace

namespace {

// The text in a fresh temporary beside `path`, synced; returns its name. A fresh name (mkostemp: created
// with O_EXCL, so a file or symlink planted under a predictable name is never written through); the
// rename that follows replaces `path` itself even when `path` is a symlink.
// The last guard under check_output_paths (core/output_paths.h): a rename would replace a device,
// FIFO or socket node with a regular file (as root, /dev/null itself).
std::string write_temporary(const std::string& path, const std::string& text) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw OutputError(path, "cannot write " + path + ": not a regular file (only a regular file or a new path is written)");
  std::string tmpl = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) refuse(path, errno);
  if (::fchmod(fd, 0644) != 0 || !write_all_to(fd, text) || ::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    refuse(path, e);
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmpl.c_str());
    refuse(path, e);
  }
  return tmpl;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = write_temporary(path, text);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    refuse(path, e);
  }
  sync_folder_of(path);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temporaries;
  try {
    for (const auto& [path, text] : files) temporaries.push_back(write_temporary(path, text));
  } catch (...) {  // one could not be written: the old files stay as they were
    for (const std::string& t : temporaries) ::unlink(t.c_str());
    throw;
  }
  for (std::size_t i = 0; i < files.size(); ++i)
    if (::rename(temporaries[i].c_str(), files[i].first.c_str()) != 0) {
      const int e = errno;
      for (std::size_t j = i; j < files.size(); ++j) ::unlink(temporaries[j].c_str());
      refuse(files[i].first, e);
    }
  for (const auto& f : files) sync_folder_of(f.first);
}

namespace {

void check_input_stat(const struct stat& st, const std::string& path, const std::string& what, std::size_t max_bytes) {
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file (a " + what + " must be one)");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw InputError(path + ": " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " a " +
                     what + " may have");
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  check_input_stat(st, path, what, max_bytes);
  // O_NONBLOCK: should the path have become a FIFO since stat(), open() does not wait for a writer; the
  // opened file is checked again, so what is read is what was checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  std::string text;
  try {
    if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot read " + what + ": " + std::strerror(errno));
    check_input_stat(st, path, what, max_bytes);
    char buf[65536];
    // Read one byte past the limit at most: a file that grew after stat() is still refused.
    while (text.size() <= max_bytes) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(path + ": cannot read " + what + ": " + std::strerror(errno));
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (text.size() > max_bytes)
    throw InputError(path + ": grew past the " + std::to_string(max_bytes) + " bytes a " + what + " may have while it was read");
  return text;
}

void make_dirs(const std::string& path, const std::string& option) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError(option + ": cannot create " + path + ": " + ec.message());
}

}  // namespace ib
