#include "harness/core/json_input.h"

#include "harness/core/errors.h"
#include "harness/core/text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

namespace ib {

using nlohmann::json;

namespace {

// Where the parser is, for messages: one frame per open object or array.
class JsonPath {
 public:
  void open(bool is_array) { frames_.push_back({is_array, {}, {}, 0}); }
  void close() { frames_.pop_back(); }
  // A value (or an object or array) starts: inside an array it is the next element.
  void element() {
    if (!frames_.empty() && frames_.back().is_array) frames_.back().last_key = "[" + std::to_string(frames_.back().count++) + "]";
  }
  // A key of the innermost object; false when the object already had it.
  bool key(const std::string& k) {
    Frame& f = frames_.back();
    f.last_key = k;
    return f.keys.insert(k).second;
  }
  // The path of the innermost open object or array, e.g. "tenants[1].params"; past kShownLevels levels
  // (a document nested too deep) it ends in "...".
  std::string where() const {
    static constexpr std::size_t kShownLevels = 6;
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      if (i == kShownLevels) return p + "...";
      const std::string& k = frames_[i].last_key;
      p += (p.empty() || k.front() == '[' ? "" : ".") + k;
    }
    return p;
  }

 private:
  struct Frame {
    bool is_array;
    std::set<std::string> keys;
    std::string last_key;
    std::size_t count;
  };
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& where, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError(where + ": " + std::to_string(text.size()) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " this file may have");
  JsonPath path;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > limits.max_depth)
      throw InputError(where + ": " + (path.where().empty() ? "" : path.where() + ": ") + "nested deeper than " +
                       std::to_string(limits.max_depth) + " levels");
    switch (event) {
      case json::parse_event_t::object_start: path.element(); path.open(false); break;
      case json::parse_event_t::array_start: path.element(); path.open(true); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: path.close(); break;
      case json::parse_event_t::key:
        if (!path.key(parsed.get<std::string>()))
          throw InputError(where + ": " + (path.where().empty() ? "" : path.where() + ": ") + "key " +
                           printable(parsed.dump(), 60) + " given twice");
        break;
      case json::parse_event_t::value: path.element(); break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::parse_error& e) {
    throw InputError(where + ": not valid JSON: " + printable(e.what(), 120));
  } catch (const json::out_of_range& e) {  // a number too large for a double, e.g. 1e400
    throw InputError(where + ": not a usable JSON number: " + printable(e.what(), 120));
  }
}

json read_json_file(const std::string& path, const std::string& what, const JsonLimits& limits) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(path + ": not a regular file (a " + what + " must be one)");
  if (static_cast<unsigned long long>(st.st_size) > limits.max_bytes)
    throw InputError(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " a " + what + " may have");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  ssize_t n;
  // Read one byte past the limit at most: a file that grew after stat() is still refused.
  while (text.size() <= limits.max_bytes && ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return parse_json_text(text, path, limits);
}

}  // namespace ib
