#include "harness/worker/messages.h"

#include "harness/worker/protocol.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

namespace ib {

using nlohmann::json;

namespace {

constexpr std::size_t kShownValueChars = 40;

std::string shortened(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

// A value as a message may quote it: JSON, ASCII only, shortened.
std::string shown(const json& v) {
  return shortened(v.dump(-1, ' ', true, json::error_handler_t::replace), kShownValueChars);
}

// One JSON text whatever the strings hold (invalid UTF-8 is replaced, never thrown).
std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// What is wrong inside a message; parse_worker_message names the message type in front of it.
class BadMessage : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
[[noreturn]] void reject(const std::string& what) { throw BadMessage(what); }

const json* find_field(const json& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() ? nullptr : &*it;
}

const json& field(const json& m, const char* key) {
  if (const json* v = find_field(m, key)) return *v;
  reject(std::string("no \"") + key + "\"");
}

// `name`, or `name[i]` for element i of an array: built only when a message needs it (a samples
// batch has up to ~10^5 values to check).
constexpr std::size_t kWhole = SIZE_MAX;
std::string where(const std::string& name, std::size_t i) {
  return i == kWhole ? name : name + "[" + std::to_string(i) + "]";
}

// A duration or latency: a finite number >= 0.
double duration_value(const json& v, const std::string& name, std::size_t i = kWhole) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0.0)
    reject(where(name, i) + " is " + shown(v) + ", not a finite number >= 0");
  return v.get<double>();
}

// A time or count: an integer in [0, max].
std::int64_t count_value(const json& v, const std::string& name, std::size_t i = kWhole,
                         std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
  const bool ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  if (!ok || v.get<std::uint64_t>() > max)
    reject(where(name, i) + " is " + shown(v) + ", not an integer in [0, " + std::to_string(max) + "]");
  return static_cast<std::int64_t>(v.get<std::uint64_t>());
}

std::string string_value(const json& v, const std::string& name) {
  if (!v.is_string()) reject(name + " is " + shown(v) + ", not a string");
  return v.get<std::string>();
}

const json& array_field(const json& m, const char* key) {
  const json& v = field(m, key);
  if (!v.is_array()) reject(std::string(key) + " is " + shown(v) + ", not an array");
  return v;
}

std::vector<double> durations(const json& a, const std::string& name) {
  std::vector<double> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(duration_value(a[i], name, i));
  return out;
}

int block_index(const json& m, const MessageBounds& bounds) {
  const json& v = field(m, "block");
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= bounds.blocks)
    reject("block " + shown(v) + " is not a released block (0.." + std::to_string(bounds.blocks - 1) + ")");
  return v.get<int>();
}

void check_length(std::size_t n, std::size_t expected, const std::string& name) {
  if (n != expected)
    reject(name + " has " + std::to_string(n) + " entries, start_ns " + std::to_string(expected));
}

ReadyMessage parse_ready(const json& m) {
  ReadyMessage r;
  r.work = duration_value(field(m, "work"), "work");
  r.unit = string_value(field(m, "unit"), "unit");
  if (const json* v = find_field(m, "setup_s")) r.setup_s = duration_value(*v, "setup_s");
  if (const json* v = find_field(m, "warmup_samples")) r.warmup_samples = count_value(*v, "warmup_samples");
  if (const json* env = find_field(m, "env")) {
    if (!env->is_object()) reject("env is " + shown(*env) + ", not an object");
    for (const auto& [key, value] : env->items()) r.env[key] = string_value(value, "env." + shortened(key, kShownValueChars));
  }
  if (const json* v = find_field(m, "resolved")) {
    if (!v->is_object()) reject("resolved is " + shown(*v) + ", not an object");
    r.resolved = *v;
  }
  return r;
}

