//! PNG charts drawn from an output folder's contents (typed, `report::contents`): what a command
//! computed, or what `breakerlab report DIR` reads from the CSVs alone; either way the same
//! bytes. One file per chart type; `style` holds the font, sizes, palette and the bitmap;
//! `data` the typed input. Text uses DejaVu Sans compiled into the binary (plotters'
//! `ab_glyph`), never the system's fonts. Same data ⇒ identical PNG bytes.

pub mod axis;
pub mod comparison;
pub mod data;
pub mod heatmap;
pub mod latency;
pub mod pareto;
pub mod style;
pub mod timeline;

use super::contents::Contents;
use crate::{Error, InputError};
use std::path::PathBuf;
use style::Layout;

/// File name of the timeline chart.
pub const TIMELINE_PNG: &str = "timeline.png";
/// File name of the Pareto chart.
pub const PARETO_PNG: &str = "pareto.png";
/// File name of the comparison chart.
pub const COMPARISON_PNG: &str = "comparison.png";
/// File name of the latency CDF chart.
pub const LATENCY_PNG: &str = "latency_cdf.png";

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The CSV file is malformed (quoting, row length).
    #[error("{path}: line {line}: {message}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// Line of the problem (1-based, 0 when unknown).
        line: u64,
        /// What the CSV reader said.
        message: String,
    },
    /// inputs.toml is malformed.
    #[error("{path}: line {line}: {message}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// Line of the problem (1-based, 0 when unknown).
        line: u64,
        /// What the TOML parser said.
        message: String,
    },
    /// A column the chart needs is missing from the header.
    #[error("{path}: missing column `{column}`")]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column expected.
        column: String,
    },
    /// A cell holds something other than what the column should hold.
    #[error("{path}: line {line}, column `{column}`: found \"{value}\", expected {expected}")]
    BadValue {
        /// The file.
        path: PathBuf,
        /// Line of the row (1-based).
        line: u64,
        /// Column name.
        column: String,
        /// The cell's text.
        value: String,
        /// What the column should hold.
        expected: &'static str,
    },
    /// There is nothing to draw (e.g. an empty timeline).
    #[error("nothing to draw: {0}")]
    NoData(String),
    /// The embedded font could not be loaded.
    #[error("the embedded font could not be registered")]
    Font,
    /// plotters failed while drawing.
    #[error("drawing failed: {0}")]
    Draw(String),
}

impl From<ChartError> for Error {
    /// A chart's input is an output folder's files: a malformed or truncated one is bad input
    /// (exit 2); a file that cannot be read or written, or a drawing failure, is not.
    fn from(e: ChartError) -> Error {
        use ChartError as C;
        match e {
            C::Io { path, source } => Error::Io { path, source },
            C::Csv { ref path, .. }
            | C::Toml { ref path, .. }
            | C::MissingColumn { ref path, .. }
            | C::BadValue { ref path, .. } => {
                let message = e.to_string();
                let prefix = format!("{}: ", path.display());
                let message = message.strip_prefix(&prefix).unwrap_or(&message).to_string();
                Error::Input(InputError::file(path, message))
            }
            C::NoData(_) => Error::Input(InputError::argument(e.to_string())),
            C::Font | C::Draw(_) => Error::Internal(e.to_string()),
        }
    }
}

/// A time window to zoom the timeline to, in microseconds since the scenario's start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// First instant shown.
    pub from_us: u64,
    /// Last instant shown.
    pub to_us: u64,
}

/// Choices for [`draw_all`].
#[derive(Clone, Debug, PartialEq)]
pub struct ChartOptions {
    /// Zoom the timeline to this window (whole run when `None`).
    pub time_range: Option<TimeRange>,
    /// The summary.csv column the heatmaps colour by (lower is better); `cost` by default.
    pub heatmap_metric: String,
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions { time_range: None, heatmap_metric: "cost".to_string() }
    }
}

/// One chart: its file name and PNG bytes, or the sentence that says what it would have shown
/// when there is nothing worth a picture (a heatmap with no cell meeting the constraints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chart {
    /// File name in the output folder.
    pub name: String,
    /// The PNG (empty when the chart is a [`Chart::sentence`]).
    pub png: Vec<u8>,
    /// The narrow rendering a phone-width page shows instead ([`style::Layout::Narrow`]);
    /// empty when the chart has none. Only on the page: no file is written.
    pub narrow: Vec<u8>,
    /// Instead of a picture, this sentence on the page; no file is written.
    pub sentence: Option<String>,
}

