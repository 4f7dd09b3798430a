// libFuzzer target: the results reader (harness/results/results_reader), which baseline, vet, mig and compare
// feed with files a user names. Any input must end in a ResultsDocument or a ResultsFileError (exit 2,
// one line naming the file and field); a document that reads, written again and read back, reads the
// same. Seeds: tests/fuzz/corpus/results_reader (small results files of the host backend).
#include "harness/core/errors.h"
#include "harness/core/json_input.h"
#include "reports/json/results_json.h"
#include "harness/results/results_reader.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto doc = ib::parse_ordered_json_text(text, "fuzz.json", {std::size_t{1} << 20, 32});
    const ib::ResultsDocument r = ib::results_from_json(doc, "fuzz.json");
    const auto again = ib::results_to_json(r.results, r.raw_samples);
    const ib::ResultsDocument r2 = ib::results_from_json(again, "again.json");  // must read
    if (r2.results.runs.size() != r.results.runs.size()) __builtin_trap();
  } catch (const ib::InputError&) {
  }
  return 0;
}
