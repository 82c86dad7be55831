//! Running the cells of a sweep or comparison: every (scenario, configuration, replicate) on a
//! rayon pool, request streams built once per (scenario, replicate) and shared by every
//! configuration (common random numbers), results collected in grid order. Only each cell's
//! metric values are kept, never per-call data, and a configuration is resolved only when a
//! batch runs it ([`Configs`]), so a shard's memory stays flat as the grid grows.

use super::grid::{ConfigGrid, Configuration};
use super::objective::Objective;
use super::shard::Slice;
use super::table::{ConfigInfo, ConfigSource, RunRow};
use crate::metrics::{Metric, Metrics};
use crate::policy::{PolicyConfig, PolicySpec};
use crate::scenario::{InputError, Scenario};
use crate::sim::{self, Chunk, RequestStream, RunOptions, Simulation, Workload};
use crate::{Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;

/// The most simulations fed one request stream at a time: their state (breakers, recorder,
/// about 100 kB each) is what a sweep holds, whatever its number of configurations.
pub const SIMULATIONS_AT_ONCE: usize = 256;

/// Runs the cells `(workload, configuration)` of `cells` and returns their metric values, in
/// order. At most [`SIMULATIONS_AT_ONCE`] simulations of [`STREAMS_AT_ONCE`] workloads run
/// together: each request-stream chunk
/// is generated once and fed to every simulation of its workload (in parallel), the next chunk
/// being generated meanwhile. Memory is flat in the run's length and in the number of cells.
fn run_together(
    scenario: &Scenario,
    workloads: &[Workload],
    cells: &[(usize, usize)],
    configs: &dyn Configs,
    columns: &[String],
    progress: &ProgressBar,
) -> crate::Result<Vec<Vec<Option<f64>>>> {
    let mut values = Vec::with_capacity(cells.len());
    let mut start = 0;
    while start < cells.len() {
        let batch = &cells[start..batch_end(cells, start)];
        start += batch.len();
        // The batch's workloads (cells come workload by workload), and each cell's among them.
        let mut used: Vec<usize> = batch.iter().map(|&(w, _)| w).collect();
        used.dedup();
        let of_cell: Vec<usize> =
            batch.iter().map(|&(w, _)| used.iter().position(|u| *u == w).unwrap_or(0)).collect();
        let opts = RunOptions { timeline_bin: None, explain: false };
        let policies: Vec<PolicyConfig> =
            batch.iter().map(|&(_, c)| configs.resolve(c)).collect::<crate::Result<_>>()?;
        let mut sims: Vec<Simulation> = batch
            .iter()
            .zip(&policies)
            .map(|(&(w, _), p)| {
                Simulation::new(&scenario.client, &workloads[w], std::slice::from_ref(p), &opts)
            })
            .collect();
        let mut streams: Vec<RequestStream> = used.iter().map(|&w| workloads[w].stream()).collect();
        let mut chunks: Vec<Chunk> = vec![Chunk::default(); used.len()];
        let mut more: Vec<bool> =
            streams.par_iter_mut().zip(&mut chunks).map(|(s, c)| s.next_chunk(c)).collect();
        let mut next: Vec<Chunk> = vec![Chunk::default(); used.len()];
        while more.iter().any(|m| *m) {
            let (_, next_more) = rayon::join(
                || {
                    sims.par_iter_mut().zip(&of_cell).for_each(|(sim, &k)| {
                        if more[k] {
                            sim.feed(&chunks[k]);
                        }
                    })
                },
                || streams.par_iter_mut().zip(&mut next).map(|(s, c)| s.next_chunk(c)).collect::<Vec<bool>>(),
            );
            std::mem::swap(&mut chunks, &mut next);
            more = next_more;
        }
        values.par_extend(sims.into_par_iter().zip(batch).map(|(sim, &(w, _))| {
            let result = sim::scored(scenario, &workloads[w], sim.finish());
            progress.inc(1);
            metric_values(&result.metrics, columns)
        }));
    }
    Ok(values)
}

/// The most request streams generated side by side (two chunks of about 2.5 MB each).
pub const STREAMS_AT_ONCE: usize = 4;

/// The end of the batch of `cells` that starts at `start`: at most [`SIMULATIONS_AT_ONCE`]
/// cells of at most [`STREAMS_AT_ONCE`] workloads (cells come workload by workload).
fn batch_end(cells: &[(usize, usize)], start: usize) -> usize {
    let mut end = start;
    let mut streams = 0;
    let mut last = None;
    while end < cells.len() && end - start < SIMULATIONS_AT_ONCE {
        if last != Some(cells[end].0) {
            if streams == STREAMS_AT_ONCE {
                break;
            }
            streams += 1;
            last = Some(cells[end].0);
        }
        end += 1;
    }
    end
}

/// The most worker threads `--threads` accepts.
pub const MAX_THREADS: usize = 1024;
/// The most cells one sweep or comparison may run (each has a record of its metrics).
pub const MAX_CELLS: u64 = 50_000_000;
/// The most cells whose results [`Cells::run_slices`] holds before handing them on.
pub const CHUNK_CELLS: usize = 4096;

/// The metric columns of sweep results: every [`Metric`] but `cost` (a sweep's cost
/// depends on its objective and is computed from these).
pub fn metric_columns() -> Vec<String> {
    Metric::ALL.iter().filter(|m| **m != Metric::Cost).map(|m| m.name().to_string()).collect()
}

/// Every metric column a sweep file, an objective or a constraint may name: [`metric_columns`]
/// and a pool's scores ([`Metric::POOL`]).
pub fn nameable_columns() -> Vec<String> {
    let mut columns = metric_columns();
    columns.extend(Metric::POOL.iter().map(|m| m.name().to_string()));
    columns
}

/// The metric columns of the results over `scenarios`: [`metric_columns`], then a pool's
/// scores when one of them has a pool of hosts (`[upstream] hosts`, or a per-call log naming
/// hosts: [`Scenario::has_pool`]).
pub fn result_columns(scenarios: &[Scenario]) -> Vec<String> {
    if scenarios.iter().any(Scenario::has_pool) { nameable_columns() } else { metric_columns() }
}

/// Checks that every metric `named` (an objective's, the constraints') is one of `columns`;
/// the error says why a pool's score is missing.
pub fn check_named(named: impl IntoIterator<Item = Metric>, columns: &[String]) -> Result<()> {
    for m in named {
        if !columns.iter().any(|c| c == m.name()) {
            let why = if m.is_pool() {
                ": a pool's scores need a scenario with a pool of hosts ([upstream] hosts, or a per-call log naming hosts)"
            } else {
                ""
            };
            return Err(Error::invalid(format!("`{m}` is not a column of these results{why}")));
        }
    }
    Ok(())
}

/// The documented default objective, the one `run` scores with: [`Objective::standard`].
pub fn default_objective() -> Objective {
    Objective::standard()
}

/// The policy spec of a configuration.
pub fn spec_of(config: &Configuration) -> PolicySpec {
    let mut spec = PolicySpec::new(&config.preset);
    spec.overrides = config.overrides_table();
    spec
}

/// Checks a preset and overrides by resolving them (the sweep file's per-value check).
pub fn validate_policy(preset: &str, overrides: &[(String, toml::Value)]) -> Result<()> {
    let mut spec = PolicySpec::new(preset);
    for (k, v) in overrides {
        spec.overrides.insert(k.clone(), v.clone());
    }
    spec.resolve().map(|_| ()).map_err(|e| Error::invalid(e.to_string()))
}

/// A configuration's table entry: its identity and the resolved policy's label.
pub fn config_info(config: &Configuration, resolved: &PolicyConfig) -> ConfigInfo {
    ConfigInfo { config: config.clone().into(), label: resolved.label() }
}

/// Every resolved parameter `(name, value)` of a configuration, for summary.csv: resolved again
/// when its row is written, so no table holds them all (none when it does not resolve, as for a
/// runs.csv row naming a preset this version lacks).
pub fn resolved_params(info: &ConfigInfo) -> Vec<(String, String)> {
    spec_of(&info.config).resolve().map(|p| p.params()).unwrap_or_default()
}

/// The metric values of a run, in [`metric_columns`] order.
pub fn metric_values(metrics: &Metrics, columns: &[String]) -> Vec<Option<f64>> {
    columns.iter().map(|c| metrics.column(c)).collect()
}

/// A progress bar on stderr counting `cells` cells of about `calls_per_cell` simulated calls
/// each, with rate and time left; hidden when `quiet`. Without a terminal, the bar is hidden
/// and progress lines go to stderr instead ([`super::progress_log`]), until the bar is
/// finished or dropped.
pub fn progress_bar_of(cells: u64, calls_per_cell: f64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        let bar = ProgressBar::hidden();
        bar.set_length(cells);
        let weak = bar.downgrade();
        let poll = move || weak.upgrade().filter(|b| !b.is_finished()).map(|b| b.position());
        let work = super::progress_log::Work { total: cells, unit: "cells", calls_per_unit: calls_per_cell };
        super::progress_log::ProgressLog::start(work, quiet, poll).detach();
        return bar;
    }
    let bar = ProgressBar::new(cells);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} cells  {per_sec}  {elapsed} elapsed, ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// The configurations of a grid, by position: resolved when a batch of cells needs them, so a
