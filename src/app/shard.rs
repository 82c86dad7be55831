//! `breakerlab sweep FILE --shard K/N`: one shard of a sweep. It checks the whole sweep, runs
//! its cells of the plan, streams their rows to `<out>/shard-K-of-N/runs.csv` and writes
//! shard.toml beside it, for `breakerlab merge` ([`super::merge`]). A shard of an automatic
//! sweep (`replicates = "auto"`) runs its share of one stage: stage 1 without `--plan`, a later
//! one with the `stage-plan.toml` that `merge` of the stages before wrote; it writes to
//! `<out>/stage-S/shard-K-of-N/`.

use super::load_scenarios;
use super::output::{self, Keep, OutputDir};
use super::resume::{CHECKPOINT_ROWS, Found, Journal, skip_cells};
use super::sweep::{runs_error, sweep_path};
use crate::limits::{Limits, estimate_cells};
use crate::report::page::InputFile;
use crate::scenario::open_input;
use crate::scenario::{InputError, Scenario, Spot};
use crate::sweep::file::Replicates;
use crate::sweep::file::SweepFile;
use crate::sweep::integrity::{RunsDigest, block_rows};
use crate::sweep::objective::BindToColumns;
use crate::sweep::output::RunsWriter;
use crate::sweep::runner::{
    Cells, Configs, MAX_CELLS, check_named, config_info, default_objective, nameable_columns,
    progress_bar_of, result_columns, validate_policy,
};
use crate::sweep::shard::{InputHash, MANIFEST_FILE, Manifest, ShardId, Slice, SweepText, plan, sweep_hash};
use crate::sweep::stage_plan::{StagePlan, stage_slices};
use crate::sweep::table::ConfigInfo;
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The build a shard records as its `version`: the commit it was built from (`git rev-parse
/// HEAD` at build time), or the package version when it was built outside a git checkout.
pub const BUILD: &str = env!("BREAKERLAB_BUILD");

/// What one shard of a sweep is asked to do.
#[derive(Clone, Debug)]
pub struct ShardRequest {
    /// The sweep file (the bundled default when `None`).
    pub file: Option<PathBuf>,
    /// Which shard.
    pub shard: ShardId,
    /// Where the shard's identity came from (`--shard 1/4`, `SLURM_ARRAY_TASK_ID=1, ...`).
    pub source: String,
    /// True when it came from a scheduler's variables rather than `--shard`: the array's size
    /// must then agree with the shards already in the output folder.
    pub from_scheduler: bool,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// The folder that holds every shard's folder (default `output/<name>-shards`).
    pub out: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
    /// The command line that runs the whole sweep at once, for the merged review page.
    pub command_line: String,
    /// Memory and simulated-call limits, checked on this shard's cells before anything runs.
    pub limits: Limits,
    /// `--replicates N|auto`: replaces the sweep file's `replicates`.
    pub replicates: Option<Replicates>,
    /// `--max-replicates N`: the most `replicates = "auto"` gives a configuration.
    pub max_replicates: Option<u32>,
    /// `--plan FILE`: the stage plan a shard of an automatic sweep's later stage runs.
    pub plan: Option<PathBuf>,
}

/// What one shard did.
#[derive(Debug)]
pub struct ShardReport {
    /// The request's shard and where it came from.
    pub shard: ShardId,
    /// See [`ShardRequest::source`].
    pub source: String,
    /// The sweep's name.
    pub name: String,
    /// Cells this shard ran, and in the whole sweep.
    pub cells: (u64, u64),
    /// Expected calls simulated by this shard, and by the whole sweep.
    pub calls: (u64, u64),
    /// Request streams this shard generated.
    pub streams: usize,
    /// The shard's folder.
    pub dir: PathBuf,
    /// What it found of a killed run of the same shard.
    pub found: Found,
    /// An automatic sweep's stage: its number and replicates.
    pub stage: Option<(u32, std::ops::Range<u32>)>,
}

