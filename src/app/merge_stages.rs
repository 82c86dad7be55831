//! `breakerlab merge` of an automatic sweep's stages (`replicates = "auto"` run with
//! `--shard`): the shards of every stage so far, checked stage by stage and judged as the
//! one-machine sweep judges ([`crate::sweep::auto::Stages`]). Stage 1 must hold replicate 0 of
//! every configuration; each later stage must be the very stage the ones before lead to (its
//! shards ran the plan this merge computes again, by SHA-256). When the sweep stops, the
//! folder is the one-machine sweep's, byte for byte; when it goes on, the folder holds the next
//! stage's plan (`stage-plan.toml`) and the commands to run it are printed.

use super::merge::{MergeReport, MergeRequest, complete, read_shard, rule_of};
use super::output::{Keep, OutputDir};
use crate::scenario::InputError;
use crate::sweep::SweepError;
use crate::sweep::auto::{Judge, Stages, schedule};
use crate::sweep::merge::{Merge, ranking_of};
use crate::sweep::objective::BindToColumns;
use crate::sweep::shard::{Expected, MANIFEST_FILE, Manifest, check_stage, check_stages_agree};
use crate::sweep::stage_plan::{PLAN_FILE, StagePlan, StageResults, range_text, ranges_of};
use crate::sweep::store::Scratch;
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An automatic sweep that goes on: the plan of its next stage and how to run it.
#[derive(Debug)]
pub struct NextStage {
    /// The sweep's name.
    pub sweep: String,
    /// The stages so far, one sentence a line.
    pub stages: Vec<String>,
    /// The plan written.
    pub plan: StagePlan,
    /// Where it was written.
    pub path: PathBuf,
    /// The shards of the stage to run (as many as the last stage had).
    pub shards: u32,
    /// The command a shard of the stage runs, without `--shard` and `--plan`.
    pub command: String,
    /// The sweep file, as the shards named it.
    pub sweep_file: String,
    /// The folder of the stages' shard folders (`<folder>/stage-S/shard-K-of-N`).
    pub shards_dir: PathBuf,
    /// The merge's output folder.
    pub out: PathBuf,
}

impl NextStage {
    /// The stages so far, the next stage, and the commands that run and merge it.
    pub fn render(&self) -> String {
        let p = &self.plan;
        let mut s = format!(
            "sweep {}: replicates = \"auto\" (up to {} each), merged so far:\n",
            self.sweep, p.max_replicates
        );
        for line in &self.stages {
            let _ = writeln!(s, "  {line}");
        }
        let n = self.shards;
        let plan = self.path.display();
        let _ = writeln!(
            s,
            "the confidence is not reached yet: stage {} runs replicates {}-{} of {} configuration(s)\nwrote {plan}",
            p.stage, p.first_replicate, p.last_replicate, p.configurations
        );
        let _ = writeln!(s, "\nrun the stage's {n} shard(s), one per machine:");
        if n <= 8 {
            for k in 0..n {
                let _ = writeln!(s, "  {} --shard {k}/{n} --plan {plan}", self.command);
            }
        } else {
            let _ = writeln!(s, "  {} --shard K/{n} --plan {plan}    (K = 0 ... {})", self.command, n - 1);
        }
        let _ = writeln!(
            s,
            "or under Slurm:\n  SWEEP={} SHARDS={} sbatch --array=0-{} scale/slurm.sbatch --plan {plan}",
            self.sweep_file,
            self.shards_dir.display(),
            n - 1
        );
        let _ = writeln!(
            s,
            "then merge every stage's shards (the sweep's files when it stops, else the next plan):\n  breakerlab \
             merge {}/stage-*/shard-*-of-* --out {}",
            self.shards_dir.display(),
            self.out.display()
        );
        s
    }
}

