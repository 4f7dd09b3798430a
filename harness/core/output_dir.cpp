#include "harness/core/output_dir.h"

#include "harness/core/clock.h"
#include "harness/core/errors.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ib {

namespace {

namespace fs = std::filesystem;

void make_folder(const std::string& option, const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)))
    throw InputError(option + " " + path + ": is a symlink; give the folder itself");
  fs::create_directories(path, ec);
  if (ec) throw InputError(option + ": cannot create " + path + ": " + ec.message());
  if (!fs::is_directory(fs::symlink_status(path, ec))) throw InputError(option + " " + path + ": is not a folder");
}

// Removes the regular files and symlinks directly under `dir` (a symlink itself, never its target).
void remove_files_in(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto st = e.symlink_status(ec);
    if (fs::is_regular_file(st) || fs::is_symlink(st)) fs::remove(e.path(), ec);
  }
}

}  // namespace

OutputDir::OutputDir(const std::string& option, const std::string& path, const std::vector<std::string>& result_files,
                     bool replace, OldResults old)
    : path_(path) {
  std::error_code ec;
  created_ = !fs::exists(fs::symlink_status(path, ec));
  make_folder(option, path);
  const std::string lock = path + "/" + kLockName;
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw InputError(option + " " + path + ": cannot create " + kLockName + ": " + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd_);
    if (err == EWOULDBLOCK)
      throw InputError(option + " " + path + ": another interference-bench run is writing into this folder");
    throw InputError(option + " " + path + ": cannot lock it: " + std::strerror(err));
  }
  for (const auto& name : result_files) {
    const std::string f = path + "/" + name;
    if (!fs::exists(fs::symlink_status(f, ec))) continue;
    if (!replace) {
      ::close(lock_fd_);
      throw InputError(option + " " + path + ": already holds " + name +
                       " of an earlier run; give a new folder, or --force to replace its results");
    }
    if (old == OldResults::remove_now) fs::remove(f, ec);
  }
  if (replace && old == OldResults::remove_now) remove_files_in(path + "/logs");
}

OutputDir::~OutputDir() {
  if (created_ && !keep_) {
    ::unlink((path_ + "/" + kLockName).c_str());
    ::rmdir((path_ + "/logs").c_str());  // only when empty, like the folder itself
    ::rmdir(path_.c_str());
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

std::string OutputDir::unique_default(const std::string& prefix) {
  return prefix + utc_now("%Y%m%d-%H%M%S") + "-" + std::to_string(::getpid());
}

}  // namespace ib
