//! The `breakerlab` command line: parse arguments into typed requests, call the application
//! layer, print its report, map its error to an exit code.
//! Exit codes: 0 success, 2 bad input (file, row, field named), 1 anything else.

use breakerlab::Dur;
use breakerlab::Error;
use breakerlab::Library;
use breakerlab::app::sweep::{Replicates, TargetMode};
use breakerlab::app::{
    check, compare, explain, export, merge, presets, recommend, replay, report, run, shard, sweep,
};
use breakerlab::trace::{GapPolicy, LatencyUnit, TimeFormat, TraceFormat};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "breakerlab", version, about = "A deterministic workbench for tuning circuit breakers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process: size does not matter
enum Command {
    /// Simulate one scenario under one breaker configuration, print its scores and write
    /// summary.csv, transitions.csv, timeline.csv and incidents.csv.
    Run {
        /// The scenario file (TOML).
        scenario: Option<PathBuf>,
        /// Run a scripted CSV (`t_ms,latency_ms,ok`) instead of a scenario: exactly those calls,
        /// no retries.
        #[arg(long, value_name = "FILE.csv", conflicts_with = "scenario")]
        script: Option<PathBuf>,
        #[command(flatten)]
        what: RunArgs,
    },
    /// Why a breaker opened (or closed), or why it did not during an incident, in words, from
    /// an output folder's explain.csv: one transition (--at), one incident (--incident), or all.
    Explain {
        /// An output folder written by run, replay or compare.
        dir: PathBuf,
        /// The instant of a transition: a duration since the scenario's start ("1m30s") or
        /// whole microseconds as in transitions.csv's at_us.
        #[arg(long, value_name = "TIME", value_parser = explain::parse_time, conflicts_with = "incident")]
        at: Option<u64>,
        /// An incident, numbered from 1 in incidents.csv's order: what each breaker did during
        /// it and, when it did not open, why nothing tripped.
        #[arg(long, value_name = "N")]
        incident: Option<usize>,
    },
    /// Redraw every chart from the CSVs in an output folder and write report.html (one
    /// self-contained page) and report.md.
    Report {
        /// An output folder written by run, replay, sweep or compare.
        dir: PathBuf,
        /// Zoom the timeline: start, as a duration since the scenario's start ("1h30m").
        #[arg(long, value_name = "DURATION", value_parser = Dur::parse)]
        from: Option<Dur>,
        /// Zoom the timeline: end, as a duration since the scenario's start.
        #[arg(long, value_name = "DURATION", value_parser = Dur::parse)]
        to: Option<Dur>,
        /// The summary column the heatmaps colour by (default cost).
        #[arg(long, value_name = "COLUMN")]
        metric: Option<String>,
    },
    /// Run a sweep: every scenario x configuration x replicate in parallel; write summary.csv,
    /// runs.csv and pareto.csv; print the best configurations per scenario and overall.
    Sweep {
        /// The sweep file (TOML); without it, the bundled default sweep
        /// (scenarios/sweeps/default.toml).
        file: Option<PathBuf>,
        /// Worker threads (default: all cores). Results are identical for any count.
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Output folder (default output/<sweep name>).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Replicates per (scenario, configuration), replacing the file's: a number, or `auto`
        /// (stages: a replicate of everything, then more only for the configurations still in the
        /// running, until the selection's confidence is reached or the budget runs out).
        #[arg(long, value_name = "N|auto", value_parser = Replicates::parse)]
        replicates: Option<Replicates>,
        /// With `auto`: the most replicates a configuration gets (default: the file's
        /// max_replicates, else 10).
        #[arg(long, value_name = "N")]
        max_replicates: Option<u32>,
        #[command(flatten)]
        target: TargetArgs,
        #[command(flatten)]
        finish: FinishArgs,
        /// Run only shard K (0-based) of N, e.g. --shard 0/4: its rows go to
        /// <out>/shard-K-of-N/runs.csv with a shard.toml (default out: output/<name>-shards);
        /// `breakerlab merge` joins the shards. Without it, Slurm's SLURM_ARRAY_TASK_ID and
        /// SLURM_ARRAY_TASK_COUNT are read when set; --shard none runs the whole sweep even
        /// inside an array task.
        #[arg(long, value_name = "K/N", conflicts_with = "shards")]
        shard: Option<String>,
        /// The number of shards when the scheduler gives only the index: JOB_COMPLETION_INDEX
        /// (Kubernetes Indexed Job) or AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array job).
        #[arg(long, value_name = "N")]
        shards: Option<u32>,
    },
    /// Merge the shards of a sweep (folders written by `sweep --shard`): checks they are one
    /// sweep's, every cell exactly once, and writes what the unsharded sweep writes, byte for byte.
    Merge {
        /// The shards' folders (each holds runs.csv and shard.toml), in any order.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder (default output/<sweep name>).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Skip the PNG charts and the report page.
        #[arg(long)]
        no_charts: bool,
    },
    /// Compare policies side by side on the same request streams: every metric per scenario,
    /// with the paired difference against the first policy and its 95% confidence interval.
    Compare {
        #[command(flatten)]
        args: CompareArgs,
    },
    /// Recommend the lowest-cost configuration meeting every constraint, explained, from a sweep's
    /// output folder (or its runs.csv), or by running a sweep file.
    Recommend {
        /// A sweep output folder, a runs.csv, or a sweep file.
        path: PathBuf,
        /// Set one objective weight, e.g. --objective false_opens=5. Repeat it.
        #[arg(long = "objective", value_name = "METRIC=WEIGHT")]
        objective: Vec<String>,
        /// A constraint, e.g. --constraint "false_opens <= 1"; replaces the sweep's on that metric.
        #[arg(long = "constraint", value_name = "CONSTRAINT")]
        constraints: Vec<String>,
        /// Worker threads when running a sweep file (default: all cores).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// No progress bar when running a sweep file.
        #[arg(long)]
        quiet: bool,
        /// Also print the chosen configuration in this library's own syntax (see `export`).
        #[arg(long = "as", value_name = "LIBRARY", value_parser = Library::parse)]
        library: Option<Library>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Print a preset (with overrides) in a breaker library's own configuration syntax; a
    /// configuration the library cannot express is refused with the reason (exit 2).
    Export {
        /// The library: resilience4j, polly, opossum, cockatiel, pybreaker, gobreaker,
        /// failsafe-go, envoy.
        #[arg(long = "as", value_name = "LIBRARY", value_parser = Library::parse)]
        library: Library,
        /// The preset to export (default: the library's own preset).
        #[arg(long, value_name = "PRESET")]
        policy: Option<String>,
        /// Override one of the policy's parameters, e.g. --set sliding_window_size=50.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// The breaker instance's name in the output (default `backend`).
        #[arg(long)]
        name: Option<String>,
        /// When the library cannot express the policy (another family, or a value it lacks),
        /// write the nearest configuration it can, headed by a comment listing what differs.
        #[arg(long)]
        nearest: bool,
        /// With --nearest: a scenario on which to measure what the nearest configuration
        /// changes (paired differences, as `compare` gives them). Repeat it.
        #[arg(long = "scenario", value_name = "FILE", requires = "nearest")]
        scenarios: Vec<PathBuf>,
        /// Replicates per scenario for that measurement.
        #[arg(long, value_name = "N", default_value_t = export::DEFAULT_REPLICATES, requires = "scenarios")]
        replicates: u32,
    },
    /// Replay a logged trace (per-interval aggregates or per-call log) through one breaker
    /// configuration: print the import report and the scores, write the same files as `run`.
    Replay {
        #[command(flatten)]
        args: ReplayArgs,
    },
    /// List every preset with its family, source, quirks and parameters.
    Presets {
        /// Show only this preset.
        name: Option<String>,
    },
    /// Check a breaker configuration against the bounds a checks file sets on its scenarios
    /// (golden tests for CI): print a table; exit 0 when every bound holds in every replicate,
    /// 1 when one breaks, 2 for bad input.
    Check {
        /// The checks file (TOML): [policy], replicates, and [[checks]] entries of scenarios
        /// and bounds.
        file: PathBuf,
        /// Also write the results as a JUnit XML report, for CI systems.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Record today's figures as the expected ones (beside the checks file, or where its
        /// `expected` key says); a later run reports what moved beyond noise.
        #[arg(long)]
        update: bool,
        /// Worker threads (default: all cores). Results are identical for any count.
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

// What `compare` runs (a plain comment: a doc comment here would replace the command's).
#[derive(clap::Args)]
struct CompareArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// A policy: PRESET or PRESET[key=value,...], e.g. consecutive[failure_threshold=3]. Repeat it.
    #[arg(long = "policy", value_name = "POLICY", required = true)]
    policies: Vec<String>,
    /// Override a parameter of every compared policy, e.g. --set open_duration=1m.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Replicates per (scenario, policy).
    #[arg(long, default_value_t = 5, value_name = "N")]
    replicates: u32,
    /// A constraint each policy must meet on every scenario, in every replicate unless it says
    /// "in P % of replicates", "worst" or "mean", e.g. --constraint "false_opens <= 1"; repeat
    /// it. Default: "missed_incidents == 0" (no incident missed in any replicate).
    #[arg(long = "constraint", value_name = "CONSTRAINT")]
    constraints: Vec<String>,
    /// Base seed (replaces each scenario's): a whole number from 0 to 2^64 - 1.
    #[arg(long, allow_hyphen_values = true, value_parser = breakerlab_model::scenario::parse_seed)]
    seed: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Output folder (default output/compare-<first scenario name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    finish: FinishArgs,
}

impl CompareArgs {
    /// The typed request these flags describe.
    fn request(self) -> compare::CompareRequest {
        compare::CompareRequest {
            scenarios: self.scenarios,
            policies: self.policies,
            sets: self.sets,
            replicates: self.replicates,
            constraints: self.constraints,
            seed: self.seed,
            threads: self.threads,
            out: self.out,
            charts: !self.finish.no_charts,
            command_line: command_line(),
            limits: self.finish.limits.limits(),
            target: self.target.target,
            target_mode: self.target.target_mode,
        }
    }
}

// What `replay` reads and how (a plain comment: a doc comment here would replace the command's).
#[derive(clap::Args)]
struct ReplayArgs {
    /// The trace: a CSV, or a tool's export (Prometheus, Grafana, CloudWatch, Datadog, OTLP,
    /// Jaeger, Envoy, HAR), detected from its content. Not needed with --series.
    #[arg(required_unless_present = "series")]
    trace: Option<PathBuf>,
    /// Force the format: interval, calls, prometheus, grafana, cloudwatch, datadog, otlp,
    /// jaeger, envoy or har (detected from the content when absent).
    #[arg(long, value_parser = serde_value::<TraceFormat>)]
    format: Option<TraceFormat>,
    /// A series and the role it plays: ROLE[:UNIT]=FILE[@SELECTOR], e.g. p95:s=p95.json,
    /// 'rate=rps.json@{job="api"}', errors=cw.json@errors. Roles: rate, requests, p50, p90,
    /// p95, p99, error_rate, success_rate, errors. Repeat it; series merge on time.
    #[arg(long = "series", value_name = "ROLE=FILE[@SELECTOR]")]
    series: Vec<String>,
    /// Keep only the spans where KEY matches GLOB, e.g. --where service=frontend* --where
    /// operation=*/Convert (span formats; repeat it: all must match).
    #[arg(long = "where", value_name = "KEY=GLOB")]
    filters: Vec<String>,
    /// For a trace without latency (--series requests=... alone, or an error series with
    /// --rate): the dependency's median latency.
    #[arg(long, value_name = "DUR", value_parser = Dur::parse)]
    p50: Option<Dur>,
    /// For a trace without latency: the dependency's 95th-percentile latency (default: from
    /// --p50 and the tail spread, p50 × 2.28).
    #[arg(long, value_name = "DUR", value_parser = Dur::parse, requires = "p50")]
    p95: Option<Dur>,
    /// For a volume-only trace: the fraction of calls that fail (default 0).
    #[arg(long, value_name = "FRACTION", requires = "p50")]
    error_rate: Option<f64>,
    #[command(flatten)]
    client: ClientArgs,
    /// Ground truth: a label CSV (start,end,expectation), NAB windows JSON or fault list.
    #[arg(long, value_name = "FILE", conflicts_with = "slo")]
    labels: Option<PathBuf>,
    /// Ground truth from an SLO rule, e.g. "error_rate > 20% or p95 > 8s for 3m".
    #[arg(long, value_name = "RULE")]
    slo: Option<String>,
    /// How long each fault of a fault list lasts, e.g. 3m.
    #[arg(long, value_name = "DUR", value_parser = Dur::parse)]
    fault_duration: Option<Dur>,
    /// Map a column, e.g. --column p95=LatencyP95(s) --column time=TimeStamp.
    #[arg(long = "column", value_name = "ROLE=NAME")]
    columns: Vec<String>,
    /// auto, rfc3339, datetime, epoch_s, epoch_ms, epoch_us or epoch_ns.
    #[arg(long, value_name = "FORMAT", value_parser = serde_value::<TimeFormat>)]
    time_format: Option<TimeFormat>,
    /// Unit of latency columns: us, ms or s.
    #[arg(long, value_name = "UNIT", value_parser = serde_value::<LatencyUnit>)]
    latency_unit: Option<LatencyUnit>,
    /// What gaps in an interval trace mean: hold, healthy or missing.
    #[arg(long, value_name = "POLICY", value_parser = serde_value::<GapPolicy>)]
    gaps: Option<GapPolicy>,
    /// Skip (and count) rows that cannot be parsed instead of refusing the file.
    #[arg(long)]
    skip_bad_rows: bool,
    /// Refuse samples and cells with no value (NaN, +Inf, -Inf, null, empty) instead of
    /// reading them as gaps.
    #[arg(long)]
    strict: bool,
    /// Any other [trace] key, e.g. --trace duplicates=keep_first --trace utc_offset=+02:00.
    #[arg(long = "trace", value_name = "KEY=VALUE")]
    trace_sets: Vec<String>,
    /// Poisson arrivals at this many requests per second (needed when the trace has no counts).
    #[arg(long, value_name = "PER_SECOND")]
    rate: Option<f64>,
    #[command(flatten)]
    what: RunArgs,
}

impl ReplayArgs {
    /// The typed request these flags describe.
    fn request(self) -> breakerlab::Result<replay::ReplayRequest> {
        Ok(replay::ReplayRequest {
            trace: self.trace,
            format: self.format,
            series: self.series,
            filters: self.filters,
            behaviour: replay::behaviour(self.p50, self.p95, self.error_rate)?,
            client: self.client.flags(),
            labels: self.labels,
            slo: self.slo,
            fault_duration: self.fault_duration,
            columns: self.columns,
            time_format: self.time_format,
            latency_unit: self.latency_unit,
            gaps: self.gaps,
            skip_bad_rows: self.skip_bad_rows,
            strict: self.strict,
            trace_sets: self.trace_sets,
            rate: self.rate,
            run: self.what.settings(),
        })
    }
}

/// The client around the replayed dependency (replaces the default: 10 s timeout, no retries).
#[derive(clap::Args)]
struct ClientArgs {
    /// Per-attempt call timeout, e.g. 250ms.
    #[arg(long, value_name = "DUR", value_parser = Dur::parse)]
    timeout: Option<Dur>,
    /// Retries after the first attempt.
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Delay before the first retry, optionally growing per retry: 200ms or 200ms*2.
    #[arg(long, value_name = "BASE[*MULT]", value_parser = breakerlab_model::client::flags::parse_backoff)]
    backoff: Option<(Dur, Option<f64>)>,
    /// What the user gets when a call is refused or fails: none, cached[:LATENCY],
    /// local[:LATENCY] or retry_queue:CYCLE.
    #[arg(long, value_name = "KIND", value_parser = breakerlab_model::client::flags::parse_fallback)]
    fallback: Option<breakerlab_model::client::FallbackSpec>,
}

impl ClientArgs {
    fn flags(self) -> breakerlab_model::client::flags::ClientFlags {
        breakerlab_model::client::flags::ClientFlags {
            timeout: self.timeout,
            retries: self.retries,
            backoff: self.backoff,
            fallback: self.fallback,
        }
    }
}

/// What to run and where to write it: shared by `run` and `replay`.
#[derive(clap::Args)]
struct RunArgs {
    /// Run N replicates (different seeds) and print each metric's mean with its 95% confidence
    /// interval; the files are those of the first replicate.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    replicates: u32,
    /// The preset to run (replaces the scenario's [policy]; default consecutive); see
    /// `breakerlab presets`.
    #[arg(long, value_name = "PRESET")]
    policy: Option<String>,
    /// Override one of the policy's parameters, e.g. --set failure_threshold=3 --set open_duration=1m.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Base seed (replaces the scenario's): a whole number from 0 to 2^64 - 1.
    #[arg(long, allow_hyphen_values = true, value_parser = breakerlab_model::scenario::parse_seed)]
    seed: Option<u64>,
    /// Output folder (default output/<scenario or trace name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    finish: FinishArgs,
}

/// Whether to draw the charts and page, and the limits checked first: the last flags of every
/// command that simulates (`run`, `replay`, `compare`, `sweep`).
#[derive(clap::Args)]
struct FinishArgs {
    /// Skip the PNG charts and the report page.
    #[arg(long)]
    no_charts: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Resource limits, checked from the inputs before anything runs (see `breakerlab::app::Limits`).
#[derive(clap::Args)]
struct LimitArgs {
    /// Refuse work estimated to need more memory than this, e.g. 8GiB (default 16GiB).
    #[arg(long, value_name = "SIZE", value_parser = breakerlab::app::parse_bytes)]
    max_memory: Option<u64>,
    /// Refuse work that would simulate more calls than this, e.g. 1e11 (default 2e10).
    #[arg(long, value_name = "N", value_parser = breakerlab::app::parse_calls)]
    max_calls: Option<u64>,
    /// Refuse work that would process more events than this (calls, retry-queue cycles and the
    /// deferred requests they offer again, waiting calls), e.g. 1e12 (default 2e11).
    #[arg(long, value_name = "N", value_parser = breakerlab::app::parse_calls)]
    max_events: Option<u64>,
}

impl LimitArgs {
    /// The limits these flags set (defaults for those not given).
    fn limits(&self) -> breakerlab::app::Limits {
        let default = breakerlab::app::Limits::default();
        breakerlab::app::Limits {
            max_memory: self.max_memory.unwrap_or(default.max_memory),
            max_calls: self.max_calls.unwrap_or(default.max_calls),
            max_events: self.max_events.unwrap_or(default.max_events),
        }
    }
}

impl RunArgs {
    /// The run settings these flags describe.
    fn settings(self) -> run::RunSettings {
        run::RunSettings {
            policy: self.policy,
            sets: self.sets,
            seed: self.seed,
            out: self.out,
            charts: !self.finish.no_charts,
            command_line: command_line(),
            limits: self.finish.limits.limits(),
            replicates: self.replicates,
            ..run::RunSettings::default()
        }
    }
}

/// `--replicates`: a whole number of at least 1, or `auto`.
/// `--target` and `--target-mode`: the library a recommendation is deployed to.
#[derive(clap::Args, Debug)]
struct TargetArgs {
    /// Deploy to this library: every configuration must be one it expresses exactly (refused
    /// before anything runs, with the reason), and the recommendation, runner-up and baseline
    /// are shown in its syntax, the recommendation also written to recommended.<ext>. Replaces
    /// the sweep file's `target`.
    #[arg(long = "target", value_name = "LIBRARY", value_parser = Library::parse)]
    target: Option<Library>,
    /// exact (default): refuse what the library cannot express; nearest: run the nearest
    /// configuration it expresses instead, listing what differs.
    #[arg(long = "target-mode", value_name = "exact|nearest", value_parser = TargetMode::parse)]
    target_mode: Option<TargetMode>,
}

/// A value named as in scenario files (`epoch_s`, `missing`), read by the same deserializer.
fn serde_value<T: serde::de::DeserializeOwned>(text: &str) -> breakerlab::Result<T> {
    toml::Value::String(text.to_string())
        .try_into()
        .map_err(|e: toml::de::Error| Error::invalid(e.message().trim()))
}

/// The command line as typed, shell-quoted so it re-runs as pasted (for report pages).
fn command_line() -> String {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    breakerlab::app::command_line(&args)
}

/// The command line as typed without `--shard`/`--shards`: the command that runs the whole
/// sweep at once, which a shard records for the merged review page.
fn whole_sweep_command_line() -> String {
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    let mut kept = Vec::new();
    while let Some(w) = args.next() {
        if w == "--shard" || w == "--shards" {
            args.next();
        } else if !(w.starts_with("--shard=") || w.starts_with("--shards=")) {
            kept.push(w);
        }
    }
    breakerlab::app::command_line(&kept)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok((text, code)) => {
            print!("{text}");
            code
        }
        Err(err) => {
            eprintln!("error: {err}");
            let mut cause = std::error::Error::source(&err);
            while let Some(c) = cause {
                eprintln!("  caused by: {c}");
                cause = c.source();
            }
            ExitCode::from(err.exit_code())
        }
    }
}

/// Runs one command; returns what to print and the exit code (1 when `check` finds a bound
/// broken; errors map to theirs in `main`).
fn execute(command: Command) -> breakerlab::Result<(String, ExitCode)> {
    let mut code = ExitCode::SUCCESS;
    let text = match command {
        Command::Run { scenario, script, what } => {
            let input = match (scenario, script) {
                (Some(path), None) => run::Input::Scenario(path),
                (None, Some(path)) => run::Input::Script(path),
                _ => return Err(breakerlab::Error::argument("give a scenario file, or --script FILE.csv")),
            };
            run::render(&run::run(&run::RunRequest { input, settings: what.settings() })?)
        }
        Command::Sweep {
            file,
            threads,
            out,
            quiet,
            replicates,
            max_replicates,
            target,
            finish,
            shard,
            shards,
        } => {
            // The shard in use: --shard, else the scheduler's variables (read here, at the edge).
            let chosen =
                shard::choose(shard.as_deref(), shards, file.as_deref(), &|k| std::env::var(k).ok())?;
            if let Some((shard, source, from_scheduler)) = chosen {
                if from_scheduler {
                    eprintln!(
                        "breakerlab: running as shard {shard} of an array job (from {source}); --shard none runs \
                         the whole sweep"
                    );
                } else {
                    eprintln!("breakerlab: running shard {shard} (from {source})");
                }
                let req = shard::ShardRequest {
                    file,
                    shard,
                    source,
                    from_scheduler,
                    threads,
                    out,
                    quiet,
                    command_line: whole_sweep_command_line(),
                    limits: finish.limits.limits(),
                    replicates,
                    max_replicates,
                };
                return Ok((shard::run_shard(&req)?.render(), code));
            }
            let req = sweep::SweepRequest {
                file,
                threads,
                out,
                quiet,
                charts: !finish.no_charts,
                command_line: command_line(),
                limits: finish.limits.limits(),
                replicates,
                max_replicates,
                target: target.target,
                target_mode: target.target_mode,
            };
            sweep::sweep(&req)?.render()
        }
        Command::Merge { dirs, out, no_charts } => {
            merge::merge(&merge::MergeRequest { dirs, out, charts: !no_charts })?.render()
        }
        Command::Compare { args } => compare::compare(&args.request())?.render(),
        Command::Recommend { path, objective, constraints, threads, quiet, library, target } => {
            let req = recommend::RecommendRequest {
                path,
                objective,
                constraints,
                threads,
                quiet,
                library,
                target: target.target,
                target_mode: target.target_mode,
            };
            recommend::recommend(&req)?.render()
        }
        Command::Export { library, policy, sets, name, nearest, scenarios, replicates } => {
            export::run(&export::ExportRequest {
                library,
                policy,
                sets,
                name,
                nearest,
                scenarios,
                replicates,
            })?
        }
        Command::Replay { args } => run::render(&replay::replay(&args.request()?)?),
        Command::Presets { name } => presets::render(name.as_deref())?,
        Command::Explain { dir, at, incident } => {
            explain::explain(&explain::ExplainRequest { dir, at, incident })?.render()
        }
        Command::Report { dir, from, to, metric } => {
            let files = report::report(&report::ReportRequest { dir, from, to, metric })?;
            format!("wrote {}\n", breakerlab::app::list(&files))
        }
        Command::Check { file, junit, update, threads, limits } => {
            let req = check::CheckRequest { file, junit, update, threads, limits: limits.limits() };
            let outcome = check::check(&req)?;
            if !outcome.passed() {
                code = ExitCode::from(1);
            }
            outcome.render()
        }
    };
    Ok((text, code))
}
