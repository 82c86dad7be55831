//! An automatic sweep (`replicates = "auto"`) split over shards: a stage is a sweep of its own
//! cells. `merge` of every stage so far decides as the one-machine sweep does and, when the
//! sweep goes on, writes the next stage's [`StagePlan`] (`stage-plan.toml`): the stage's
//! number, the configurations still in the running, their replicates, and the SHA-256 of every
//! shard result it came from. The next stage's shards run the plan's cells ([`stage_slices`]);
//! the plan carries its own SHA-256, so an edited one is refused, and `merge` recomputes the
//! plan from the stages before and refuses shards that ran another.
//!
//! Computation only: the caller reads and writes the file.

use super::SweepError;
use super::shard::{Slice, plan, sha256_hex};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The plan's file name in the merge folder.
pub const PLAN_FILE: &str = "stage-plan.toml";

/// The shard results of one stage a plan came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageResults {
    /// The stage's number.
    pub stage: u32,
    /// Per shard, in shard order: the SHA-256 of its runs.csv.
    pub runs_sha256: Vec<String>,
}

/// `stage-plan.toml`: the cells of an automatic sweep's next stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagePlan {
    /// The sweep's name.
    pub sweep: String,
    /// The sweep's hash (over its input files' contents).
    pub hash: String,
    /// The build that merged the stages before.
    pub version: String,
    /// `max_replicates`.
    pub max_replicates: u32,
    /// The stage this plan is for (2, 3, …).
    pub stage: u32,
    /// The first replicate it runs.
    pub first_replicate: u32,
    /// The last replicate it runs.
    pub last_replicate: u32,
    /// How many configurations are still in the running.
    pub configurations: usize,
    /// Their ids: `first-last` ranges, or one id.
    pub running: Vec<String>,
    /// Expected calls simulated by the stages before.
    pub calls_so_far: u64,
    /// The shard results of every stage before, in order.
    pub results: Vec<StageResults>,
    /// SHA-256 of the plan without this field: an edit shows.
    #[serde(default)]
    pub sha256: String,
}

impl StagePlan {
    /// The plan with its SHA-256 set.
    pub fn sealed(mut self) -> Result<StagePlan, SweepError> {
        self.sha256 = self.body_hash()?;
        Ok(self)
    }

    /// The SHA-256 of the plan's fields but `sha256`, as TOML.
    fn body_hash(&self) -> Result<String, SweepError> {
        let body = StagePlan { sha256: String::new(), ..self.clone() };
        let text = toml::to_string(&body).map_err(|e| SweepError::Invalid(format!("{PLAN_FILE}: {e}")))?;
        Ok(sha256_hex(text.as_bytes()))
    }

    /// The plan as TOML, with a comment saying what it is.
    pub fn to_toml(&self) -> Result<String, SweepError> {
        let body = toml::to_string(self).map_err(|e| SweepError::Invalid(format!("{PLAN_FILE}: {e}")))?;
        Ok(format!(
            "# Stage {} of automatic sweep `{}`, written by `breakerlab merge`: give it to the stage's shards \
             with --plan.\n{body}",
            self.stage, self.sweep
        ))
    }

    /// Reads a plan (`file` names it in errors) and checks it against its own SHA-256.
    pub fn parse(text: &str, file: &str) -> Result<StagePlan, SweepError> {
        let plan: StagePlan = super::file::from_toml(text, file)?;
        if plan.body_hash()? != plan.sha256 {
            return Err(SweepError::File {
                file: file.into(),
                message:
                    "sha256: not the SHA-256 of the plan: it was edited after `merge` wrote it; merge the \
                          stages again to write it anew"
                        .into(),
            });
        }
        Ok(plan)
    }

    /// The configurations in the running, as ids, checked against a grid of `configurations`.
    pub fn running_ids(&self, configurations: usize, file: &str) -> Result<Vec<usize>, SweepError> {
        let bad = |m: String| SweepError::File { file: file.into(), message: m };
        let mut ids = Vec::with_capacity(self.configurations);
        for r in &self.running {
            let range = parse_range(r)
                .filter(|x| x.end <= configurations && ids.last().is_none_or(|l| *l < x.start))
                .ok_or_else(|| {
                    bad(format!(
                        "running: {r:?}: expected increasing FIRST-LAST ranges within 0-{}",
                        configurations.saturating_sub(1)
                    ))
                })?;
            ids.extend(range);
        }
        if ids.len() != self.configurations || ids.is_empty() {
            return Err(bad(format!(
                "running: lists {} configurations but configurations = {}",
                ids.len(),
                self.configurations
            )));
        }
        Ok(ids)
    }

    /// Checks the plan is one of this sweep (`name`, `hash`), build and `max_replicates`: the
    /// error names the field and says what was expected.
    pub fn check(
        &self,
        name: &str,
        hash: &str,
        version: &str,
        max: u32,
        file: &str,
    ) -> Result<(), SweepError> {
        let bad = |m: String| Err(SweepError::File { file: file.into(), message: m });
        if self.sweep != name || self.hash != hash {
            return bad(format!(
                "hash: the plan is of sweep `{}` (hash {}) but this is sweep `{name}` (hash {}): a plan of another \
                 sweep, or the sweep file or a scenario changed since its stages ran",
                self.sweep,
                short(&self.hash),
                short(hash)
            ));
        }
        if self.version != version {
            return bad(format!(
                "version: the plan was merged by breakerlab {} but this is {version}: run every stage with one \
                 build",
                self.version
            ));
        }
        if self.max_replicates != max {
            return bad(format!(
                "max_replicates: {} in the plan but {max} here: give the stages the same --max-replicates",
                self.max_replicates
            ));
        }
        if self.stage < 2 || self.first_replicate > self.last_replicate || self.last_replicate >= max {
            return bad(format!(
                "stage {} runs replicates {}-{}: expected a stage from 2 on, within the {max} replicates",
                self.stage, self.first_replicate, self.last_replicate
            ));
        }
        Ok(())
    }
}

