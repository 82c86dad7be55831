//! `breakerlab merge DIR... [--out DIR]`: the shards of a sweep (folders written by
//! `sweep --shard`) checked together and finished into the very files the unsharded sweep
//! writes. Each shard's runs.csv is read as a stream, one file after another. The shards of an
//! automatic sweep's stages go to [`super::merge_stages`].

use super::output;
use super::sweep::{Ran, Ranking, SweepReport, finish};
use crate::report::page::ReportInputs;
use crate::scenario::InputError;
use crate::scenario::open_input;
use crate::sweep::auto::{AutoReport, looks};
use crate::sweep::file::{ScenarioFiles, SweepFile};
use crate::sweep::merge::Merge;
use crate::sweep::output::RunsReader;
use crate::sweep::review::ScenarioFacts;
use crate::sweep::runner::{
    config_info, default_objective, metric_columns, nameable_columns, spec_of, validate_policy,
};
use crate::sweep::selection::{Rule, Settings};
use crate::sweep::shard::{MANIFEST_FILE, Manifest};
use crate::time::Dur;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Shard folder `dir`'s runs.csv, opened.
fn runs_csv(dir: &std::path::Path) -> Result<(PathBuf, std::io::BufReader<std::fs::File>)> {
    let path = dir.join(output::RUNS_CSV);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(InputError::file(&path, "no such file: the shard is incomplete").into());
    }
    let file = open_input(&path)?;
    Ok((path, std::io::BufReader::new(file)))
}

/// What `breakerlab merge` is asked to do.
#[derive(Clone, Debug, Default)]
pub struct MergeRequest {
    /// The shards' folders.
    pub dirs: Vec<PathBuf>,
    /// Output folder (default `output/<sweep name>`).
    pub out: Option<PathBuf>,
    /// Draw the charts and write the review page.
    pub charts: bool,
}

/// Why a folder without shard.toml cannot be merged.
fn not_a_shard() -> String {
    format!("no {MANIFEST_FILE}: not a shard's folder, or its shard did not finish")
}

/// The scenario files a recorded sweep file names, taken as named: a merge needs their names
/// only, not the files (they may not be on the merging machine).
struct AsNamed;

impl ScenarioFiles for AsNamed {
    fn resolve(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
        Ok(vec![base.join(pattern)])
    }

    fn same_file(&self, _: &Path, _: &Path) -> bool {
        false
    }
}

/// Checks that the objective and constraints a shard.toml ranks by are the ones the sweep file
/// it recorded says (a shard.toml edited to rank otherwise is refused, naming the field).
fn check_ranking(m: &Manifest, path: &Path) -> Result<()> {
    let columns = nameable_columns();
    let recorded = Path::new(&m.sweep_file.name);
    let file = SweepFile::parse(&m.sweep_file.text, recorded, &columns, &validate_policy, &AsNamed)
        .map_err(InputError::from)?;
    let objective = file.objective.unwrap_or_else(default_objective);
    let weights: Vec<(String, f64)> =
        objective.weights.iter().map(|(m, w)| (m.name().to_string(), *w)).collect();
    let constraints: Vec<String> = file.constraints.iter().map(|c| c.text.clone()).collect();
    let field = if weights != m.objective {
        "objective"
    } else if constraints != m.constraints {
        "constraints"
    } else {
        return Ok(());
    };
    Err(InputError::file(
        path,
        format!(
            "{field}: not what its sweep file ({}, recorded in [sweep_file]) says: the file was edited after the \
             shard ran",
            m.sweep_file.name
        ),
    )
    .into())
}

/// `breakerlab merge DIR... [--out DIR]`: checks the shards' manifests together (one sweep, one
/// version, every cell exactly once), reads their runs.csv one after another, and writes what
/// the unsharded sweep writes, byte for byte. Nothing is written when a check fails.
pub fn merge(req: &MergeRequest) -> Result<MergeReport> {
    let mut shards = Vec::with_capacity(req.dirs.len());
    // Folders named as a shard's whose shard did not finish: reported with the missing shards.
    let mut unfinished: Vec<&Path> = Vec::new();
    let mut dirs = Vec::with_capacity(req.dirs.len());
    for dir in &req.dirs {
        let path = dir.join(MANIFEST_FILE);
        if !path.is_file() {
            let named = dir.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("shard-"));
            if named.is_some_and(|n| n.contains("-of-")) && dir.is_dir() {
                unfinished.push(dir);
                continue;
            }
            return Err(InputError::file(dir, not_a_shard()).into());
        }
        dirs.push(dir);
        let text = crate::scenario::read_text(&path)?;
        let manifest = Manifest::parse(&text, &path.display().to_string()).map_err(InputError::from)?;
        check_ranking(&manifest, &path)?;
        shards.push((dir.display().to_string(), manifest));
    }
    let unfinished_note = || {
        let names: Vec<String> = unfinished.iter().map(|d| d.display().to_string()).collect();
        format!("no {MANIFEST_FILE} in {}: its shard did not finish", names.join(", "))
    };
    let Some(first) = shards.first() else {
        let dir = unfinished.first().map_or(Path::new("."), |d| d);
        return Err(InputError::file(dir, not_a_shard()).into());
    };
    let dir = output::out_dir(req.out.as_deref(), &first.1.sweep);
    let scratch = super::sweep::scratch_next_to(&dir);
    // A sweep over a pool of hosts writes its scores too: the first shard's header says (a
    // missing or broken file is reported where it is read, below).
    let pooled = dirs
        .first()
        .and_then(|d| runs_csv(d).ok())
        .and_then(|(path, file)| RunsReader::new(file, &path.display().to_string()).ok())
        .is_some_and(|header| header.metrics() == nameable_columns().as_slice());
    let columns = if pooled { nameable_columns() } else { metric_columns() };
    if shards.iter().any(|(_, m)| m.stage.is_some()) {
        if !unfinished.is_empty() {
            return Err(InputError::argument(unfinished_note()).into());
        }
        return super::merge_stages::merge_stages(req, shards, &dirs, columns, &scratch, &dir);
    }
    let mut merge = Merge::new(shards, columns, &scratch).map_err(|e| {
        if unfinished.is_empty() {
            InputError::from(e)
        } else {
            InputError::argument(format!("{}; {e}", unfinished_note()))
        }
    })?;
    if !unfinished.is_empty() {
        return Err(InputError::argument(format!(
            "{}, and the other folders already hold every cell: leave it out",
            unfinished_note()
        ))
        .into());
    }
    for (k, dir) in dirs.iter().enumerate() {
        read_shard(&mut merge, k, dir)?;
    }
    complete(req, merge, None, &dir).map(|r| MergeReport::Done(Box::new(r)))
}

