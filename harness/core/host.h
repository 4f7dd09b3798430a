// This machine's node name, as the results, the device records and the history store it.
#pragma once

#include <unistd.h>

#include <string>

namespace ib {

// gethostname(2), "" when it fails.
inline std::string host_name() {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

}  // namespace ib
