#include "harness/worker/protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ib {

ReadStatus LineReader::feed(const char* data, std::size_t size, std::vector<std::string>& lines) {
  if (overlong_) return ReadStatus::overlong;
  const char* const end = data + size;
  while (data < end) {
    const void* nl = std::memchr(data, '\n', static_cast<std::size_t>(end - data));
    const char* stop = nl ? static_cast<const char*>(nl) : end;
    if (buffer_.size() + static_cast<std::size_t>(stop - data) > max_) {
      overlong_ = true;
      buffer_.clear();
      buffer_.shrink_to_fit();
      return ReadStatus::overlong;
    }
    buffer_.append(data, stop);
    if (!nl) break;
    lines.push_back(std::move(buffer_));
    buffer_.clear();
    data = stop + 1;
  }
  return ReadStatus::open;
}

ReadStatus LineReader::finish(std::vector<std::string>& lines) {
  if (overlong_) return ReadStatus::overlong;
  if (!buffer_.empty()) lines.push_back(std::move(buffer_));  // the last line, without a newline
  buffer_.clear();
  return ReadStatus::closed;
}

ReadStatus read_lines(int fd, LineReader& reader, std::vector<std::string>& lines) {
  char buf[65536];
  ssize_t n;
  do n = ::read(fd, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadStatus::open;
  if (n <= 0) return reader.finish(lines);  // end of file, or an error that ends the stream alike
  return reader.feed(buf, static_cast<std::size_t>(n), lines);
}

}  // namespace ib
