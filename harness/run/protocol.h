// The worker protocol: one JSON object per line on the worker's fd 3, plain words on its stdin.
// Every message carries "slot": which of the process's tenants it is about (0 unless mode streams
// runs several tenants in one process).
//
// worker -> harness: {"type":"ready","work":X,"unit":U,"setup_s":S,"warmup_samples":N,"env":{..}}
//                    {"type":"waived","reason":R}     {"type":"error","message":M}
//                    {"type":"started","block":K,"t_ns":T}   (block K released, re-warmed, measuring)
//                    {"type":"samples","block":K,"start_ns":[..],"duration_s":[..],
//                     "latency_count":[..],"latencies_s":[..],"counters":{name:[..]}}  (last three optional)
//                    {"type":"done","block":K,"measure_start_ns":T0,"measure_end_ns":T1,"stopped":B}
// harness -> worker: "go K SECONDS SLOT[,SLOT...]\n" releases those slots for block K (the barrier);
//                    "stop K\n" ends block K's measurement early; "end\n" or end of file ends the worker.
// A worker set up once per repetition measures many blocks: it waits at the barrier between them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib {

// Reads what is available on a non-blocking-ready fd and splits it into complete lines.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Reads once (call when poll() says readable). Appends complete lines; returns false at end of file.
  bool read_some(std::vector<std::string>& lines);
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string buffer_;
};

}  // namespace ib
