// merge's reading: files and folders into members (merge.h).
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/text.h"
#include "harness/fleet/merge.h"
#include "harness/stats/stats.h"
#include "harness/results/results_reader.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <map>
#include <set>
#include <system_error>

#include <sys/stat.h>

namespace ib {

namespace fs = std::filesystem;

namespace {

enum class InputKind { results, vet, sustain, task };

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// True when `s` is well-formed UTF-8 (no stray continuation byte, overlong form, surrogate or value past
// U+10FFFF): text that goes into fleet.json must be.
bool is_valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    static constexpr std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};  // below it: an overlong form
    if (cp < kLeast[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// Text that is not UTF-8 as a message shows it: bytes outside printable ASCII as \xNN (the message
// itself stays UTF-8), cut at `max` bytes of the text.
std::string bytes_shown(const std::string& s, std::size_t max) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 0xf];
  }
  return s.size() > max ? out + "..." : out;
}

// The files merge reads, by name; a file given by path is read as what its name says, and a file of
// another name given by path is taken for a results file.
std::optional<InputKind> kind_by_name(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name == "results.json") return InputKind::results;
  if (name == "vet.json") return InputKind::vet;
  if (name == "sustain.json") return InputKind::sustain;
  if (name == "task.json") return InputKind::task;
  return std::nullopt;
}

struct FoundFile {
  fs::path path;
  InputKind kind;
};

// The files merge reads under one input. A file, or a symbolic link to one, given by path is read as
// what its name says; a folder (or a link to one) is walked without following the links inside it (a link
// to a folder is not entered; a link to a file is skipped as well). A path that leads nowhere (missing,
// a dangling link) or to neither a file nor a folder is bad input.
std::vector<FoundFile> files_of_input(const std::string& input) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(input, ec);
  if (ec || !fs::exists(link)) throw InputError("merge: " + printable_path(input) + ": no such file or folder");
  const fs::file_status st = fs::is_symlink(link) ? fs::status(input, ec) : link;
  if (fs::is_symlink(link) && (ec || !fs::exists(st)))
    throw InputError("merge: " + printable_path(input) + ": a symbolic link to nothing (no such file or folder behind it)");
  if (fs::is_regular_file(st)) return {{input, kind_by_name(input).value_or(InputKind::results)}};
  if (!fs::is_directory(st)) throw InputError("merge: " + printable_path(input) + ": not a file or folder");
  std::vector<FoundFile> found;
  fs::recursive_directory_iterator it(input, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw InputError("merge: " + printable_path(input) + ": cannot read the folder: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw InputError("merge: " + printable_path(input) + ": cannot read the folder: " + ec.message());
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    if (const auto kind = kind_by_name(it->path())) found.push_back({it->path(), *kind});
  }
  std::sort(found.begin(), found.end(), [](const FoundFile& a, const FoundFile& b) { return a.path < b.path; });
  return found;
}

// Every file merge reads under the inputs, each once: one file reached under several spellings (a/x,
// ./a/x, a link to it, a folder given by two paths) is the same device and inode, and is read under the
// first spelling the inputs reach it by, in their order. Sorted by path.
std::vector<FoundFile> find_files(const std::vector<std::string>& inputs) {
  std::vector<FoundFile> found;
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const std::string& input : inputs)
    for (FoundFile& f : files_of_input(input)) {
      struct stat st {};
      if (::stat(f.path.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second) continue;
      found.push_back(std::move(f));
    }
  std::sort(found.begin(), found.end(), [](const FoundFile& a, const FoundFile& b) { return a.path < b.path; });
  return found;
}

// The status an exit code of a run means (docs/design.md section 8); none for 0 (what the files say counts).
std::optional<MemberStatus> status_of_exit(int code) {
  switch (code) {
    case kExitPass: return std::nullopt;
    case kExitVerdictFailed: return MemberStatus::failed;
    case kExitBadInput: return MemberStatus::bad_input;
    case kExitCannotRun: return MemberStatus::cannot_run;
    case kExitWorkloadFailed: return MemberStatus::workload_error;
    case kExitInconclusive: return MemberStatus::inconclusive;
    case kExitInterrupted: return MemberStatus::interrupted;
    default: return MemberStatus::unfinished;  // a signal's 128+N, an internal error: it did not end as a run ends
  }
}