/// grid of many configurations is never held resolved at once.
pub trait Configs: Sync {
    /// How many there are.
    fn count(&self) -> usize;
    /// The `i`-th, resolved.
    fn resolve(&self, i: usize) -> crate::Result<PolicyConfig>;
}

/// Configurations resolved already (`compare`'s few `--policy` values).
impl Configs for Vec<PolicyConfig> {
    fn count(&self) -> usize {
        self.len()
    }

    fn resolve(&self, i: usize) -> crate::Result<PolicyConfig> {
        self.get(i).cloned().ok_or_else(|| crate::Error::Internal(format!("no configuration {i}")))
    }
}

/// A sweep file's configurations, each made and resolved when it runs (every one was checked
/// while the file was read).
impl Configs for ConfigGrid {
    fn count(&self) -> usize {
        self.len()
    }

    fn resolve(&self, i: usize) -> crate::Result<PolicyConfig> {
        let c = self.get(i).ok_or_else(|| crate::Error::Internal(format!("no configuration {i}")))?;
        spec_of(&c).resolve().map_err(|e| InputError::argument(format!("policy `{}`: {e}", c.label())).into())
    }
}

/// A sweep's configurations as its results carry them: each made, resolved and labelled when
/// asked (the resolved policy's label; the written one if it does not resolve).
pub struct Labelled(pub ConfigGrid);

