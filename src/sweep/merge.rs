//! Merging shards back into one sweep: the shards' manifests are checked together
//! ([`check_shards`]), then each shard's runs.csv is read as a stream, one file after another,
//! every row checked to be a cell its shard ran and seen once, and placed into one table. The
//! finished table is the unsharded sweep's, so everything written from it is the same bytes.
//! Computation only: the caller opens the files.

use super::SweepError;
use super::constraint::Constraint;
use super::grid::Configuration;
use super::integrity::{RunsDigest, check_value};
use super::objective::Objective;
use super::output::RunsReader;
use super::shard::{MANIFEST_FILE, Manifest, Slice, check_shards};
use super::store::Scratch;
use super::table::{ConfigInfo, ResultTable, RunRow, TableBuilder};
use crate::Result;
use crate::metrics::Metric;

/// Shards being merged.
pub struct Merge {
    /// Shard folders as named, in the order given.
    dirs: Vec<String>,
    /// Their manifests.
    manifests: Vec<Manifest>,
    /// Each shard's cells, in stream order.
    slices: Vec<Vec<Slice>>,
    /// The metric columns every runs.csv must have.
    metrics: Vec<String>,
    /// Per configuration id: its configuration and label, once a row named it.
    configs: Vec<Option<(Configuration, String)>>,
    /// Every row read, placed.
    rows: TableBuilder,
    /// One bit per cell in grid order: read already.
    seen: Vec<u64>,
}

/// A merged sweep: the table of every cell and what the sweep file said about ranking them.
pub struct Merged {
    /// The first shard's manifest (all agree).
    pub manifest: Manifest,
    /// Every cell, as the unsharded sweep holds them.
    pub table: ResultTable,
    /// The sweep's objective.
    pub objective: Objective,
    /// The sweep's constraints.
    pub constraints: Vec<Constraint>,
}

impl Merge {
    /// Checks the manifests of `shards` (folder, manifest) together; `metrics` are the metric
    /// columns this version writes.
    /// The rows go to `scratch`.
    pub fn new(
        shards: Vec<(String, Manifest)>,
        metrics: Vec<String>,
        scratch: &Scratch,
    ) -> Result<Merge, SweepError> {
        let slices = check_shards(&shards)?;
        let mut merge = Merge::empty(&shards[0].1, metrics, scratch)?;
        for ((dir, manifest), slices) in shards.into_iter().zip(slices) {
            merge.admit(dir, manifest, slices);
        }
        Ok(merge)
    }

    /// A merge of no shard yet, into the table of the sweep `first` (a shard's manifest) is of.
    pub fn empty(first: &Manifest, metrics: Vec<String>, scratch: &Scratch) -> Result<Merge, SweepError> {
        let rows = TableBuilder::new(
            first.scenarios.clone(),
            first.configurations,
            metrics.clone(),
            first.replicates,
            scratch,
        )
        .map_err(|e| SweepError::Invalid(e.to_string()))?;
        Ok(Merge {
            dirs: Vec::new(),
            manifests: Vec::new(),
            slices: Vec::new(),
            metrics,
            configs: vec![None; first.configurations],
            rows,
            seen: vec![0; first.total_cells().div_ceil(64) as usize],
        })
    }

    /// Takes in a shard checked with the others of its set ([`check_shards`],
    /// [`super::shard::check_stage`]): its folder, manifest and slices; returns its number for
    /// [`Merge::add`].
    pub fn admit(&mut self, dir: String, manifest: Manifest, slices: Vec<Slice>) -> usize {
        self.dirs.push(dir);
        self.manifests.push(manifest);
        self.slices.push(slices);
        self.dirs.len() - 1
    }

    /// The rows read so far, as a table (an automatic sweep's stages are judged on it).
    pub fn table(&self) -> &ResultTable {
        self.rows.table()
    }