std::string exit_detail(int code) {
  if (code > 128 && code < 160) return "the run exited " + std::to_string(code) + " (signal " + std::to_string(code - 128) + ")";
  return "the run exited " + std::to_string(code);
}

// Lowers the member's status to `s` (worse statuses come first in the enum), keeping the first detail
// of the worst status.
void worsen(FleetMember& m, MemberStatus s, const std::string& detail) {
  if (static_cast<int>(s) < static_cast<int>(m.status)) {
    m.status = s;
    m.detail = detail;
  } else if (s == m.status && m.detail.empty()) {
    m.detail = detail;
  }
}

FleetDevice device_of(const Results& r) {
  FleetDevice d;
  d.model = "unknown";
  const int used = r.runs.empty() ? 0 : r.runs.front().device;
  const DeviceRecord* pick = nullptr;
  for (const DeviceRecord& rec : r.meta.devices)
    if (!pick || (rec.kind == DeviceKind::gpu && rec.index && *rec.index == used)) pick = &rec;
  if (!pick) return d;
  d.kind = pick->kind;
  d.model = pick->name.empty() ? "unknown" : pick->name;
  d.index = pick->kind == DeviceKind::gpu ? pick->index.value_or(used) : std::optional<int>{};
  d.uuid = pick->uuid.value_or("");
  d.driver = pick->driver_version.value_or("");
  if (pick->mig_mode) d.mig = pick->mig_mode->current ? "on" : "off";
  return d;
}

// The figures of a results file: one per aggregate, with the median of its repetitions' exclusive
// throughputs (the runs of the same scenario, mode and tenant whose exclusive phase was measured).
std::vector<FleetTenantFigure> figures_of(const Results& r) {
  std::vector<FleetTenantFigure> out;
  for (const TenantAggregate& a : r.aggregates) {
    FleetTenantFigure f{a.scenario, a.mode, a.tenant, a.workload, a.verdict, a.verdict_reason, std::nullopt, 0.0,
                        std::nullopt, ""};
    if (a.metrics) f.p95_slowdown = a.metrics->p95_slowdown;
    std::vector<double> throughputs;
    for (const RunResult& run : r.runs) {
      if (run.scenario != a.scenario || run.mode != a.mode) continue;
      f.cutoff = run.cutoff;
      for (const TenantResult& t : run.tenants)
        if (t.name == a.tenant && t.exclusive.measured() && t.exclusive.throughput > 0.0) {
          throughputs.push_back(t.exclusive.throughput);
          f.throughput_unit = t.exclusive.throughput_unit;
        }
    }
    if (!throughputs.empty()) f.exclusive_throughput = median(throughputs);
    out.push_back(f);
  }
  return out;
}

// A results file's node: the scheduler's name for it, else the host name.
std::string node_of(const Results& r) {
  return r.meta.scheduler && !r.meta.scheduler->node.empty() ? r.meta.scheduler->node : r.meta.host;
}

void add_results(FleetMember& m, const Results& r) {
  if (!m.device) m.device = device_of(r);
  if (m.scheduler.empty() && r.meta.scheduler) {
    m.scheduler = r.meta.scheduler->kind;
    m.job_id = r.meta.scheduler->job_id;
    m.array_job_id = r.meta.scheduler->array_job_id;
    if (!m.task_index) m.task_index = r.meta.scheduler->task_index;
  }
  for (FleetTenantFigure& f : figures_of(r)) m.tenants.push_back(std::move(f));
  // The verdicts first, so that the detail names the tenant; the exit code then adds what they do not say.
  for (const TenantAggregate& a : r.aggregates) {
    const std::string who = a.tenant + " (" + a.scenario + ", " + a.mode + ")";
    if (a.verdict == Verdict::fail) worsen(m, MemberStatus::failed, who + " failed: " + a.verdict_reason);
    // An interrupted run's unfinished tenants are errors too, but they say it stopped, not that a workload failed.
    if (a.verdict == Verdict::error)
      worsen(m, r.summary.interrupted ? MemberStatus::interrupted : MemberStatus::workload_error, who + ": " + a.verdict_reason);
    if (a.verdict == Verdict::inconclusive) worsen(m, MemberStatus::inconclusive, who + " is inconclusive: " + a.verdict_reason);
  }
  if (!m.exit_code) m.exit_code = r.summary.exit_code;
  if (const auto s = status_of_exit(r.summary.exit_code))
    worsen(m, *s, r.summary.interrupted ? "the run was interrupted" : exit_detail(r.summary.exit_code));
}

