#include "reports/yaml/mig_parted_yaml.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <fmt/format.h>

#include <sstream>

namespace ib {

std::string mig_parted_yaml(const MigSweepResult& r) {
  std::ostringstream os;
  os << "# interference-bench mig-sweep: the recommended layout for " << printable(r.scenario_file, 200) << " on GPU "
     << r.device << " (" << printable(r.gpu_name, 80) << ")\n# " << printable(r.recommendation->reason, 400)
     << "\n# Apply: nvidia-mig-parted apply -f mig-parted.yaml -c " << kMigPartedConfigName << "\n";
  // mig-parted applies a whole GPU's layout: the instances that were there when the sweep ran (and that it measured
  // beside) are not in it, and applying it replaces them.
  if (!r.preexisting.empty())
    os << "# Measured beside pre-existing instances this config leaves out (applying it replaces them): "
       << printable(joined(r.preexisting, ", "), 400) << "\n";
  os << "version: v1\nmig-configs:\n  "
     << kMigPartedConfigName << ":\n";
  if (r.pci_device_id) os << "    - device-filter: \"" << fmt::format("0x{:08X}", *r.pci_device_id) << "\"\n      devices: [" << r.device << "]\n";
  else os << "    # device-filter left out: NVML gave no PCI device id\n    - devices: [" << r.device << "]\n";
  os << "      mig-enabled: true\n      mig-devices:\n";
  for (const auto& [profile, n] : mig_profile_counts(r.recommendation->profiles)) os << "        \"" << profile << "\": " << n << "\n";
  return os.str();
}

}  // namespace ib
