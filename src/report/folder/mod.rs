//! The one reader of an output folder, for `breakerlab report DIR`: its files parsed
//! ([`parse`]) into what the charts and the review page show ([`Contents`]), the same typed
//! input a command hands over from what it computed.

pub mod parse;

use super::charts::ChartError;
use super::charts::data::{Incident, TransitionRow};
use super::contents::{self, Contents, ParetoRows};
use super::page::{HTML_MAX_ROWS, INPUTS_FILE, ReportInputs};
use crate::sweep::SweepError;
use crate::sweep::output::RunsReader;
use crate::sweep::review::{REVIEW_TOML, Review};
use parse::{Opener, Reader, Table};
use std::path::Path;
use std::sync::Arc;

/// Rows of transitions.csv parsed at a time.
const CHUNK_ROWS: usize = 4096;

/// Parses the files `file` opens by name (`None`: the folder has no such file); `dir` names
/// them in errors. transitions.csv and explain.csv, which grow with the run, are read a chunk
/// or a row at a time, never held as text; summary.csv is checked in one pass and kept to be
/// read again by each chart (so `file` must open a file again, from any thread).
///
/// `then` (which draws the charts) is called on the contents as soon as all but the marks are
/// read, while the marks are read on another thread (the charts do not show them, and
/// explain.csv is the largest file a week-long run's page reads); its result comes back as it
/// is. Of several malformed files, the first in the order they have always been read is
/// reported: inputs.toml, review.toml, summary.csv, the timeline's three, explain.csv, then
/// the others.
pub fn read<'f, R: Send>(
    dir: &Path,
    file: impl Fn(&str) -> std::io::Result<Option<Reader<'f>>> + Send + Sync + 'f,
    then: impl FnOnce(&Contents<'f>) -> R + Send,
) -> Result<(Contents<'f>, R), ChartError> {
    let file: Opener<'f> = Arc::new(file);
    let mut contents = read_head(dir, &file)?;
    let incidents = contents.timeline.as_ref().map(|t| t.incidents.clone()).unwrap_or_default();
    let names = contents.inputs.as_ref().map(|i| i.breakers.clone()).unwrap_or_default();
    let (marks, rest) = rayon::join(
        || read_marks(dir, &file, &incidents, &names),
        || {
            read_rest(&mut contents, dir, &file)?;
            Ok(then(&contents))
        },
    );
    contents.marks = marks?;
    let drawn = rest?;
    Ok((contents, drawn))
}

/// inputs.toml, review.toml, summary.csv and the timeline (timeline.csv, transitions.csv and
/// incidents.csv): what [`read`] reads before the marks. timeline.csv, the other two of the
/// timeline and the rest are read at once, on the pool's threads; the first error in the order
/// above is reported, and the timeline's other two files are not looked at without
/// timeline.csv.
fn read_head<'f>(dir: &Path, file: &Opener<'f>) -> Result<Contents<'f>, ChartError> {
    let files = Files { dir, file };
    let (head, (series, rest)) = rayon::join(
        || files.head(),
        || {
            rayon::join(
                || files.table("timeline.csv")?.map(|t| parse::timeline(&t)).transpose(),
                || Ok::<_, ChartError>((files.transitions()?, files.table("incidents.csv")?)),
            )
        },
    );
    let (inputs, review, summary) = head?;
    let Some(series) = series? else {
        return Ok(Contents { summary, inputs, review, ..Contents::default() });
    };
    let (transitions, incidents) = rest?;
    let incidents = incidents.map(|t| parse::incidents(&t)).transpose()?;
    let timeline = contents::timeline(
        series,
        transitions.unwrap_or_default(),
        incidents.unwrap_or_default(),
        summary.as_ref(),
        inputs.as_ref(),
    );
    Ok(Contents { timeline: Some(timeline), summary, inputs, review, ..Contents::default() })
}

