// libFuzzer target: the worker-report parser (harness/worker/messages). A worker is another process, so
// any line it sends must end in a validated message or a ProtocolError (that worker's error, exit 4),
// never the harness's crash; a parsed message, written again and read back, is the same message.
// Seeds: tests/fuzz/corpus/worker_message (one report of every type).
#include "harness/worker/messages.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  for (const ib::MessageBounds bounds : {ib::MessageBounds{1, 0}, ib::MessageBounds{4, 8}}) {
    try {
      const ib::WorkerMessage m = ib::parse_worker_message(line, bounds);
      std::string again = ib::to_line(m);
      if (!again.empty() && again.back() == '\n') again.pop_back();
      const ib::WorkerMessage m2 = ib::parse_worker_message(again, bounds);  // must not throw
      if (m2.type() != m.type() || m2.slot != m.slot || ib::to_line(m2) != ib::to_line(m)) __builtin_trap();
    } catch (const ib::ProtocolError&) {
    }
  }
  (void)ib::parse_control_message(line);  // the worker's side: nullopt or a command, nothing else
  return 0;
}
