// A fake launcher and clock for the orchestrator (harness/run/launcher.h), in the manner of hyperfine's
// mock executor: no processes, a scripted worker per tenant that answers the harness's control lines
// with report lines on a timeline of fake time, and a clock that jumps to the next thing that happens.
// A test runs the real orchestrator against it; nothing sleeps and nothing depends on the machine.
// The reports go through the real wire format (to_line) and the real line splitter (LineReader).
#pragma once

#include "harness/run/launcher.h"
#include "harness/worker/messages.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib::fake {

constexpr std::int64_t kSecond = 1'000'000'000;
inline std::int64_t ns(double s) { return static_cast<std::int64_t>(s * 1e9); }

// What one scripted worker does, in fake time. By default: ready after setup_s, every block measured
// (samples_per_block samples, evenly spread, then done), exit 0 soon after "end".
struct Script {
  double setup_s = 0.1;
  int samples_per_block = 4;
  double exit_delay_s = 0.01;       // from "end" to its exit
  bool never_ready = false;         // hangs in setup (ignores "end")
  int hang_in_block = -1;           // in that block: "started", one batch, then nothing (ignores "end")
  int crash_in_block = -1;          // halfway through that block: killed by SIGABRT
  double lost_at_s = -1.0;          // >= 0: killed by SIGKILL this long after its start, whatever it does then (a
                                    // worker whose node was lost: its exit says `lost`, as NodesLauncher's does)
  std::string lost = "node 1 (fake) was lost mid-run";
  int error_in_block = -1;          // halfway through that block: an error report *without* its newline, exit 1
  std::string error_text = "workload failed";
  int garbage_block = -1;           // in that block, `garbage` instead of its samples (then done)
  std::string garbage;
  std::size_t piece_bytes = 0;      // > 0: every report arrives in pieces of this many bytes ...
  double piece_gap_s = 0.0;         // ... this far apart (a slow pipe)
  double late_s = 0.0;              // every "done" comes this much after the block's end
  bool ignores_end = false;         // does not exit on "end" (killed after the grace period)
  // What the n-th process (0-based) that runs this workload reports as resolved in its "ready" (the
  // last entry for later ones; none: {}).
  std::vector<nlohmann::json> resolved_per_start;
};

// What happened to one worker, for the test to look at (kept after the orchestrator let go of it).
struct Record {
  std::vector<std::string> workloads;  // its tenants (from --tenant), in slot order
  std::vector<nlohmann::json> params;  // their params (from --tenant)
  std::vector<nlohmann::json> resolved;  // what each slot reports as resolved (Script::resolved_per_start)
  Script script;
  std::vector<std::pair<std::int64_t, ControlMessage>> received;  // control messages, with their time
  std::int64_t started_at = 0;
  std::optional<std::int64_t> killed_at, exited_at, control_closed_at;
  std::optional<ExitStatus> exit;
  bool destroyed_running = false;   // the channel went while the worker still ran (nothing reaped it)

  std::vector<GoCommand> gos() const {
    std::vector<GoCommand> out;
    for (const auto& [t, m] : received)
      if (m.type() == ControlMessageType::go) out.push_back(std::get<GoCommand>(m.body));
    return out;
  }
  std::optional<std::int64_t> first(ControlMessageType type) const {
    for (const auto& [t, m] : received)
      if (m.type() == type) return t;
    return std::nullopt;
  }
};

class World;

// One scripted worker: its output is a timeline of byte pieces; its exit an event on it.
class Worker {
 public:
  Worker(World& world, std::shared_ptr<Record> record) : world_(world), rec_(std::move(record)) {}
  void start();
  void on_control(const std::string& text);
  void on_control_closed();
  void kill();

  // Fake time of the next thing this worker does after `now` (INT64_MAX: nothing).
  std::int64_t next_event_after(std::int64_t now) const;
  bool readable(std::int64_t now) const {
    return (!pieces_.empty() && pieces_.front().at <= now) || (closed_at_ <= now && !eof_told_);
  }
  ReadStatus read(std::int64_t now, std::vector<std::string>& lines);
  std::optional<ExitStatus> poll_exit(std::int64_t now) const {
    if (rec_->exited_at && *rec_->exited_at <= now) return rec_->exit;
    return std::nullopt;
  }
  Record& record() { return *rec_; }

