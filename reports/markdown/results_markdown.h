// The short Markdown summary printed on the terminal and saved as summary.md.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <ostream>
#include <string>

namespace ib {

// Everything: the verdicts with how far they got, every warning, each repetition, every block that
// did not count.
std::string markdown_summary(const Results& results);
// What a person reads at the end of a run: the verdicts, and per tenant the reason it is not a pass
// and the warnings that change how its verdict reads (blocks not counted, a tail burst, drift,
// throttling, coverage); the others counted, with summary.md named for them.
std::string terminal_summary(const Results& results);

// summary.md (see ResultsFile).
class MarkdownSummaryFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return markdown_summary(results); }
  bool written_without_runs() const override { return true; }  // it says why nothing ran
};

// The summary on the terminal at the end, and where the canonical results are.
class TerminalSummary : public ResultsWriter {
 public:
  TerminalSummary(std::ostream& out, std::string results_path) : out_(out), results_path_(std::move(results_path)) {}
  void finalize(const Results& results) override;

 private:
  std::ostream& out_;
  std::string results_path_;
};

}  // namespace ib