/// pareto.csv, latency.csv, recommended.txt and recommendation.txt: what [`read`] reads
/// after the marks.
fn read_rest(contents: &mut Contents, dir: &Path, file: &Opener<'_>) -> Result<(), ChartError> {
    let files = Files { dir, file };
    contents.pareto =
        files.get("pareto.csv")?.map(|r| pareto_rows(&dir.join("pareto.csv"), r)).transpose()?;
    contents.latency = files.table("latency.csv")?.map(|t| parse::latency(&t)).transpose()?;
    contents.recommended = files.text("recommended.txt")?.and_then(|t| parse::first_line(&t));
    contents.explanation = files.text("recommendation.txt")?.map(|t| t.trim_end().to_string());
    Ok(())
}

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
    let file = move |name: &str| match std::fs::File::open(owned.join(name)) {
        Ok(file) => Ok(Some(Box::new(std::io::BufReader::new(file)) as Reader)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    read(dir, file, |_| ()).map(|(contents, ())| contents)
}

/// The timeline's marks with their explanations: explain.csv's rows about the `incidents` and
/// the breakers (`names`), as [`Contents::marks`] holds them (none without explain.csv).
fn read_marks(
    dir: &Path,
    file: &Opener<'_>,
    incidents: &[Incident],
    names: &[String],
) -> Result<Vec<super::explain::Mark>, ChartError> {
    let Some(reader) = (Files { dir, file }).get("explain.csv")? else { return Ok(Vec::new()) };
    let rows = super::explain::read_marked_rows(reader, incidents).map_err(|e| ChartError::Csv {
        path: dir.join("explain.csv"),
        line: 0,
        message: e.to_string(),
    })?;
    Ok(super::explain::marks(&rows, incidents, names))
}

/// inputs.toml, review.toml and summary.csv, read.
type Head<'f> = (Option<ReportInputs>, Option<Review>, Option<super::charts::data::Summary<'f>>);

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

    /// inputs.toml, review.toml and summary.csv (checked).
    fn head(&self) -> Result<Head<'f>, ChartError> {
        let dir = self.dir;
        let inputs = self
            .text(INPUTS_FILE)?
            .map(|t| ReportInputs::from_toml(&dir.join(INPUTS_FILE), &t))
            .transpose()?;
        let review = self
            .text(REVIEW_TOML)?
            .map(|t| {
                let path = dir.join(REVIEW_TOML);
                Review::parse(&t, &path.display().to_string()).map_err(|e| match e {
                    crate::sweep::SweepError::At { line, message, .. } => {
                        ChartError::Toml { path: path.clone(), line: line as u64, message }
                    }
                    other => ChartError::Toml { path: path.clone(), line: 0, message: other.to_string() },
                })
            })
            .transpose()?;
        let summary = parse::summary(dir, "summary.csv", Arc::clone(self.file))?;
        Ok((inputs, review, summary))
    }

    /// transitions.csv, read a chunk of rows at a time.
    fn transitions(&self) -> Result<Option<Vec<TransitionRow>>, ChartError> {
        let Some(reader) = self.get("transitions.csv")? else { return Ok(None) };
        let mut all = Vec::new();
        let path = self.dir.join("transitions.csv");
        let rest = Table::chunks(&path, reader, CHUNK_ROWS, |t| {
            all.extend(parse::transitions(t)?);
            Ok(())
        })?;
        all.extend(parse::transitions(&rest)?);
        Ok(Some(all))
    }

    /// The CSV file `name`, parsed.
    fn table(&self, name: &str) -> Result<Option<Table>, ChartError> {
        self.get(name)?.map(|reader| Table::from_reader(&self.dir.join(name), reader)).transpose()
    }

    /// The text file `name`.
    fn text(&self, name: &str) -> Result<Option<String>, ChartError> {
        self.get(name)?
            .map(|mut reader| {
                let mut text = String::new();
                reader
                    .read_to_string(&mut text)
                    .map(|_| text)
                    .map_err(|source| ChartError::Io { path: self.dir.join(name), source })
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
        let again = read(
            dir.path(),
            move |name| {
                let bytes = files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
                Ok(bytes.map(|b| Box::new(std::io::Cursor::new(b)) as Reader))
            },
            |_| (),
        )
        .unwrap()
        .0;
        assert_eq!(again, c);
        assert!(c.summary.as_ref().is_some_and(|s| s.rows >= 2));
    }

    #[test]
    fn the_charts_see_all_but_the_marks_and_the_first_bad_file_is_reported() {
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
        let (c, seen) = read(dir.path(), open.clone(), |c| c.clone()).unwrap();
        assert!(!c.marks.is_empty() && c.latency.is_some());
        assert_eq!(seen, Contents { marks: Vec::new(), ..c.clone() });
        // Of a bad explain.csv and a bad latency.csv, explain.csv's error comes first, as when
        // the files are read one after the other; either alone is reported.
        std::fs::write(dir.path().join("latency.csv"), "x\n1\n").unwrap();
        let e = read(dir.path(), open.clone(), |_| ()).unwrap_err().to_string();
        assert!(e.contains("latency.csv"), "{e}");
        std::fs::write(dir.path().join("explain.csv"), "kind\n").unwrap();
        let e = read(dir.path(), open.clone(), |_| ()).unwrap_err().to_string();
        assert!(e.contains("explain.csv"), "{e}");
    }

    #[test]
    fn the_head_read_at_once_reports_the_first_bad_file_in_its_order() {
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