 private:
  struct Piece {
    std::int64_t at;
    std::string bytes;
    bool line_start = true;  // the first piece of a line
  };
  // What it would say after `t`, from the next line on, it never says (it was told to end).
  void cancel_lines_after(std::int64_t t) {
    const auto first = std::find_if(pieces_.begin(), pieces_.end(), [&](const Piece& p) { return p.at > t && p.line_start; });
    pieces_.erase(first, pieces_.end());
    last_at_ = pieces_.empty() ? t : std::max(t, pieces_.back().at);
  }
  std::int64_t now() const;
  void say(std::int64_t at, const std::string& line);
  void say(std::int64_t at, WorkerMessage m) { say(at, to_line(m)); }
  void exit_at(std::int64_t at, ExitStatus status);
  void release(const GoCommand& go, std::int64_t t);
  void measure(std::size_t slot, const GoCommand& go, std::int64_t t);
  bool hung() const { return rec_->script.never_ready || hung_; }

  World& world_;
  std::shared_ptr<Record> rec_;
  std::deque<Piece> pieces_;
  std::int64_t last_at_ = 0;             // pieces stay in order
  std::int64_t closed_at_ = INT64_MAX;   // its report pipe closes (it exited)
  bool eof_told_ = false;
  bool hung_ = false;
  LineReader reader_{kMaxReportLineBytes};
};

// The fake launcher and clock in one: it knows every worker it started, so its wait can jump to the
// next thing any of them does.
class World final : public Launcher, public Clock {
 public:
  // The script of each worker, by the workload name of its first tenant (default: a good worker).
  std::map<std::string, Script> scripts;
  std::vector<std::shared_ptr<Record>> records;  // in start order
  std::int64_t now = kSecond;                    // fake CLOCK_MONOTONIC
  std::size_t waits = 0;
  // An orchestrator that waits this long in fake time would wait for ever: the wait throws instead.
  std::int64_t give_up_at = 24 * 3600 * kSecond;

  std::unique_ptr<WorkerChannel> start(const SpawnSpec& spec) override;
  std::int64_t now_ns() override { return now; }
  void wait(const std::vector<WorkerChannel*>& channels, int timeout_ms, std::vector<char>& readable) override;

  // The records of the workers of one workload, in start order.
  std::vector<std::shared_ptr<Record>> of(const std::string& workload) const {
    std::vector<std::shared_ptr<Record>> out;
    for (const auto& r : records)
      if (!r->workloads.empty() && r->workloads[0] == workload) out.push_back(r);
    return out;
  }
  std::vector<std::unique_ptr<Worker>> workers;  // alive for the whole test (channels point at them)
};

class Channel final : public WorkerChannel {
 public:
  Channel(World& world, Worker& worker) : world_(world), worker_(worker) {}
  ~Channel() override {
    if (!worker_.poll_exit(world_.now)) worker_.record().destroyed_running = true;
  }
  pid_t pid() const override { return -1; }
  bool send(const std::string& text) override {
    if (worker_.poll_exit(world_.now) || worker_.record().control_closed_at) return false;
    worker_.on_control(text);
    return true;
  }
  void close_control() override {
    if (!worker_.record().control_closed_at) worker_.on_control_closed();
  }
  ReadStatus read_reports(std::vector<std::string>& lines) override { return worker_.read(world_.now, lines); }
  int report_fd() const override { return -1; }
  std::optional<ExitStatus> poll_exit() override { return worker_.poll_exit(world_.now); }
  void kill() override { worker_.kill(); }
  Worker& worker() { return worker_; }

 private:
  World& world_;
  Worker& worker_;
};

// ---------------------------------------------------------------- implementation

inline std::int64_t Worker::now() const { return world_.now; }

