#include "reports/html/results_html.h"

#include "harness/core/text.h"
#include "reports/html/chartjs.h"
#include "reports/html/html_common.h"
#include "reports/writer_common.h"

#include <cmath>
#include <sstream>

namespace ib {

namespace {

using ojson = nlohmann::ordered_json;

// The page's script: draws every chart from the data block with Chart.js, marks each canvas
// data-drawn="1" once Chart.js has rendered it, and records errors on <body data-errors>. It sorts each
// phase's counted sample times for the CDF; every other number it shows is a field of the results.
constexpr const char* kPageScript = R"js(
(function () {
  'use strict';
  const errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); });
  const data = JSON.parse(document.getElementById('ib-data').textContent);
  const PHASES = ['exclusive', 'alone', 'colocated'];
  const COLORS = {exclusive: '#1f77b4', alone: '#2ca02c', colocated: '#d62728'};
  const VERDICT_COLORS = {pass: '#2ca02c', fail: '#d62728', inconclusive: '#ff7f0e'};
  let charts = 0;

  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.register({id: 'ibDrawn', afterRender: function (chart) { chart.canvas.setAttribute('data-drawn', '1'); }});
  // Vertical dashed lines (block starts), horizontal dashed lines (the cutoff) and shaded spans.
  Chart.register({id: 'ibMarks', beforeDatasetsDraw: function (chart, args, opts) {
    const area = chart.chartArea, ctx = chart.ctx, x = chart.scales.x, y = chart.scales.y;
    ctx.save();
    ctx.fillStyle = 'rgba(255,140,0,0.20)';
    for (const s of (opts.spans || [])) {
      const a = Math.max(x.getPixelForValue(s[0]), area.left), b = Math.min(x.getPixelForValue(s[1]), area.right);
      if (b > a) ctx.fillRect(a, area.top, Math.max(b - a, 1), area.bottom - area.top);
    }
    ctx.setLineDash([4, 4]);
    ctx.strokeStyle = 'rgba(0,0,0,0.30)';
    for (const v of (opts.vlines || [])) {
      const p = x.getPixelForValue(v);
      if (p < area.left || p > area.right) continue;
      ctx.beginPath(); ctx.moveTo(p, area.top); ctx.lineTo(p, area.bottom); ctx.stroke();
    }
    ctx.strokeStyle = '#000';
    for (const v of (opts.hlines || [])) {
      const p = y.getPixelForValue(v);
      if (p < area.top || p > area.bottom) continue;
      ctx.beginPath(); ctx.moveTo(area.left, p); ctx.lineTo(area.right, p); ctx.stroke();
    }
    ctx.restore();
  }});

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function note(parent, text) { parent.appendChild(el('p', {class: 'note'}, text)); }
  function axis(text, extra) { return Object.assign({title: {display: true, text: text}}, extra || {}); }
  function draw(parent, title, config) {
    const fig = el('figure', {class: 'chart'});
    fig.appendChild(el('figcaption', {}, title));
    const box = el('div', {class: 'box'});
    const canvas = el('canvas');
    box.appendChild(canvas);
    fig.appendChild(box);
    parent.appendChild(fig);
    charts += 1;
    try { new Chart(canvas, config); } catch (e) { errors.push(title + ': ' + e); console.error(e); }
  }
  function pct(v) { return v === null ? null : v * 100; }

  function p95Chart(parent) {
    const ag = data.aggregates.filter(function (a) { return a.p95_slowdown !== null; });
    if (!ag.length) { note(parent, 'No P95 slowdown to chart: no tenant has both exclusive and colocated measured.'); return; }
    const cutoffs = Array.from(new Set(ag.map(function (a) { return a.cutoff; }).filter(function (c) { return c !== null; })));
    draw(parent, 'P95 slowdown per tenant and mode: point estimate, 95% CI whisker, dashed line the cutoff', {
      type: 'bar',
      data: {labels: ag.map(function (a) { return a.scenario + ' · ' + a.mode + ' · ' + a.tenant; }),
             datasets: [
               {type: 'bar', label: '95% CI', barThickness: 6, backgroundColor: 'rgba(31,119,180,0.55)',
                data: ag.map(function (a) { return a.ci_low === null ? null : [pct(a.ci_low), pct(a.ci_high)]; })},
               {type: 'line', label: 'P95 slowdown', showLine: false, pointRadius: 7, pointStyle: 'rectRot',
                backgroundColor: '#555', borderColor: '#555',
                pointBackgroundColor: ag.map(function (a) { return VERDICT_COLORS[a.verdict] || '#777'; }),
                data: ag.map(function (a) { return pct(a.p95_slowdown); })}]},
      options: {scales: {y: axis('slowdown vs exclusive (%)', {suggestedMin: 0,
                                   suggestedMax: Math.max.apply(null, cutoffs.map(pct).concat([0])) * 1.2})},
                plugins: {ibMarks: {hlines: cutoffs.map(pct)}}}
    });
  }

