#include "kernels/cuda/nccl_api.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iterator>
#include <set>
#include <type_traits>
#include <utility>

namespace ib::cuda::nccl {

namespace {

constexpr const char* kSoname = "libnccl.so.2";

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The paths matching a glob pattern, sorted; none when nothing matches.
std::vector<std::string> glob_sorted(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(':', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Library folders of the CUDA toolkit (step 3), newest versioned install first.
std::vector<std::string> toolkit_folders(const SearchInputs& in) {
  std::vector<std::string> roots;
  for (const std::string& r : {in.cuda_home, in.cuda_path, std::string("/usr/local/cuda")})
    if (!r.empty()) roots.push_back(r);
  auto versioned = glob_sorted("/usr/local/cuda-*");
  std::reverse(versioned.begin(), versioned.end());  // cuda-13.0 before cuda-12.8 (same digit counts)
  roots.insert(roots.end(), versioned.begin(), versioned.end());
  std::vector<std::string> out;
  for (const auto& r : roots)
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"}) out.push_back(r + sub);
  return out;
}

// Python prefixes whose site folders may hold NVIDIA wheels (step 4). Prefixes, not site folders:
// lib/python3.*/{site,dist}-packages is globbed under each.
std::vector<std::string> python_prefixes(const SearchInputs& in) {
  std::vector<std::string> out;
  if (!in.virtual_env.empty()) out.push_back(in.virtual_env);
  if (!in.conda_prefix.empty()) out.push_back(in.conda_prefix);
  // The python3 on PATH: a venv's bin/ or a system prefix's bin/ (its prefix is bin/..).
  for (const auto& d : split_path(in.path))
    if (::access((d + "/python3").c_str(), X_OK) == 0) out.push_back(d + "/..");
  if (!in.home.empty()) out.push_back(in.home + "/.local");
  for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) out.emplace_back(p);
  for (const auto& p : glob_sorted("/opt/*/.venv")) out.push_back(p);
  for (const auto& p : glob_sorted("/opt/*")) out.push_back(p);
  return out;
}

std::vector<std::string> python_folders(const SearchInputs& in) {
  std::vector<std::string> out;
  for (const auto& prefix : python_prefixes(in)) {
    // python3* also matches Debian's plain python3/dist-packages.
    for (const char* lib : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages", "/lib64/python3*/site-packages"}) {
      for (const auto& site : glob_sorted(prefix + lib)) {
        for (const auto& d : glob_sorted(site + "/nvidia/*/lib")) out.push_back(d);
        out.push_back(site + "/torch/lib");
      }
    }
  }
  return out;
}

// realpath, or the path itself when it cannot be resolved.
std::string resolved(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The file a handle was loaded from (the loader's link map).
std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return resolved(map->l_name);
  return "";
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

std::string result_name(Result r) {
  static constexpr const char* kNames[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                           "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                           "ncclRemoteError",   "ncclInProgress",         "ncclTimeout"};
  const int v = static_cast<int>(r);
  if (v >= 0 && v < static_cast<int>(std::size(kNames))) return kNames[v];
  return "ncclResult " + std::to_string(v);
}

SearchInputs search_inputs_from_environment() {
  SearchInputs in;
  in.override_path = env_or_empty("INTERFERENCE_BENCH_NCCL");
  in.cuda_home = env_or_empty("CUDA_HOME");
  in.cuda_path = env_or_empty("CUDA_PATH");
  in.home = env_or_empty("HOME");
  in.path = env_or_empty("PATH");
  in.virtual_env = env_or_empty("VIRTUAL_ENV");
  in.conda_prefix = env_or_empty("CONDA_PREFIX");
  return in;
}

SearchPlan search_plan(const SearchInputs& in) {
  SearchPlan plan;
  if (!in.override_path.empty()) {  // step 1: this and nothing else
    plan.by_name = false;
    const std::string file = is_dir(in.override_path) ? in.override_path + "/" + kSoname : in.override_path;
    plan.folders.push_back(is_dir(in.override_path) ? in.override_path : file);
    if (is_file(file)) plan.candidates.push_back(file);
    return plan;
  }
  std::set<std::string> seen, seen_folders;
  auto consider = [&](const std::vector<std::string>& folders) {
    for (const auto& d : folders) {
      if (!is_dir(d) || !seen_folders.insert(resolved(d)).second) continue;
      plan.folders.push_back(d);
      const std::string file = d + "/" + kSoname;
      if (is_file(file) && seen.insert(resolved(file)).second) plan.candidates.push_back(file);
    }
  };
  consider(toolkit_folders(in));
  consider(python_folders(in));
  return plan;
}

Library::~Library() {
  if (handle_) ::dlclose(handle_);
}

Library::Library(Library&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      api_(other.api_),
      path_(std::move(other.path_)),
      how_(std::move(other.how_)),
      error_(std::move(other.error_)),
      version_(other.version_) {}

Library& Library::operator=(Library&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    api_ = other.api_;
    path_ = std::move(other.path_);
    how_ = std::move(other.how_);
    error_ = std::move(other.error_);
    version_ = other.version_;
  }
  return *this;
}

namespace {

// Resolves every function of Api from `handle`; returns the first missing required name, or "".
std::string resolve(void* handle, Api& api) {
  std::string missing;
  auto sym = [&](auto& fn, const char* name, bool required) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
    if (!fn && required && missing.empty()) missing = name;
  };
  sym(api.get_version, "ncclGetVersion", true);
  sym(api.get_error_string, "ncclGetErrorString", true);
  sym(api.get_last_error, "ncclGetLastError", false);
  sym(api.comm_init_all, "ncclCommInitAll", true);
  sym(api.comm_destroy, "ncclCommDestroy", true);
  sym(api.comm_abort, "ncclCommAbort", true);
  sym(api.group_start, "ncclGroupStart", true);
  sym(api.group_end, "ncclGroupEnd", true);
  sym(api.all_reduce, "ncclAllReduce", true);
  sym(api.get_unique_id, "ncclGetUniqueId", false);
  sym(api.comm_init_rank_config, "ncclCommInitRankConfig", false);
  sym(api.comm_get_async_error, "ncclCommGetAsyncError", false);
  sym(api.comm_finalize, "ncclCommFinalize", false);
  return missing;
}

// Opens `what` (a soname or a path) and resolves the API; on failure returns the reason, closes
// what it opened and leaves `handle` null.
std::string try_open(const std::string& what, void*& handle, Api& api, int& version) {
  ::dlerror();
  handle = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) return dl_error();
  std::string why;
  if (const std::string missing = resolve(handle, api); !missing.empty()) {
    why = "no function " + missing + " in " + loaded_path(handle) + " (not NCCL 2.x?)";
  } else if (const Result r = api.get_version(&version); r != Result::success) {
    why = "ncclGetVersion failed: " + result_name(r);
  } else if (version < 21000) {  // ncclBfloat16 (train-step's gradients) arrived in NCCL 2.10
    why = "NCCL version code " + std::to_string(version) + " is older than 2.10";
  }
  if (!why.empty()) {
    ::dlclose(handle);
    handle = nullptr;
    api = Api{};
  }
  return why;
}

}  // namespace

Library Library::load(const SearchPlan& plan) {
  Library lib;
  std::string tried;
  auto attempt = [&](const std::string& what, const std::string& how) {
    const std::string why = try_open(what, lib.handle_, lib.api_, lib.version_);
    if (lib.handle_) {
      lib.path_ = loaded_path(lib.handle_);
      lib.how_ = how;
      return true;
    }
    tried += (tried.empty() ? "" : "; ") + what + ": " + why;
    return false;
  };
  if (plan.by_name && attempt(kSoname, "by name (LD_LIBRARY_PATH, RUNPATH, ld.so.cache)")) return lib;
  for (const auto& c : plan.candidates)
    if (attempt(c, "found in " + c.substr(0, c.rfind('/')))) return lib;
  if (plan.candidates.empty()) {
    tried += (tried.empty() ? "" : "; ") + std::string("no ") + kSoname + " in " + std::to_string(plan.folders.size()) +
             " folder(s) searched";
    if (!plan.folders.empty()) {
      tried += " (";
      for (std::size_t i = 0; i < plan.folders.size(); ++i) tried += (i ? ", " : "") + plan.folders[i];
      tried += ")";
    }
  }
  lib.error_ = tried;
  return lib;
}

std::string Library::version_text() const {
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before: 2.8.4 = 2804).
  const int v = version_;
  if (v >= 10000) return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string(v / 100 % 10) + "." + std::to_string(v % 100);
}

std::string Library::describe() const {
  if (ok()) return "NCCL " + version_text() + " from " + path_ + " (" + how_ + ")";
  return std::string(kSoname) + " not found: " + error_;
}

std::string Library::last_error(Comm comm) const {
  if (!ok() || !api_.get_last_error) return "";
  const char* e = api_.get_last_error(comm);
  return e ? e : "";
}

std::string not_found_reason(const Library& lib, const std::string& workload) {
  return workload + " needs NCCL, loaded at run time: " + lib.describe() +
         ". Point INTERFERENCE_BENCH_NCCL at libnccl.so.2 or its folder, or add that folder to LD_LIBRARY_PATH";
}

}  // namespace ib::cuda::nccl
