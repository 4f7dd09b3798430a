#include "harness/run/protocol.h"

#include <unistd.h>

#include <cerrno>

namespace ib {

bool LineReader::read_some(std::vector<std::string>& lines) {
  char buf[65536];
  ssize_t n;
  do n = ::read(fd_, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n < 0 && errno == EAGAIN) return true;
    if (!buffer_.empty()) lines.push_back(std::move(buffer_));  // last line without a newline
    buffer_.clear();
    return false;
  }
  buffer_.append(buf, static_cast<std::size_t>(n));
  std::size_t start = 0, nl;
  while ((nl = buffer_.find('\n', start)) != std::string::npos) {
    lines.push_back(buffer_.substr(start, nl - start));
    start = nl + 1;
  }
  buffer_.erase(0, start);
  return true;
}

}  // namespace ib