  // A sample's value is its duration, or an interval reporter's time per unit of work (the tenant's scale says
  // which, with the unit the charts show: ms, or e.g. ns/B).
  function valuesOf(samples) { return samples.time_per_work || samples.duration_s; }

  function countedValues(samples, scale) {
    const out = [];
    const v = valuesOf(samples);
    for (let i = 0; i < v.length; i++) if (samples.counted[i]) out.push(v[i] * scale.factor);
    return out.sort(function (a, b) { return a - b; });
  }

  function cdfChart(parent, tenant) {
    const datasets = [];
    for (const name of PHASES) {
      const ph = tenant.phases[name];
      if (!ph.samples) continue;
      const t = countedValues(ph.samples, tenant.scale);
      if (!t.length) continue;
      datasets.push({label: name + ' (n=' + t.length + ')', borderColor: COLORS[name], backgroundColor: COLORS[name],
                     showLine: true, stepped: true, pointRadius: 0, borderWidth: 1.5,
                     data: t.map(function (v, i) { return {x: v, y: (i + 1) / t.length}; })});
      if (ph.p95 !== null)
        datasets.push({label: 'P95 ' + name + ' ' + (ph.p95 * tenant.scale.factor).toPrecision(4) + ' ' + tenant.scale.unit,
                       borderColor: COLORS[name],
                       backgroundColor: COLORS[name],
                       borderDash: [6, 3], borderWidth: 1, showLine: true, pointRadius: 0,
                       data: [{x: ph.p95 * tenant.scale.factor, y: 0}, {x: ph.p95 * tenant.scale.factor, y: 1}]});
    }
    if (!datasets.length) { note(parent, 'No raw samples for a CDF (a file written with --no-raw, or no phase measured).'); return; }
    draw(parent, 'CDF of counted ' + tenant.scale.whats + ' per phase (dashed: P95)', {type: 'scatter', data: {datasets: datasets},
      options: {scales: {x: axis(tenant.scale.what + ' (' + tenant.scale.unit + ')'), y: axis('fraction of samples', {min: 0, max: 1})}}});
  }

