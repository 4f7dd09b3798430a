#include "kernels/cuda/architectures.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace ib::cuda {

namespace {

std::optional<BuiltArchitecture> parse_entry(const std::string& entry) {
  std::size_t i = 0;
  while (i < entry.size() && std::isdigit(static_cast<unsigned char>(entry[i]))) ++i;
  if (i < 2 || i > 4) return std::nullopt;
  BuiltArchitecture a;
  a.arch = std::stoi(entry.substr(0, i));
  if (i < entry.size() && (entry[i] == 'a' || entry[i] == 'f')) a.suffix = entry[i++];
  const std::string kind = entry.substr(i);
  if (kind.empty()) {
    a.cubin = a.ptx = true;
  } else if (kind == "-real") {
    a.cubin = true;
  } else if (kind == "-virtual") {
    a.cubin = false;
    a.ptx = true;
  } else {
    return std::nullopt;
  }
  return a;
}

bool cubin_runs(const BuiltArchitecture& a, int cc) {
  if (a.suffix == 'a') return cc == a.arch;
  return cc / 10 == a.arch / 10 && cc % 10 >= a.arch % 10;
}

bool ptx_runs(const BuiltArchitecture& a, int cc) {
  if (a.suffix == 'a') return cc == a.arch;
  if (a.suffix == 'f') return cubin_runs(a, cc);
  return cc >= a.arch;
}

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

}  // namespace

std::optional<std::vector<BuiltArchitecture>> parse_architectures(const std::string& list) {
  std::vector<BuiltArchitecture> out;
  std::string separated = list;
  std::replace(separated.begin(), separated.end(), ',', ';');  // the build passes "80-real,90-real,..."
  std::stringstream in(separated);
  std::string entry;
  while (std::getline(in, entry, ';')) {
    if (entry.empty()) continue;
    const auto a = parse_entry(entry);
    if (!a) return std::nullopt;
    out.push_back(*a);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool architecture_covered(int cc, const std::vector<BuiltArchitecture>& built) {
  for (const auto& a : built)
    if ((a.cubin && cubin_runs(a, cc)) || (a.ptx && ptx_runs(a, cc))) return true;
  return false;
}

std::string architectures_text(const std::vector<BuiltArchitecture>& built) {
  std::string cubins, ptx;
  for (const auto& a : built) {
    const std::string name = std::to_string(a.arch) + (a.suffix ? std::string(1, a.suffix) : "");
    if (a.cubin) cubins += (cubins.empty() ? "sm_" : ", sm_") + name;
    if (a.ptx) ptx += (ptx.empty() ? "PTX compute_" : ", compute_") + name;
  }
  if (cubins.empty()) return ptx;
  return ptx.empty() ? cubins : cubins + " + " + ptx;
}

std::optional<std::string> architecture_refusal(const std::string& gpu_name, int device, int cc,
                                                const std::vector<BuiltArchitecture>& built) {
  if (architecture_covered(cc, built)) return std::nullopt;
  return "GPU " + std::to_string(device) + " (" + gpu_name + ", compute capability " + cc_text(cc) +
         ") cannot run this build's kernels, built for " + architectures_text(built) +
         "; rebuild for it: cmake --preset default -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc) +
         " && cmake --build --preset default (or -DCMAKE_CUDA_ARCHITECTURES=native on this machine)";
}

}  // namespace ib::cuda