/// Charts still to draw: the drawing, which reads what it needs and returns them in order.
type Job<'a> = Box<dyn FnOnce() -> Result<Vec<Chart>, ChartError> + Send + 'a>;

/// One chart named `name` drawn by `draw` in each layout: the full-size PNG, then the narrow
/// one (`None` for a chart drawn full-size only).
fn one(
    name: &str,
    draw: impl Fn(Layout) -> Option<Result<Vec<u8>, ChartError>>,
) -> Result<Vec<Chart>, ChartError> {
    let png = draw(Layout::Wide).unwrap_or_else(|| Ok(Vec::new()))?;
    let narrow = draw(Layout::Narrow).unwrap_or_else(|| Ok(Vec::new()))?;
    Ok(vec![Chart { name: name.to_string(), png, narrow, sentence: None }])
}

/// Draws every chart the folder's contents allow:
/// timeline.png from timeline.csv (with transitions.csv and incidents.csv);
/// heatmap_<family>_<p1>_<p2>.png for every pair of swept parameters in summary.csv;
/// pareto.png with pareto.csv; comparison.png when summary.csv holds two or more
/// configurations; latency_cdf.png from latency.csv. Returns them in that order.
///
/// The charts are drawn in parallel (rayon's current pool), each on one thread from its own
/// data (the summary's charts each from passes of their own over summary.csv, keeping only what
/// they draw), and collected in that order: a chart's bytes never depend on the thread count.
pub fn draw_all(c: &Contents, opts: &ChartOptions) -> Result<Vec<Chart>, ChartError> {
    use rayon::prelude::*;
    let mut jobs: Vec<Job> = Vec::new();
    if let Some(data) = &c.timeline {
        jobs.push(Box::new(move || {
            one(TIMELINE_PNG, |layout| {
                (layout == Layout::Wide).then(|| timeline::draw_timeline(data, opts.time_range))
            })
        }));
    }
    if let Some(summary) = &c.summary {
        let marked = heatmap::Marked {
            recommended: c.recommended.as_deref(),
            baseline: c.review.as_ref().and_then(|r| r.baseline.as_ref()).map(|b| b.label.as_str()),
        };
        jobs.push(Box::new(move || {
            let maps = heatmap::heatmaps(summary, &opts.heatmap_metric, marked)?;
            let drawn: Vec<Result<Chart, ChartError>> = maps
                .into_par_iter()
                .map(|map| match map.no_cell_sentence() {
                    Some(sentence) => Ok(Chart {
                        name: map.file_name(),
                        png: Vec::new(),
                        narrow: Vec::new(),
                        sentence: Some(sentence),
                    }),
                    None => Ok(Chart {
                        name: map.file_name(),
                        png: heatmap::draw_heatmap(&map, Layout::Wide)?,
                        narrow: heatmap::draw_heatmap(&map, Layout::Narrow)?,
                        sentence: None,
                    }),
                })
                .collect();
            drawn.into_iter().collect()
        }));
        if c.pareto.is_some() {
            let baseline = c.review.as_ref().and_then(|r| r.baseline.as_ref()).map(|b| b.label.clone());
            jobs.push(Box::new(move || {
                let p = pareto::ParetoData::new(summary, c.recommended.clone(), baseline)?;
                one(PARETO_PNG, |layout| Some(pareto::draw_pareto(&p, layout)))
            }));
        }
        let baseline = c.review.as_ref().and_then(|r| r.baseline.as_ref()).map(|b| b.label.as_str());
        jobs.push(Box::new(move || {
            let cmp = comparison::ComparisonData::marked(summary, c.recommended.as_deref(), baseline)?;
            if cmp.configs.len() < 2 {
                return Ok(Vec::new());
            }
            one(COMPARISON_PNG, |layout| {
                Some(match layout {
                    Layout::Wide => comparison::draw_comparison(&cmp),
                    Layout::Narrow => comparison::draw_comparison(&cmp.narrow()),
                })
            })
        }));
    }
    if let Some(hists) = &c.latency
        && hists.iter().any(|h| h.total() > 0.0)
    {
        jobs.push(Box::new(move || {
            one(LATENCY_PNG, |layout| Some(latency::draw_latency_cdf(hists, layout)))
        }));
    }
    let drawn: Vec<Result<Vec<Chart>, ChartError>> = jobs.into_par_iter().map(|draw| draw()).collect();
    // The first failure in chart order, whichever thread met it first.
    Ok(drawn.into_iter().collect::<Result<Vec<_>, _>>()?.into_iter().flatten().collect())
}

