//! The `breakerlab` command line: parse arguments, call the library, print, exit.
//! Exit codes: 0 success, 2 bad input (file, row, field named), 1 anything else.

use breakerlab::commands;
use breakerlab::scenario::InputError;
use breakerlab::sweep::shard::ShardId;
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
    /// Redraw every chart from the CSVs in an output folder and write report.html (one
    /// self-contained page) and report.md.
    Report {
        /// An output folder written by run, replay, sweep or compare.
        dir: PathBuf,
        /// Zoom the timeline: start, as a duration since the scenario's start ("1h30m").
        #[arg(long, value_name = "DURATION")]
        from: Option<String>,
        /// Zoom the timeline: end, as a duration since the scenario's start.
        #[arg(long, value_name = "DURATION")]
        to: Option<String>,
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
        /// Skip the PNG charts and the report page.
        #[arg(long)]
        no_charts: bool,
        /// Run only shard K (0-based) of N, e.g. --shard 0/4: its rows go to
        /// <out>/shard-K-of-N/runs.csv with a shard.toml (default out: output/<name>-shards);
        /// `breakerlab merge` joins the shards. Without it, Slurm's SLURM_ARRAY_TASK_ID and
        /// SLURM_ARRAY_TASK_COUNT are read when set.
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
        /// The shards' folders (each holds runs.csv and shard.toml).
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
        /// Base seed (replaces each scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Worker threads (default: all cores).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Output folder (default output/compare-<first scenario name>).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Skip the PNG charts and the report page.
        #[arg(long)]
        no_charts: bool,
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
        #[arg(long = "as", value_name = "LIBRARY")]
        library: Option<String>,
    },
    /// Print a preset (with overrides) in a breaker library's own configuration syntax; a
    /// configuration the library cannot express is refused with the reason (exit 2).
    Export {
        /// The library: resilience4j, polly, opossum, cockatiel, pybreaker, gobreaker,
        /// failsafe-go, envoy.
        #[arg(long = "as", value_name = "LIBRARY")]
        library: String,
        /// The preset to export (default: the library's own preset).
        #[arg(long, value_name = "PRESET")]
        policy: Option<String>,
        /// Override one of the policy's parameters, e.g. --set sliding_window_size=50.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// The breaker instance's name in the output (default `backend`).
        #[arg(long)]
        name: Option<String>,
    },
    /// Replay a logged trace (per-interval aggregates or per-call log) through one breaker
    /// configuration: print the import report and the scores, write the same files as `run`.
    Replay {
        /// The trace CSV.
        trace: PathBuf,
        /// `interval` or `calls` (detected from the header when absent).
        #[arg(long)]
        format: Option<String>,
        /// Ground truth: a label CSV (start,end,expectation), NAB windows JSON or fault list.
        #[arg(long, value_name = "FILE", conflicts_with = "slo")]
        labels: Option<PathBuf>,
        /// Ground truth from an SLO rule, e.g. "error_rate > 20% or p95 > 8s for 3m".
        #[arg(long, value_name = "RULE")]
        slo: Option<String>,
        /// How long each fault of a fault list lasts, e.g. 3m.
        #[arg(long, value_name = "DUR")]
        fault_duration: Option<String>,
        /// Map a column, e.g. --column p95=LatencyP95(s) --column time=TimeStamp.
        #[arg(long = "column", value_name = "ROLE=NAME")]
        columns: Vec<String>,
        /// auto, rfc3339, datetime, epoch_s, epoch_ms or epoch_us.
        #[arg(long, value_name = "FORMAT")]
        time_format: Option<String>,
        /// Unit of latency columns: us, ms or s.
        #[arg(long, value_name = "UNIT")]
        latency_unit: Option<String>,
        /// What gaps in an interval trace mean: hold, healthy or missing.
        #[arg(long, value_name = "POLICY")]
        gaps: Option<String>,
        /// Skip (and count) rows that cannot be parsed instead of refusing the file.
        #[arg(long)]
        skip_bad_rows: bool,
        /// Any other [trace] key, e.g. --trace duplicates=keep_first --trace utc_offset=+02:00.
        #[arg(long = "trace", value_name = "KEY=VALUE")]
        trace_sets: Vec<String>,
        /// Poisson arrivals at this many requests per second (needed when the trace has no counts).
        #[arg(long, value_name = "PER_SECOND")]
        rate: Option<f64>,
        #[command(flatten)]
        what: RunArgs,
    },
    /// List every preset with its family, source, quirks and parameters.
    Presets {
        /// Show only this preset.
        name: Option<String>,
    },
}

/// What to run and where to write it: shared by `run` and `replay`.
#[derive(clap::Args)]
struct RunArgs {
    /// The preset to run (replaces the scenario's [policy]; default consecutive); see
    /// `breakerlab presets`.
    #[arg(long, value_name = "PRESET")]
    policy: Option<String>,
    /// Override one of the policy's parameters, e.g. --set failure_threshold=3 --set open_duration=1m.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Base seed (replaces the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// Output folder (default output/<scenario or trace name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Skip the PNG charts and the report page.
    #[arg(long)]
    no_charts: bool,
}

