// The clock exchange's wire format and its two sides (clock_link.h).
#include "harness/nodes/clock_link.h"

#include "harness/core/clock.h"
#include "harness/core/json_input.h"
#include "harness/core/text.h"
#include "harness/process/process.h"
#include "harness/worker/protocol.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <vector>

namespace ib {

namespace {

constexpr std::size_t kMaxClockLine = 256;  // a clock line is well under 100 bytes

// The next line from `fd` within `wait_ns`; nullopt with `ended` set at end of file (or a line over
// kMaxClockLine), at the deadline or on a stop signal.
std::optional<std::string> next_clock_line(int fd, LineReader& reader, std::vector<std::string>& pending, std::int64_t wait_ns,
                                           const StopDescriptor& stop, ClockEnd& ended) {
  const std::int64_t deadline = monotonic_ns() + wait_ns;
  while (pending.empty()) {
    const Waited w = wait_readable(fd, deadline, stop);
    if (w != Waited::readable) {
      ended = w == Waited::stopped ? ClockEnd::stopped : ClockEnd::deadline;
      return std::nullopt;
    }
    const ReadStatus s = read_lines(fd, reader, pending);
    if (s != ReadStatus::open && pending.empty()) {
      ended = ClockEnd::closed;
      return std::nullopt;
    }
  }
  std::string line = std::move(pending.front());
  pending.erase(pending.begin());
  return line;
}

std::string waited_for(ClockEnd ended, std::int64_t wait_ns) {
  if (ended == ClockEnd::stopped) return "a stop signal came";
  if (ended == ClockEnd::deadline) return "no line within " + formatted("%g", static_cast<double>(wait_ns) / 1e9) + " s";
  return "the connection closed";
}

// A field that is an int64 (a peer's line: a string, a fraction or 2^63 is none).
std::optional<std::int64_t> integer_field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  return it == j.end() ? std::nullopt : int64_value(*it);
}

// A clock line: its "type" is the string "clock" (a "type" of another JSON type is not, and is no error).
bool is_clock(const nlohmann::json& j) {
  const auto type = j.is_object() ? j.find("type") : j.end();
  return j.is_object() && type != j.end() && type->is_string() && type->get<std::string>() == "clock";
}

}  // namespace

std::string clock_request_line(std::int64_t t0) { return nlohmann::json{{"type", "clock"}, {"t0", t0}}.dump() + "\n"; }

std::optional<std::string> clock_answer_line(const std::string& line, std::int64_t t1, const MonotonicNs& now) {
  const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
  const auto t0 = is_clock(request) && !request.contains("t1") ? integer_field(request, "t0") : std::nullopt;
  if (!t0) return std::nullopt;
  nlohmann::json answer{{"type", "clock"}, {"t0", *t0}, {"t1", t1}};
  answer["t2"] = now();
  return answer.dump() + "\n";
}

std::optional<ClockExchange> clock_answer(const std::string& line, std::int64_t t0, std::int64_t t3) {
  const nlohmann::json answer = nlohmann::json::parse(line, nullptr, false);
  if (!is_clock(answer)) return std::nullopt;
  const auto a0 = integer_field(answer, "t0"), t1 = integer_field(answer, "t1"), t2 = integer_field(answer, "t2");
  if (!a0 || *a0 != t0 || !t1 || !t2) return std::nullopt;  // an answer to an earlier request is stale: not this one's
  return ClockExchange{t0, *t1, *t2, t3};
}

AnsweredClock answer_clock_requests(int fd, const MonotonicNs& now, const ClockWaits& waits) {
  LineReader reader(kMaxClockLine);
  std::vector<std::string> pending;
  AnsweredClock out;
  for (std::int64_t wait_ns = waits.first_ns;; wait_ns = waits.next_ns) {
    const auto line = next_clock_line(fd, reader, pending, wait_ns, waits.stop, out.ended);
    if (!line) {
      out.line = waited_for(out.ended, wait_ns);
      return out;
    }
    const auto answer = clock_answer_line(*line, now(), now);
    if (!answer) return {ClockEnd::line, *line};
    if (!write_all(fd, *answer)) return {ClockEnd::closed, "the connection closed"};
  }
}

std::optional<ClockOffset> measure_clock_offset(int fd, std::size_t exchanges, const MonotonicNs& now, const ClockWaits& waits,
                                                std::string& error) {
  LineReader reader(kMaxClockLine);
  std::vector<std::string> pending;
  std::vector<ClockExchange> got;
  for (std::size_t i = 0; i < exchanges; ++i) {
    const std::int64_t t0 = now();
    if (!write_all(fd, clock_request_line(t0))) {
      error = "the peer went away";
      return std::nullopt;
    }
    ClockEnd ended = ClockEnd::closed;
    // The first answer within first_ns; each later one within a few of the best round trip so far (at most
    // next_ns): a peer that answered in microseconds and then stops is named in 2 s, not 10.
    std::int64_t best_rtt_ns = INT64_MAX;
    for (const ClockExchange& e : got)
      if (const auto o = offset_of(e)) best_rtt_ns = std::min(best_rtt_ns, o->rtt_ns);
    const std::int64_t wait_ns = best_rtt_ns == INT64_MAX ? waits.first_ns : std::min(waits.next_ns, answer_wait_ns(best_rtt_ns));
    const auto line = next_clock_line(fd, reader, pending, wait_ns, waits.stop, ended);
    const std::int64_t t3 = now();
    if (!line) {
      error = "no answer to clock request " + std::to_string(i + 1) + ": " + waited_for(ended, wait_ns);
      return std::nullopt;
    }
    const auto exchange = clock_answer(*line, t0, t3);
    if (!exchange) {
      error = "not the answer to this clock request: " + printable(*line, 80);
      return std::nullopt;
    }
    got.push_back(*exchange);
  }
  auto estimate = estimate_offset(got);
  if (!estimate) error = "no exchange had its times in order";
  return estimate;
}

}  // namespace ib
