//! `breakerlab merge DIR... [--out DIR]`: the shards of a sweep (folders written by
//! `sweep --shard`) checked together and finished into the very files the unsharded sweep
//! writes. Each shard's runs.csv is read as a stream, one file after another.

use super::output;
use super::sweep::{Ran, Ranking, SweepReport, finish};
use crate::report::page::{InputFile, ReportInputs};
use crate::scenario::InputError;
use crate::sweep::merge::Merge;
use crate::sweep::review::ScenarioFacts;
use crate::sweep::runner::{config_info, metric_columns, spec_of};
use crate::sweep::selection::{Rule, Settings};
use crate::sweep::shard::{MANIFEST_FILE, Manifest};
use crate::time::Dur;
use crate::{Error, Result};
use std::path::PathBuf;

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

/// `breakerlab merge DIR... [--out DIR]`: checks the shards' manifests together (one sweep, one
/// version, every cell exactly once), reads their runs.csv one after another, and writes what
/// the unsharded sweep writes, byte for byte. Nothing is written when a check fails.
pub fn merge(req: &MergeRequest) -> Result<SweepReport> {
    let mut shards = Vec::with_capacity(req.dirs.len());
    for dir in &req.dirs {
        let path = dir.join(MANIFEST_FILE);
        if !path.is_file() {
            return Err(InputError::file(
                dir,
                format!("no {MANIFEST_FILE}: not a shard's folder, or its shard did not finish"),
            )
            .into());
        }
        let text = crate::scenario::read_text(&path)?;
        let manifest = Manifest::parse(&text, &path.display().to_string()).map_err(InputError::from)?;
        shards.push((dir.display().to_string(), manifest));
    }
    let dir = output::out_dir(req.out.as_deref(), &shards[0].1.sweep);
    let scratch = super::sweep::scratch_next_to(&dir);
    let mut merge = Merge::new(shards, metric_columns(), &scratch).map_err(InputError::from)?;
    for (k, dir) in req.dirs.iter().enumerate() {
        let path = dir.join(output::RUNS_CSV);
        let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::Input(InputError::file(&path, "no such file: the shard is incomplete"))
            }
            _ => Error::io(&path, e),
        })?;
        merge.add(k, std::io::BufReader::new(file), &path.display().to_string()).map_err(InputError::from)?;
    }
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
        files: vec![InputFile::of_text(m.sweep_file.name.clone(), &m.sweep_file.text)],
        ..Default::default()
    });
    let mut rule = Rule::default();
    rule.confidence = m.confidence.unwrap_or(rule.confidence);
    rule.indifference = m.indifference.unwrap_or(rule.indifference);
    let ranking = Ranking {
        objective: merged.objective,
        constraints: merged.constraints,
        fronts: m.pareto,
        settings: Settings { rule, baseline: m.baseline, auto: None },
    };
    let facts: Vec<ScenarioFacts> = m
        .durations_us
        .iter()
        .zip(&m.ride_out)
        .map(|(us, ride_out)| ScenarioFacts { duration: Dur::from_micros(*us), ride_out: *ride_out })
        .collect();
    let facts = (facts.len() == m.scenarios.len()).then_some(facts.as_slice());
    let ran = Ran { replicates: m.replicates, stages: None };
    finish(m.sweep, ran, merged.table, &ranking, facts, &dir, page)
}
