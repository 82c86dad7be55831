//! `breakerlab recommend PATH`: the lowest-cost configuration meeting every constraint,
//! explained, from a finished sweep's results or by running a sweep file first.

use super::export::{self, ExportRequest};
use super::sweep::TargetMode;
use super::sweep::{SweepRequest, sweep};
use crate::Result;
use crate::policy::export::Library;
use crate::scenario::{InputError, MAX_DATA_BYTES, read_input_text, read_text};
use crate::sweep::constraint::{Constraint, DEFAULT_CONSTRAINT};
use crate::sweep::coverage::coverage;
use crate::sweep::objective::BindToColumns;
use crate::sweep::objective::Objective;
use crate::sweep::output::{read_objective_toml, read_runs};
use crate::sweep::recommend::{Recommendation, Rules, recommend as rank};
use crate::sweep::runner::{default_objective, nameable_columns, resolved_params, validate_policy};
use crate::sweep::selection::Settings;
use crate::sweep::shard::{MANIFEST_FILE, Manifest};
use crate::sweep::store::Scratch;
use std::path::{Path, PathBuf};

/// What the user asked `recommend` to do.
#[derive(Clone, Debug, Default)]
pub struct RecommendRequest {
    /// A sweep's output folder, a runs.csv (shards concatenated are fine), or a sweep file.
    pub path: PathBuf,
    /// `metric=weight`: one objective weight each, on top of the sweep's objective.
    pub objective: Vec<String>,
    /// Constraints replacing the sweep's on the same metric, or added.
    pub constraints: Vec<String>,
    /// Worker threads when running a sweep file.
    pub threads: Option<usize>,
    /// No progress bar when running a sweep file.
    pub quiet: bool,
    /// Also write the chosen configuration in this library's own syntax.
    pub library: Option<Library>,
    /// `--target`: a sweep file runs with this target; for a finished sweep's results, the
    /// chosen configuration is exported to it (the nearest one with `--target-mode nearest`).
    pub target: Option<Library>,
    /// `--target-mode`.
    pub target_mode: Option<TargetMode>,
}

/// The recommendation and, when asked, the chosen configuration in a library's syntax.
#[derive(Debug)]
pub struct RecommendReport {
    /// The explained choice.
    pub recommendation: Recommendation,
    /// The chosen configuration exported (`--as`), when there is one.
    pub export: Option<String>,
    /// What the ranking could not see, said before it (results without their sweep's
    /// objective.toml).
    pub notes: Vec<String>,
}

impl RecommendReport {
    /// The explanation, then the export.
    pub fn render(&self) -> String {
        let mut s: String = self.notes.iter().map(|n| format!("note: {n}\n")).collect();
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&self.recommendation.render());
        if let Some(text) = &self.export {
            s.push('\n');
            s.push_str(text);
        }
        s
    }
}