impl ShardReport {
    /// Which shard ran, how much of the sweep it was, and where it wrote.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let share = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        let _ = writeln!(s, "shard {} of sweep {} (from {})", self.shard, self.name, self.source);
        if let Some((n, reps)) = &self.stage {
            let reps = if reps.len() == 1 {
                format!("replicate {}", reps.start)
            } else {
                format!("replicates {}-{}", reps.start, reps.end - 1)
            };
            let _ = writeln!(
                s,
                "stage {n} of replicates = \"auto\": {reps} of the configurations in the running"
            );
        }
        match &self.found {
            Found::Nothing => {}
            Found::Resumed(rows) => {
                let _ = writeln!(
                    s,
                    "resumed after {rows} of its cells: a killed run's rows, checked against their SHA-256"
                );
            }
            Found::Discarded(why) => {
                let _ = writeln!(s, "started over: a killed run's rows were discarded ({why})");
            }
        }
        let _ = writeln!(
            s,
            "ran {} of {} cells ({:.1} % of the expected calls), {} request stream(s)",
            self.cells.0,
            self.cells.1,
            share(self.calls.0, self.calls.1),
            self.streams
        );
        let every = if self.stage.is_some() { "every stage's shards so far" } else { "every shard" };
        let _ = writeln!(
            s,
            "wrote runs.csv, {MANIFEST_FILE} to {}/ (merge {every} with `breakerlab merge`)",
            self.dir.display()
        );
        s
    }
}

/// Which shard a `sweep` runs: `--shard K/N`; none for `--shard none` (the whole sweep, even
/// inside an array task); else the one the scheduler's variables (`var` looks one up) name, the
/// number of shards from `--shards N` or the sweep file's `shards = N`. Returns the shard,
/// where it came from, and whether that was the scheduler.
pub fn choose(
    flag: Option<&str>,
    shards: Option<u32>,
    file: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(ShardId, String, bool)>> {
    match flag.map(str::trim) {
        Some("none") => Ok(None),
        Some(text) => Ok(Some((ShardId::parse(text)?, format!("--shard {text}"), false))),
        None => {
            // `shards = N` in the sweep file, read loosely: the full check comes with the sweep.
            let declared = sweep_path(file)
                .ok()
                .and_then(|p| crate::scenario::read_input_text(&p, crate::scenario::MAX_TEXT_BYTES).ok())
                .and_then(|t| t.parse::<toml::Table>().ok())
                .and_then(|t| t.get("shards").and_then(toml::Value::as_integer))
                .and_then(|n| u32::try_from(n).ok());
            Ok(ShardId::from_scheduler(shards, declared, var)?.map(|(s, from)| (s, from, true)))
        }
    }
}

/// The shard counts of the `shard-K-of-N` folders already in `parent`, with one folder's name
/// for each, sorted.
fn shard_counts(parent: &Path) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (_, n) = name.strip_prefix("shard-")?.split_once("-of-")?;
            Some((n.parse().ok()?, name))
        })
        .collect();
    found.sort();
    found.dedup_by_key(|(n, _)| *n);
    found
}

/// Refuses a shard whose number of shards disagrees with the sweep file's `shards = N`, or,
/// when it came from a scheduler, with the shards a first run left in `parent`: an array of
/// another size (`sbatch --array=2` to rerun one task) would otherwise run a different split.
fn check_count(req: &ShardRequest, declared: Option<&(u32, Spot)>, parent: &Path) -> Result<()> {
    let shard = req.shard;
    if let Some((n, spot)) = declared.filter(|(n, _)| *n != shard.count) {
        return Err(spot
            .error(format!(
                "the sweep runs as {n} shards but this is shard {shard} (from {}): give --shard K/{n}, or \
                 submit the array as --array=0-{}",
                req.source,
                n - 1
            ))
            .into());
    }
    if !req.from_scheduler || declared.is_some() {
        return Ok(());
    }
    if let Some((n, example)) = shard_counts(parent).into_iter().find(|(n, _)| *n != shard.count) {
        return Err(InputError::argument(format!(
            "{}: this array task is shard {shard}, but {} holds the shards of a {n}-shard run ({example}): \
             an array of another size splits the sweep differently. To rerun shard K of that run, give \
             --shard K/{n} (Slurm: sbatch --array=K scale/slurm.sbatch --shard K/{n}); to start over with {} \
             shards, remove {} first",
            req.source,
            parent.display(),
            shard.count,
            parent.display()
        ))
        .into());
    }
    Ok(())
}

