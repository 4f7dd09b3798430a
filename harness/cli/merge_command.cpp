#include "harness/cli/merge_command.h"

#include "build_info.h"
#include "harness/cli/validators.h"
#include "harness/core/files.h"
#include "harness/core/errors.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "reports/html/fleet_html.h"
#include "reports/json/fleet_json.h"
#include "reports/junit/fleet_junit.h"
#include "reports/markdown/fleet_markdown.h"
#include "reports/prometheus/fleet_prometheus.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <system_error>
#include <utility>

namespace ib {

namespace {

const std::vector<std::string> kFleetFiles = {"fleet.json", "fleet.md", "fleet.junit.xml", "fleet.prom", "fleet.html"};

namespace fs = std::filesystem;

// `p` with its folder resolved (the file itself not followed: a link inside --out is inside it).
fs::path resolved(const std::string& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec).lexically_normal();
  fs::path parent = fs::weakly_canonical(abs.parent_path(), ec);
  if (ec) parent = abs.parent_path();
  return abs.has_filename() ? parent / abs.filename() : parent;
}

bool is_within(const fs::path& p, const fs::path& folder) {
  const fs::path rel = p.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

// An input inside --out (its fleet.json, a results file kept there) would be read from the folder the
// merge replaces: refused, as the path given and as the file it leads to.
void refuse_inputs_inside_out(const MergeCommand& c) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(c.out, ec), ec);
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& i : c.request.inputs) inputs.push_back({"input", i});
  if (!c.request.expect_nodes_file.empty()) inputs.push_back({"--expect-nodes", c.request.expect_nodes_file});
  for (const auto& [what, path] : inputs) {
    const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (is_within(resolved(path), out) || is_within(real, out) || real == out || resolved(path) == out)
      throw InputError("merge: " + what + " " + printable_path(path) + " is inside --out " + printable_path(c.out) +
                       ", the folder the fleet report replaces; keep inputs outside it");
  }
}

}  // namespace

void add_merge_command(CLI::App& app, MergeCommand& c) {
  c.sub = app.add_subcommand("merge", "Merge many nodes' results (results.json, vet.json, sustain.json, task folders) "
                                      "into one fleet report (runs nothing)");
  c.sub->add_option("inputs", c.request.inputs, "Results files or folders (searched for results.json, vet.json, "
                                                "sustain.json and the task.json of deploy/ib-task.sh)")
      ->required();
  c.sub->add_option("--out", c.out, "The fleet report's folder (new, or one holding an earlier fleet report with --force)")
      ->required()
      ->check(non_empty());
  c.sub->add_flag("--force", c.force, "Replace the fleet report in --out");
  c.sub->add_option("--expect-nodes", c.request.expect_nodes_file,
                    "A file of the node names expected (one per line, # comments): a node without a result counts as missing")
      ->check(non_empty());
  c.sub->add_option("--expect-tasks", c.request.expect_tasks,
                    "Task indices 0..N-1 expected (a Slurm array or an Indexed Job): an index without a result counts as missing")
      ->check(CLI::Range(0, 1000000));
  c.sub->add_option("--straggler-k", c.request.options.k,
                    "The robust bound: a figure with |robust z| above it within its group is a straggler (default 3.5)")
      ->check(number_in(1.0, 100.0));
  c.sub->add_option("--worst", c.request.options.worst, "Rank this many of the worst GPUs (default 10)")
      ->check(CLI::Range(0, 100000));
}

int merge_command(MergeCommand c, const std::vector<std::string>& argv) {
  refuse_inputs_inside_out(c);
  // The folder is checked and locked, but an earlier report stays until the new one is complete: every
  // input is read and checked first (a bad one is exit 2 with the old report untouched), then the five
  // files are written beside the old ones and renamed over them together.
  OutputDir folder("--out", c.out, kFleetFiles, c.force, OldResults::keep_until_replaced);
  c.request.argv = argv;
  FleetResult fleet = merge_fleet(c.request);
  fleet.version = IB_VERSION;
  fleet.git_sha = IB_GIT_SHA;
  const std::string& out = folder.path();
  const std::string md = fleet_markdown(fleet);
  write_files_atomic({{out + "/fleet.json", fleet_to_json(fleet).dump(2) + "\n"},
                      {out + "/fleet.md", md},
                      {out + "/fleet.junit.xml", fleet_junit_xml(fleet)},
                      {out + "/fleet.prom", fleet_prometheus_text(fleet)},
                      {out + "/fleet.html", fleet_html(fleet)}});
  folder.keep();
  std::cout << md << "\nfleet: " << out << "/fleet.json\n";
  for (const FleetMember& m : fleet.members)
    if (m.status != MemberStatus::ok)
      std::cerr << "interference-bench: merge: " << printable(member_name(m), 100) << ": " << to_string(m.status) << ": "
                << printable(m.detail, 300) << "\n";
  return fleet.summary.exit_code;
}

}  // namespace ib