/// What `breakerlab merge` did: the finished sweep, or, for an automatic sweep that goes on,
/// the next stage's plan.
#[derive(Debug)]
pub enum MergeReport {
    /// The sweep's files, as the unsharded sweep writes them.
    Done(Box<SweepReport>),
    /// The plan of an automatic sweep's next stage.
    Next(Box<super::merge_stages::NextStage>),
}

impl MergeReport {
    /// What to print.
    pub fn render(&self) -> String {
        match self {
            MergeReport::Done(r) => r.render(),
            MergeReport::Next(n) => n.render(),
        }
    }
}

/// Reads shard `k`'s runs.csv from its folder `dir` into `merge`, then again for its digests.
pub(super) fn read_shard(merge: &mut Merge, k: usize, dir: &Path) -> Result<()> {
    let (path, file) = runs_csv(dir)?;
    let name = path.display().to_string();
    merge.add(k, file, &name).map_err(InputError::from)?;
    // Read again for its digests: every row was a valid cell, now every byte is the shard's.
    let again = open_input(&path)?;
    merge.verify(k, std::io::BufReader::new(again), &name).map_err(InputError::from)?;
    Ok(())
}

/// The selection's confidence and indifference zone a shard recorded (the defaults if none).
pub(super) fn rule_of(m: &Manifest) -> Rule {
    let mut rule = Rule::default();
    rule.confidence = m.confidence.unwrap_or(rule.confidence);
    rule.indifference = m.indifference.unwrap_or(rule.indifference);
    rule
}

/// Finishes a merge whose every shard was read: the files the unsharded sweep writes, into
/// `dir`; `stages` are an automatic sweep's.
pub(super) fn complete(
    req: &MergeRequest,
    merge: Merge,
    stages: Option<AutoReport>,
    dir: &Path,
) -> Result<SweepReport> {
    let merged = merge
        .finish(&|config, label| {
            let resolved =
                spec_of(&config).resolve().map_err(|e| Error::invalid(format!("policy `{label}`: {e}")))?;
            let info = config_info(&config, &resolved);
            if info.label != label {
                return Err(Error::invalid(format!(
                    "configuration {} is {label:?} in the shards but {:?} here",
                    config.id, info.label
                )));
            }
            Ok(info)
        })
        .map_err(InputError::from)?;
    let m = merged.manifest;
    let page = req.charts.then(|| ReportInputs {
        title: format!("sweep: {}", m.sweep),
        command_line: Some(m.command.clone()),
        seed: m.seed,
        files: m.inputs.iter().map(super::shard::input_file).collect(),
        ..Default::default()
    });
    let auto = stages.as_ref().map(|_| looks(m.replicates));
    let rule = rule_of(&m);
    let ranking = Ranking {
        objective: merged.objective,
        constraints: merged.constraints,
        fronts: m.pareto,
        settings: Settings { rule, baseline: m.baseline, auto },
        deployment: deployment_of(&m.sweep_file)?,
    };
    let facts: Vec<ScenarioFacts> = m
        .durations_us
        .iter()
        .zip(&m.ride_out)
        .map(|(us, ride_out)| ScenarioFacts { duration: Dur::from_micros(*us), ride_out: *ride_out })
        .collect();
    let facts = (facts.len() == m.scenarios.len()).then_some(facts.as_slice());
    let ran = Ran { replicates: m.replicates, stages };
    finish(m.sweep, ran, merged.table, &ranking, facts, dir, page)
}

/// The sweep file's target, applied to its grid again as each shard applied it (the same
/// replacements, so the merged folder's deploy section is the unsharded sweep's). The scenario
/// files are not needed: any pattern is taken as a file.
fn deployment_of(sweep: &crate::sweep::shard::SweepText) -> Result<Option<crate::sweep::target::Deployment>> {
    struct Named;
    impl ScenarioFiles for Named {
        fn resolve(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
            Ok(vec![base.join(pattern)])
        }
        fn same_file(&self, _: &Path, _: &Path) -> bool {
            false
        }
    }
    let path = Path::new(&sweep.name);
    let mut file = SweepFile::parse(&sweep.text, path, &metric_columns(), &validate_policy, &Named)
        .map_err(InputError::from)?;
    super::sweep::targeted(&mut file, None, None)
}
