//! The one reader of an output folder, for `breakerlab report DIR`: its files parsed
//! ([`parse`]) into what the charts and the review page show ([`Contents`]), the same typed
//! input a command hands over from what it computed.

pub mod parse;

use super::charts::ChartError;
use super::charts::data::{Incident, TransitionRow};
use super::contents::{self, Contents, ParetoRows};
use super::page::{HTML_MAX_ROWS, INPUTS_FILE, ReportInputs};
use crate::InputError;
use crate::sweep::SweepError;
use crate::sweep::output::RunsReader;
use crate::sweep::review::{REVIEW_TOML, Review};
use parse::{Opener, Reader, Table};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Rows of transitions.csv parsed at a time.
const CHUNK_ROWS: usize = 4096;

/// Parses the files `file` opens by name (`None`: the folder has no such file), in this order,
/// the first malformed one reported: inputs.toml, review.toml, summary.csv, the timeline's
/// timeline.csv, transitions.csv and incidents.csv (the other two not looked at without
/// timeline.csv), explain.csv, pareto.csv, latency.csv, recommended.txt, recommendation.txt.
/// `dir` names them in errors. transitions.csv and explain.csv, which grow with the run, are
/// read a chunk or a row at a time, never held as text; summary.csv is checked in one pass and
/// kept to be read again by each chart (so `file` must open a file again, from any thread).
pub fn read<'f>(
    dir: &Path,
    file: impl Fn(&str) -> std::io::Result<Option<Reader<'f>>> + Send + Sync + 'f,
) -> Result<Contents<'f>, ChartError> {
    let file: Opener<'f> = Arc::new(file);
    let files = Files { dir, file: &file };
    let inputs =
        files.text(INPUTS_FILE)?.map(|t| ReportInputs::from_toml(&dir.join(INPUTS_FILE), &t)).transpose()?;
    let review = files.text(REVIEW_TOML)?.map(|t| files.review(&t)).transpose()?;
    let opening = inputs.as_ref().and_then(|i| i.opening.clone());
    let summary = parse::summary(dir, "summary.csv", Arc::clone(&file))?;
    let timeline = match files.table("timeline.csv")? {
        Some(t) => {
            let series = parse::timeline(&t)?;
            let transitions = files.transitions()?;
            let incidents = files.table("incidents.csv")?.map(|t| parse::incidents(&t)).transpose()?;
            let incidents = incidents.unwrap_or_default();
            Some(contents::timeline(series, transitions, incidents, summary.as_ref(), inputs.as_ref()))
        }
        None => None,
    };
    let incidents = timeline.as_ref().map_or(&[][..], |t| &t.incidents);
    let names = inputs.as_ref().map_or(&[][..], |i| &i.breakers);
    // recommendation.txt ends with a targeted sweep's deploy section: the page shows it apart.
    let text = files.text("recommendation.txt")?;
    let (explanation, deploy) = match text.as_deref().map(|t| t.split_once(DEPLOY_SECTION)) {
        Some(Some((before, after))) => {
            (Some(before.trim_end().to_string()), Some(format!("{}{after}", DEPLOY_SECTION.trim_start())))
        }
        _ => (text.map(|t| t.trim_end().to_string()), None),
    };
    Ok(Contents {
        marks: files.marks(incidents, names)?,
        pareto: files.get("pareto.csv")?.map(|r| pareto_rows(&dir.join("pareto.csv"), r)).transpose()?,
        latency: files.table("latency.csv")?.map(|t| parse::latency(&t)).transpose()?,
        recommended: files.text("recommended.txt")?.and_then(|t| parse::first_line(&t)),
        explanation,
        deploy,
        timeline,
        summary,
        inputs,
        review,
        opening,
    })
}

/// Where recommendation.txt's deploy section starts (see `app::deploy`).
pub const DEPLOY_SECTION: &str = "\n\nDeploy to ";

/// The first [`HTML_MAX_ROWS`] rows of pareto.csv (`path`, for errors) as written and how
/// many it has, every row checked as a summary row.
pub fn pareto_rows(path: &Path, reader: impl std::io::Read) -> Result<ParetoRows, ChartError> {
    let (head, rows) = Table::head(path, reader, HTML_MAX_ROWS, parse::check_rows)?;
    let cells =
        (0..head.len()).map(|r| (0..head.headers.len()).map(|c| head.str(r, c).to_string()).collect());
    Ok(ParetoRows { head: cells.collect(), headers: head.headers, rows })
}