/// The file at `path` as a shard records it: SHA-256 (read in blocks), size, and its text when
/// small ([`InputFile`]'s rule, so a merged sweep lists it as the unsharded one does).
fn hash_file(path: &Path) -> Result<InputHash> {
    // A FIFO, device or folder is refused, naming it.
    drop(open_input(path)?);
    let f = InputFile::read(path).ok_or_else(|| InputError::file(path, "cannot read"))?;
    Ok(InputHash { path: f.name, sha256: f.sha256, bytes: f.bytes, text: f.text })
}

/// An input a shard recorded, as the review page and inputs.toml list it.
pub(super) fn input_file(h: &InputHash) -> InputFile {
    InputFile {
        name: h.path.clone(),
        bytes: h.bytes,
        sha256: h.sha256.clone(),
        text: h.text.clone(),
        note: None,
    }
}

/// Every input a sweep read: the sweep file, then each scenario file and the files it names.
fn input_hashes(sweep: &Path, scenarios: &[Scenario]) -> Result<Vec<InputHash>> {
    super::input_paths(Some(sweep), scenarios).iter().map(|p| hash_file(p)).collect()
}

/// The stage a shard of an automatic sweep runs.
struct StageShare {
    /// Its number (1, 2, …).
    number: u32,
    /// The SHA-256 of its plan (stages after the first).
    plan: Option<String>,
    /// The configurations in the running.
    running: Vec<usize>,
    /// The replicates it runs.
    replicates: std::ops::Range<u32>,
    /// Expected calls of one replicate of one configuration over every scenario.
    per_run: u64,
}

/// The stage of `file` (automatic) a shard runs: the first without `--plan`, else the plan's,
/// checked (its SHA-256, this sweep's hash, build and `max_replicates`).
fn stage_share(
    req: &ShardRequest,
    file: &SweepFile,
    scenarios: &[Scenario],
    hash: &str,
) -> Result<StageShare> {
    let configs_spot = Spot::in_file(&file.path, "", None, "[[policies]]");
    let per_run = super::sweep::auto_budget(file, scenarios, &configs_spot, &req.limits)?;
    let Some(path) = &req.plan else {
        return Ok(StageShare {
            number: 1,
            plan: None,
            running: (0..file.configurations.count()).collect(),
            replicates: 0..1,
            per_run,
        });
    };
    let text = crate::scenario::read_text(path)?;
    let name = path.display().to_string();
    let plan = StagePlan::parse(&text, &name).map_err(InputError::from)?;
    plan.check(&file.name, hash, BUILD, file.replicates, &name).map_err(InputError::from)?;
    let running = plan.running_ids(file.configurations.count(), &name).map_err(InputError::from)?;
    Ok(StageShare {
        number: plan.stage,
        plan: Some(plan.sha256),
        running,
        replicates: plan.first_replicate..plan.last_replicate + 1,
        per_run,
    })
}

