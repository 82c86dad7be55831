//! `breakerlab sweep FILE --shard K/N` (one shard of a sweep: its cells' rows streamed to
//! runs.csv, and shard.toml) and `breakerlab merge DIR...` (the shards checked together and
//! finished into the very files the unsharded sweep writes).

use crate::report::page::{InputFile, ReportInputs};
use crate::scenario::{InputError, Scenario};
use crate::sweep::commands::{
    Ranking, SweepReport, default_sweep_path, finish_sweep, load_scenarios, resolve_all,
};
use crate::sweep::file::SweepFile;
use crate::sweep::merge::Merge;
use crate::sweep::output::RunsWriter;
use crate::sweep::runner::{
    Cells, config_info, default_objective, metric_columns, progress_bar, spec_of, validate_policy,
};
use crate::sweep::shard::{
    InputHash, MANIFEST_FILE, Manifest, ShardId, SweepText, plan, sha256_reader, sweep_hash,
};
use crate::sweep::table::ConfigInfo;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What one shard of a sweep is asked to do.
#[derive(Clone, Debug)]
pub struct ShardRequest {
    /// The sweep file (the bundled default when `None`).
    pub file: Option<PathBuf>,
    /// Which shard.
    pub shard: ShardId,
    /// Where the shard's identity came from (`--shard 1/4`, `SLURM_ARRAY_TASK_ID=1, ...`).
    pub source: String,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// The folder that holds every shard's folder (default `output/<name>-shards`).
    pub out: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
    /// The command line that runs the whole sweep at once, for the merged review page.
    pub command_line: String,
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
}

impl ShardReport {
    /// Which shard ran, how much of the sweep it was, and where it wrote.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let share = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        let _ = writeln!(s, "shard {} of sweep {} (from {})", self.shard, self.name, self.source);
        let _ = writeln!(
            s,
            "ran {} of {} cells ({:.1} % of the expected calls), {} request stream(s)",
            self.cells.0,
            self.cells.1,
            share(self.calls.0, self.calls.1),
            self.streams
        );
        let _ = writeln!(
            s,
            "wrote runs.csv, {MANIFEST_FILE} to {}/ (merge every shard with `breakerlab merge`)",
            self.dir.display()
        );
        s
    }
}

/// The SHA-256 of the file at `path`, read in blocks.
fn hash_file(path: &Path) -> anyhow::Result<InputHash> {
    let file = std::fs::File::open(path).map_err(|e| InputError::file(path, format!("cannot read: {e}")))?;
    let sha256 = sha256_reader(std::io::BufReader::new(file))
        .map_err(|e| InputError::file(path, format!("cannot read: {e}")))?;
    Ok(InputHash { path: path.display().to_string(), sha256 })
}

/// Every input a sweep read: the sweep file, then each scenario file and the files it names.
fn input_hashes(sweep: &Path, scenarios: &[Scenario]) -> anyhow::Result<Vec<InputHash>> {
    let mut paths = vec![sweep.to_path_buf()];
    for s in scenarios {
        paths.extend(s.path.iter().cloned());
        paths.extend(s.inputs.iter().cloned());
    }
    paths.iter().map(|p| hash_file(p)).collect()
}

