#include "harness/exec/cuda_module.h"

#include "build_info.h"
#include "harness/exec/cuda_module_api.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ib {

namespace {

struct LoadedModule {
  const cuda_module::Api* api = nullptr;
  std::string error;  // why there is no api
};

#ifdef IB_HAVE_CUDA_MODULE
bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The folder of this program's executable ("" when /proc/self/exe cannot be read).
std::string executable_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  const std::string path(buf.data(), static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// $IB_CUDA_MODULE alone when set; else beside the binary (the build tree), then the installed layout.
std::vector<std::string> candidates() {
  const char* given = std::getenv("IB_CUDA_MODULE");
  if (given && *given) return {given};
  const std::string dir = executable_dir();
  return {dir + "/" + cuda_module::kFileName, dir + "/../lib/interference-bench/" + cuda_module::kFileName};
}

LoadedModule open_module(const std::string& path) {
  // RTLD_LOCAL: the module's copies of the harness's own code stay its own; never unloaded.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return {nullptr, std::string("the CUDA module could not be loaded: ") + ::dlerror()};
  auto entry = reinterpret_cast<cuda_module::EntryPoint>(::dlsym(handle, cuda_module::kEntryPoint));
  if (!entry) return {nullptr, "the CUDA module " + path + " has no " + cuda_module::kEntryPoint + " (not a module)"};
  const cuda_module::Api* api = entry();
  const std::string mine = cuda_module::build_key(IB_VERSION, IB_GIT_SHA);
  if (!api || api->abi_version != cuda_module::kAbiVersion || mine != api->build_key) {
    return {nullptr, "the CUDA module " + path + " is from another build (module: " +
                         (api && api->build_key ? api->build_key : "?") + "; binary: " + mine +
                         "): rebuild, or remove it"};
  }
  return {api, ""};
}

LoadedModule load_module() {
  std::string looked;
  for (const std::string& path : candidates()) {
    if (is_file(path)) return open_module(path);
    looked += (looked.empty() ? "" : ", ") + path;
  }
  return {nullptr, std::string("the CUDA module ") + cuda_module::kFileName + " was not found (looked for " + looked +
                       "; IB_CUDA_MODULE names another)"};
}
#else
LoadedModule load_module() {
  return {nullptr, "this build of interference-bench has no CUDA support (configured without nvcc)"};
}
#endif

// Loaded on first use and then fixed for the life of the process: a function-local static, initialised
// once (thread-safe), never written again.
const LoadedModule& module() {
  static const LoadedModule loaded = load_module();
  return loaded;
}

}  // namespace

Availability cuda_availability(int device) {
  const LoadedModule& m = module();
  if (!m.api) return {Availability::State::no_gpu, m.error};
  return m.api->availability(device);
}

std::optional<std::string> cuda_unavailable_reason(int device) {
  Availability a = cuda_availability(device);
  if (a.state == Availability::State::usable) return std::nullopt;
  return std::move(a.reason);
}

void register_cuda_workloads(Registry& registry) {
  cuda::CudaFactory factory;
  factory.supported = [](const std::string& name, const Params& p, const ExecContext& ctx) -> Support {
    const LoadedModule& m = module();
    if (!m.api) return {false, m.error};
    return m.api->supported(name, p, ctx);
  };
  factory.create = [](const std::string& name, const Params& p) -> std::unique_ptr<Workload> {
    const LoadedModule& m = module();
    if (!m.api) throw WorkloadError(m.error);
    return m.api->create(name, p);
  };
  cuda::add_cuda_workload_specs(registry, factory);
}

std::unique_ptr<Executor> make_cuda_executor(int device) {
  const LoadedModule& m = module();
  if (!m.api) throw WorkloadError(m.error);
  return m.api->make_executor(device);
}

}  // namespace ib