/// `breakerlab sweep FILE --shard K/N`: loads and checks the whole sweep (so a bad file fails
/// every shard the same way), runs this shard's cells of [`plan`], streams their rows to
/// `<out>/shard-K-of-N/runs.csv` and writes shard.toml beside it. No charts.
pub fn run_shard(req: &ShardRequest) -> Result<ShardReport> {
    let path = sweep_path(req.file.as_deref())?;
    let mut file =
        super::files::load_sweep(&path, &nameable_columns(), &validate_policy).map_err(InputError::from)?;
    file.set_replicates(req.replicates, req.max_replicates).map_err(InputError::argument)?;
    // The file's target replaces or refuses configurations as the unsharded sweep does.
    super::sweep::targeted(&mut file, None, None)?;
    if let (Some(plan), false) = (&req.plan, file.auto) {
        return Err(InputError::file(
            plan,
            "--plan is for a stage of an automatic sweep (replicates = \"auto\"), and this sweep's replicates \
             are a number",
        )
        .into());
    }
    let text = crate::scenario::read_text(&path)?;
    let scenarios = load_scenarios(&file.scenarios)?;
    let columns = result_columns(&scenarios);
    let configs = &file.configurations;
    let objective = file.objective.clone().unwrap_or_else(default_objective);
    let bound = objective.bind(&columns).map_err(InputError::from)?;
    check_named(file.constraints.iter().map(|c| c.metric), &columns).map_err(InputError::from)?;
    let inputs = input_hashes(&path, &scenarios)?;
    let hash = sweep_hash(&inputs);
    let stage = file.auto.then(|| stage_share(req, &file, &scenarios, &hash)).transpose()?;

    let cells = Cells { scenarios: &scenarios, configs, replicates: file.replicates, seed: file.seed };
    // The plan lists every (scenario, replicate) stream: refuse a sweep too large to plan first.
    if cells.count() > MAX_CELLS {
        return Err(file.replicates_spot.error(format!(
            "{} cells (scenarios x configurations x replicates) is more than the {MAX_CELLS} one sweep may hold",
            cells.count()
        ))
        .into());
    }
    let costs: Vec<u64> = scenarios.iter().map(|s| s.expected_requests().round() as u64).collect();
    let shard = req.shard;
    let plans = match &stage {
        Some(st) => stage_slices(&costs, &st.running, st.replicates.clone(), shard.count),
        None => plan(&costs, configs.count(), file.replicates, shard.count),
    };
    let slices = &plans[shard.index as usize];
    let calls_of = |sl: &Slice| costs[sl.scenario] * sl.configs.len() as u64;
    let calls = (slices.iter().map(calls_of).sum(), plans.iter().flatten().map(calls_of).sum());
    let mine: u64 = slices.iter().map(|s| s.configs.len() as u64).sum();
    let configs_spot = Spot::in_file(&path, "", None, "[[policies]]");
    let estimate = estimate_cells(&cells, Some(slices), &file.replicates_spot, &configs_spot)?;
    estimate.check(&req.limits)?;
    // Progress lines in a scheduler's log say calls/s and the ETA, as the one-machine sweep's do.
    let calls_per_cell = estimate.calls() as f64 / mine.max(1) as f64;
    // The configuration of the rows being written (rows come configuration by configuration).
    let mut info: Option<ConfigInfo> = None;

    let mut parent = output::out_dir(req.out.as_deref(), &format!("{}-shards", file.name));
    if let Some(st) = &stage {
        parent = parent.join(format!("stage-{}", st.number));
    }
    check_count(req, file.shards.as_ref(), &parent)?;
    let dir = parent.join(format!("shard-{}-of-{}", shard.index, shard.count));
    let mut out = OutputDir::create(&dir, Keep::Foreign)?;
    let runs = dir.join(output::RUNS_CSV);
    // The rows go to a journal first, so a killed shard run again resumes after them.
    let mut run = format!("sweep {hash} replicates {} shard {shard} build {BUILD}", file.replicates);
    if let Some(st) = &stage {
        let _ = write!(run, " stage {} plan {}", st.number, st.plan.as_deref().unwrap_or("none"));
    }
    let (journal, found) = Journal::open(&dir, &run)?;
    let todo = skip_cells(slices, found.rows());
    let bar = progress_bar_of(mine - found.rows().min(mine), calls_per_cell, req.quiet);
    let mut done = found.rows();
    let journalled = {
        let mut rows = RunsWriter::new(journal, &columns).map_err(|e| runs_error(e, &runs))?;
        cells.run_slices(&todo, req.threads, &columns, &bar, &mut |row| {
            let cost = bound.cost(&row.values);
            let current = match info.take() {
                Some(i) if i.config.id == row.config => i,
                _ => {
                    let config = configs
                        .get(row.config)
                        .ok_or_else(|| crate::Error::Internal(format!("no configuration {}", row.config)))?;
                    config_info(&config, &configs.resolve(row.config)?)
                }
            };
            rows.row(&scenarios[row.scenario].name, &current, &row, cost)
                .map_err(|e| runs_error(e, &runs))?;
            info = Some(current);
            done += 1;
            if done.is_multiple_of(CHECKPOINT_ROWS) {
                rows.flushed().map_err(|e| runs_error(e, &runs))?.checkpoint(done)?;
            }
            Ok(())
        })?;
        rows.finish().map_err(|e| runs_error(e, &runs))?.finish()?
    };
    out.write_with(output::RUNS_CSV, |w| {
        let mut from = std::fs::File::open(&journalled).map_err(|e| Error::io(&journalled, e))?;
        std::io::copy(&mut from, w).map(drop).map_err(|e| Error::io(&runs, e))
    })?;
    // The digests are taken from the file as written, so shard.toml vouches for its bytes.
    let written = out
        .open(output::RUNS_CSV)
        .map_err(|e| Error::io(&runs, e))?
        .ok_or_else(|| Error::Internal(format!("{} was not written", runs.display())))?;
    let digest = RunsDigest::compute(written, block_rows(mine), &runs.display().to_string())
        .map_err(InputError::from)?;
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let manifest = Manifest {
        sweep: file.name.clone(),
        version: BUILD.to_string(),
        hash,
        shard: shard.index,
        shards: shard.count,
        command: req.command_line.clone(),
        cells: mine,
        configurations: configs.count(),
        replicates: file.replicates,
        seed: file.seed,
        seeds: scenarios.iter().map(|s| file.seed.unwrap_or(s.seed)).collect(),
        objective: objective.weights.iter().map(|(m, w)| (m.name().to_string(), *w)).collect(),
        constraints: file.constraints.iter().map(|c| c.text.clone()).collect(),
        pareto: file.pareto.clone(),
        sweep_file: SweepText { name: path.display().to_string(), text },
        inputs,
        ran: Manifest::ran_of(&names, slices),
        baseline: file.baseline,
        durations_us: scenarios.iter().map(|s| s.duration.micros()).collect(),
        ride_out: super::sweep::scenario_facts(&scenarios, file.seed)?.iter().map(|f| f.ride_out).collect(),
        confidence: Some(file.rule.confidence),
        indifference: Some(file.rule.indifference),
        stage: stage.as_ref().map(|st| st.number),
        plan: stage.as_ref().and_then(|st| st.plan.clone()),
        calls_per_run: stage.as_ref().map(|st| st.per_run),
        max_calls: stage.as_ref().map(|_| req.limits.max_calls),
        scenarios: names,
        runs: digest,
    };
    out.write(output::SHARD_TOML, manifest.to_toml().map_err(InputError::from)?.as_bytes())?;
    out.finish(None)?;
    Journal::remove(&dir);
    Ok(ShardReport {
        shard,
        source: req.source.clone(),
        name: file.name,
        cells: (mine, plans.iter().flatten().map(|s| s.configs.len() as u64).sum()),
        calls,
        streams: slices.len(),
        dir,
        found,
        stage: stage.map(|st| (st.number, st.replicates)),
    })
}