CheckResult sustain_check(const SustainReport& s) {
  const CheckOutcome o = s.verdict == LoadVerdict::pass   ? CheckOutcome::pass
                         : s.verdict == LoadVerdict::warn ? CheckOutcome::warn
                         : s.verdict == LoadVerdict::fail ? CheckOutcome::fail
                                                          : CheckOutcome::unknown;
  return {"sustained_load", "Sustained load (sustain.json)", o, joined(s.evidence, "; "), "sustain's rules",
          "docs/design.md section 5"};
}

void add_checks(FleetMember& m, const std::vector<CheckResult>& checks, const std::string& file) {
  for (const CheckResult& c : checks) {
    m.checks.push_back(c);
    if (c.status == CheckOutcome::fail) worsen(m, MemberStatus::failed, file + ": check " + c.id + " failed: " + c.evidence);
    if (c.status == CheckOutcome::unknown && c.id == "sustained_load")
      worsen(m, MemberStatus::inconclusive, file + ": the sustained-load verdict is inconclusive");
  }
}

// The folder of each task.json, longest first, so that a file finds its innermost task folder.
std::vector<fs::path> task_roots(const std::vector<FoundFile>& files) {
  std::vector<fs::path> roots;
  for (const FoundFile& f : files)
    if (f.kind == InputKind::task) roots.push_back(f.path.parent_path().lexically_normal());
  std::sort(roots.begin(), roots.end(), [](const fs::path& a, const fs::path& b) { return a.string().size() > b.string().size(); });
  return roots;
}

std::optional<fs::path> root_of(const fs::path& file, const std::vector<fs::path>& roots) {
  const fs::path p = file.lexically_normal();
  for (const fs::path& root : roots) {
    const auto rel = p.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") return root;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// Members as they are read: keyed by their task folder ("task:<folder>"), by node ("node:<name>") for
// files outside task folders, or by the file ("file:<path>") for an unreadable one outside them.
struct MemberTable {
  std::map<std::string, FleetMember> members;
  std::map<std::string, bool> has_data;  // a results, vet or sustain file of it read

  FleetMember& at(const std::string& key, const std::string& node) {
    auto [it, added] = members.try_emplace(key);
    if (added) it->second.node = node;
    return it->second;
  }
};

void read_task(MemberTable& table, const fs::path& file) {
  FleetMember& m = table.at("task:" + file.parent_path().lexically_normal().string(), file.parent_path().filename().string());
  m.files.push_back(file.string());
  TaskRecord t;
  try {
    t = read_task_file(file.string());
  } catch (const InputError& e) {
    worsen(m, MemberStatus::unreadable, printable(e.what(), 300));
    return;
  }
  m.node = t.node;
  m.task_index = t.task_index;
  m.scheduler = t.scheduler;
  m.job_id = t.job_id;
  m.array_job_id = t.array_job_id;
  if (!t.exit_code) {
    worsen(m, MemberStatus::unfinished, "task.json has no exit code: the task (started " + t.started +
                                            ") was killed or its node lost before its run ended");
    return;
  }
  m.exit_code = t.exit_code;
  if (const auto s = status_of_exit(*t.exit_code)) worsen(m, *s, "task.json: " + exit_detail(*t.exit_code));
}

// Reads one results, vet or sustain file into the member it belongs to.
void read_data_file(MemberTable& table, const FoundFile& f, const std::optional<fs::path>& root) {
  const std::string path = f.path.string();
  const auto member_key = [&](const std::string& node) { return root ? "task:" + root->string() : "node:" + node; };
  try {
    std::string node;
    if (f.kind == InputKind::results) {
      const ResultsDocument doc = read_results_file(path);
      node = node_of(doc.results);
      FleetMember& m = table.at(member_key(node), node);
      add_results(m, doc.results);
      m.files.push_back(path);
      table.has_data[member_key(node)] = true;
    } else if (f.kind == InputKind::vet) {
      const VetReport vet = read_vet_report(path);
      FleetMember& m = table.at(member_key(vet.host), vet.host);
      add_checks(m, vet.checks, f.path.filename().string());
      if (vet.interrupted) worsen(m, MemberStatus::interrupted, path + ": vet was interrupted");
      m.files.push_back(path);
      table.has_data[member_key(vet.host)] = true;
    } else {
      const SustainReport s = read_sustain_verdict(path);
      FleetMember& m = table.at(member_key(s.host), s.host);
      add_checks(m, {sustain_check(s)}, f.path.filename().string());
      m.files.push_back(path);
      table.has_data[member_key(s.host)] = true;
    }
  } catch (const InputError& e) {  // the node's file, not the merge's input: its status says so
    const std::string key = root ? "task:" + root->string() : "file:" + path;
    FleetMember& m = table.at(key, root ? root->filename().string() : path);
    m.files.push_back(path);
    worsen(m, MemberStatus::unreadable, printable(e.what(), 300));
  }
}

}  // namespace

std::vector<FleetMember> read_members(const std::vector<std::string>& inputs) {
  const std::vector<FoundFile> files = find_files(inputs);
  const std::vector<fs::path> roots = task_roots(files);
  MemberTable table;
  for (const FoundFile& f : files)
    if (f.kind == InputKind::task) read_task(table, f.path);
  for (const FoundFile& f : files)
    if (f.kind != InputKind::task) read_data_file(table, f, root_of(f.path, roots));
  std::vector<FleetMember> out;
  for (auto& [key, m] : table.members) {
    // A task whose run left no result: the exit code says why when it names a reason (2, 3, 130, killed).
    if (key.rfind("task:", 0) == 0 && !table.has_data[key] && static_cast<int>(m.status) >= static_cast<int>(MemberStatus::failed))
      worsen(m, MemberStatus::no_result, "the task folder holds no results.json, vet.json or sustain.json");
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const FleetMember& a, const FleetMember& b) {
    return std::make_pair(a.node, a.task_index.value_or(-1)) < std::make_pair(b.node, b.task_index.value_or(-1));
  });
  return out;
}