impl ConfigSource for Labelled {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn info(&self, i: usize) -> ConfigInfo {
        let c = self.0.get(i).unwrap_or_else(|| Configuration {
            id: i,
            preset: String::new(),
            overrides: vec![],
        });
        match spec_of(&c).resolve() {
            Ok(p) => config_info(&c, &p),
            Err(_) => ConfigInfo::new(c),
        }
    }

    fn index_of(&self, id: usize) -> Option<usize> {
        (id < self.0.len()).then_some(id)
    }

    fn config(&self, i: usize) -> std::sync::Arc<Configuration> {
        let c = self.0.get(i).unwrap_or_else(|| Configuration {
            id: i,
            preset: String::new(),
            overrides: vec![],
        });
        std::sync::Arc::new(c)
    }
}

/// The configurations of one request stream: ranges of positions, or a list.
enum Which<'a> {
    Ranges(Vec<std::ops::Range<usize>>),
    List(&'a [usize]),
}

impl Which<'_> {
    /// The positions, in order.
    fn iter(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            Which::Ranges(r) => Box::new(r.iter().flat_map(Clone::clone)),
            Which::List(l) => Box::new(l.iter().copied()),
        }
    }
}

/// One (scenario, replicate) request stream and the configurations run on it.
struct Stream<'a> {
    scenario: usize,
    replicate: u32,
    configs: Which<'a>,
}

/// What to run: loaded scenarios, configurations, replicates and the base seed (`None`: each
/// scenario's own).
pub struct Cells<'a> {
    /// Scenarios, in order.
    pub scenarios: &'a [Scenario],
    /// Configurations, in grid order.
    pub configs: &'a dyn Configs,
    /// Replicates per (scenario, configuration).
    pub replicates: u32,
    /// Base seed for every scenario, or `None` for each scenario's own.
    pub seed: Option<u64>,
}

