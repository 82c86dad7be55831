//! `breakerlab report DIR`: redraw every chart from an output folder's CSVs and write the review
//! page (report.html, self-contained) and report.md.

use crate::report::charts::{ChartOptions, TimeRange};
use crate::report::page::{self, ReportInputs};
use crate::scenario::InputError;
use crate::time::Dur;
use std::path::{Path, PathBuf};

/// Redraws and rewrites; `from`/`to` zoom the timeline, `metric` colours the heatmaps.
pub fn report(
    dir: &Path,
    from: Option<&str>,
    to: Option<&str>,
    metric: Option<&str>,
) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(InputError::file(dir, "not an output folder (no such directory)").into());
    }
    let parse = |flag: &str, text: Option<&str>| -> Result<Option<u64>, InputError> {
        text.map(|t| {
            Dur::parse(t).map(Dur::micros).map_err(|e| InputError::argument(format!("--{flag}: {e}")))
        })
        .transpose()
    };
    let (from_us, to_us) = (parse("from", from)?, parse("to", to)?);
    let time_range = match (from_us, to_us) {
        (None, None) => None,
        (f, t) => Some(TimeRange { from_us: f.unwrap_or(0), to_us: t.unwrap_or(u64::MAX) }),
    };
    let mut opts = ChartOptions { time_range, ..ChartOptions::default() };
    if let Some(m) = metric {
        opts.heatmap_metric = m.to_string();
    }
    let fallback = ReportInputs { title: dir.display().to_string(), ..ReportInputs::default() };
    let pages = page::report_dir(dir, &opts, &fallback)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    files.sort();
    files.extend([pages.html, pages.md]);
    Ok(files)
}

/// File names, comma-separated, for the printout.
pub fn list(files: &[PathBuf]) -> String {
    files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect::<Vec<_>>().join(", ")
}