// A list of node names is a few kB; the limit only keeps a wrong file from filling memory.
constexpr std::size_t kExpectNodesMaxBytes = std::size_t{16} << 20;

std::vector<std::string> read_expected_nodes(const std::string& file) {
  std::string text;
  try {
    text = read_input_file(file, "nodes file", kExpectNodesMaxBytes);
  } catch (const InputError& e) {
    throw InputError(std::string("--expect-nodes: ") + e.what());
  }
  std::istringstream in(text);
  std::vector<std::string> nodes;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string name = trimmed(line);
    if (name.empty() || name[0] == '#') continue;
    // Names go into fleet.json, which is UTF-8: other bytes are the file's fault, said here in one line.
    if (!is_valid_utf8(name))
      throw InputError("--expect-nodes: " + printable_path(file) + ":" + std::to_string(n) + ": \"" + bytes_shown(name, 80) +
                       "\" is not UTF-8 text (a node name must be)");
    for (const char c : name)
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
        throw InputError("--expect-nodes: " + file + ":" + std::to_string(n) + ": \"" + printable(name, 80) +
                         "\" is not a node name (blanks or control characters)");
    if (std::find(nodes.begin(), nodes.end(), name) == nodes.end()) nodes.push_back(name);
  }
  return nodes;
}

void add_expectations(std::vector<FleetMember>& members, const std::vector<std::string>& nodes, int tasks,
                      FleetSummary& summary) {
  summary.expected_nodes = static_cast<int>(nodes.size());
  summary.expected_tasks = tasks;
  for (FleetMember& m : members)
    if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), m.node) == nodes.end()) m.expected = false;
  std::vector<FleetMember> missing;
  for (const std::string& node : nodes)
    if (std::none_of(members.begin(), members.end(), [&](const FleetMember& m) { return m.node == node; })) {
      FleetMember m;
      m.node = node;
      m.status = MemberStatus::missing;
      m.detail = "expected (--expect-nodes), but no result of this node was found";
      missing.push_back(m);
      summary.missing_nodes.push_back(node);
    }
  for (int i = 0; i < tasks; ++i)
    if (std::none_of(members.begin(), members.end(), [&](const FleetMember& m) { return m.task_index == i; })) {
      FleetMember m;
      m.task_index = i;
      m.status = MemberStatus::missing;
      m.detail = "expected (--expect-tasks " + std::to_string(tasks) + "), but no task folder of index " +
                 std::to_string(i) + " was found";
      missing.push_back(m);
      summary.missing_tasks.push_back(i);
    }
  members.insert(members.end(), missing.begin(), missing.end());
}

}  // namespace ib
