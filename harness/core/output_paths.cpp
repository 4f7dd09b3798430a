#include "harness/core/output_paths.h"

#include "harness/core/errors.h"
#include "harness/core/text.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <system_error>

namespace ib {

namespace {

// What a path names, enough to tell whether two paths are one file.
struct FileIdentity {
  bool exists = false;
  mode_t type = 0;  // S_IFMT bits of lstat (the path itself, a symlink not followed)
  dev_t device = 0;
  ino_t inode = 0;
  std::string normal;  // absolute, with "." , ".." and symlinked parent folders resolved
};

FileIdentity identify(const std::string& path) {
  FileIdentity id;
  std::error_code ec;
  id.normal = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec).lexically_normal().string();
  if (ec) id.normal = std::filesystem::absolute(path).lexically_normal().string();
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.type = st.st_mode & S_IFMT;
    struct stat target{};
    // An input given through a symlink is the file it points at.
    const struct stat& named = (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &target) == 0) ? target : st;
    id.device = named.st_dev;
    id.inode = named.st_ino;
  }
  return id;
}

bool same_file(const FileIdentity& a, const FileIdentity& b) {
  if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
  return a.normal == b.normal;
}

std::optional<std::string> not_a_regular_file(mode_t type) {
  switch (type) {
    case S_IFREG: return std::nullopt;
    case S_IFDIR: return "a folder";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

bool inside(const std::string& normal, const std::string& folder_normal) {
  return !folder_normal.empty() && normal.size() > folder_normal.size() + 1 &&
         normal.compare(0, folder_normal.size(), folder_normal) == 0 && normal[folder_normal.size()] == '/';
}

[[noreturn]] void refuse(const NamedPath& out, const std::string& why) {
  throw InputError(out.option + " " + printable_path(out.path) + ": " + why);
}

void check_one(const NamedPath& out, const FileIdentity& id, const OutputPlan& plan,
               const std::vector<std::pair<const NamedPath*, FileIdentity>>& inputs,
               const std::vector<std::pair<const NamedPath*, FileIdentity>>& earlier, const std::string& folder) {
  if (out.path.empty()) throw InputError(out.option + ": an empty path (name the file to write)");
  if (id.exists) {
    if (const auto kind = not_a_regular_file(id.type))
      refuse(out, "is " + *kind + ", not a regular file: outputs are written only to a regular file or a new path");
  }
  for (const auto& [in, in_id] : inputs)
    if (same_file(id, in_id)) refuse(out, "is also this command's input (" + in->option + "): it would be replaced");
  for (const auto& [other, other_id] : earlier)
    if (same_file(id, other_id)) refuse(out, "is also the file of " + other->option + ": one would replace the other");
  if (id.exists && !out.appends && !plan.force && !inside(id.normal, folder))
    refuse(out, "exists and is not in this command's output folder (--force replaces it)");
}

}  // namespace

void check_output_paths(const OutputPlan& plan) {
  std::vector<std::pair<const NamedPath*, FileIdentity>> inputs, earlier;
  for (const NamedPath& in : plan.inputs)
    if (!in.path.empty()) inputs.emplace_back(&in, identify(in.path));
  const std::string folder = plan.own_folder.empty() ? "" : identify(plan.own_folder).normal;
  for (const NamedPath& out : plan.outputs) {
    FileIdentity id = out.path.empty() ? FileIdentity{} : identify(out.path);
    check_one(out, id, plan, inputs, earlier, folder);
    earlier.emplace_back(&out, std::move(id));
  }
}

}  // namespace ib