// The optional per-request columns of a samples message, checked against the samples.
void parse_latencies(const json& m, SamplesMessage& s) {
  if (const json* lc = find_field(m, "latency_count")) {
    if (!lc->is_array()) reject("latency_count is " + shown(*lc) + ", not an array");
    check_length(lc->size(), s.size(), "latency_count");
    for (std::size_t i = 0; i < lc->size(); ++i)
      s.latency_count.push_back(
          static_cast<std::uint32_t>(count_value((*lc)[i], "latency_count", i, std::numeric_limits<std::uint32_t>::max())));
  } else {
    s.latency_count.assign(s.size(), 0);
  }
  if (const json* la = find_field(m, "latencies_s")) {
    if (!la->is_array()) reject("latencies_s is " + shown(*la) + ", not an array");
    s.latencies_s = durations(*la, "latencies_s");
  }
  std::uint64_t total = 0;
  for (std::uint32_t c : s.latency_count) total += c;
  if (total != s.latencies_s.size())
    reject("latency_count sums to " + std::to_string(total) + ", latencies_s has " + std::to_string(s.latencies_s.size()));
}

void parse_counters(const json& m, SamplesMessage& s) {
  const json* counters = find_field(m, "counters");
  if (!counters) return;
  if (!counters->is_object()) reject("counters is " + shown(*counters) + ", not an object");
  for (const auto& [name, column] : counters->items()) {
    const std::string shown_name = "counters." + shortened(name, kShownValueChars);
    if (!column.is_array()) reject(shown_name + " is " + shown(column) + ", not an array");
    check_length(column.size(), s.size(), shown_name);
    std::vector<double>& values = s.counters[name];
    for (std::size_t i = 0; i < column.size(); ++i) {
      const json& v = column[i];
      if (!v.is_number() || !std::isfinite(v.get<double>())) reject(where(shown_name, i) + " is " + shown(v) + ", not a finite number");
      values.push_back(v.get<double>());
    }
  }
}

SamplesMessage parse_samples(const json& m, const MessageBounds& bounds) {
  SamplesMessage s;
  s.block = block_index(m, bounds);
  const json& st = array_field(m, "start_ns");
  for (std::size_t i = 0; i < st.size(); ++i) s.start_ns.push_back(count_value(st[i], "start_ns", i));
  const json& du = array_field(m, "duration_s");
  check_length(du.size(), s.size(), "duration_s");
  s.duration_s = durations(du, "duration_s");
  parse_latencies(m, s);
  parse_counters(m, s);
  return s;
}

DoneMessage parse_done(const json& m, const MessageBounds& bounds) {
  DoneMessage d;
  d.block = block_index(m, bounds);
  d.measure_start_ns = count_value(field(m, "measure_start_ns"), "measure_start_ns");
  d.measure_end_ns = count_value(field(m, "measure_end_ns"), "measure_end_ns");
  if (const json* v = find_field(m, "stopped")) {
    if (!v->is_boolean()) reject("stopped is " + shown(*v) + ", not true or false");
    d.stopped = v->get<bool>();
  }
  return d;
}

std::string hex_of(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::optional<std::string> bytes_of(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi << 4 | lo);
  }
  return out;
}

std::string kv_key(const json& m) {
  const std::string key = string_value(field(m, "key"), "key");
  if (!valid_kv_key(key))
    reject("key " + shown(key) + " is not 1-" + std::to_string(kMaxKvKeyBytes) + " characters of [A-Za-z0-9_-./:]");
  return key;
}

KvPutMessage parse_kv_put(const json& m) {
  KvPutMessage p{kv_key(m), {}};
  const std::string hex = string_value(field(m, "value_hex"), "value_hex");
  auto value = hex.size() <= 2 * kMaxKvValueBytes ? bytes_of(hex) : std::nullopt;
  if (!value) reject("value_hex is not at most " + std::to_string(kMaxKvValueBytes) + " bytes in lower-case hex");
  p.value = std::move(*value);
  return p;
}