inline void Worker::say(std::int64_t at, const std::string& line) {
  at = std::max(at, last_at_);
  const Script& s = rec_->script;
  if (s.piece_bytes == 0) {
    pieces_.push_back({at, line, true});
  } else {
    for (std::size_t off = 0; off < line.size(); off += s.piece_bytes, at += ns(s.piece_gap_s))
      pieces_.push_back({at, line.substr(off, s.piece_bytes), off == 0});
    at -= ns(s.piece_gap_s);
  }
  last_at_ = at;
}

inline void Worker::exit_at(std::int64_t at, ExitStatus status) {
  if (rec_->exited_at) return;
  at = std::max(at, last_at_);  // what it said before, it said before it died
  rec_->exited_at = at;
  rec_->exit = status;
  closed_at_ = at;
}

inline void Worker::start() {
  if (rec_->script.never_ready) return;
  const std::int64_t at = now() + ns(rec_->script.setup_s);
  for (std::size_t slot = 0; slot < rec_->workloads.size(); ++slot) {
    ReadyMessage ready;
    ready.work = 1.0;
    ready.unit = "s";
    ready.env = {{"CUDA_VISIBLE_DEVICES", "fake"}};
    ready.resolved = rec_->resolved[slot];
    say(at, {slot, ready});
  }
  if (rec_->script.lost_at_s >= 0.0) exit_at(now() + ns(rec_->script.lost_at_s), ExitStatus{std::nullopt, 9, rec_->script.lost});
}

inline void Worker::measure(std::size_t slot, const GoCommand& go, std::int64_t t) {
  const Script& s = rec_->script;
  const std::int64_t length = ns(go.seconds);
  say(t, {slot, StartedMessage{go.block, t}});
  if (go.block == s.garbage_block) {
    say(t + length / 2, s.garbage + "\n");
  } else {
    const int n = s.samples_per_block;
    SamplesMessage batch;
    batch.block = go.block;
    for (int i = 0; i < n; ++i) {
      batch.start_ns.push_back(t + length * i / n);
      batch.duration_s.push_back(go.seconds / n);
      batch.latency_count.push_back(0);
      // Two batches: one at half-time, one at the end, so a crash at half-time loses the second.
      if (i == n / 2 - 1 || i == n - 1) {
        say(t + length * (i + 1) / n, {slot, batch});
        batch = SamplesMessage{};
        batch.block = go.block;
      }
    }
  }
  if (go.block == s.hang_in_block) {
    hung_ = true;
    pieces_.erase(std::remove_if(pieces_.begin(), pieces_.end(), [&](const Piece& p) { return p.at > t + length / 2; }),
                  pieces_.end());
    return;
  }
  if (go.block == s.crash_in_block || go.block == s.error_in_block) {
    const std::int64_t at = t + length / 2;
    pieces_.erase(std::remove_if(pieces_.begin(), pieces_.end(), [&](const Piece& p) { return p.at > at; }), pieces_.end());
    last_at_ = std::min(last_at_, at);
    if (go.block == s.crash_in_block) {
      exit_at(at, ExitStatus{std::nullopt, 6});
    } else {
      std::string line = to_line({slot, ErrorMessage{s.error_text}});
      line.pop_back();  // the last line of a dying worker, without its newline
      say(at, line);
      exit_at(at, ExitStatus{1, std::nullopt});
    }
    return;
  }
  say(t + length + ns(s.late_s), {slot, DoneMessage{go.block, t, t + length, false}});
}

inline void Worker::release(const GoCommand& go, std::int64_t t) {
  for (std::size_t slot : go.slots) measure(slot, go, t);
}

inline void Worker::on_control(const std::string& text) {
  std::size_t start = 0, nl;
  while ((nl = text.find('\n', start)) != std::string::npos) {
    const auto m = parse_control_message(text.substr(start, nl - start));
    start = nl + 1;
    if (!m) continue;
    rec_->received.emplace_back(now(), *m);
    if (rec_->exited_at) continue;
    if (m->type() == ControlMessageType::go && !hung()) release(std::get<GoCommand>(m->body), now());
    if (m->type() == ControlMessageType::end && !hung() && !rec_->script.ignores_end) {
      cancel_lines_after(now());  // a block it measures ends now
      exit_at(now() + ns(rec_->script.exit_delay_s), ExitStatus{0, std::nullopt});
    }
  }
}

