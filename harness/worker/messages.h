// The messages of the worker protocol (protocol.h) as types, and the one place that writes and reads
// their wire format: the worker writes WorkerMessages and reads ControlMessages, the orchestrator the
// other way round. Reading validates and bounds everything (protocol.h says what is accepted).
#pragma once

#include "harness/core/names.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ib {

// ---------------------------------------------------------------- worker -> harness

// Set up and warmed up: waiting at the barrier.
struct ReadyMessage {
  double work = 0.0;  // per sample, in `unit`
  std::string unit;
  double setup_s = 0.0;
  std::int64_t warmup_samples = 0;
  std::map<std::string, std::string> env;            // the placement environment the worker saw
  nlohmann::json resolved = nlohmann::json::object();  // Workload::resolved_params
};
// The workload cannot run here (not a failure).
struct WaivedMessage {
  std::string reason;
};
// The workload failed; the worker exits non-zero after it.
struct ErrorMessage {
  std::string message = "unknown error";
};
// Block `block` was released, re-warmed, and measures from t_ns (CLOCK_MONOTONIC).
struct StartedMessage {
  int block = 0;
  std::int64_t t_ns = 0;
};
// A batch of samples of one block, one entry per sample in every array (latencies_s: latency_count[i]
// per sample, in order; empty arrays when the workload has no requests or counters).
struct SamplesMessage {
  int block = 0;
  std::vector<std::int64_t> start_ns;
  std::vector<double> duration_s;
  std::vector<std::uint32_t> latency_count;
  std::vector<double> latencies_s;
  std::map<std::string, std::vector<double>> counters;
  std::size_t size() const { return start_ns.size(); }
};
// Block `block`'s measurement ended (stopped: by "stop" or "end" rather than its duration).
struct DoneMessage {
  int block = 0;
  std::int64_t measure_start_ns = 0;
  std::int64_t measure_end_ns = 0;
  bool stopped = false;
};

// After teardown: processes of the tenant's program that had left its process group (Workload::escaped_processes).
struct EscapedMessage {
  std::size_t count = 0;
};

// After teardown: lines of the program's output its step pattern gave up on (Workload::lines_given_up).
struct GaveUpMessage {
  std::size_t count = 0;
};

// The rendezvous of a tenant's ranks (docs/design.md section 13): a key-value exchange scoped to the tenant and the
// repetition. A rank publishes a value (NCCL's unique id, a gloo address) ...
struct KvPutMessage {
  std::string key;    // kKvKeyChars, at most kMaxKvKeyBytes
  std::string value;  // any bytes, at most kMaxKvValueBytes (hex on the wire)
};
// ... and asks for one, answered by a KvCommand once some rank of the tenant has published it.
struct KvGetMessage {
  std::string key;
};
inline constexpr std::size_t kMaxKvKeyBytes = 200;
inline constexpr std::size_t kMaxKvValueBytes = 64 * 1024;
// The characters of a key: a word on the control pipe.
inline constexpr const char* kKvKeyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:";
bool valid_kv_key(const std::string& key);

// The order of WorkerMessage::body's alternatives.
enum class WorkerMessageType { ready, waived, error, started, samples, done, kv_put, kv_get, escaped, gave_up };
template <>
struct EnumWords<WorkerMessageType> {
  static constexpr std::array<const char*, 10> words = {"ready", "waived",  "error",  "started", "samples",
                                                       "done",  "kv_put", "kv_get", "escaped", "gave_up"};
};

struct WorkerMessage {
  std::size_t slot = 0;  // which tenant of the process
  std::variant<ReadyMessage, WaivedMessage, ErrorMessage, StartedMessage, SamplesMessage, DoneMessage, KvPutMessage,
               KvGetMessage, EscapedMessage, GaveUpMessage>
      body;
  WorkerMessageType type() const { return static_cast<WorkerMessageType>(body.index()); }
};

// A report the harness does not accept. what() says what was wrong in at most kMaxProblemChars
// characters, quoting at most a shortened value.
class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& problem);
};
inline constexpr std::size_t kMaxProblemChars = 200;

// What a report may refer to: slots 0..slots-1 of the process, blocks 0..blocks-1 (those released).
struct MessageBounds {
  std::size_t slots = 1;
  int blocks = 0;
};

// One line (with its newline) for the worker's report pipe.
std::string to_line(const WorkerMessage& m);
// Reads and validates one report line (without its newline). Throws ProtocolError.
WorkerMessage parse_worker_message(std::string_view line, const MessageBounds& bounds);

// ---------------------------------------------------------------- harness -> worker

// Releases `slots` for block `block`, to measure `seconds` (the barrier). "Begin block K at T": when
// `at_ns` is set, the worker re-warms until then and starts measuring at `at_ns` on its CLOCK_MONOTONIC, so
// that tenants (and the ranks of a collective, on other nodes too) start together, not one go line apart;
// 0: at once, after its re-warm.
struct GoCommand {
  int block = 0;
  double seconds = 0.0;
  std::vector<std::size_t> slots;
  std::int64_t at_ns = 0;
};
// Ends block `block`'s measurement early.
struct StopCommand {
  int block = 0;
};
// Ends the worker (so does end of file).
struct EndCommand {};
// The answer to a KvGetMessage: the value some rank of the tenant published under `key`.
struct KvCommand {
  std::string key;
  std::string value;
};

enum class ControlMessageType { go, stop, end, kv };
template <>
struct EnumWords<ControlMessageType> {
  static constexpr std::array<const char*, 4> words = {"go", "stop", "end", "kv"};
};

struct ControlMessage {
  std::variant<GoCommand, StopCommand, EndCommand, KvCommand> body;
  ControlMessageType type() const { return static_cast<ControlMessageType>(body.index()); }
};

std::string to_line(const ControlMessage& m);
// nullopt: not a command (the worker then ends: the harness is not talking to it).
std::optional<ControlMessage> parse_control_message(std::string_view line);

}  // namespace ib