  function throttledSpans(tenant, origin) {
    const spans = [];
    for (const name of PHASES) {
      const s = tenant.phases[name].samples;
      if (!s || !s.throttled) continue;
      for (let i = 0; i < s.throttled.length; i++)
        if (s.throttled[i]) spans.push([(s.start_ns[i] - origin) / 1e9, (s.start_ns[i] - origin) / 1e9 + s.duration_s[i]]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    const merged = [];  // overlapping spans drawn once, so the shade means "throttled", not "how many"
    for (const s of spans) {
      const last = merged[merged.length - 1];
      if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
      else merged.push(s.slice());
    }
    return merged;
  }

  function timeChart(parent, run, tenant, origin) {
    const datasets = [];
    for (const name of PHASES) {
      const s = tenant.phases[name].samples;
      if (!s || !s.duration_s.length) continue;
      datasets.push({label: name, backgroundColor: COLORS[name], borderColor: COLORS[name], pointRadius: 1.5,
                     data: valuesOf(s).map(function (v, i) { return {x: (s.start_ns[i] - origin) / 1e9, y: v * tenant.scale.factor}; })});
    }
    if (!datasets.length) return;
    const what = tenant.scale.what, whats = tenant.scale.whats;
    draw(parent, whats.charAt(0).toUpperCase() + whats.slice(1) + ' over time (dashed: block starts; shaded: throttled samples)',
      {type: 'scatter', data: {datasets: datasets},
      options: {scales: {x: axis('seconds since the first block'), y: axis(what + ' (' + tenant.scale.unit + ')')},
                plugins: {ibMarks: {vlines: run.blocks.map(function (b) { return (b.start_ns - origin) / 1e9; }),
                                    spans: throttledSpans(tenant, origin)}}}});
  }

  function telemetryChart(parent, run, tenant, origin) {
    const series = {sm_clock_mhz: [], power_w: [], temperature_c: []};
    for (const name of PHASES) {
      const tm = tenant.phases[name].telemetry;
      if (!tm) continue;
      for (let i = 0; i < tm.t_ns.length; i++)
        for (const k in series)
          if (tm[k][i] !== null) series[k].push({x: (tm.t_ns[i] - origin) / 1e9, y: tm[k][i]});
    }
    for (const k in series) series[k].sort(function (a, b) { return a.x - b.x; });
    if (!series.sm_clock_mhz.length && !series.power_w.length && !series.temperature_c.length) return;
    const line = function (label, key, color, axisId) {
      return {label: label, data: series[key], borderColor: color, backgroundColor: color, yAxisID: axisId,
              showLine: true, pointRadius: 0, borderWidth: 1.2};
    };
    draw(parent, 'Telemetry (shaded: throttled samples; dashed: block starts)', {type: 'scatter',
      data: {datasets: [line('SM clock (MHz)', 'sm_clock_mhz', '#9467bd', 'y'), line('power (W)', 'power_w', '#8c564b', 'y1'),
                        line('temperature (°C)', 'temperature_c', '#e377c2', 'y2')]},
      options: {scales: {x: axis('seconds since the first block'), y: axis('MHz', {position: 'left'}),
                         y1: axis('W', {position: 'right', grid: {drawOnChartArea: false}}),
                         y2: axis('°C', {position: 'right', grid: {drawOnChartArea: false}})},
                plugins: {ibMarks: {vlines: run.blocks.map(function (b) { return (b.start_ns - origin) / 1e9; }),
                                    spans: throttledSpans(tenant, origin)}}}});
  }

  function runOrigin(run) {
    let origin = Infinity;
    for (const b of run.blocks) origin = Math.min(origin, b.start_ns);
    for (const t of run.tenants)
      for (const name of PHASES) {
        const s = t.phases[name].samples;
        if (s && s.start_ns.length) origin = Math.min(origin, s.start_ns[0]);
      }
    return isFinite(origin) ? origin : 0;
  }

  function runSection(parent, run) {
    const sec = el('section', {class: 'run'});
    sec.appendChild(el('h2', {}, run.scenario + ' (' + run.mode + '), repetition ' + run.repetition + ' of ' +
                                  run.repetitions + ': ' + run.status + (run.message ? ' — ' + run.message : '')));
    const origin = runOrigin(run);
    for (const t of run.tenants) {
      sec.appendChild(el('h3', {}, t.name + ' — ' + t.workload + ' — ' + t.verdict + (t.verdict_reason ? ': ' + t.verdict_reason : '')));
      if (t.basis === 'request_latency')
        note(sec, 'The P95 slowdown of this tenant is judged on per-request latency; the charts show sample times.');
      for (const name of PHASES)
        if (t.phases[name].note) note(sec, name + ': ' + t.phases[name].note);
      const grid = el('div', {class: 'grid'});
      sec.appendChild(grid);
      cdfChart(grid, t);
      timeChart(grid, run, t, origin);
      telemetryChart(grid, run, t, origin);
    }
    parent.appendChild(sec);
  }

  try {
    const root = document.getElementById('charts');
    p95Chart(root);
    for (const run of data.runs) runSection(root, run);
  } catch (e) { errors.push(String(e)); console.error(e); }
  document.body.setAttribute('data-charts', String(charts));
  document.body.setAttribute('data-errors', String(errors.length));
  if (errors.length) document.getElementById('charts').appendChild(el('pre', {class: 'errors'}, errors.join('\n')));
})();
)js";