/// Reads the output folder `dir` from disk (tests; commands hand over what they computed).
#[cfg(test)]
pub fn load(dir: &Path) -> Result<Contents<'static>, ChartError> {
    let owned = dir.to_path_buf();
    read(dir, move |name: &str| match std::fs::File::open(owned.join(name)) {
        Ok(file) => Ok(Some(Box::new(std::io::BufReader::new(file)) as Reader)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    })
}

/// The files of the folder `dir`, opened by name through `file` (errors name them).
struct Files<'a, 'f> {
    dir: &'a Path,
    file: &'a Opener<'f>,
}

impl<'f> Files<'_, 'f> {
    /// The file `name`, open (`None`: the folder has none).
    fn get(&self, name: &str) -> Result<Option<Reader<'f>>, ChartError> {
        (self.file)(name).map_err(|source| ChartError::Io { path: self.dir.join(name), source })
    }

    /// review.toml's `text`.
    fn review(&self, text: &str) -> Result<Review, ChartError> {
        let path = self.dir.join(REVIEW_TOML);
        Review::parse(text, &path.display().to_string()).map_err(|e| {
            ChartError::Toml(match e {
                SweepError::At { line, col, message, .. } => {
                    InputError { path: Some(path.clone()), position: Some((line, col)), message }
                }
                SweepError::File { message, .. } => InputError::file(&path, message),
                other => InputError::file(&path, other.to_string()),
            })
        })
    }

    /// transitions.csv, read a chunk of rows at a time (none without the file).
    fn transitions(&self) -> Result<Vec<TransitionRow>, ChartError> {
        let Some(reader) = self.get("transitions.csv")? else { return Ok(Vec::new()) };
        let mut all = Vec::new();
        let path = self.dir.join("transitions.csv");
        let rest = Table::chunks(&path, reader, CHUNK_ROWS, |t| {
            all.extend(parse::transitions(t)?);
            Ok(())
        })?;
        all.extend(parse::transitions(&rest)?);
        Ok(all)
    }

    /// The timeline's marks with their explanations: explain.csv's rows about the `incidents`
    /// and the breakers (`names`), as [`Contents::marks`] holds them (none without the file).
    fn marks(
        &self,
        incidents: &[Incident],
        names: &[String],
    ) -> Result<Vec<super::explain::Mark>, ChartError> {
        let Some(reader) = self.get("explain.csv")? else { return Ok(Vec::new()) };
        let rows = super::explain::read_marked_rows(reader, incidents).map_err(|e| ChartError::Csv {
            path: self.dir.join("explain.csv"),
            line: 0,
            message: e.to_string(),
        })?;
        Ok(super::explain::marks(&rows, incidents, names))
    }

    /// The CSV file `name`, parsed.
    fn table(&self, name: &str) -> Result<Option<Table>, ChartError> {
        self.get(name)?.map(|reader| Table::from_reader(&self.dir.join(name), reader)).transpose()
    }

    /// The text file `name`.
    fn text(&self, name: &str) -> Result<Option<String>, ChartError> {
        self.get(name)?
            .map(|reader| {
                let path = self.dir.join(name);
                let mut bytes = Vec::new();
                reader
                    .take(crate::scenario::MAX_TEXT_BYTES)
                    .read_to_end(&mut bytes)
                    .map_err(|source| ChartError::Io { path: path.clone(), source })?;
                crate::scenario::utf8_text(&path, bytes).map_err(ChartError::Toml)
            })
            .transpose()
    }
}

