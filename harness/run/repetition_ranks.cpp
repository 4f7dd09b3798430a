// RepetitionRun's part for tenants with ranks (docs/design.md section 13): one worker per rank started together,
// the rendezvous relayed between a tenant's ranks (kv_put / kv_get answered by kv), a block's samples merged
// over the ranks, and the rank a failure is told by.
#include "harness/run/repetition.h"

#include "harness/core/text.h"

#include <algorithm>
#include <climits>

namespace ib {

// A tenant with ranks: one worker per rank, all started before any is waited for (they meet in the
// rendezvous while they set up), then each until it is ready; false when one was not (named by its log).
bool RepetitionRun::start_rank_workers(std::size_t set, std::size_t tenant) {
  const int ranks = s_.tenants[tenant].ranks;
  std::vector<std::size_t> started;
  for (int r = 0; r < ranks; ++r) {
    const std::string who = file_name_part(s_.tenants[tenant].name) + "-rank" + std::to_string(r);
    Worker& w = add_worker(set, {tenant}, who, r);
    started.push_back(workers_.size() - 1);
    if (!launch(w, {tenant}, r)) return false;
  }
  for (std::size_t k : started)
    if (!wait_until_ready(workers_[k], file_name_part(s_.tenants[tenant].name) + " rank " +
                                            std::to_string(workers_[k].slots[0].rank)))
      return false;
  return true;
}

// The rendezvous: a value one rank published, kept for the tenant and sent to every rank waiting for it.
void RepetitionRun::on_kv_put(Worker& w, const Slot& slot, KvPutMessage&& m) {
  auto& values = kv_[{w.set, slot.tenant}];
  if (values.size() >= 4096 && !values.count(m.key)) {
    if (w.error.empty()) w.error = "rendezvous: more than 4096 keys published";
    return;
  }
  auto& waiting = kv_waiting_[{w.set, slot.tenant}];
  for (auto it = waiting.begin(); it != waiting.end();) {
    if (it->second != m.key) {
      ++it;
      continue;
    }
    Worker& asker = workers_[it->first];
    if (asker.channel && !asker.exited) asker.channel->send(to_line(ControlMessage{KvCommand{m.key, m.value}}));
    it = waiting.erase(it);
  }
  values[m.key] = std::move(m.value);
}

void RepetitionRun::on_kv_get(Worker& w, const Slot& slot, const KvGetMessage& m) {
  const auto& values = kv_[{w.set, slot.tenant}];
  if (const auto it = values.find(m.key); it != values.end()) {
    w.channel->send(to_line(ControlMessage{KvCommand{m.key, it->second}}));
    return;
  }
  const std::size_t k = static_cast<std::size_t>(&w - workers_.data());
  kv_waiting_[{w.set, slot.tenant}].emplace_back(k, m.key);
}

std::vector<RepetitionRun::Seat> RepetitionRun::seats_of(const BlockSpec& spec, std::size_t tenant) const {
  return seats_[spec.set][tenant];
}

// A tenant with ranks, block `block` collected: sample k is the slowest rank's k-th sample (nccl-tests -I),
// starting when the first rank started it; every rank's duration and arrival (its own start) are kept. The
// arrivals are on one clock: CLOCK_MONOTONIC on this node, and a rank on another node had its start_ns
// moved onto this node's (the conductor's) clock when its samples were relayed (shift_report_times). The ranks agreed on every
// sample (Workload::continue_together), so they hold as many; should one hold more, its extra are dropped.
void RepetitionRun::merge_ranks(const BlockSpec& spec, std::size_t tenant, int block) {
  std::vector<RankSamples*> ranks;
  for (const Seat& seat : seats_of(spec, tenant)) ranks.push_back(&workers_[seat.worker].slots[seat.slot].block_samples);
  std::size_t n = SIZE_MAX;
  for (const RankSamples* r : ranks) n = std::min(n, r->start_ns.size());
  PhaseResult& pr = phase_of(r_.tenants[tenant], spec.phase);
  pr.rank_duration_s.resize(ranks.size());
  pr.rank_start_ns.resize(ranks.size());
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t start = INT64_MAX;
    double duration = 0.0;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      start = std::min(start, ranks[r]->start_ns[k]);
      duration = std::max(duration, ranks[r]->duration_s[k]);
      pr.rank_duration_s[r].push_back(ranks[r]->duration_s[k]);
      pr.rank_start_ns[r].push_back(ranks[r]->start_ns[k]);
    }
    pr.start_ns.push_back(start);
    pr.duration_s.push_back(duration);
    pr.block.push_back(block);
    pr.latency_count.push_back(0);
  }
  for (const auto& [name, values] : ranks[0]->counters) {  // the tenant's work is rank 0's count
    auto& all = pr.counter_samples[name];
    all.resize(pr.start_ns.size() - n, 0.0);
    all.insert(all.end(), values.begin(), values.begin() + static_cast<std::ptrdiff_t>(std::min(n, values.size())));
  }
  for (auto& [name, all] : pr.counter_samples) all.resize(pr.start_ns.size(), 0.0);
  for (RankSamples* r : ranks) *r = RankSamples{};
}

// "rank R: ", and in front of it the ranks that never got ready while R set up (a rank missing from its
// rendezvous: "rank 1 never got ready; rank 0: ...").
std::string RepetitionRun::ranks_note(const std::vector<Seat>& ranks, const Seat& speaker) const {
  const Worker& w = workers_[speaker.worker];
  std::string missing;
  if (!w.ready_seen)
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const Seat& s = ranks[r];
      if (s.worker == speaker.worker) continue;
      if (s.worker == SIZE_MAX || !workers_[s.worker].ready_seen) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
  const std::string note = missing.empty() ? "" : "rank " + missing + " never got ready; ";
  return note + "rank " + std::to_string(w.slots[speaker.slot].rank) + ": ";
}

}  // namespace ib