impl Cells<'_> {
    /// Number of cells.
    pub fn count(&self) -> u64 {
        self.scenarios.len() as u64 * self.configs.count() as u64 * u64::from(self.replicates)
    }

    /// Every cell, stream by stream: the plan of an unsharded run.
    pub fn all(&self) -> Vec<Slice> {
        let configs = self.configs.count();
        (0..self.scenarios.len())
            .flat_map(|s| {
                (0..self.replicates).map(move |r| Slice { scenario: s, replicate: r, configs: 0..configs })
            })
            .collect()
    }

    /// Runs the cells of `slices` (a shard's plan) and hands each row to `sink` as results come
    /// in, in slice order, at most [`CHUNK_CELLS`] rows held at a time: a shard streams its
    /// runs.csv so. The request streams of consecutive slices of one scenario are built
    /// together (in parallel) and shared by their configurations; consecutive slices of one
    /// (scenario, replicate) (a stage's configurations, which need not be contiguous) share
    /// one request stream.
    pub fn run_slices(
        &self,
        slices: &[Slice],
        threads: Option<usize>,
        columns: &[String],
        progress: &ProgressBar,
        sink: &mut (dyn FnMut(RunRow) -> crate::Result<()> + Send),
    ) -> crate::Result<()> {
        let streams: Vec<Stream> = slices
            .chunk_by(|a, b| (a.scenario, a.replicate) == (b.scenario, b.replicate))
            .map(|same| Stream {
                scenario: same[0].scenario,
                replicate: same[0].replicate,
                configs: Which::Ranges(same.iter().map(|sl| sl.configs.clone()).collect()),
            })
            .collect();
        self.run_streams(&streams, threads, columns, progress, sink)
    }

    /// Runs replicates `replicates` of the configurations `configs` (positions, increasing) on
    /// every scenario: one stage of `replicates = "auto"`. Rows go to `sink` as
    /// [`Cells::run_slices`] hands them on; replicate `r` is the very replicate `r` of an
    /// exhaustive sweep (the same request streams).
    pub fn run_stage(
        &self,
        configs: &[usize],
        replicates: std::ops::Range<u32>,
        threads: Option<usize>,
        columns: &[String],
        progress: &ProgressBar,
        sink: &mut (dyn FnMut(RunRow) -> crate::Result<()> + Send),
    ) -> crate::Result<()> {
        let streams: Vec<Stream> = (0..self.scenarios.len())
            .flat_map(|scenario| {
                replicates.clone().map(move |replicate| Stream {
                    scenario,
                    replicate,
                    configs: Which::List(configs),
                })
            })
            .collect();
        self.run_streams(&streams, threads, columns, progress, sink)
    }

    /// Runs the cells of `streams`, in order (see [`Cells::run_slices`]).
    fn run_streams(
        &self,
        streams: &[Stream],
        threads: Option<usize>,
        columns: &[String],
        progress: &ProgressBar,
        sink: &mut (dyn FnMut(RunRow) -> crate::Result<()> + Send),
    ) -> crate::Result<()> {
        if let Some(n) = threads.filter(|n| !(1..=MAX_THREADS).contains(n)) {
            return Err(InputError::argument(format!(
                "--threads must be between 1 and {MAX_THREADS}, found {n}"
            ))
            .into());
        }
        if self.count() > MAX_CELLS {
            return Err(InputError::argument(format!(
                "{} cells (scenarios x configurations x replicates) is more than the {MAX_CELLS} one run may hold",
                self.count()
            ))
            .into());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .build()
            .map_err(|e| crate::Error::Internal(format!("cannot start the worker threads: {e}")))?;
        pool.install(|| -> crate::Result<()> {
            for group in streams.chunk_by(|a, b| a.scenario == b.scenario) {
                let scenario = &self.scenarios[group[0].scenario];
                let seed = self.seed.unwrap_or(scenario.seed);
                // One request stream per replicate, shared by every configuration.
                let workloads: Vec<Workload> = group
                    .par_iter()
                    .map(|sl| Workload::build(scenario, seed, sl.replicate))
                    .collect::<Result<_, _>>()?;
                // The cells (workload, configuration), listed a chunk at a time.
                let mut cells =
                    group.iter().enumerate().flat_map(|(w, sl)| sl.configs.iter().map(move |c| (w, c)));
                let mut chunk: Vec<(usize, usize)> = Vec::with_capacity(CHUNK_CELLS);
                loop {
                    chunk.clear();
                    chunk.extend(cells.by_ref().take(CHUNK_CELLS));
                    if chunk.is_empty() {
                        break;
                    }
                    let values = run_together(scenario, &workloads, &chunk, self.configs, columns, progress)?;
                    for (&(w, c), values) in chunk.iter().zip(values) {
                        let (scenario, replicate) = (group[w].scenario, group[w].replicate);
                        sink(RunRow { scenario, config: c, replicate, seed, values: values.into() })?;
                    }
                }
            }
            Ok(())
        })?;
        progress.finish_and_clear();
        // Progress lines in a log end with their last line before the command goes on.
        super::progress_log::finish_detached();
        Ok(())
    }
}
