#include "reports/results_writer.h"

#include "harness/core/errors.h"
#include "harness/core/files.h"

namespace ib {

void ResultsWriter::context(const Meta&) {}
void ResultsWriter::runs(const Results&) {}
void ResultsWriter::finalize(const Results&) {}

void ResultsFile::runs(const Results& so_far) {
  if (!so_far.runs.empty() || written_without_runs()) write_file_atomic(path_, text(so_far));
}
void ResultsFile::finalize(const Results& results) {
  if (!results.runs.empty() || written_without_runs()) write_file_atomic(path_, text(results));
}

void ResultsWriters::add(std::unique_ptr<ResultsWriter> writer) {
  writers_.push_back(std::move(writer));
  failures_.emplace_back();
}

template <class Call>
void ResultsWriters::each(Call call) {
  for (std::size_t i = 0; i < writers_.size(); ++i) {
    try {
      call(*writers_[i]);
      failures_[i].clear();
    } catch (const OutputError& e) {
      failures_[i] = e.what();
    }
  }
}

void ResultsWriters::context(const Meta& meta) {
  each([&](ResultsWriter& w) { w.context(meta); });
}

void ResultsWriters::runs(const Results& so_far) {
  each([&](ResultsWriter& w) { w.runs(so_far); });
}

void ResultsWriters::finalize(const Results& results) {
  each([&](ResultsWriter& w) { w.finalize(results); });
}

std::vector<std::string> ResultsWriters::failures() const {
  std::vector<std::string> out;
  for (const auto& f : failures_)
    if (!f.empty()) out.push_back(f);
  return out;
}

}  // namespace ib
