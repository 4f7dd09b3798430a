#include "reports/markdown_writer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace ib {
namespace {

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string pct(double v) { return std::isfinite(v) ? fmt("%+.1f%%", v * 100.0) : "n/a"; }

// Milliseconds for sample times; the unit is in the header.
std::string ms(double s) { return fmt("%.3f", s * 1e3); }

}  // namespace

std::string markdown_summary(const Results& r) {
  std::ostringstream os;
  os << "## interference-bench " << r.meta.version << " — backend " << r.meta.backend;
  if (!r.meta.suite.empty()) os << ", suite " << r.meta.suite;
  os << "\n\n";
  if (!r.meta.backend_note.empty()) os << "> " << r.meta.backend_note << "\n\n";
  os << "| scenario | mode | rep | tenant | n excl/coloc | P95 excl (ms) | P95 coloc (ms) | p95_slowdown [95% CI] | cutoff | verdict |\n";
  os << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& run : r.runs) {
    for (const auto& t : run.tenants) {
      // The P95s the verdict compared: per-request latencies (marked "req") or sample times.
      const bool req = t.metrics && t.metrics->basis == "request_latency" && t.exclusive.latency && t.colocated.latency;
      const Summary& e = req ? *t.exclusive.latency : t.exclusive.stats;
      const Summary& c = req ? *t.colocated.latency : t.colocated.stats;
      os << "| " << run.scenario << " | " << run.mode << " | " << run.repetition << "/" << run.repetitions << " | "
         << t.name << " | " << e.n << "/" << c.n << (req ? " req" : "") << " | " << ms(e.p95) << " | " << ms(c.p95)
         << " | ";
      if (t.metrics) {
        const auto& e = t.metrics->p95_slowdown;
        os << pct(e.value) << " [" << pct(e.ci_low) << ", " << pct(e.ci_high) << "]";
      } else {
        os << "n/a";
      }
      os << " | " << fmt("%.0f%%", run.cutoff * 100.0) << " | **" << verdict_name(t.verdict) << "** |\n";
    }
  }
  os << "\n";
  for (const auto& run : r.runs) {
    if (run.status != "ok") os << "- " << run.scenario << " rep " << run.repetition << ": **" << run.status << "** — " << run.message << "\n";
    // What the slowdowns of a mode are against, and what sharing it implies, where the mode says so.
    if (run.mode_config.contains("exclusive_source") && run.mode_config["exclusive_source"].is_string())
      os << "- " << run.scenario << " (" << run.mode << "): exclusive phase from "
         << run.mode_config["exclusive_source"].get<std::string>() << "\n";
    if (run.mode_config.contains("mps") && run.mode_config["mps"].contains("fault_propagation"))
      os << "- " << run.scenario << " (" << run.mode << "): " << run.mode_config["mps"]["fault_propagation"].get<std::string>()
         << "\n";
    if (run.system)
      os << "- " << run.scenario << " rep " << run.repetition << ": STP " << fmt("%.2f", run.system->stp) << ", ANTT "
         << fmt("%.2f", run.system->antt) << ", barrier skew "
         << (run.barrier_skew_s ? fmt("%.1f us", *run.barrier_skew_s * 1e6) : std::string("n/a")) << "\n";
    for (const auto& t : run.tenants)
      for (const auto& w : t.warnings) os << "- warning (" << run.scenario << ", " << t.name << "): " << w << "\n";
  }
  const auto& s = r.summary;
  os << "\n**" << (s.pass ? "PASS" : "NOT PASS") << "**: " << s.passed << " pass, " << s.failed << " fail, " << s.inconclusive
     << " inconclusive, " << s.baseline << " baseline, " << s.waived << " waived, " << s.errors << " error"
     << (s.interrupted ? " (interrupted)" : "") << " — exit code " << s.exit_code << "\n";
  return os.str();
}

}  // namespace ib
