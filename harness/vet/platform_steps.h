// What the platform commands' files share (vet.cpp, sustain.cpp, platform.cpp, private to harness/vet/): the
// scenarios of their measuring steps, probe.h's checks as a report holds them, NVML with --device checked, their
// output checks and the --history they append to.
#pragma once

#include "harness/results/platform_reports.h"
#include "harness/vet/platform.h"
#include "harness/vet/probe.h"
#include "harness/history/history.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ib::platform_steps {

// A number for a child's command line: the shortest text that reads back as the same double.
std::string arg(double v);

// The exclusive-phase workloads of the stability run: compute, memory bandwidth and latency (and,
// on a GPU, pinned and pageable host-to-device copies for the probe's H2D check).
nlohmann::json stability_scenario(const std::string& backend, double warmup_s, double duration_s);
// A power-heavy GEMM (the host backend's stand-in: a CPU matrix product).
nlohmann::json sustain_scenario(const std::string& backend, double duration_s);
// The scenario written into `dir` as <name>.scenario.json; its path.
std::string write_scenario(const std::string& dir, const nlohmann::json& scenario);

// probe.h's checks and cost advice as the vet report holds them.
CheckResult check_result(const ProbeCheck& c);
std::vector<CheckResult> check_results(const std::vector<ProbeCheck>& checks);
CostReport cost_report(const CostAdvice& a, const ExclusivePhase& here);

std::string default_out(const std::string& what);
// --device names a GPU NVML sees, or InputError (exit 2) saying which there are.
void check_device_index(Nvml& nvml, int device);
// NVML, or CannotRunError (exit 3) saying which command needs it.
std::unique_ptr<Nvml> load_nvml_for(const std::string& command);

// --history DB on vet and sustain: the command and its checks in one transaction, after its document
// (`file`) is written. A database that cannot be used is one line; the exit code is then
// exit_code_after_history_failure's (the command's own, or 3 when that was 0).
int record_platform_history(const PlatformOptions& o, HistoryRun run, const std::vector<CheckResult>& checks,
                            const std::string& file, int exit_code);
// A platform command's outputs against the one rule for written files (core/output_paths.h): the
// files it writes in its own folder `out`, --junit, --html, the history it appends to; its input the
// baseline. Before the folder is made, so a refusal leaves nothing.
void check_platform_outputs(const PlatformOptions& o, const std::string& out, const std::vector<std::string>& own_files);

// vet's step 3 check (and sustain's --history row), from the sustain.json the sustained-load step wrote.
CheckResult sustained_load_check(const std::string& sustain_json);

}  // namespace ib::platform_steps
