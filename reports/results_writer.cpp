#include "reports/results_writer.h"

#include "harness/core/files.h"

namespace ib {

void ResultsWriter::context(const Meta&) {}
void ResultsWriter::runs(const Results&) {}
void ResultsWriter::finalize(const Results&) {}

void ResultsFile::runs(const Results& so_far) { write_file_atomic(path_, text(so_far)); }
void ResultsFile::finalize(const Results& results) { write_file_atomic(path_, text(results)); }

void ResultsWriters::add(std::unique_ptr<ResultsWriter> writer) { writers_.push_back(std::move(writer)); }

void ResultsWriters::context(const Meta& meta) {
  for (auto& w : writers_) w->context(meta);
}

void ResultsWriters::runs(const Results& so_far) {
  for (auto& w : writers_) w->runs(so_far);
}

void ResultsWriters::finalize(const Results& results) {
  for (auto& w : writers_) w->finalize(results);
}

}  // namespace ib
