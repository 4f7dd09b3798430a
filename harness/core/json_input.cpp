#include "harness/core/json_input.h"

#include <cstdint>
#include <limits>

#include "harness/core/errors.h"
#include "harness/core/files.h"
#include "harness/core/text.h"

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

template <class J>
J parse_text(const std::string& text, const std::string& where, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError(where + ": " + std::to_string(text.size()) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " this file may have");
  JsonPath path;
  using event_t = typename J::parse_event_t;
  const typename J::parser_callback_t check = [&](int depth, event_t event, J& parsed) {
    if (depth > limits.max_depth)
      throw InputError(where + ": " + (path.where().empty() ? "" : path.where() + ": ") + "nested deeper than " +
                       std::to_string(limits.max_depth) + " levels");
    switch (event) {
      case event_t::object_start: path.element(); path.open(false); break;
      case event_t::array_start: path.element(); path.open(true); break;
      case event_t::object_end:
      case event_t::array_end: path.close(); break;
      case event_t::key:
        if (!path.key(parsed.template get<std::string>()))
          throw InputError(where + ": " + (path.where().empty() ? "" : path.where() + ": ") + "key " +
                           printable(parsed.dump(), 60) + " given twice");
        break;
      case event_t::value: path.element(); break;
    }
    return true;
  };
  try {
    return J::parse(text, check);
  } catch (const typename J::parse_error& e) {
    throw InputError(where + ": not valid JSON: " + printable(e.what(), 120));
  } catch (const typename J::out_of_range& e) {  // a number too large for a double, e.g. 1e400
    throw InputError(where + ": not a usable JSON number: " + printable(e.what(), 120));
  }
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& where, const JsonLimits& limits) {
  return parse_text<json>(text, where, limits);
}

nlohmann::ordered_json parse_ordered_json_text(const std::string& text, const std::string& where,
                                               const JsonLimits& limits) {
  return parse_text<nlohmann::ordered_json>(text, where, limits);
}

json read_json_file(const std::string& path, const std::string& what, const JsonLimits& limits) {
  return parse_json_text(read_input_file(path, what, limits.max_bytes), path, limits);
}

nlohmann::ordered_json read_ordered_json_file(const std::string& path, const std::string& what,
                                              const JsonLimits& limits) {
  return parse_ordered_json_text(read_input_file(path, what, limits.max_bytes), path, limits);
}

std::optional<int> int_value(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return static_cast<int>(u);
    return std::nullopt;
  }
  if (!v.is_number_integer()) return std::nullopt;
  const auto i = v.get<std::int64_t>();
  if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(i);
}

std::optional<std::int64_t> int64_value(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return static_cast<std::int64_t>(u);
    return std::nullopt;
  }
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<std::int64_t>();
}

}  // namespace ib