    /// Reads shard `k`'s runs.csv (`file` names it in errors): every row must be a cell the
    /// shard's manifest lists, none seen before, and the file must hold all of them.
    pub fn add(&mut self, k: usize, input: impl std::io::Read, file: &str) -> Result<(), SweepError> {
        let manifest = &self.manifests[k];
        let mut reader = RunsReader::new(input, file)?;
        if reader.metrics() != self.metrics.as_slice() {
            return Err(SweepError::File {
                file: file.into(),
                message: "its metric columns are not the ones this breakerlab writes".into(),
            });
        }
        let mut read = 0u64;
        while let Some(p) = reader.next_run()? {
            let at = |m: String| SweepError::At { file: file.into(), line: p.line, col: 1, message: m };
            let cell = format!("(`{}`, config {}, replicate {})", p.scenario, p.config.id, p.replicate);
            let scenario = manifest
                .scenarios
                .iter()
                .position(|s| *s == p.scenario)
                .ok_or_else(|| at(format!("scenario `{}` is not one of the sweep's", p.scenario)))?;
            let id = p.config.id;
            let ran = &self.slices[k];
            let i = ran.partition_point(|s| (s.scenario, s.replicate) < (scenario, p.replicate));
            let listed = ran[i..]
                .iter()
                .take_while(|s| (s.scenario, s.replicate) == (scenario, p.replicate))
                .any(|s| s.configs.contains(&id));
            if !listed {
                return Err(at(format!(
                    "the cell {cell} is not one this shard ran ({}/{MANIFEST_FILE})",
                    self.dirs[k]
                )));
            }
            let bit = manifest.cell_index(scenario, id, p.replicate);
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            if self.seen[word] & mask != 0 {
                return Err(at(format!("the cell {cell} appears twice")));
            }
            self.seen[word] |= mask;
            let seed = manifest.seeds.get(scenario).copied();
            if seed != Some(p.seed) {
                return Err(at(format!(
                    "seed: {} is not the seed {} of `{}` that {}/{MANIFEST_FILE} records: edited, or of another sweep",
                    p.seed,
                    seed.map_or("(none)".to_string(), |s| s.to_string()),
                    p.scenario,
                    self.dirs[k]
                )));
            }
            for (name, value) in self.metrics.iter().zip(&p.values) {
                if let Some(v) = value {
                    check_value(name, *v).map_err(at)?;
                }
            }
            match &self.configs[id] {
                Some((config, label)) if *config != p.config || *label != p.label => {
                    return Err(at(format!(
                        "config_id {id} is {:?} here but {label:?} in another row: results of different sweeps?",
                        p.label
                    )));
                }
                Some(_) => {}
                None => self.configs[id] = Some((p.config, p.label)),
            }
            let row = RunRow {
                scenario,
                config: id,
                replicate: p.replicate,
                seed: p.seed,
                values: p.values.into(),
            };
            self.rows.put(&row, id).map_err(|e| at(e.to_string()))?;
            read += 1;
        }
        if read != manifest.cells {
            return Err(SweepError::File {
                file: file.into(),
                message: format!(
                    "holds {read} rows but {}/{MANIFEST_FILE} lists {} cells: the file is cut short or corrupt",
                    self.dirs[k], manifest.cells
                ),
            });
        }
        Ok(())
    }

    /// Checks shard `k`'s runs.csv, read again from `input` (`file` names it), against the
    /// digests its shard.toml recorded: an edited value is named by row and field, a file
    /// swapped for another is refused as not the shard's own.
    pub fn verify(&self, k: usize, input: impl std::io::Read, file: &str) -> Result<(), SweepError> {
        let recorded = &self.manifests[k].runs;
        let found = RunsDigest::compute(input, recorded.block_rows, file)?;
        recorded.verify(&found, file, &format!("{}/{MANIFEST_FILE}", self.dirs[k]))
    }

    /// The merged table; `info` completes each configuration (resolved parameters) from its
    /// configuration and the label its rows carry.
    pub fn finish(
        self,
        info: &dyn Fn(Configuration, String) -> Result<ConfigInfo>,
    ) -> Result<Merged, SweepError> {
        let manifest =
            self.manifests.into_iter().next().ok_or_else(|| SweepError::Invalid("no shards".into()))?;
        let mut infos = Vec::with_capacity(self.configs.len());
        for (id, c) in self.configs.into_iter().enumerate() {
            let (config, label) = c.ok_or_else(|| {
                SweepError::Invalid(format!(
                    "no runs.csv row names configuration {id}: were all shards read?"
                ))
            })?;
            infos.push(info(config, label).map_err(|e| SweepError::Invalid(e.to_string()))?);
        }
        let (objective, constraints) =
            ranking_of(&manifest, &self.metrics, &format!("{}/{MANIFEST_FILE}", self.dirs[0]))?;
        let table: ResultTable =
            self.rows.finish(Box::new(infos)).map_err(|e| SweepError::Invalid(e.to_string()))?;
        Ok(Merged { manifest, table, objective, constraints })
    }
}