inline void Worker::on_control_closed() {
  rec_->control_closed_at = now();
  if (!hung() && !rec_->script.ignores_end && !rec_->exited_at) {
    cancel_lines_after(now());
    exit_at(now() + ns(rec_->script.exit_delay_s), ExitStatus{0, std::nullopt});
  }
}

inline void Worker::kill() {
  if (!rec_->killed_at) rec_->killed_at = now();
  if (rec_->exited_at && *rec_->exited_at <= now()) return;
  pieces_.erase(std::remove_if(pieces_.begin(), pieces_.end(), [&](const Piece& p) { return p.at > now(); }), pieces_.end());
  last_at_ = std::min(last_at_, now());
  rec_->exited_at.reset();
  exit_at(now(), ExitStatus{std::nullopt, 9});
}

inline std::int64_t Worker::next_event_after(std::int64_t t) const {
  std::int64_t next = INT64_MAX;
  for (const Piece& p : pieces_)
    if (p.at > t) {
      next = std::min(next, p.at);
      break;
    }
  if (closed_at_ > t) next = std::min(next, closed_at_);
  return next;
}

inline ReadStatus Worker::read(std::int64_t t, std::vector<std::string>& lines) {
  if (eof_told_) return ReadStatus::closed;
  while (!pieces_.empty() && pieces_.front().at <= t) {
    const ReadStatus st = reader_.feed(pieces_.front().bytes.data(), pieces_.front().bytes.size(), lines);
    pieces_.pop_front();
    if (st != ReadStatus::open) {
      eof_told_ = true;
      return st;
    }
  }
  if (closed_at_ <= t && pieces_.empty()) {
    eof_told_ = true;
    return reader_.finish(lines);
  }
  return ReadStatus::open;
}

inline std::unique_ptr<WorkerChannel> World::start(const SpawnSpec& spec) {
  auto rec = std::make_shared<Record>();
  for (std::size_t i = 0; i + 1 < spec.args.size(); ++i)
    if (spec.args[i] == "--tenant") {
      const nlohmann::json tenant = nlohmann::json::parse(spec.args[i + 1]);
      rec->workloads.push_back(tenant.at("workload"));
      rec->params.push_back(tenant.at("params"));
    }
  for (const std::string& w : rec->workloads) {
    const auto runs_it = [&w](const std::shared_ptr<Record>& r) {
      return std::find(r->workloads.begin(), r->workloads.end(), w) != r->workloads.end();
    };
    const auto earlier = static_cast<std::size_t>(std::count_if(records.begin(), records.end(), runs_it));
    const auto s = scripts.find(w);
    const auto& seq = s == scripts.end() ? std::vector<nlohmann::json>{} : s->second.resolved_per_start;
    rec->resolved.push_back(seq.empty() ? nlohmann::json::object() : seq[std::min(earlier, seq.size() - 1)]);
  }
  const auto it = rec->workloads.empty() ? scripts.end() : scripts.find(rec->workloads[0]);
  if (it != scripts.end()) rec->script = it->second;
  rec->started_at = now;
  records.push_back(rec);
  workers.push_back(std::make_unique<Worker>(*this, rec));
  workers.back()->start();
  return std::make_unique<Channel>(*this, *workers.back());
}

inline void World::wait(const std::vector<WorkerChannel*>& channels, int timeout_ms, std::vector<char>& readable) {
  ++waits;
  if (now > give_up_at) throw std::runtime_error("fake time ran out: the orchestrator would wait for ever");
  const auto mark = [&] {
    bool any = false;
    readable.assign(channels.size(), 0);
    for (std::size_t i = 0; i < channels.size(); ++i) {
      readable[i] = static_cast<Channel*>(channels[i])->worker().readable(now);
      any |= readable[i] != 0;
    }
    return any;
  };
  if (mark()) return;
  // Nothing to read now: time passes until the next thing any worker does, or the timeout.
  std::int64_t next = now + static_cast<std::int64_t>(timeout_ms) * 1'000'000;
  for (const auto& w : workers) next = std::min(next, w->next_event_after(now));
  now = next;
  mark();
}

}  // namespace ib::fake