WorkerMessage parse_body(const json& m, WorkerMessageType type, const MessageBounds& bounds) {
  WorkerMessage out;
  switch (type) {
    case WorkerMessageType::ready: out.body = parse_ready(m); break;
    case WorkerMessageType::waived: {
      const json* reason = find_field(m, "reason");
      out.body = WaivedMessage{reason ? string_value(*reason, "reason") : std::string()};
      break;
    }
    case WorkerMessageType::error: {
      const json* message = find_field(m, "message");
      out.body = message ? ErrorMessage{string_value(*message, "message")} : ErrorMessage{};
      break;
    }
    case WorkerMessageType::started:
      out.body = StartedMessage{block_index(m, bounds), count_value(field(m, "t_ns"), "t_ns")};
      break;
    case WorkerMessageType::samples: out.body = parse_samples(m, bounds); break;
    case WorkerMessageType::done: out.body = parse_done(m, bounds); break;
    case WorkerMessageType::kv_put: out.body = parse_kv_put(m); break;
    case WorkerMessageType::kv_get: out.body = KvGetMessage{kv_key(m)}; break;
    case WorkerMessageType::escaped:
      out.body = EscapedMessage{static_cast<std::size_t>(count_value(field(m, "count"), "count"))};
      break;
    case WorkerMessageType::gave_up:
      out.body = GaveUpMessage{static_cast<std::size_t>(count_value(field(m, "count"), "count"))};
      break;
  }
  return out;
}

json samples_json(const SamplesMessage& s) {
  json j = {{"type", "samples"}, {"block", s.block}, {"start_ns", s.start_ns}, {"duration_s", s.duration_s}};
  if (!s.latencies_s.empty()) {
    j["latency_count"] = s.latency_count;
    j["latencies_s"] = s.latencies_s;
  }
  if (!s.counters.empty()) j["counters"] = s.counters;
  return j;
}

json message_json(const WorkerMessage& m) {
  switch (m.type()) {
    case WorkerMessageType::ready: {
      const auto& r = std::get<ReadyMessage>(m.body);
      return {{"type", "ready"}, {"work", r.work}, {"unit", r.unit}, {"setup_s", r.setup_s},
              {"warmup_samples", r.warmup_samples}, {"env", r.env}, {"resolved", r.resolved}};
    }
    case WorkerMessageType::waived: return {{"type", "waived"}, {"reason", std::get<WaivedMessage>(m.body).reason}};
    case WorkerMessageType::error: return {{"type", "error"}, {"message", std::get<ErrorMessage>(m.body).message}};
    case WorkerMessageType::started: {
      const auto& s = std::get<StartedMessage>(m.body);
      return {{"type", "started"}, {"block", s.block}, {"t_ns", s.t_ns}};
    }
    case WorkerMessageType::samples: return samples_json(std::get<SamplesMessage>(m.body));
    case WorkerMessageType::done: {
      const auto& d = std::get<DoneMessage>(m.body);
      return {{"type", "done"}, {"block", d.block}, {"measure_start_ns", d.measure_start_ns},
              {"measure_end_ns", d.measure_end_ns}, {"stopped", d.stopped}};
    }
    case WorkerMessageType::kv_put: {
      const auto& p = std::get<KvPutMessage>(m.body);
      return {{"type", "kv_put"}, {"key", p.key}, {"value_hex", hex_of(p.value)}};
    }
    case WorkerMessageType::kv_get: return {{"type", "kv_get"}, {"key", std::get<KvGetMessage>(m.body).key}};
    case WorkerMessageType::escaped: return {{"type", "escaped"}, {"count", std::get<EscapedMessage>(m.body).count}};
    case WorkerMessageType::gave_up: return {{"type", "gave_up"}, {"count", std::get<GaveUpMessage>(m.body).count}};
  }
  throw std::logic_error("unknown worker message type");
}

}  // namespace

bool valid_kv_key(const std::string& key) {
  return !key.empty() && key.size() <= kMaxKvKeyBytes && key.find_first_not_of(kKvKeyChars) == std::string::npos;
}

ProtocolError::ProtocolError(const std::string& problem)
    : std::runtime_error(shortened("malformed message from worker: " + problem, kMaxProblemChars - 3)) {}

std::string to_line(const WorkerMessage& m) {
  json j = message_json(m);
  j["slot"] = m.slot;
  return dumped(j) + "\n";
}

