// The clock exchange's wire format and its two sides (clock_link.h).
#include "harness/nodes/clock_link.h"

#include "harness/process/process.h"
#include "harness/worker/protocol.h"

#include <nlohmann/json.hpp>

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace ib {

namespace {

constexpr std::size_t kMaxClockLine = 256;  // a clock line is well under 100 bytes

// The next line from `fd` (blocking); nullopt at end of file or on a line over kMaxClockLine.
std::optional<std::string> read_line(int fd, LineReader& reader, std::vector<std::string>& pending) {
  while (pending.empty()) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return std::nullopt;
    const ReadStatus s = read_lines(fd, reader, pending);
    if (s != ReadStatus::open && pending.empty()) return std::nullopt;
  }
  std::string line = std::move(pending.front());
  pending.erase(pending.begin());
  return line;
}

std::optional<std::int64_t> integer_field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

bool is_clock(const nlohmann::json& j) { return j.is_object() && j.value("type", std::string()) == "clock"; }

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
  if (!a0 || *a0 != t0 || !t1 || !t2) return std::nullopt;
  return ClockExchange{t0, *t1, *t2, t3};
}

std::string answer_clock_requests(int fd, const MonotonicNs& now) {
  LineReader reader(kMaxClockLine);
  std::vector<std::string> pending;
  while (const auto line = read_line(fd, reader, pending)) {
    const auto answer = clock_answer_line(*line, now(), now);
    if (!answer) return "not a clock request: " + line->substr(0, 80);
    if (!write_all(fd, *answer)) return "the node went away";
  }
  return "";
}

std::optional<ClockOffset> measure_clock_offset(int fd, std::size_t exchanges, const MonotonicNs& now,
                                                std::string& error) {
  LineReader reader(kMaxClockLine);
  std::vector<std::string> pending;
  std::vector<ClockExchange> got;
  for (std::size_t i = 0; i < exchanges; ++i) {
    const std::int64_t t0 = now();
    if (!write_all(fd, clock_request_line(t0))) {
      error = "the conductor went away";
      return std::nullopt;
    }
    const auto line = read_line(fd, reader, pending);
    const std::int64_t t3 = now();
    if (!line) {
      error = "the conductor's answers ended";
      return std::nullopt;
    }
    const auto exchange = clock_answer(*line, t0, t3);
    if (!exchange) {
      error = "not the answer to this clock request: " + line->substr(0, 80);
      return std::nullopt;
    }
    got.push_back(*exchange);
  }
  auto estimate = estimate_offset(got);
  if (!estimate) error = "no exchange had its times in order";
  return estimate;
}

}  // namespace ib
