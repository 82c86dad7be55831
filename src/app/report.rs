//! `breakerlab report DIR`: redraw every chart from an output folder's files and write the
//! review page (report.html, self-contained) and report.md. The folder is rewritten as a whole
//! like any other output set: its files are kept, its charts and pages drawn anew.

use super::output::{Keep, OutputDir, Page};
use crate::Result;
use crate::metrics::Metrics;
use crate::report::charts::{ChartOptions, TimeRange};
use crate::report::folder::check_runs;
use crate::scenario::InputError;
use crate::time::Dur;
use std::path::PathBuf;

/// What `report` was asked for.
#[derive(Clone, Debug, Default)]
pub struct ReportRequest {
    /// An output folder written by run, replay, sweep or compare.
    pub dir: PathBuf,
    /// Zoom the timeline: first instant shown.
    pub from: Option<Dur>,
    /// Zoom the timeline: last instant shown.
    pub to: Option<Dur>,
    /// The summary column the heatmaps colour by (default `cost`).
    pub metric: Option<String>,
}

/// Redraws and rewrites; returns the charts and pages written, in that order.
pub fn report(req: &ReportRequest) -> Result<Vec<PathBuf>> {
    let dir = &req.dir;
    crate::scenario::output_folder(dir)?;
    let written = [
        super::output::SUMMARY_CSV,
        super::output::RUNS_CSV,
        super::output::TIMELINE_CSV,
        super::output::TRANSITIONS_CSV,
        super::output::PARETO_CSV,
    ];
    if !written.iter().any(|name| std::fs::symlink_metadata(dir.join(name)).is_ok()) {
        return Err(InputError::file(
            dir,
            format!(
                "not an output folder: it holds none of {} (run, replay, sweep and compare write them)",
                written.join(", ")
            ),
        )
        .into());
    }
    let time_range = match (req.from.map(Dur::micros), req.to.map(Dur::micros)) {
        (None, None) => None,
        (Some(f), Some(t)) if f >= t => {
            return Err(InputError::argument(format!(
                "--from {} is not before --to {}: give a window that ends after it starts",
                Dur::from_micros(f),
                Dur::from_micros(t)
            ))
            .into());
        }
        (f, t) => Some(TimeRange { from_us: f.unwrap_or(0), to_us: t.unwrap_or(u64::MAX) }),
    };
    let mut charts = ChartOptions { time_range, ..ChartOptions::default() };
    if let Some(m) = &req.metric {
        if !Metrics::COLUMNS.contains(&m.as_str()) {
            return Err(InputError::argument(format!(
                "--metric {m}: not a summary metric; expected one of {}",
                Metrics::COLUMNS.join(", ")
            ))
            .into());
        }
        charts.heatmap_metric = m.clone();
    }
    let runs = dir.join(super::output::RUNS_CSV);
    if runs.is_file() {
        let file = std::fs::File::open(&runs).map_err(|e| crate::Error::io(&runs, e))?;
        check_runs(&runs, std::io::BufReader::new(file)).map_err(InputError::from)?;
    }
    let out = OutputDir::create(dir, Keep::AllButPages)?;
    let mut files = out.redraw(&Page { inputs: None, charts })?;
    // inputs.toml is kept as it was: list the charts (by name) and the pages.
    files.retain(|f| f.file_name().is_some_and(|n| n != crate::report::page::INPUTS_FILE));
    let pages = files.split_off(files.len().saturating_sub(2));
    files.sort();
    files.extend(pages);
    Ok(files)
}