/// `breakerlab sweep FILE --shard K/N`: loads and checks the whole sweep (so a bad file fails
/// every shard the same way), runs this shard's cells of [`plan`], streams their rows to
/// `<out>/shard-K-of-N/runs.csv` and writes shard.toml beside it. No charts.
pub fn run_shard(req: &ShardRequest) -> anyhow::Result<ShardReport> {
    let path = req.file.clone().unwrap_or_else(default_sweep_path);
    let columns = metric_columns();
    let file = SweepFile::load(&path, &columns, &validate_policy).map_err(InputError::from)?;
    let text = crate::scenario::read_text(&path)?;
    let scenarios = load_scenarios(&file.scenarios)?;
    let configs = resolve_all(&file.configurations)?;
    let objective = file.objective.clone().unwrap_or_else(default_objective);
    let bound = objective.bind(&columns).map_err(InputError::argument)?;
    let inputs = input_hashes(&path, &scenarios)?;

    let costs: Vec<u64> = scenarios.iter().map(|s| s.expected_requests().round() as u64).collect();
    let shard = req.shard;
    let plans = plan(&costs, configs.len(), file.replicates, shard.count);
    let slices = &plans[shard.index as usize];
    let cell_calls = |sl: &crate::sweep::shard::Slice| costs[sl.scenario] * sl.configs.len() as u64;
    let calls = (slices.iter().map(cell_calls).sum(), plans.iter().flatten().map(cell_calls).sum());
    let cells =
        Cells { scenarios: &scenarios, configs: &configs, replicates: file.replicates, seed: file.seed };
    let mine: u64 = slices.iter().map(|s| s.configs.len() as u64).sum();

    let infos: Vec<ConfigInfo> =
        file.configurations.iter().zip(&configs).map(|(c, p)| config_info(c, p)).collect();
    let parent = req.out.clone().unwrap_or_else(|| Path::new("output").join(format!("{}-shards", file.name)));
    let dir = parent.join(format!("shard-{}-of-{}", shard.index, shard.count));
    std::fs::create_dir_all(&dir)
        .map_err(|e| InputError::file(&dir, format!("cannot create the shard's folder: {e}")))?;
    let bar = progress_bar(mine, req.quiet);
    crate::commands::write_streamed(&dir.join("runs.csv"), |w| {
        let mut out = RunsWriter::new(w, &columns)?;
        cells.run_slices(slices, req.threads, &columns, &bar, &mut |row| {
            let cost = bound.cost(&row.values);
            Ok(out.row(&scenarios[row.scenario].name, &infos[row.config], &row, cost)?)
        })?;
        out.finish()?;
        Ok(())
    })?;
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let manifest = Manifest {
        sweep: file.name.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        hash: sweep_hash(&inputs),
        shard: shard.index,
        shards: shard.count,
        command: req.command_line.clone(),
        cells: mine,
        configurations: configs.len(),
        replicates: file.replicates,
        seed: file.seed,
        objective: objective.weights.clone(),
        constraints: file.constraints.iter().map(|c| c.text.clone()).collect(),
        pareto: file.pareto.clone(),
        sweep_file: SweepText { name: path.display().to_string(), text },
        inputs,
        ran: Manifest::ran_of(&names, slices),
        scenarios: names,
    };
    crate::commands::write_files(
        &dir,
        &[(MANIFEST_FILE, manifest.to_toml().map_err(InputError::from)?.into_bytes())],
    )?;
    Ok(ShardReport {
        shard,
        source: req.source.clone(),
        name: file.name,
        cells: (mine, cells.count()),
        calls,
        streams: slices.len(),
        dir,
    })
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

/// `breakerlab merge DIR... [--out DIR]`: checks the shards' manifests together (one sweep, one
/// version, every cell exactly once), reads their runs.csv one after another, and writes what
/// the unsharded sweep writes, byte for byte. Nothing is written when a check fails.
pub fn merge(req: &MergeRequest) -> anyhow::Result<SweepReport> {
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
    let mut merge = Merge::new(shards, metric_columns()).map_err(InputError::from)?;
    for (k, dir) in req.dirs.iter().enumerate() {
        let path = dir.join("runs.csv");
        let file =
            std::fs::File::open(&path).map_err(|e| InputError::file(&path, format!("cannot read: {e}")))?;
        merge.add(k, std::io::BufReader::new(file), &path.display().to_string()).map_err(InputError::from)?;
    }
    let merged = merge
        .finish(&|config, label| {
            let resolved = spec_of(&config).resolve().map_err(|e| format!("policy `{label}`: {e}"))?;
            let info = config_info(&config, &resolved);
            if info.label != label {
                return Err(format!(
                    "configuration {} is {label:?} in the shards but {:?} here",
                    config.id, info.label
                ));
            }
            Ok(info)
        })
        .map_err(InputError::from)?;
    let m = merged.manifest;
    let dir = req.out.clone().unwrap_or_else(|| Path::new("output").join(&m.sweep));
    let page = req.charts.then(|| ReportInputs {
        title: format!("sweep: {}", m.sweep),
        command_line: Some(m.command.clone()),
        seed: m.seed,
        files: vec![InputFile { name: m.sweep_file.name.clone(), text: m.sweep_file.text.clone() }],
        ..Default::default()
    });
    let ranking = Ranking { objective: merged.objective, constraints: merged.constraints, fronts: m.pareto };
    finish_sweep(m.sweep, m.replicates, merged.table, &ranking, &dir, page)
}
