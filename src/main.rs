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
    err.chain().any(|e| {
        e.is::<InputError>()
            || e.is::<breakerlab::policy::PolicyError>()
            || e.is::<breakerlab::policy::export::ExportError>()
    })
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
        Command::Export { library, policy, sets, name } => {
            let req = commands::export::ExportRequest { library, policy, sets, name };
            print!("{}", commands::export::run(&req)?);
        }
        Command::Presets { name } => print!("{}", commands::presets::render(name.as_deref())?),
        Command::Report { dir, from, to, metric } => {
            let files = commands::report::report(&dir, from.as_deref(), to.as_deref(), metric.as_deref())?;
            println!("wrote {}", commands::report::list(&files));
        }
    }
    Ok(())
}