WorkerMessage parse_worker_message(std::string_view line, const MessageBounds& bounds) {
  std::string context;  // "samples: " once the type is known
  try {
    if (line.size() > kMaxReportLineBytes) reject("a line of " + std::to_string(line.size()) + " bytes (limit 16 MiB)");
    const json m = json::parse(line.begin(), line.end(), nullptr, false);
    if (m.is_discarded()) reject("not JSON: " + shortened(dumped(std::string(line.substr(0, kShownValueChars + 1))), kShownValueChars));
    if (!m.is_object()) reject("not a JSON object: " + shown(m));
    const json& type_word = field(m, "type");
    const auto type = type_word.is_string() ? parse_name<WorkerMessageType>(type_word.get<std::string>()) : std::nullopt;
    if (!type) reject("unknown type " + shown(type_word));
    context = std::string(to_string(*type)) + ": ";
    std::size_t slot = 0;
    if (const json* v = find_field(m, "slot")) {
      if (!v->is_number_unsigned() || v->get<std::uint64_t>() >= bounds.slots)
        reject("slot " + shown(*v) + " is not one of the process's " + std::to_string(bounds.slots) + " tenant(s)");
      slot = v->get<std::size_t>();
    }
    WorkerMessage out = parse_body(m, *type, bounds);
    out.slot = slot;
    return out;
  } catch (const BadMessage& e) {
    throw ProtocolError(context + e.what());
  }
}

std::string to_line(const ControlMessage& m) {
  switch (m.type()) {
    case ControlMessageType::go: {
      const auto& go = std::get<GoCommand>(m.body);
      std::ostringstream os;
      os.precision(17);  // the block's length to the last bit
      os << "go " << go.block << " " << go.seconds << " ";
      for (std::size_t k = 0; k < go.slots.size(); ++k) os << (k ? "," : "") << go.slots[k];
      if (go.at_ns > 0) os << " " << go.at_ns;
      os << "\n";
      return os.str();
    }
    case ControlMessageType::stop: return "stop " + std::to_string(std::get<StopCommand>(m.body).block) + "\n";
    case ControlMessageType::end: return "end\n";
    case ControlMessageType::kv: {
      const auto& kv = std::get<KvCommand>(m.body);
      return "kv " + kv.key + " " + (kv.value.empty() ? std::string("-") : hex_of(kv.value)) + "\n";
    }
  }
  throw std::logic_error("unknown control message type");
}

namespace {
std::optional<std::vector<std::size_t>> slot_list(const std::string& text) {
  std::vector<std::size_t> slots;
  std::istringstream list(text);
  for (std::string k; std::getline(list, k, ',');) {
    if (k.empty() || k.size() > 6 || k.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    slots.push_back(static_cast<std::size_t>(std::stoul(k)));
  }
  if (slots.empty()) return std::nullopt;
  return slots;
}
}  // namespace

std::optional<ControlMessage> parse_control_message(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string word, rest;
  in >> word;
  if (word == "end") return ControlMessage{EndCommand{}};
  if (word == "kv") {
    KvCommand kv;
    std::string hex;
    if (!(in >> kv.key >> hex) || (in >> rest) || !valid_kv_key(kv.key)) return std::nullopt;
    if (hex != "-") {
      auto value = hex.size() <= 2 * kMaxKvValueBytes ? bytes_of(hex) : std::nullopt;
      if (!value) return std::nullopt;
      kv.value = std::move(*value);
    }
    return ControlMessage{kv};
  }
  if (word == "stop") {
    StopCommand stop;
    if (!(in >> stop.block) || stop.block < 0 || (in >> rest)) return std::nullopt;
    return ControlMessage{stop};
  }
  if (word != "go") return std::nullopt;
  GoCommand go;
  std::string slots;
  if (!(in >> go.block >> go.seconds >> slots)) return std::nullopt;
  if (in >> rest) {  // the start time: an integer of nanoseconds, and nothing after it
    if (rest.size() > 18 || rest.find_first_not_of("0123456789") != std::string::npos || (in >> rest)) return std::nullopt;
    go.at_ns = std::stoll(rest);
  }
  if (go.block < 0 || !std::isfinite(go.seconds) || go.seconds < 0.0) return std::nullopt;
  auto list = slot_list(slots);
  if (!list) return std::nullopt;
  go.slots = std::move(*list);
  return ControlMessage{go};
}

}  // namespace ib