/// The first 12 hex digits of a hash.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// `a-b` (inclusive) or `a`, as a range.
fn parse_range(text: &str) -> Option<Range<usize>> {
    let parse = |t: &str| t.trim().parse::<usize>().ok();
    let (a, b) = match text.split_once('-') {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => (parse(text)?, parse(text)?),
    };
    (a <= b).then_some(a..b + 1)
}

/// Increasing ids as maximal ranges of consecutive ids.
pub fn ranges_of(ids: &[usize]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for &id in ids {
        match out.last_mut() {
            Some(r) if r.end == id => r.end += 1,
            _ => out.push(id..id + 1),
        }
    }
    out
}

/// A range as the plan and shard.toml write it: `first-last`, or one id.
pub fn range_text(r: &Range<usize>) -> String {
    if r.len() == 1 { r.start.to_string() } else { format!("{}-{}", r.start, r.end - 1) }
}

/// The cells of each of `shards` shards of a stage running replicates `replicates` of the
/// configurations `running` (ids, increasing) over scenarios of costs `costs`: the stage's
/// cells cut as [`plan`] cuts a sweep's, each cut's configurations given back as ranges of ids.
pub fn stage_slices(
    costs: &[u64],
    running: &[usize],
    replicates: Range<u32>,
    shards: u32,
) -> Vec<Vec<Slice>> {
    let reps = replicates.end.saturating_sub(replicates.start);
    plan(costs, running.len(), reps, shards)
        .into_iter()
        .map(|slices| {
            slices
                .into_iter()
                .flat_map(|s| {
                    ranges_of(&running[s.configs.clone()]).into_iter().map(move |configs| Slice {
                        scenario: s.scenario,
                        replicate: replicates.start + s.replicate,
                        configs,
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StagePlan {
        StagePlan {
            sweep: "graded".into(),
            hash: "ab".repeat(32),
            version: "v1".into(),
            max_replicates: 10,
            stage: 2,
            first_replicate: 1,
            last_replicate: 2,
            configurations: 4,
            running: ranges_of(&[0, 1, 2, 7]).iter().map(range_text).collect(),
            calls_so_far: 1000,
            results: vec![StageResults { stage: 1, runs_sha256: vec!["cd".repeat(32)] }],
            sha256: String::new(),
        }
        .sealed()
        .unwrap()
    }

    #[test]
    fn a_plan_round_trips_and_an_edit_is_refused() {
        let p = sample();
        assert_eq!(p.running, ["0-2", "7"]);
        let text = p.to_toml().unwrap();
        assert!(text.starts_with("# Stage 2 of automatic sweep `graded`"), "{text}");
        assert_eq!(StagePlan::parse(&text, "p.toml").unwrap(), p);
        assert_eq!(p.running_ids(8, "p.toml").unwrap(), [0, 1, 2, 7]);
        let edited = text.replace("\"7\"", "\"6\"");
        let e = StagePlan::parse(&edited, "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: sha256: not the SHA-256 of the plan: it was edited"), "{e}");
        // Out of the grid.
        assert!(p.running_ids(7, "p.toml").unwrap_err().to_string().contains("within 0-6"));
        // Another sweep, build or budget.
        let hash = "ab".repeat(32);
        assert!(p.check("graded", &hash, "v1", 10, "p").is_ok());
        assert!(
            p.check("graded", &"ef".repeat(32), "v1", 10, "p").unwrap_err().to_string().contains("another")
        );
        assert!(p.check("graded", &hash, "v2", 10, "p").unwrap_err().to_string().contains("version"));
        assert!(p.check("graded", &hash, "v1", 20, "p").unwrap_err().to_string().contains("max_replicates"));
    }

    #[test]
    fn a_stage_is_cut_into_shards_of_id_ranges_covering_it_once() {
        let running = [0, 1, 2, 5, 6, 9];
        for shards in 1..5 {
            let cuts = stage_slices(&[100, 50], &running, 3..5, shards);
            assert_eq!(cuts.len(), shards as usize);
            let mut cells: Vec<(usize, u32, usize)> = cuts
                .iter()
                .flatten()
                .flat_map(|s| s.configs.clone().map(move |c| (s.scenario, s.replicate, c)))
                .collect();
            let n = cells.len();
            cells.sort_unstable();
            cells.dedup();
            assert_eq!((n, cells.len()), (24, 24));
            assert!(cells.iter().all(|(_, r, c)| (3..5).contains(r) && running.contains(c)));
        }
        assert_eq!(ranges_of(&[]), Vec::<Range<usize>>::new());
        assert_eq!(ranges_of(&[3, 4, 6]), [3..5, 6..7]);
    }
}
