// The options of `run` (the default command): what runs, how long, how it is judged, and the files it writes.
#include "harness/cli/run_options.h"

#include "harness/cli/validators.h"
#include "harness/core/text.h"
#include "harness/modes/mode_table.h"
#include "harness/scenario/scenario.h"

namespace ib {

namespace {

// The files a run writes beside its output folder.
void add_run_output_options(CLI::App& app, RunRequest& o) {
  app.add_option("--junit", o.junit, "Also write JUnit XML here: one testcase per tenant verdict")->check(non_empty());
  app.add_option("--prometheus", o.prometheus,
                 "Also write Prometheus text here (node-exporter textfile collector format): P95 and median slowdown, verdict, "
                 "throughput per tenant")->check(non_empty());
  app.add_option("--history", o.history,
                 "Append this run to a history database (SQLite; created if missing) after results.json is written; read it "
                 "with `history DB` or `compare NEW --against-history DB`")->check(non_empty());
  app.add_option("--html", o.html, "Also write the HTML report (one self-contained file) here")->check(non_empty());
}

// The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
void add_victim_command_options(CLI::App& app, RunRequest& o) {
  app.add_flag("--victim-command", o.victim_command,
               "Measure your own program (given after --) beside each of --aggressors, as a command tenant");
  app.add_option("--victim-metric", o.victim_metric,
                 "With --victim-command: how a step is timed: heartbeat (default; the program reports through a client of "
                 "clients/), wall (one whole run is one sample) or stdout:REGEX (one named group: s, ms, us or rate)")
      ->check(non_empty());
  app.add_option("--aggressors", o.aggressors,
                 "With --victim-command: neighbours, comma-separated (default gemm,copy,latency; host: "
                 "host-compute,host-copy)")
      ->check(non_empty());
  app.add_option("command", o.victim_argv, "With --victim-command: the program and its arguments, after --");
}

// The options of a run across nodes (nodes/conductor.h, nodes/node_agent.h); cli/node_role.h fills the defaults the
// launcher's variables give.
void add_node_options(CLI::App& app, RunRequest& o) {
  app.add_option("--nodes", o.nodes, "A run across nodes: one harness per node, node 0 conducts (default 1)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--node-rank", o.node_rank, "This harness's node (default: SLURM_PROCID, JOB_COMPLETION_INDEX or RANK)")
      ->check(CLI::Range(0, 1023));
  app.add_option("--conductor", o.conductor,
                 "HOST:PORT node 0 listens on and the others connect to (default: MASTER_ADDR:MASTER_PORT)")
      ->check(non_empty());
  app.add_option("--token", o.token, "The run's token; a connection without it is refused (default: SLURM_JOB_ID.SLURM_STEP_ID)")
      ->check(non_empty());
  app.add_option("--join-timeout", o.join_timeout, "Seconds for every node to join the conductor (default 60)")
      ->check(number_in(0.1, 86400.0));
}

// How many rounds a repetition runs, until when, and in which order (the stop rule: analysis/deciding.h).
void add_round_options(CLI::App& app, RunRequest& o) {
  app.add_option("--rounds", o.rounds,
                 "Rounds before the first look (all of them with --until fixed): each holds one block of every phase, "
                 "--duration is split over them (default 10)")
      ->check(CLI::Range(1, 100));
  app.add_option_function<std::string>(
         "--until", [&o](const std::string& word) { o.until = *parse_name<StopRule>(word); },
         "decided (default): after --rounds, add pairs of rounds until every verdict is decided, --resolution is "
         "reached or --max-duration is spent; fixed: --rounds rounds")
      ->check(CLI::IsMember({"decided", "fixed"}));
  app.add_option("--max-duration", o.max_duration,
                 "Most seconds of measurement per phase when running until decided (default 2 x --duration)")
      ->check(number_in(kMinDurationS, kMaxDurationS));
  app.add_option("--resolution", o.resolution,
                 "Stop also when every undecided verdict's P95 slowdown interval is this narrow (half-width, e.g. 0.05 "
                 "= 5 points; default 0: only decided verdicts stop a run)")
      ->check(number_in(0.0, 10.0));
  app.add_option_function<std::string>(
         "--round-order",
         [&o](const std::string& word) { o.round_order = word == "shuffle" ? RoundOrder::shuffle : RoundOrder::abba; },
         "Block order from round to round: abba (default) or shuffle (seeded)")
      ->check(CLI::IsMember({"abba", "shuffle"}));
}

}  // namespace

namespace {

// --mode's help: every mode's word, and what `all` runs, from the table of modes (so a new row shows up here).
std::string mode_option_help() {
  std::vector<std::string> all;
  for (const Mode m : modes_in_all()) all.push_back(mode_name(m));
  return "Sharing mode (overrides the scenario's): " + joined(mode_names(), ", ") + " (`list modes` says what each is); all: " +
         joined(all, ", ") + " side by side, those this machine cannot run waived";
}

}  // namespace

// The options of `run` (the default command).
void add_run_options(CLI::App& app, RunRequest& o) {
  app.add_option_function<std::string>(
         "--mode",
         [&o](const std::string& word) {
           o.all_modes = word == "all";
           o.mode = parse_mode(word);  // none for all
         },
         mode_option_help())
      ->check(CLI::IsMember([] {
        auto names = mode_names();
        names.push_back("all");
        return names;
      }()));
  auto* scen = app.add_option("--scenario", o.scenario, "Scenario file (JSON): the tenants, their workloads and placement, the mode and timings (examples in "
                 "scenarios/)")->check(CLI::ExistingFile);
  app.add_option("--suite", o.suite, "Suite of scenarios from scenarios/suites: quick (default), default or nightly (`list scenarios` shows them)")->excludes(scen)->check(non_empty());
  app.add_option("--backend", o.backend, "cuda (default), host (CPU workloads) or auto (cuda if a GPU is usable, else host)")
      ->check(CLI::IsMember({"cuda", "host", "auto"}));
  app.add_option("--device", o.device, "CUDA device index (overrides the scenario's)")->check(CLI::Range(0, 63));
  app.add_option("--duration", o.duration, "Seconds of measurement per phase, split over --rounds (overrides the scenario's; default 10)")->check(number_in(kMinDurationS, kMaxDurationS));
  app.add_option("--warmup", o.warmup, "Seconds of warm-up per worker, not measured (overrides the scenario's; default 2)")->check(number_in(kMinWarmupS, kMaxWarmupS));
  app.add_option("--repeat", o.repeat, "Repetitions of each scenario, each with its workers started afresh; verdicts judge them together "
                 "(overrides the scenario's; default 1)")->check(CLI::Range(1, kMaxRepetitions));
  app.add_option("--cutoff", o.cutoff, "A verdict fails when the P95 slowdown's whole interval lies above this, passes when it lies below "
                 "(0.40 = 40% slower; overrides the scenario's; default 0.40)")->check(number_in(0.0, kMaxCutoff, true));
  app.add_option("--collective-timeout", o.collective_timeout,
                 "Seconds a collective tenant's longest stall is held against (default 600, PyTorch's)")
      ->check(number_in(0.001, 86400));
  app.add_option("--out", o.out, "Output folder: a new one, or one holding results with --force (default "
                 "interference-bench-results/<UTC time>-<pid>)")->check(non_empty());
  app.add_flag("--no-raw", o.no_raw, "Leave the raw per-sample arrays out of results.json (a smaller file)");
  app.add_flag("--force", o.force, "Replace the results (and logs) an existing --out folder holds");
  app.add_option("--timeout-margin", o.timeout_margin,
                 "Seconds a worker may overrun its warm-up or measurement before it is killed (default 60)")
      ->check(number_in(0.0, 86400.0, true));
  app.add_option("--seed", o.seed, "Bootstrap (and --round-order shuffle) seed (default 1)")->check(unsigned_integer());
  add_round_options(app, o);
  app.add_option("--max-reruns", o.max_reruns, "Contaminated blocks re-run per repetition, at most (default 2)")
      ->check(CLI::Range(0, 100));
  app.add_option("--max-foreign-cpus", o.max_foreign_cpus,
                 "A block is contaminated when processes that are not this run's used more CPUs than this (default 0.25)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--max-steal-cpus", o.max_steal_cpus,
                 "A block is contaminated when the hypervisor stole more CPUs than this, summed over the machine's "
                 "CPUs (default 5% of them, at least 0.10: " + significant(o.max_steal_cpus, 2) + " here)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--resamples", o.resamples, "Bootstrap resamples for the P95 CI (default 1000; 0: no CI, and every verdict inconclusive)")->check(CLI::Range(0, 100000));
  app.add_option("--telemetry-hz", o.telemetry_hz,
                 "NVML telemetry rate beside every phase (default 10 with --backend cuda, off with host; 0: off)")
      ->check(number_in(0.0, 1000.0));
  app.add_option("--mps-pipe-dir", o.modes.mps_pipe_dir, "mode mps: attach to the MPS control daemon whose pipe directory this is instead of starting a private one "
                 "(it is never stopped)")
      ->check(CLI::ExistingDirectory)->check(non_empty());
  app.add_option("--baseline", o.modes.baseline, "mode mig: take the exclusive phase from this results.json of an exclusive run (default: measured on the "
                 "largest MIG instance)")
      ->check(non_empty())->check(CLI::ExistingFile);
  app.add_option("--mig-create", o.modes.mig_create,
                 "mode mig (root): create these MIG instances (e.g. 3g.71gb,3g.71gb) and destroy exactly them at the end")
      ->delimiter(',')
      ->check(mig_profile_name());  // each profile: an option that follows is never taken for one
  add_run_output_options(app, o);
  add_victim_command_options(app, o);
  add_node_options(app, o);
}

}  // namespace ib