/// Merges the shards of an automatic sweep's stages (`shards`, read from `dirs`, in the order
/// given; `columns` the metric columns of their runs.csv) into `out`.
pub(super) fn merge_stages(
    req: &MergeRequest,
    shards: Vec<(String, Manifest)>,
    dirs: &[&PathBuf],
    columns: Vec<String>,
    scratch: &Scratch,
    out: &Path,
) -> Result<MergeReport> {
    if let Some((dir, _)) = shards.iter().find(|(_, m)| m.stage.is_none()) {
        return Err(InputError::argument(format!(
            "{dir} is a shard of a sweep of fixed replicates, the others of an automatic sweep's stages: merge \
             one sweep's shards"
        ))
        .into());
    }
    check_stages_agree(&shards).map_err(InputError::from)?;
    // A stage's number is one the schedule has.
    for (dir, m) in &shards {
        let most = schedule(m.replicates).len() as u32;
        if let Some(n) = m.stage.filter(|n| !(1..=most).contains(n)) {
            return Err(InputError::file(
                &Path::new(dir).join(MANIFEST_FILE),
                format!(
                    "stage: {n} is not a stage of this sweep: expected 1 to {most} (max_replicates = {})",
                    m.replicates
                ),
            )
            .into());
        }
    }
    // Shard folders by stage, each stage's by shard index.
    let last = shards.iter().filter_map(|(_, m)| m.stage).max().unwrap_or(1);
    let mut by_stage: Vec<Vec<usize>> = vec![Vec::new(); last as usize];
    for (i, (_, m)) in shards.iter().enumerate() {
        by_stage[m.stage.unwrap_or(1) as usize - 1].push(i);
    }
    if let Some(k) = by_stage.iter().position(Vec::is_empty) {
        return Err(InputError::argument(format!(
            "no shard of stage {} was given, but shards of stage {last} were: merge every stage's shards so far \
             (<shards folder>/stage-*/shard-*-of-*)",
            k + 1
        ))
        .into());
    }
    for stage in &mut by_stage {
        stage.sort_by_key(|&i| shards[i].1.shard);
    }
    let m0 = shards[by_stage[0][0]].1.clone();
    let file0 = format!("{}/{MANIFEST_FILE}", shards[by_stage[0][0]].0);
    let (objective, constraints) = ranking_of(&m0, &columns, &file0).map_err(InputError::from)?;
    let bound = objective.bind(&columns).map_err(InputError::from)?;
    let constraint_columns = super::sweep::constraint_columns(&constraints, &columns);
    let max = m0.replicates;
    let budget = (m0.calls_per_run.unwrap_or(0), m0.max_calls.unwrap_or(u64::MAX));
    let mut stages = Stages::new(m0.configurations, m0.scenarios.len(), max, budget.0, budget.1);
    let mut merge = Merge::empty(&m0, columns, scratch).map_err(InputError::from)?;
    let mut results: Vec<StageResults> = Vec::new();
    for (k, members) in by_stage.iter().enumerate() {
        let number = k as u32 + 1;
        let Some(stage) = stages.current() else {
            return Err(InputError::argument(format!(
                "shards of stage {number} were given, but the sweep stops after stage {k}: leave out {}",
                shards[members[0]].0
            ))
            .into());
        };
        let expected_plan = (number > 1).then(|| plan_of(&stages, &m0, &results)).transpose()?;
        for &i in members {
            let (dir, m) = &shards[i];
            let ran = m.plan.as_deref();
            if ran != expected_plan.as_ref().map(|p| p.sha256.as_str()) {
                return Err(InputError::file(
                    &Path::new(dir).join(MANIFEST_FILE),
                    format!(
                        "plan: this shard of stage {number} ran the plan {} but the stages before lead to the plan \
                         {}: its plan was edited, is of another run of the stages before, or of another stage. \
                         Rerun the stage's shards with the plan `merge` of the stages before writes",
                        ran.unwrap_or("(none)"),
                        expected_plan.as_ref().map_or("(none: stage 1)", |p| p.sha256.as_str())
                    ),
                )
                .into());
            }
        }
        let expected = Expected { replicates: stage.replicates.clone(), configs: ranges_of(stage.running) };
        let group: Vec<(String, Manifest)> = members.iter().map(|&i| shards[i].clone()).collect();
        let slices = check_stage(&group, &expected).map_err(|e| stage_error(number, e))?;
        for ((&i, (dir, manifest)), slices) in members.iter().zip(group).zip(slices) {
            let k = merge.admit(dir, manifest, slices);
            read_shard(&mut merge, k, dirs[i])?;
        }
        results.push(StageResults {
            stage: number,
            runs_sha256: members.iter().map(|&i| shards[i].1.runs.sha256.clone()).collect(),
        });
        stages.ran(&Judge {
            table: merge.table(),
            bound: &bound,
            constraints: &constraints,
            columns: &constraint_columns,
            rule: rule_of(&m0),
            max,
            baseline: m0.baseline,
        });
    }
    if stages.current().is_none() {
        return complete(req, merge, Some(stages.into_report()), out).map(|r| MergeReport::Done(Box::new(r)));
    }
    let plan = plan_of(&stages, &m0, &results)?;
    let mut folder = OutputDir::create(out, Keep::Foreign)?;
    folder.write(PLAN_FILE, plan.to_toml().map_err(InputError::from)?.as_bytes())?;
    folder.finish(None)?;
    let lines = stages.report().lines();
    let last_dir = Path::new(&shards[by_stage[by_stage.len() - 1][0]].0);
    Ok(MergeReport::Next(Box::new(NextStage {
        sweep: m0.sweep.clone(),
        stages: lines[..stages.report().stages.len()].to_vec(),
        path: out.join(PLAN_FILE),
        shards: shards[by_stage[by_stage.len() - 1][0]].1.shards,
        command: m0.command.clone(),
        sweep_file: m0.sweep_file.name.clone(),
        shards_dir: last_dir.parent().and_then(Path::parent).unwrap_or(Path::new(".")).to_path_buf(),
        out: out.to_path_buf(),
        plan,
    })))
}

/// A check of one stage's shards that failed, saying which stage.
fn stage_error(number: u32, e: SweepError) -> Error {
    InputError::argument(format!("stage {number}: {e}")).into()
}

/// The plan of the stage `stages` runs next, for the sweep of manifest `m`, from the shard
/// results `results` of the stages before.
fn plan_of(stages: &Stages, m: &Manifest, results: &[StageResults]) -> Result<StagePlan> {
    let next = stages.current().ok_or_else(|| Error::Internal("no stage to plan".into()))?;
    StagePlan {
        sweep: m.sweep.clone(),
        hash: m.hash.clone(),
        version: m.version.clone(),
        max_replicates: m.replicates,
        stage: next.number,
        first_replicate: next.replicates.start,
        last_replicate: next.replicates.end - 1,
        configurations: next.running.len(),
        running: ranges_of(next.running).iter().map(range_text).collect(),
        calls_so_far: stages.spent(),
        results: results.to_vec(),
        sha256: String::new(),
    }
    .sealed()
    .map_err(|e| InputError::from(e).into())
}
