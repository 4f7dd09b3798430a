// The options of `run` (the default command): what runs, how long, how it is judged, and the files it writes.
#include "harness/cli/run_options.h"

#include "harness/cli/validators.h"
#include "harness/core/text.h"
#include "harness/scenario/scenario.h"

namespace ib {

namespace {

// The files a run writes beside its output folder.
void add_run_output_options(CLI::App& app, RunOptions& o) {
  app.add_option("--junit", o.junit, "Also write JUnit XML here: one testcase per tenant verdict")->check(non_empty());
  app.add_option("--prometheus", o.prometheus,
                 "Also write Prometheus text here (node-exporter textfile collector format)")->check(non_empty());
  app.add_option("--history", o.history,
                 "Append this run to a history database (SQLite; created if missing) after results.json is written")->check(non_empty());
  app.add_option("--html", o.html, "Also write the HTML report (one self-contained file) here")->check(non_empty());
}

// The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
void add_victim_command_options(CLI::App& app, RunOptions& o) {
  app.add_flag("--victim-command", o.victim_command,
               "Measure your own program (given after --) beside each of --aggressors, as a command tenant");
  app.add_option("--victim-metric", o.victim_metric,
                 "With --victim-command: heartbeat (default; the shipped clients), wall, stdout:REGEX (a line per step) "
                 "or interval:SECONDS:REGEX (a line per interval of about SECONDS)")
      ->check(non_empty());
  app.add_option("--aggressors", o.aggressors,
                 "With --victim-command: neighbours, comma-separated (default gemm,copy,latency; host: "
                 "host-compute,host-copy)")
      ->check(non_empty());
  app.add_option("command", o.victim_argv, "With --victim-command: the program and its arguments, after --");
}

// The options of a run across nodes (run/conductor.h, run/node_agent.h); run_command fills the defaults the
// launcher's variables give.
void add_node_options(CLI::App& app, RunOptions& o) {
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

}  // namespace

// The options of `run` (the default command).
void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--mode", o.mode, "Sharing mode (overrides the scenario's); all: every mode side by side")
      ->check(CLI::IsMember([] {
        auto names = mode_names();
        names.push_back("all");
        return names;
      }()));
  auto* scen = app.add_option("--scenario", o.scenario, "Scenario file (JSON)")->check(CLI::ExistingFile);
  app.add_option("--suite", o.suite, "Suite name from scenarios/suites (default: quick)")->excludes(scen)->check(non_empty());
  app.add_option("--backend", o.backend, "cuda (default), host (CPU workloads) or auto (cuda if a GPU is usable, else host)")
      ->check(CLI::IsMember({"cuda", "host", "auto"}));
  app.add_option("--device", o.device, "CUDA device index (overrides the scenario's)")->check(CLI::Range(0, 63));
  app.add_option("--duration", o.duration, "Seconds of measurement per phase")->check(number_in(kMinDurationS, kMaxDurationS));
  app.add_option("--warmup", o.warmup, "Seconds of warm-up per worker")->check(number_in(kMinWarmupS, kMaxWarmupS));
  app.add_option("--repeat", o.repeat, "Repetitions (separate process restarts)")->check(CLI::Range(1, kMaxRepetitions));
  app.add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(number_in(0.0, kMaxCutoff, true));
  app.add_option("--collective-timeout", o.collective_timeout,
                 "Seconds a collective tenant's longest stall is held against (default 600, PyTorch's)")
      ->check(number_in(0.001, 86400));
  app.add_option("--out", o.out, "Output folder (default interference-bench-results/<UTC time>)")->check(non_empty());
  app.add_flag("--no-raw", o.no_raw, "Leave the raw per-sample arrays out of the JSON");
  app.add_flag("--force", o.force, "Replace the results (and logs) an existing --out folder holds");
  app.add_option("--timeout-margin", o.timeout_margin,
                 "Seconds a worker may overrun its warm-up or measurement before it is killed (default 60)")
      ->check(number_in(0.0, 86400.0, true));
  app.add_option("--seed", o.seed, "Bootstrap (and --round-order shuffle) seed (default 1)")->check(unsigned_integer());
  app.add_option("--rounds", o.rounds,
                 "Rounds before the first look (all of them with --until fixed): each holds one block of every phase, "
                 "--duration is split over them (default 10)")
      ->check(CLI::Range(1, 100));
  app.add_option("--until", o.until,
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
  app.add_option("--round-order", o.round_order, "Block order from round to round: abba (default) or shuffle (seeded)")
      ->check(CLI::IsMember({"abba", "shuffle"}));
  app.add_option("--max-reruns", o.max_reruns, "Contaminated blocks re-run per repetition, at most (default 2)")
      ->check(CLI::Range(0, 100));
  app.add_option("--max-foreign-cpus", o.max_foreign_cpus,
                 "A block is contaminated when processes that are not this run's used more CPUs than this (default 0.25)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--max-steal-cpus", o.max_steal_cpus,
                 "A block is contaminated when the hypervisor stole more CPUs than this, summed over the machine's "
                 "CPUs (default 5% of them, at least 0.10: " + significant(o.max_steal_cpus, 2) + " here)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--resamples", o.resamples, "Bootstrap resamples for the P95 CI (default 1000)")->check(CLI::Range(0, 100000));
  app.add_option("--telemetry-hz", o.telemetry_hz,
                 "NVML telemetry rate beside every phase (default 10 with --backend cuda, off with host; 0: off)")
      ->check(number_in(0.0, 1000.0));
  app.add_option("--mps-pipe-dir", o.mps_pipe_dir, "mode mps: use the MPS daemon already running there (never stopped)")
      ->check(CLI::ExistingDirectory)->check(non_empty());
  app.add_option("--baseline", o.baseline, "mode mig: take the exclusive phase from this results.json of an exclusive run")
      ->check(non_empty())->check(CLI::ExistingFile);
  app.add_option("--mig-create", o.mig_create,
                 "mode mig (root): create these MIG instances (e.g. 3g.71gb,3g.71gb) and destroy exactly them at the end")
      ->delimiter(',')
      ->check(mig_profile_name());  // each profile: an option that follows is never taken for one
  add_run_output_options(app, o);
  add_victim_command_options(app, o);
  add_node_options(app, o);
}

}  // namespace ib