impl RunArgs {
    /// The library's run request (no scenario or script: the caller sets those).
    fn request(self) -> commands::run::RunRequest {
        commands::run::RunRequest {
            policy: self.policy,
            sets: self.sets,
            seed: self.seed,
            out: self.out,
            no_charts: self.no_charts,
            command_line: commands::command_line(),
            ..Default::default()
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            if is_input_error(&err) { ExitCode::from(2) } else { ExitCode::from(1) }
        }
    }
}

/// The command line as typed without `--shard`/`--shards`: the command that runs the whole
/// sweep at once, which a shard records for the merged review page.
fn whole_sweep_command_line() -> String {
    let line = commands::command_line();
    let mut words = line.split(' ').peekable();
    let mut kept = Vec::new();
    while let Some(w) = words.next() {
        if w == "--shard" || w == "--shards" {
            words.next();
        } else if !(w.starts_with("--shard=") || w.starts_with("--shards=")) {
            kept.push(w);
        }
    }
    kept.join(" ")
}

fn is_input_error(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<InputError>()
            || e.is::<breakerlab::policy::PolicyError>()
            || e.is::<breakerlab::policy::export::ExportError>()
    })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run { scenario, script, what } => {
            let req = commands::run::RunRequest { scenario, script, ..what.request() };
            let report = commands::run::run(&req)?;
            print!("{}", commands::run::render(&report));
        }
        Command::Sweep { file, threads, out, quiet, no_charts, shard, shards } => {
            let from_scheduler = || ShardId::from_scheduler(shards, &|k| std::env::var(k).ok());
            let chosen = match shard {
                Some(text) => {
                    Some((ShardId::parse(&text).map_err(InputError::argument)?, format!("--shard {text}")))
                }
                None => from_scheduler().map_err(InputError::argument)?,
            };
            if let Some((shard, source)) = chosen {
                eprintln!("breakerlab: running shard {shard} (from {source})");
                let req = commands::shard::ShardRequest {
                    file,
                    shard,
                    source,
                    threads,
                    out,
                    quiet,
                    command_line: whole_sweep_command_line(),
                };
                print!("{}", commands::shard::run_shard(&req)?.render());
                return Ok(());
            }
            let command_line = commands::command_line();
            let charts = (!no_charts).then_some(command_line.as_str());
            let report =
                breakerlab::sweep::run_sweep(file.as_deref(), threads, out.as_deref(), quiet, charts)?;
            print!("{}", report.render());
        }
        Command::Merge { dirs, out, no_charts } => {
            let req = commands::shard::MergeRequest { dirs, out, charts: !no_charts };
            print!("{}", commands::shard::merge(&req)?.render());
        }
        Command::Compare { scenarios, policies, sets, replicates, seed, threads, out, no_charts } => {
            let policies = breakerlab::sweep::policies_from_args(&policies, &sets)?;
            let command_line = commands::command_line();
            let charts = (!no_charts).then_some(command_line.as_str());
            let (report, files) = breakerlab::sweep::compare(
                &scenarios,
                &policies,
                replicates,
                seed,
                threads,
                out.as_deref(),
                charts,
            )?;
            print!("{}", report.render());
            println!("\nwrote {}", commands::report::list(&files));
        }
        Command::Recommend { path, objective, constraints, threads, quiet, library } => {
            let r = breakerlab::sweep::recommend(&path, &objective, &constraints, threads, quiet)?;
            print!("{}", r.render());
            if let (Some(library), Some(chosen)) = (library, r.chosen()) {
                let req = commands::export::ExportRequest::of(
                    library,
                    &chosen.config.preset,
                    &chosen.config.overrides,
                );
                print!("\n{}", commands::export::run(&req)?);
            }
        }
        Command::Export { library, policy, sets, name } => {
            let req = commands::export::ExportRequest { library, policy, sets, name };
            print!("{}", commands::export::run(&req)?);
        }
        Command::Replay {
            trace,
            format,
            labels,
            slo,
            fault_duration,
            columns,
            time_format,
            latency_unit,
            gaps,
            skip_bad_rows,
            trace_sets,
            rate,
            what,
        } => {
            let req = commands::replay::ReplayRequest {
                trace,
                format,
                labels,
                slo,
                fault_duration,
                columns,
                time_format,
                latency_unit,
                gaps,
                skip_bad_rows,
                trace_sets,
                rate,
                run: what.request(),
            };
            print!("{}", commands::replay::render_replay(&commands::replay::replay(&req)?));
        }
        Command::Presets { name } => print!("{}", commands::presets::render(name.as_deref())?),
        Command::Report { dir, from, to, metric } => {
            let files = commands::report::report(&dir, from.as_deref(), to.as_deref(), metric.as_deref())?;
            println!("wrote {}", commands::report::list(&files));
        }
    }
    Ok(())
}