ojson number_or_null(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

template <typename T>
ojson optional_or_null(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

// The telemetry series the page draws (SM clock, power, temperature), column by column.
ojson telemetry_json(const std::vector<TelemetrySample>& telemetry) {
  ojson t = {{"t_ns", ojson::array()}, {"sm_clock_mhz", ojson::array()}, {"power_w", ojson::array()},
             {"temperature_c", ojson::array()}};
  for (const TelemetrySample& s : telemetry) {
    t["t_ns"].push_back(s.t_ns);
    t["sm_clock_mhz"].push_back(optional_or_null(s.r.sm_clock_mhz));
    t["power_w"].push_back(optional_or_null(s.r.power_w));
    t["temperature_c"].push_back(optional_or_null(s.r.temperature_c));
  }
  return t;
}

// A phase as the page draws it. A phase that repeats the exclusive one (alone under time-slicing)
// carries no samples of its own: the note says so.
ojson phase_json(const PhaseResult& p) {
  ojson j = {{"source", to_string(p.source)}, {"status", to_string(p.outcome.status)},
             {"p95", p.measured() && p.stats.n > 0 ? number_or_null(p.stats.p95) : ojson(nullptr)},
             {"samples", nullptr}, {"telemetry", nullptr}, {"note", ""}};
  if (p.source == PhaseSource::exclusive) {
    j["note"] = "the same as exclusive in this mode";
    return j;
  }
  if (!p.measured()) j["note"] = std::string("not measured (") + to_string(p.outcome.status) + ")";
  if (!p.duration_s.empty())
    j["samples"] = {{"start_ns", p.start_ns}, {"duration_s", p.duration_s}, {"counted", p.counted},
                    {"throttled", p.throttled.size() == p.duration_s.size() ? ojson(p.throttled) : ojson(nullptr)}};
  if (!p.time_per_work.empty()) j["samples"]["time_per_work"] = p.time_per_work;  // what it is judged on
  if (!p.telemetry.empty()) j["telemetry"] = telemetry_json(p.telemetry);
  return j;
}

// What the charts draw for a tenant and at what scale: sample times in ms, or an interval reporter's time per unit
// of work at the scale of its exclusive median (e.g. ns/B).
ojson scale_json(const TenantResult& t) {
  const PhaseResult& p = t.exclusive.measured() || !t.colocated.measured() ? t.exclusive : t.colocated;
  if (p.value_unit == "s") return {{"what", "sample time"}, {"whats", "sample times"}, {"unit", "ms"}, {"factor", 1e3}};
  const TimeScale s = time_scale(p.stats.median);
  const std::string per = p.value_unit.substr(1);  // "/B"
  return {{"what", "time per " + per.substr(1)}, {"whats", "times per " + per.substr(1)}, {"unit", s.prefix + per},
          {"factor", s.factor}};
}

ojson tenant_json(const TenantResult& t) {
  return {{"name", t.name},
          {"workload", t.workload},
          {"verdict", to_string(t.verdict)},
          {"verdict_reason", t.verdict_reason},
          {"basis", t.metrics ? ojson(t.metrics->basis) : ojson(nullptr)},
          {"scale", scale_json(t)},
          {"phases", {{"exclusive", phase_json(t.exclusive)}, {"alone", phase_json(t.alone)},
                      {"colocated", phase_json(t.colocated)}}}};
}

ojson run_json(const RunResult& r) {
  ojson blocks = ojson::array();
  for (const BlockRecord& b : r.blocks)
    blocks.push_back({{"index", b.index}, {"round", b.round}, {"phase", to_string(b.phase)}, {"start_ns", b.start_ns},
                      {"end_ns", b.end_ns}, {"status", to_string(b.status)}});
  ojson tenants = ojson::array();
  for (const TenantResult& t : r.tenants) tenants.push_back(tenant_json(t));
  return {{"scenario", r.scenario}, {"mode", r.mode},       {"repetition", r.repetition}, {"repetitions", r.repetitions},
          {"status", to_string(r.status)}, {"message", r.message}, {"cutoff", r.cutoff}, {"blocks", blocks},
          {"tenants", tenants}};
}

// The cutoff of an aggregate's scenario and mode, as its runs have it.
ojson cutoff_json(const Results& results, const TenantAggregate& a) {
  for (const RunResult& r : results.runs)
    if (r.scenario == a.scenario && r.mode == a.mode) return r.cutoff;
  return nullptr;
}

ojson aggregate_json(const Results& results, const TenantAggregate& a) {
  const bool m = a.metrics.has_value();
  return {{"scenario", a.scenario},
          {"mode", a.mode},
          {"tenant", a.tenant},
          {"workload", a.workload},
          {"p95_slowdown", m ? number_or_null(a.metrics->p95_slowdown.value) : ojson(nullptr)},
          {"ci_low", m ? number_or_null(a.metrics->p95_slowdown.ci_low) : ojson(nullptr)},
          {"ci_high", m ? number_or_null(a.metrics->p95_slowdown.ci_high) : ojson(nullptr)},
          {"cutoff", cutoff_json(results, a)},
          {"verdict", to_string(a.verdict)}};
}

// JSON that is safe inside <script>: every < > & written as a \u escape (valid JSON, inert HTML).
std::string script_safe_json(const ojson& j) {
  const std::string text = j.dump(-1, ' ', false, ojson::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

std::string ci_text(const TenantAggregate& a) {
  if (!a.metrics) return "n/a";
  const Estimate& e = a.metrics->p95_slowdown;
  return signed_percent(e.value) + " [" + signed_percent(e.ci_low) + ", " + signed_percent(e.ci_high) + "]";
}

std::string stopped_text(const Decision& d) {
  return std::string(d.decided ? "decided" : to_string(d.stopped_by)) + " after " + std::to_string(d.rounds) + " rounds, " +
         formatted("%.0f s", d.seconds);
}

void aggregate_table(std::ostringstream& os, const Results& results) {
  os << "<table><tr><th>scenario</th><th>mode</th><th>tenant</th><th>workload</th><th>reps</th>"
        "<th>P95 slowdown [CI]</th><th>CI level</th><th>resolves +/-</th><th>median slowdown</th><th>cutoff</th>"
        "<th>verdict</th><th>stopped</th><th>why</th></tr>\n";
  for (const TenantAggregate& a : results.aggregates) {
    const ojson cutoff = cutoff_json(results, a);
    const std::string v = to_string(a.verdict);
    os << "<tr><td>" << html_escape(a.scenario) << "</td><td>" << html_escape(a.mode) << "</td><td>"
       << html_escape(a.tenant) << "</td><td>" << html_escape(a.workload) << "</td><td class=\"num\">" << a.repetitions
       << "</td><td class=\"num\">" << html_escape(ci_text(a)) << "</td><td class=\"num\">"
       << (a.metrics ? html_escape(formatted("%.4g%%", a.metrics->p95_slowdown.confidence * 100.0)) : "n/a")
       << "</td><td class=\"num\">"
       << (a.decision ? html_escape(formatted("%.1f points", a.decision->resolution * 100.0)) : "n/a") << "</td><td class=\"num\">"
       << (a.metrics ? html_escape(signed_percent(a.metrics->median_slowdown)) : "n/a") << "</td><td class=\"num\">"
       << (cutoff.is_number() ? html_escape(percent(cutoff.get<double>())) : "n/a") << "</td><td class=\"" << v << "\">"
       << v << "</td><td>" << (a.decision ? html_escape(stopped_text(*a.decision)) : "n/a") << "</td><td>"
       << html_escape(a.verdict_reason) << "</td></tr>\n";
  }
  os << "</table>\n";
}

// Command tenants (a user's program): the advice and each rule with its evidence and source.
void advice_tables(std::ostringstream& os, const Results& results) {
  for (const TenantAggregate& a : results.aggregates) {
    if (!a.advice) continue;
    os << "<h2>Advice for " << html_escape(a.tenant) << " (" << html_escape(a.scenario) << ", " << html_escape(a.mode)
       << "): " << html_escape(to_string(a.advice->choice)) << "</h2>\n<p>" << html_escape(a.advice->reason)
       << "</p>\n<table><tr><th>rule</th><th>holds</th><th>points to</th><th>says</th><th>evidence</th><th>source</th></tr>\n";
    for (const AdviceRule& rule : a.advice->rules)
      os << "<tr><td>" << html_escape(rule.id) << "</td><td>" << html_escape(to_string(rule.holds)) << "</td><td>"
         << html_escape(to_string(rule.points_to)) << "</td><td>" << html_escape(rule.says) << "</td><td>"
         << html_escape(rule.evidence) << "</td><td>" << html_escape(rule.source) << "</td></tr>\n";
    os << "</table>\n";
  }
}

// Tenants with ranks (docs/design.md section 13): per repetition, the figures summary.md gives.
void collective_table(std::ostringstream& os, const Results& results) {
  std::ostringstream rows;
  for (const RunResult& run : results.runs)
    for (const TenantResult& t : run.tenants) {
      if (!t.metrics || !t.metrics->collective) continue;
      const TenantMetrics::Collective& c = *t.metrics->collective;
      rows << "<tr><td>" << html_escape(run.scenario) << "</td><td>" << html_escape(run.mode) << "</td><td>"
           << html_escape(t.name) << "</td><td>" << run.repetition << "</td><td>" << c.ranks << "</td><td>" << c.blast_radius
           << " (slowed &gt; " << formatted("%.0f%%", c.blast_threshold * 100) << ")</td><td>";
      if (const auto& f = t.colocated.rank_figures)
        rows << "rank " << f->straggler_rank << " (" << formatted("%.0f%%", f->straggler_share * 100) << ")";
      rows << "</td><td>" << formatted("%.3f s", c.longest_stall_s) << " of " << formatted("%.0f s", c.timeout_s)
           << (c.stall_margin < 1.0 ? " (would have ended the job)" : "") << "</td></tr>\n";
    }
  if (rows.str().empty()) return;
  os << "<h2>Collectives</h2>\n<table><tr><th>scenario</th><th>mode</th><th>tenant</th><th>repetition</th><th>ranks</th>"
        "<th>blast radius</th><th>straggler (last to arrive)</th><th>longest stall</th></tr>\n"
     << rows.str() << "</table>\n";
  for (const TenantAggregate& a : results.aggregates)
    if (const auto& m = a.amplification)
      os << "<p>" << html_escape(a.scenario) << " (" << html_escape(a.mode) << "), " << html_escape(a.tenant)
         << ": amplification " << (m->value ? formatted("%.2f", *m->value) : std::string("n/a")) << " (P95 slowdown "
         << html_escape(signed_percent(m->collective_slowdown)) << " as a collective, "
         << html_escape(signed_percent(m->single_rank_slowdown)) << " for its shared rank alone in "
         << html_escape(m->reference_scenario) << ")</p>\n";
}

void page_header(std::ostringstream& os, const Results& r) {
  const Meta& m = r.meta;
  os << "<h1>interference-bench results</h1>\n<p>" << html_escape(m.start_time) << " on " << html_escape(m.host)
     << ", backend " << html_escape(m.backend) << (m.suite.empty() ? "" : ", suite " + html_escape(m.suite))
     << ", interference-bench " << html_escape(m.version) << " (" << html_escape(m.git_sha) << "), schema "
     << html_escape(r.schema_version) << ". Exit code " << r.summary.exit_code << ": " << r.summary.passed << " passed, "
     << r.summary.failed << " failed, " << r.summary.inconclusive << " inconclusive, " << r.summary.errors
     << " errors.</p>\n";
  if (!m.backend_note.empty()) os << "<p class=\"banner\">" << html_escape(m.backend_note) << "</p>\n";
}

}  // namespace

bool html_report_available() { return chartjs_available(); }

std::string html_report_unavailable_reason() {
  return "the HTML report is unavailable in this build: Chart.js (Debian package libjs-chart.js) was not found "
         "when it was configured; install libjs-chart.js and configure again";
}

ojson html_report_data(const Results& results) {
  ojson aggregates = ojson::array();
  for (const TenantAggregate& a : results.aggregates) aggregates.push_back(aggregate_json(results, a));
  ojson runs = ojson::array();
  for (const RunResult& r : results.runs) runs.push_back(run_json(r));
  return {{"aggregates", aggregates}, {"runs", runs}};
}

std::string html_report(const Results& results) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>interference-bench "
     << html_escape(results.meta.start_time) << "</title>\n<style>" << kHtmlReportStyle << "</style></head>\n<body>\n";
  page_header(os, results);
  aggregate_table(os, results);
  collective_table(os, results);
  advice_tables(os, results);
  os << "<noscript><p>The charts need JavaScript; the table above has the verdicts.</p></noscript>\n"
        "<div id=\"charts\"></div>\n<script type=\"application/json\" id=\"ib-data\">"
     << script_safe_json(html_report_data(results)) << "</script>\n<script>" << chartjs_source() << "</script>\n<script>"
     << kPageScript << "</script>\n</body></html>\n";
  return os.str();
}

}  // namespace ib