/// The objective and constraints a shard's manifest ranks by (`file` names it in errors).
pub fn ranking_of(
    manifest: &Manifest,
    metrics: &[String],
    file: &str,
) -> Result<(Objective, Vec<Constraint>), SweepError> {
    let mut objective = Objective::default();
    for (name, weight) in &manifest.objective {
        let metric = Metric::from_name(name).ok_or_else(|| SweepError::File {
            file: file.into(),
            message: format!("objective: unknown metric `{name}`"),
        })?;
        objective.set(metric, *weight);
    }
    let constraints = manifest
        .constraints
        .iter()
        .map(|c| Constraint::parse(c, metrics))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| SweepError::File { file: file.into(), message: m.to_string() })?;
    Ok((objective, constraints))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;
    use crate::sweep::objective::BindToColumns;
    use crate::sweep::objective::Objective;
    use crate::sweep::output::runs_csv;
    use crate::sweep::shard::tests::manifest;

    /// The table of a small sweep: 2 scenarios × 4 configurations × 2 replicates.
    fn table() -> ResultTable {
        let configs = (0..4)
            .map(|i| crate::sweep::table::tests::cfg(i, "consecutive", "failure_threshold", 3 + i as i64))
            .collect();
        let mut runs = Vec::new();
        for s in 0..2 {
            for c in 0..4 {
                for r in 0..2 {
                    let v = (s * 100 + c * 10 + r as usize) as f64;
                    runs.push(crate::sweep::table::tests::run(
                        s,
                        c,
                        r,
                        &[Some(v), if r == 0 { None } else { Some(v / 3.0) }],
                    ));
                }
            }
        }
        let metrics = vec!["false_opens".to_string(), "detection_delay_mean_s".to_string()];
        ResultTable::new(vec!["blip".into(), "hang".into()], configs, metrics, runs).unwrap()
    }

    /// runs.csv text of the cells of `t` that `slices` name.
    fn shard_csv(t: &ResultTable, slices: &[Slice]) -> String {
        let runs = t
            .runs()
            .filter(|r| {
                slices.iter().any(|s| {
                    s.scenario == r.scenario && s.replicate == r.replicate && s.configs.contains(&r.config)
                })
            })
            .collect();
        let part =
            ResultTable::new(t.scenarios.clone(), t.configs().collect(), t.metrics.clone(), runs).unwrap();
        let o = Objective::new([(Metric::FalseOpens, 1.0)]).bind(&t.metrics).unwrap();
        String::from_utf8(runs_csv(&part, &o).unwrap()).unwrap()
    }

    fn info(config: Configuration, label: String) -> crate::Result<ConfigInfo> {
        Ok(ConfigInfo { label, config: config.into() })
    }

    fn shards() -> Vec<(String, Manifest)> {
        vec![
            ("a".to_string(), manifest(0, 2, &[("blip", 0, "0-3"), ("blip", 1, "0-3"), ("hang", 0, "0-1")])),
            ("b".to_string(), manifest(1, 2, &[("hang", 0, "2-3"), ("hang", 1, "0-3")])),
        ]
    }

    #[test]
    fn shards_merge_into_the_unsharded_table() {
        let t = table();
        let metrics = t.metrics.clone();
        let mut m = Merge::new(shards(), metrics.clone(), &Scratch::memory()).unwrap();
        let texts: Vec<String> = m.slices.clone().iter().map(|s| shard_csv(&t, s)).collect();
        for (k, text) in texts.iter().enumerate() {
            m.manifests[k].runs = RunsDigest::compute(text.as_bytes(), 1, "runs.csv").unwrap();
            m.verify(k, text.as_bytes(), "runs.csv").unwrap();
        }
        // Read in reverse order: the table does not depend on it.
        m.add(1, texts[1].as_bytes(), "b/runs.csv").unwrap();
        m.add(0, texts[0].as_bytes(), "a/runs.csv").unwrap();
        let merged = m.finish(&info).unwrap();
        assert_eq!(merged.table.runs().collect::<Vec<_>>(), t.runs().collect::<Vec<_>>());
        assert_eq!(merged.table.configs().collect::<Vec<_>>(), t.configs().collect::<Vec<_>>());
        assert_eq!((&merged.table.scenarios, merged.table.replicates()), (&t.scenarios, 2));
        assert_eq!(merged.objective.weights[0], (Metric::FalseOpens, 1.0));
        assert_eq!(merged.constraints.len(), 1);
    }

    #[test]
    fn corrupt_or_foreign_rows_name_file_and_line() {
        let t = table();
        let m = || Merge::new(shards(), t.metrics.clone(), &Scratch::memory()).unwrap();
        let good = shard_csv(&t, &m().slices[0]);
        let lines: Vec<&str> = good.lines().collect();
        let err = |text: String| {
            let mut merge = m();
            merge.add(0, text.as_bytes(), "a/runs.csv").unwrap_err().to_string()
        };
        // Cut short: the last row lost.
        let cut = lines[..lines.len() - 1].join("\n") + "\n";
        assert_eq!(
            err(cut),
            "a/runs.csv: holds 9 rows but a/shard.toml lists 10 cells: the file is cut short or corrupt"
        );
        // Cut mid-row.
        let mid = format!("{}\n{}", lines[..3].join("\n"), &lines[3][..20]);
        assert!(err(mid).starts_with("a/runs.csv:4:1: expected 10 fields, found"), "cut mid-row");
        // A number garbled.
        let garbled = good.replacen(",100,", ",1x0,", 1);
        assert!(err(garbled).contains("false_opens: expected a number, found \"1x0\""));
        // A row twice.
        let twice = format!("{good}{}\n", lines[1]);
        assert_eq!(err(twice), "a/runs.csv:12:1: the cell (`blip`, config 0, replicate 0) appears twice");
        // A row of shard b's in shard a's file.
        let foreign = shard_csv(&t, &m().slices[1]);
        assert!(err(foreign).ends_with("is not one this shard ran (a/shard.toml)"));
        assert!(err("a,b\n".into()).contains("not a runs.csv"));
    }
}