/// Checks a folder's runs.csv (at `path`) row by row, streamed since it can be large: the charts
/// and pages do not show it, but `recommend DIR` re-ranks from it, so a malformed one is refused
/// where it breaks (file, line, field) like any other file of the folder.
pub fn check_runs(path: &Path, input: impl std::io::Read) -> Result<(), SweepError> {
    let mut runs = RunsReader::new(input, &path.display().to_string())?;
    while runs.next_run()?.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::data::SINGLE_POLICY;
    use crate::report::charts::fixtures;

    /// The files [`read`] asks for.
    const FILES: [&str; 11] = [
        INPUTS_FILE,
        "explain.csv",
        REVIEW_TOML,
        "summary.csv",
        "pareto.csv",
        "timeline.csv",
        "transitions.csv",
        "incidents.csv",
        "latency.csv",
        "recommended.txt",
        "recommendation.txt",
    ];

    #[test]
    fn a_compare_folder_reads_into_every_part() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let c = load(dir.path()).unwrap();
        let t = c.timeline.as_ref().unwrap();
        assert_eq!(t.series.len(), 3);
        assert!(!t.transitions.is_empty() && !t.incidents.is_empty());
        assert!(c.pareto.is_none() && c.recommended.is_none() && c.explanation.is_none());
        assert!(c.inputs.is_none());
        assert!(c.latency.is_some());
        // The same bytes handed over in memory give the same contents.
        let files: Vec<(String, Vec<u8>)> = FILES
            .iter()
            .filter_map(|n| std::fs::read(dir.path().join(n)).ok().map(|b| (n.to_string(), b)))
            .collect();
        let again = read(dir.path(), move |name| {
            let bytes = files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
            Ok(bytes.map(|b| Box::new(std::io::Cursor::new(b)) as Reader))
        })
        .unwrap();
        assert_eq!(again, c);
        assert!(c.summary.as_ref().is_some_and(|s| s.rows >= 2));
    }

    #[test]
    fn the_marks_are_read_and_the_first_bad_file_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let header = "kind,at_us,instance,from,to,reason,incident,results,evidence\n";
        let explain = format!("{header}transition,5000000,0,closed,open,r,,,\n");
        std::fs::write(dir.path().join("explain.csv"), &explain).unwrap();
        let owned = dir.path().to_path_buf();
        let open = move |name: &str| match std::fs::read(owned.join(name)) {
            Ok(bytes) => Ok(Some(Box::new(std::io::Cursor::new(bytes)) as Reader)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        };
        let c = read(dir.path(), open.clone()).unwrap();
        assert!(!c.marks.is_empty() && c.latency.is_some());
        // Of a bad explain.csv and a bad latency.csv, explain.csv's error comes first; either
        // alone is reported.
        std::fs::write(dir.path().join("latency.csv"), "x\n1\n").unwrap();
        let e = read(dir.path(), open.clone()).unwrap_err().to_string();
        assert!(e.contains("latency.csv"), "{e}");
        std::fs::write(dir.path().join("explain.csv"), "kind\n").unwrap();
        let e = read(dir.path(), open.clone()).unwrap_err().to_string();
        assert!(e.contains("explain.csv"), "{e}");
    }

    #[test]
    fn the_first_bad_file_in_the_reading_order_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let bad = |name: &str| std::fs::write(dir.path().join(name), "x\n1,2\n").unwrap();
        let first_bad = || load(dir.path()).unwrap_err().to_string();
        bad("incidents.csv");
        assert!(first_bad().contains("incidents.csv"), "{}", first_bad());
        bad("transitions.csv");
        assert!(first_bad().contains("transitions.csv"), "{}", first_bad());
        bad("timeline.csv");
        assert!(first_bad().contains("timeline.csv"), "{}", first_bad());
        bad("summary.csv");
        assert!(first_bad().contains("summary.csv"), "{}", first_bad());
        // Without timeline.csv, neither of the timeline's other two files is looked at.
        fixtures::compare_dir(dir.path());
        std::fs::remove_file(dir.path().join("timeline.csv")).unwrap();
        bad("transitions.csv");
        bad("incidents.csv");
        let c = load(dir.path()).unwrap();
        assert!(c.timeline.is_none() && c.summary.is_some());
    }

    #[test]
    fn a_single_run_names_its_series_after_its_summary_row() {
        let dir = tempfile::tempdir().unwrap();
        let timeline = "bin_start_us,bin_end_us,offered,admitted,rejected,failures\n0,10,1,1,0,0\n";
        std::fs::write(dir.path().join("timeline.csv"), timeline).unwrap();
        let c = load(dir.path()).unwrap();
        assert_eq!(c.timeline.unwrap().series[0].policy, SINGLE_POLICY);
        std::fs::write(dir.path().join("summary.csv"), "scenario,policy\ns,consecutive\n").unwrap();
        let c = load(dir.path()).unwrap();
        assert_eq!(c.timeline.unwrap().series[0].policy, "consecutive");
    }

    #[test]
    fn a_truncated_file_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let text = std::fs::read_to_string(dir.path().join("timeline.csv")).unwrap();
        let last = text.trim_end().lines().last().unwrap();
        let cut = &text[..text.trim_end().len() - last.len() / 2];
        std::fs::write(dir.path().join("timeline.csv"), cut).unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("timeline.csv") && e.contains("line"), "{e}");
    }
}
