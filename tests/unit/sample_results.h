// Hand-built results for the tests of the writers and the reader (reports/), and a temporary folder.
#pragma once

#include "harness/results/results.h"
#include "harness/core/numbers.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {
namespace test {


inline Summary summary_of(std::size_t n, double v) {
  Summary s;
  s.n = n;
  s.mean = s.median = s.min = s.max = s.p5 = s.p50 = s.p95 = s.p99 = v;
  s.stddev = 0.0;
  s.cv = 0.0;
  return s;
}

inline PhaseResult phase(const std::vector<double>& durations, double value) {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  std::int64_t t = 1'000'000;
  for (double d : durations) {
    p.start_ns.push_back(t);
    p.duration_s.push_back(d);
    p.in_window.push_back(1);
    p.outlier.push_back(0);
    t += 2'000'000;
  }
  p.stats = summary_of(durations.size(), value);
  p.throughput = 1.0 / value;
  p.throughput_unit = "FLOP/s";
  p.window_cv = kNaN;  // fewer than 2 windows
  return p;
}

// One run, two tenants: "alpha" passes with metrics (partition_cost NaN), "beta" errored.
inline Results sample_results() {
  Results r;
  r.meta.version = "0.1.0";
  r.meta.backend = "host";
  r.meta.suite = "smoke";
  r.meta.argv = {"interference-bench", "run"};
  r.meta.bootstrap_seed = 7;
  r.meta.bootstrap_resamples = 100;

  RunResult run;
  run.scenario = "pair";
  run.mode = "timeslice";
  run.repetition = 1;
  run.repetitions = 2;
  run.cutoff = 0.40;
  run.rounds = 3;
  run.round_order = "abba";
  BlockRecord blk;
  blk.index = 0;
  blk.phase = Phase::colocated;
  blk.tenants = {"alpha", "beta"};
  blk.overlap_start_ns = 10;
  blk.overlap_end_ns = 20;
  blk.load.seconds = 1.0;
  blk.load.foreign_cpus = 0.5;
  blk.status = BlockStatus::excluded;
  blk.reason = "processes that are not this run's used 0.50 CPUs";
  run.blocks = {blk};
  run.system = SystemMetrics{1.5, kNaN, 1.25, 2.0};

  TenantResult a;
  a.name = "alpha";
  a.workload = "host-compute";
  a.params = {{"n", 64}, {"reps", 1}};
  a.work = {524288.0, "FLOP"};
  a.exclusive = phase({0.002, 0.003, 0.004}, 0.003);
  a.alone = a.exclusive;
  a.alone.source = PhaseSource::exclusive;
  a.colocated = phase({0.004, 0.005, 0.006, 0.010}, 0.006);
  a.colocated.in_window = {0, 1, 1, 1};
  a.colocated.outlier = {0, 0, 0, 1};
  a.colocated.outliers = 1;
  TenantMetrics m;
  m.p95_slowdown = Estimate{0.25, 0.1, 0.4, 0.95, 100, 7};
  m.median_slowdown = 0.2;
  m.n_exclusive = 3;
  m.n_colocated = 3;
  m.partition_cost = kNaN;
  m.interference = 1.2;
  a.metrics = m;
  a.verdict = Verdict::pass;
  a.verdict_reason = "within";
  a.warnings = {{WarningKind::noisy_baseline, "noisy baseline: test"}};

  TenantResult b;
  b.name = "beta";
  b.workload = "host-copy";
  b.exclusive = phase({0.01}, 0.01);
  b.colocated.outcome.status = WorkerStatus::crashed;
  b.colocated.outcome.signal = 11;
  b.verdict = Verdict::error;
  b.verdict_reason = "worker crashed";

  run.tenants = {a, b};
  r.runs = {run};
  TenantAggregate ag;
  ag.scenario = "pair";
  ag.mode = "timeslice";
  ag.tenant = "alpha";
  ag.workload = "host-compute";
  ag.repetitions = 1;
  ag.repetitions_measured = 1;
  ag.metrics = m;
  ag.repetition_verdicts = {"pass"};
  ag.verdict = Verdict::pass;
  ag.verdict_reason = "within";
  ag.warnings = {{WarningKind::noisy_baseline, "noisy baseline: test"}};
  Decision d;
  d.decided = true;
  d.rounds = 12;
  d.seconds = 31.4;
  d.look = 2;
  d.looks_planned = 11;
  d.z = 3.3;
  d.stopped_by = StoppedBy::decided;
  d.resolution = 0.15;
  ag.decision = d;
  TenantAggregate bg = ag;
  bg.decision.reset();
  bg.tenant = "beta";
  bg.workload = "host-copy";
  bg.metrics.reset();
  bg.repetition_verdicts = {"error"};
  bg.verdict = Verdict::error;
  bg.verdict_reason = "repetition 1: worker crashed";
  bg.warnings.clear();
  r.aggregates = {ag, bg};
  r.summary.runs = 1;
  r.summary.tenants = 2;
  r.summary.passed = 1;
  r.summary.errors = 1;
  r.summary.exit_code = 4;
  return r;
}

// A folder under /tmp, removed with the files in it.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ib_reports_test.XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    if (!p) throw std::runtime_error("mkdtemp failed");
    path = p;
  }
  ~TempDir() {
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") ::unlink((path + "/" + n).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
      }
      ::closedir(d);
    }
    return out;
  }
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace test
}  // namespace ib
