//! The `breakerlab` command line: parse arguments, call the library, print, exit.
//! Exit codes: 0 success, 2 bad input (file, row, field named), 1 anything else.

use breakerlab::commands;
use breakerlab::scenario::InputError;
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
        /// The preset to run (replaces the scenario's [policy]); see `breakerlab presets`.
        #[arg(long, value_name = "PRESET")]
        policy: Option<String>,
        /// Override one of the policy's parameters, e.g. --set failure_threshold=3 --set cooldown=1m.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Base seed (replaces the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Output folder (default output/<scenario name>).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Skip the PNG charts and the report page.
        #[arg(long)]
        no_charts: bool,
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
    },
    /// List every preset with its family, source, quirks and parameters.
    Presets {
        /// Show only this preset.
        name: Option<String>,
    },
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

fn is_input_error(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<InputError>() || e.is::<breakerlab::policy::PolicyError>())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run { scenario, script, policy, sets, seed, out, no_charts } => {
            let command_line = commands::command_line();
            let req = commands::run::RunRequest {
                scenario,
                script,
                policy,
                sets,
                seed,
                out,
                no_charts,
                command_line,
            };
            let report = commands::run::run(&req)?;
            print!("{}", commands::run::render(&report));
        }
        Command::Sweep { file, threads, out, quiet } => {
            let report = breakerlab::sweep::run_sweep(file.as_deref(), threads, out.as_deref(), quiet)?;
            print!("{}", report.render());
        }
        Command::Compare { scenarios, policies, sets, replicates, seed, threads } => {
            let policies = breakerlab::sweep::policies_from_args(&policies, &sets)?;
            let report = breakerlab::sweep::compare(&scenarios, &policies, replicates, seed, threads)?;
            print!("{}", report.render());
        }
        Command::Recommend { path, objective, constraints, threads, quiet } => {
            let r = breakerlab::sweep::recommend(&path, &objective, &constraints, threads, quiet)?;
            print!("{}", r.render());
        }
        Command::Presets { name } => print!("{}", commands::presets::render(name.as_deref())?),
        Command::Report { dir, from, to, metric } => {
            let files = commands::report::report(&dir, from.as_deref(), to.as_deref(), metric.as_deref())?;
            println!("wrote {}", commands::report::list(&files));
        }
    }
    Ok(())
}
