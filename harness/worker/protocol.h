// The worker protocol: one JSON object per line on the worker's fd 3, plain words on its stdin. The
// messages are typed in harness/worker/messages.h, the one place that writes and reads the wire format.
// Every report carries "slot": which of the process's tenants it is about (0 unless mode streams runs
// several tenants in one process; absent means 0).
//
// worker -> harness: {"type":"ready","work":X,"unit":U,"setup_s":S,"warmup_samples":N,"env":{..},"resolved":{..}}
//                    {"type":"waived","reason":R}     {"type":"error","message":M}
//                    {"type":"started","block":K,"t_ns":T}   (block K released, re-warmed, measuring)
//                    {"type":"samples","block":K,"start_ns":[..],"duration_s":[..],
//                     "latency_count":[..],"latencies_s":[..],"counters":{name:[..]}}  (last three optional)
//                    {"type":"done","block":K,"measure_start_ns":T0,"measure_end_ns":T1,"stopped":B}
//                    {"type":"kv_put","key":K,"value_hex":H}  {"type":"kv_get","key":K}   (the rendezvous of a
//                    tenant's ranks: a value published for the tenant, kept for the repetition; a get is
//                    answered once some rank of the tenant published the key)
//                    {"type":"escaped","count":N}   (after teardown: N processes of the tenant's program had
//                    left its process group; killed with it, named in the results)
//                    {"type":"gave_up","count":N}   (after teardown: N lines of the program's output cost its
//                    step pattern more than the match limit and were not read as steps; named in the results)
// harness -> worker: "go K SECONDS SLOT[,SLOT...]\n" releases those slots for block K (the barrier);
//                    "stop K\n" ends block K's measurement early; "end\n" or end of file ends the worker;
//                    "kv KEY HEX\n" answers a kv_get ("-" for an empty value).
// A worker set up once per repetition measures many blocks: it waits at the barrier between them.
//
// What the harness accepts (anything else is that worker's `error`, never the harness's crash): a line
// of at most kMaxReportLineBytes (16 MiB; a worker flushes its samples long before, see SampleBatcher);
// a known "type"; a slot the process has; a block index the harness has released; in a samples
// message arrays of equal length (start_ns, duration_s, latency_count, every counter), durations and
// latencies finite and >= 0, start times >= 0, latency_count summing to the number of latencies_s;
// times >= 0 in started and done; env values strings. The last line may lack its newline: it is read
// at end of file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ib {

// The longest report line the harness reads (documented above).
inline constexpr std::size_t kMaxReportLineBytes = std::size_t{16} << 20;

enum class ReadStatus {
  open,      // more may come
  closed,    // end of input (the last line, without its newline, was delivered)
  overlong,  // a line grew past the limit: the reader stops (what came after it is not read)
};

// Splits a byte stream into lines, holding at most `max_line_bytes` of an unfinished line.
class LineReader {
 public:
  explicit LineReader(std::size_t max_line_bytes = kMaxReportLineBytes) : max_(max_line_bytes) {}
  // Appends the complete lines `data` finishes (without their newline).
  ReadStatus feed(const char* data, std::size_t size, std::vector<std::string>& lines);
  // End of input: appends the last line when it had no newline; returns closed (overlong after one).
  ReadStatus finish(std::vector<std::string>& lines);

 private:
  std::size_t max_;
  std::string buffer_;  // the unfinished line
  bool overlong_ = false;
};

// Reads what `fd` has now (call when poll() says readable, or on a non-blocking fd) into `reader`.
// closed at end of file or a read error.
ReadStatus read_lines(int fd, LineReader& reader, std::vector<std::string>& lines);

}  // namespace ib
