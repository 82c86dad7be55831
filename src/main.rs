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
        Command::Run { scenario, script, policy, sets, seed, out } => {
            let req = commands::run::RunRequest { scenario, script, policy, sets, seed, out };
            let report = commands::run::run(&req)?;
            print!("{}", commands::run::render(&report));
        }
        Command::Presets { name } => print!("{}", commands::presets::render(name.as_deref())?),
    }
    Ok(())
}