/// Ranks the configurations of `req.path` under its objective and constraints with the
/// requested changes. A sweep file is run first, its outputs written as by `sweep`.
pub fn recommend(req: &RecommendRequest) -> Result<RecommendReport> {
    let columns = nameable_columns();
    // Check the overrides before anything runs.
    let weights = req
        .objective
        .iter()
        .map(|o| Objective::parse_override(o, &columns).map_err(InputError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let extra = req
        .constraints
        .iter()
        .map(|c| {
            Constraint::parse(c, &columns).map_err(|m| InputError::argument(format!("--constraint: {m}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let path = &req.path;
    let mut notes = Vec::new();
    let mut deployed = None;
    let (table, mut objective, mut constraints, settings) = if path.is_dir()
        || path.extension().is_some_and(|e| e == "csv")
    {
        let runs_path = if path.is_dir() { path.join("runs.csv") } else { path.to_path_buf() };
        // A large sweep's runs.csv passes the text files' 64 MiB: it has the data files' limit.
        let text = read_input_text(&runs_path, MAX_DATA_BYTES)?;
        // Results read back are spilled to the system's temporary folder (the results'
        // folder may be read-only).
        let scratch = Scratch::in_dir(std::env::temp_dir());
        let table = read_runs(&text, &runs_path.display().to_string(), &scratch).map_err(InputError::from)?;
        refuse_a_shard(&runs_path)?;
        let objective_path = runs_path.with_file_name("objective.toml");
        let (objective, constraints, settings) = if objective_path.is_file() {
            let text = read_text(&objective_path)?;
            read_objective_toml(&text, &objective_path.display().to_string(), &table.metrics)
                .map_err(InputError::from)?
        } else {
            let default = Constraint::parse(DEFAULT_CONSTRAINT, &table.metrics).map_err(InputError::from)?;
            notes.push(format!(
                "no objective.toml beside {}: ranked by the default objective and constraint ({DEFAULT_CONSTRAINT}), \
                 not necessarily the sweep's own (recommend on the folder a sweep or a merge wrote to rank as it did)",
                runs_path.display()
            ));
            notes.push(format!(
                "it holds {} scenario(s): {}; a scenario of the sweep whose rows it lacks cannot be seen here",
                table.scenarios.len(),
                table.scenarios.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ));
            (default_objective(), vec![default], Settings::default())
        };
        // An automatic sweep runs more replicates for its contenders only: its grid has holes.
        if settings.auto.is_none() {
            let cover = coverage(&table);
            if !cover.complete() {
                return Err(InputError::file(
                    &runs_path,
                    format!(
                        "holds {} of the {} cells its scenarios, configurations and replicates make; missing: {}. \
                         A partial sweep (not every shard's rows?) is not ranked: merge every shard with \
                         `breakerlab merge` and recommend on the merged folder",
                        cover.present,
                        cover.expected,
                        cover.missing_text()
                    ),
                )
                .into());
            }
        }
        (table, objective, constraints, settings)
    } else {
        let req = SweepRequest {
            file: Some(path.clone()),
            threads: req.threads,
            quiet: req.quiet,
            target: req.target,
            target_mode: req.target_mode,
            ..SweepRequest::default()
        };
        let report = sweep(&req)?;
        deployed = report.deployed.map(|d| d.section);
        let r = report.recommendation;
        (report.table, r.objective, r.constraints, report.settings)
    };
    for (m, w) in weights {
        objective.set(m, w);
    }
    for c in extra {
        constraints.retain(|k| k.metric != c.metric);
        constraints.push(c);
    }
    let rules = Rules { params: Some(&resolved_params), settings, ..Rules::new(&validate_policy) };
    let recommendation = rank(&table, &objective, &constraints, &rules).map_err(InputError::from)?;
    let export = match (req.library, recommendation.chosen()) {
        (Some(library), Some(chosen)) => {
            Some(export::run(&ExportRequest::of(library, &chosen.config.preset, &chosen.config.overrides))?)
        }
        _ => None,
    };
    let from_folder = |library: Library, chosen: &crate::sweep::recommend::Candidate| {
        let nearest = req.target_mode == Some(TargetMode::Nearest);
        let c = &chosen.config;
        export::run(&ExportRequest { nearest, ..ExportRequest::of(library, &c.preset, &c.overrides) })
            .map(|text| format!("\nDeploy to {}:\n{text}", library.name()))
    };
    let deployed = match (deployed, req.target, recommendation.chosen()) {
        (Some(section), _, _) => Some(section),
        (None, Some(library), Some(chosen)) => Some(from_folder(library, chosen)?),
        _ => None,
    };
    let export = match (export, deployed) {
        (Some(e), Some(d)) => Some(format!("{e}{d}")),
        (e, d) => e.or(d),
    };
    Ok(RecommendReport { recommendation, export, notes })
}

/// Refuses the runs.csv of one shard (a shard.toml beside it): a part of a sweep, which only
/// `merge` makes whole.
fn refuse_a_shard(runs: &Path) -> Result<()> {
    let manifest_path = runs.with_file_name(MANIFEST_FILE);
    if !manifest_path.is_file() {
        return Ok(());
    }
    let text = read_text(&manifest_path)?;
    let m = Manifest::parse(&text, &manifest_path.display().to_string()).map_err(InputError::from)?;
    Err(InputError::file(
        runs,
        format!(
            "the rows of shard {}/{} of sweep `{}` only ({} of its {} cells, beside {}): merge every shard with \
             `breakerlab merge` and recommend on the merged folder",
            m.shard,
            m.shards,
            m.sweep,
            m.cells,
            m.total_cells(),
            manifest_path.display()
        ),
    )
    .into())
}