/// Draws every chart of `dir` into `dir` (tests and samples only: commands write through the
/// output folder).
#[cfg(test)]
pub(crate) fn draw_into(dir: &std::path::Path) -> Result<Vec<PathBuf>, ChartError> {
    let charts = draw_all(&Contents::load(dir)?, &ChartOptions::default())?;
    Ok(charts
        .into_iter()
        .filter(|c| c.sentence.is_none())
        .map(|c| {
            let path = dir.join(&c.name);
            std::fs::write(&path, &c.png).unwrap();
            path
        })
        .collect())
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Error;
    use std::path::Path;

    /// Width and height from a PNG's IHDR chunk, after checking the signature and the end chunk.
    pub(crate) fn png_size(bytes: &[u8]) -> (u32, u32) {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&bytes[12..16], b"IHDR");
        assert_eq!(&bytes[bytes.len() - 8..bytes.len() - 4], b"IEND");
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        (be(&bytes[16..20]), be(&bytes[20..24]))
    }

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn compare_folder_draws_timeline_comparison_and_latency_at_their_sizes() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let out = draw_into(dir.path()).unwrap();
        assert_eq!(names(&out), vec!["timeline.png", "comparison.png", "latency_cdf.png"]);
        let size = |n: &str| png_size(&std::fs::read(dir.path().join(n)).unwrap());
        let data = Contents::load(dir.path()).unwrap().timeline.unwrap();
        assert_eq!(data.series.len(), 3);
        assert_eq!(size("timeline.png"), timeline::timeline_size(&data, None));
        let summary = data::read_summary(&dir.path().join("summary.csv")).unwrap();
        let cmp = comparison::ComparisonData::new(&summary).unwrap();
        assert_eq!(size("comparison.png"), comparison::comparison_size(&cmp));
        assert_eq!(size("latency_cdf.png"), style::LATENCY_SIZE);
    }

    #[test]
    fn a_configuration_has_one_colour_on_every_chart_of_a_page() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let contents = Contents::load(dir.path()).unwrap();
        let cmp = comparison::ComparisonData::new(contents.summary.as_ref().unwrap()).unwrap();
        let hists = contents.latency.as_ref().unwrap();
        let labels: Vec<&str> = hists.iter().map(|h| h.policy.as_str()).collect();
        let latency = style::label_colours(&labels);
        for (i, label) in cmp.configs.iter().enumerate() {
            let j = labels.iter().position(|l| l == label).unwrap();
            assert_eq!(cmp.colour(i), latency[j], "{label}: comparison.png and latency_cdf.png differ");
        }
        // And the family's colour is pareto.png's: its first configuration in the palette's
        // colour, a second one of the same family a shade of it, hatched.
        assert_eq!(style::family_colour(2, 0), style::series_colour(2));
        assert_ne!(style::family_colour(2, 2), style::series_colour(2));
        assert!(!style::family_hatched(0) && style::family_hatched(1));
        let two = style::label_colours(&["consecutive", "windowed", "consecutive[failure_threshold=10]"]);
        assert_eq!((two[0], two[1]), (style::series_colour(0), style::series_colour(1)));
        assert_eq!(two[2], style::family_colour(0, 1));
    }

    #[test]
    fn sweep_folder_draws_heatmaps_and_pareto() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::sweep_dir(dir.path());
        let out = draw_into(dir.path()).unwrap();
        assert_eq!(
            names(&out),
            vec![
                "heatmap_consecutive_failure_threshold_open_for.png",
                "heatmap_window_failure_rate_window.png",
                "heatmap_window_failure_rate_min_calls.png",
                "heatmap_window_window_min_calls.png",
                "pareto.png",
                "comparison.png",
            ]
        );
        for p in &out[..4] {
            assert_eq!(png_size(&std::fs::read(p).unwrap()), style::HEATMAP_SIZE);
        }
        assert_eq!(png_size(&std::fs::read(&out[4]).unwrap()), style::PARETO_SIZE);
    }

    #[test]
    fn same_csvs_draw_identical_bytes() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for d in [a.path(), b.path()] {
            fixtures::compare_dir(d);
        }
        let run = |d: &Path| {
            std::fs::create_dir_all(d.join("sweep")).unwrap();
            fixtures::sweep_dir(&d.join("sweep"));
            let mut all = draw_into(d).unwrap();
            all.extend(draw_into(&d.join("sweep")).unwrap());
            all.iter().map(|p| std::fs::read(p).unwrap()).collect::<Vec<_>>()
        };
        let (x, y) = (run(a.path()), run(b.path()));
        assert_eq!(x.len(), 9);
        assert!(x == y, "chart bytes differ between two draws of the same CSVs");
        // And drawing again in place gives the same bytes too.
        assert!(run(a.path()) == x);
    }

    #[test]
    fn embedded_font_draws_text() {
        let size = (400, 80);
        let blank = style::render_rgb(size, |_| Ok(())).unwrap();
        let titled = style::render_rgb(size, |root| style::draw_title(root, "Timeline", "")).unwrap();
        let dark = titled.chunks(3).filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100).count();
        assert!(blank != titled);
        assert!(dark > 200, "only {dark} dark pixels: the title was not drawn");
        // In a real chart the title strip holds text only: it must not be blank.
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let data = Contents::load(dir.path()).unwrap().timeline.unwrap();
        let (w, h) = timeline::timeline_size(&data, None);
        let rgb = style::render_rgb((w, h), |root| timeline::render_timeline(&data, None, root)).unwrap();
        let strip = &rgb[..(w * style::TITLE_HEIGHT * 3) as usize];
        let inked = strip.chunks(3).filter(|p| p[0] < 128).count();
        assert!(inked > 500, "title strip has {inked} inked pixels");
    }

    #[test]
    fn zoom_and_bad_input_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::week_dir(dir.path());
        let data = Contents::load(dir.path()).unwrap().timeline.unwrap();
        let day = 86_400_000_000u64;
        let png =
            timeline::draw_timeline(&data, Some(TimeRange { from_us: day, to_us: day + 4 * 3_600_000_000 }))
                .unwrap();
        let zoom = TimeRange { from_us: day, to_us: day + 4 * 3_600_000_000 };
        assert_eq!(png_size(&png), timeline::timeline_size(&data, Some(zoom)));
        let err = timeline::draw_timeline(&data, Some(TimeRange { from_us: 5, to_us: 5 })).unwrap_err();
        assert!(err.to_string().contains("empty time range"), "{err}");
        std::fs::write(dir.path().join("incidents.csv"), "start_us,end_us,kind,expect\n1,2,outage,maybe\n")
            .unwrap();
        let err = draw_into(dir.path()).unwrap_err().to_string();
        assert!(err.contains("incidents.csv") && err.contains("line 2") && err.contains("maybe"), "{err}");
    }

    /// Writes sample charts under /tmp/breakerlab-charts for looking at them:
    /// `cargo test --lib report::charts::tests::samples -- --ignored`.
    #[test]
    #[ignore]
    fn samples() {
        let root = Path::new("/tmp/breakerlab-charts");
        for (name, f) in [
            ("compare", fixtures::compare_dir as fn(&Path)),
            ("sweep", fixtures::sweep_dir),
            ("week", fixtures::week_dir),
        ] {
            let d = root.join(name);
            std::fs::create_dir_all(&d).unwrap();
            f(&d);
            draw_into(&d).unwrap();
            let inputs = crate::report::page::ReportInputs {
                title: format!("{name} sample"),
                command_line: Some(format!("breakerlab {name} scenarios/sample.toml --seed 7")),
                seed: Some(7),
                ..Default::default()
            };
            let contents = Contents::load(&d).unwrap();
            let charts = draw_all(&contents, &ChartOptions::default()).unwrap();
            let (html, md) = crate::report::page::render_report(&contents, &charts, &inputs, &d).unwrap();
            std::fs::write(d.join(crate::report::page::REPORT_HTML), html).unwrap();
            std::fs::write(d.join(crate::report::page::REPORT_MD), md).unwrap();
        }
        let d = root.join("week");
        let data = Contents::load(&d).unwrap().timeline.unwrap();
        let day = 86_400_000_000u64;
        let zoom = TimeRange { from_us: 3 * day + 3_600_000_000, to_us: 3 * day + 4 * 3_600_000_000 };
        std::fs::write(d.join("timeline_zoom.png"), timeline::draw_timeline(&data, Some(zoom)).unwrap())
            .unwrap();
    }

    #[test]
    fn chart_errors_map_to_exit_codes_by_whose_fault_it_is() {
        assert_eq!(Error::argument("--to before --from").exit_code(), 2);
        let io = Error::io("out/summary.csv", std::io::Error::other("disk full"));
        assert_eq!(io.exit_code(), 1);
        assert_eq!(io.to_string(), "out/summary.csv: disk full");
        assert_eq!(Error::Internal("x".into()).exit_code(), 1);
        let csv =
            ChartError::Csv { path: "o/timeline.csv".into(), line: 3, message: "found 2 fields".into() };
        let e = Error::from(csv);
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "o/timeline.csv: line 3: found 2 fields");
        assert_eq!(Error::from(ChartError::Font).exit_code(), 1);
    }
}
