// The interface every writer of a run's results implements (after google/benchmark's reporters:
// context, runs, finalize). A run calls context once before anything runs, runs after every
// repetition (and once before the first, with no runs yet: the output folder takes files), and
// finalize once at the end. A writer formats what it is given and never computes. A new output of a run is
// one class in its format's folder (reports/<format>/results_<format>.h, e.g. PrometheusResultsFile) and one
// line where the run lists its writers (make_output_files, harness/cli/run_command.cpp).
#pragma once

#include "harness/results/results.h"

#include <memory>
#include <string>
#include <vector>

namespace ib {

class ResultsWriter {
 public:
  virtual ~ResultsWriter() = default;
  // Once, before anything runs: what the run is.
  virtual void context(const Meta& meta);
  // The results so far. A writer of files rewrites them whole (atomically), so an interrupted run
  // keeps what it finished.
  virtual void runs(const Results& so_far);
  // Once, when the run is over. Not called when an error ends the run: what runs() wrote stands.
  virtual void finalize(const Results& results);
};

// A writer of one file, rewritten whole after every repetition and at the end: a temporary file, then
// a rename (harness/core/files.h), so a reader never sees half a file and an interrupted run keeps
// the last complete one. A file for machines (results.json, JUnit, Prometheus, HTML) is written only
// once it holds a run: a run stopped before its first one (a signal, a full disk, a daemon that
// would not start) leaves none that a nightly job could take for an empty pass; the summary for people
// says what happened whatever it is.
class ResultsFile : public ResultsWriter {
 public:
  explicit ResultsFile(std::string path) : path_(std::move(path)) {}
  void runs(const Results& so_far) override;
  void finalize(const Results& results) override;
  const std::string& path() const { return path_; }

 protected:
  // The whole content of the file for these results.
  virtual std::string text(const Results& results) const = 0;
  // Whether the file is written while the results hold no run yet (the summary for people).
  virtual bool written_without_runs() const { return false; }

 private:
  std::string path_;
};

// Several writers as one, called in the order they were added. A writer whose file cannot be
// written (OutputError: disk full, folder removed) does not stop the others (the terminal summary
// still prints) nor the run (the results stay in memory and the next call tries again); the last
// failure of each file is kept until a later write of it succeeds.
class ResultsWriters : public ResultsWriter {
 public:
  void add(std::unique_ptr<ResultsWriter> writer);
  void context(const Meta& meta) override;
  void runs(const Results& so_far) override;
  void finalize(const Results& results) override;
  // "cannot write PATH: why", one per file whose latest write failed.
  std::vector<std::string> failures() const;

 private:
  template <class Call>
  void each(Call call);
  std::vector<std::unique_ptr<ResultsWriter>> writers_;
  std::vector<std::string> failures_;  // per writer, "" when its latest write succeeded
};

}  // namespace ib
