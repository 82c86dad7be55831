//! Scenario files read from disk: [`load`] and [`parse`] (a scenario file and the script or
//! trace it names), [`from_script`] and [`from_trace`] (a script or trace alone). The scenario
//! model and the file's TOML schema are `breakerlab_model::scenario`'s; this module gives it
//! the file system to read them from.

mod input_file;

pub(crate) use breakerlab_model::scenario::*;
pub use breakerlab_model::scenario::{InputError, Scenario, Source, Strategy, parse_seed};
pub use input_file::{
    MAX_DATA_BYTES, MAX_TEXT_BYTES, open_input, open_stream, output_folder, read_input, read_input_text,
    regular_file, utf8_text,
};

use crate::client::ClientSpec;
use crate::script::load_script;
use crate::time::Dur;
use crate::trace::series::SeriesSpec;
use crate::trace::{Trace, TraceError, TraceOptions};
use crate::traffic::TrafficSpec;
use crate::upstream::script::ScriptCalls;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

#[cfg(test)]
mod mesh_golden;

/// Reads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario, InputError> {
    let text = read_text(path)?;
    parse(path, &text)
}

/// Validates the text of a scenario file, reading the script or trace it names; `path` names it
/// in errors and anchors relative paths.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, InputError> {
    Scenario::parse_with(path, text, &Files)
}

/// The file system, as the reader of the files a scenario names.
struct Files;

impl Inputs for Files {
    fn script(&self, path: &Path) -> Result<ScriptCalls, String> {
        load_script(path).map_err(|e| e.to_string())
    }

    fn trace(
        &self,
        scenario: &Path,
        mut opts: TraceOptions,
        traffic: Option<TrafficSpec>,
    ) -> Result<(Source, Dur, Vec<PathBuf>), String> {
        // Series files are relative to the scenario file too; the first names the trace.
        opts.series = opts
            .series
            .iter()
            .map(|spec| SeriesSpec::rewrite_file(spec, |f| relative_to(scenario, f)))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("[trace]: {e}"))?;
        let first_series = opts.series.first().and_then(|s| SeriesSpec::parse(s).ok());
        let trace_path = match (opts.file.take(), first_series) {
            (Some(rel), _) => relative_to(scenario, &rel.to_string_lossy()),
            (None, Some(spec)) => spec.file,
            (None, None) => {
                return Err(TRACE_NEEDS_FILE.into());
            }
        };
        opts.labels = opts.labels.map(|l| relative_to(scenario, &l.to_string_lossy()));
        let mut read = vec![trace_path.clone()];
        read.extend(opts.labels.clone());
        let (source, horizon) =
            trace_source(&trace_path, &opts, traffic).map_err(|m| format!("[trace]: {m}"))?;
        Ok((source, horizon, read))
    }
}

/// A scenario made of a scripted CSV alone (`breakerlab run --script FILE`): the client
/// makes exactly those calls, with no retries and no timeout of its own.
pub fn from_script(path: &Path) -> Result<Scenario, InputError> {
    let rows = load_script(path).map_err(|e| InputError::argument(e.to_string()))?;
    Scenario::from_calls(path, rows)
}

/// A scenario made of a trace alone (`breakerlab replay TRACE.csv`): the default client (10 s
/// timeout, no retries), the trace's span, arrivals from the trace or from `traffic`.
/// `opts.labels` is taken as given (relative to the working folder).
pub fn from_trace(
    path: &Path,
    opts: &TraceOptions,
    traffic: Option<TrafficSpec>,
) -> Result<Scenario, InputError> {
    if let Some(t) = &traffic {
        t.validate().map_err(InputError::from)?;
    }
    let (source, duration) = trace_source(path, opts, traffic).map_err(InputError::from)?;
    let name = path.file_stem().map_or_else(|| "trace".to_string(), |s| s.to_string_lossy().into_owned());
    let scenario = Scenario {
        name,
        description: format!("replay of {}", path.display()),
        path: Some(path.to_path_buf()),
        duration,
        seed: DEFAULT_SEED,
        client: ClientSpec::default(),
        source,
        policy: None,
        instance_policies: Vec::new(),
        scoring: ScoringSpec::default(),
        origins: Origins { rate: Spot::flag("--rate"), ..Origins::of_file(path, "the trace's rows") },
        inputs: opts.labels.iter().cloned().collect(),
    };
    scenario.check()?;
    Ok(scenario)
}

/// Imports the trace at `path` and its ground truth (label paths already resolved) into a
/// [`Source::Trace`], checking that arrivals have a source; returns it with the trace's span
/// rounded up to a whole second.
fn trace_source(path: &Path, opts: &TraceOptions, traffic: Option<TrafficSpec>) -> Result<(Source, Dur)> {
    let mut trace = crate::trace::load(path, opts).map_err(|e: TraceError| Error::invalid(e.to_string()))?;
    match (&trace, &traffic) {
        (Trace::Interval(t), None) if !t.has_counts() => {
            return Err(Error::invalid(format!(
                "{} has no request-count column, so it cannot say when requests arrive: add [traffic] \
                 (for example kind = \"poisson\", rate = 5.0; `breakerlab replay` takes --rate)",
                path.display()
            )));
        }
        (Trace::Calls(_), Some(_)) => {
            return Err(Error::invalid(format!(
                "{} is a per-call log: its calls are the arrivals; remove [traffic] (`breakerlab replay`: drop --rate)",
                path.display()
            )));
        }
        _ => {}
    }
    let truth =
        crate::trace::ground_truth(&mut trace, path, opts).map_err(|e| Error::invalid(e.to_string()))?;
    let end = trace.horizon().0.max(1);
    let span = Dur(end.div_ceil(crate::time::MICROS_PER_SEC) * crate::time::MICROS_PER_SEC);
    let balancer = crate::upstream::pool::BalancerSpec::default();
    Ok((Source::Trace { trace, file: path.to_path_buf(), traffic, truth, balancer }, span))
}

/// Reads a whole text file ([`read_input_text`]), with a clear message when it is missing,
/// unreadable or not a file.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    if path.is_dir() {
        return Err(InputError::file(
            path,
            "is a folder, not a file: give a scenario file (.toml) inside it",
        ));
    }
    read_input_text(path, MAX_TEXT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `calls.csv` (10 calls a second apart, the 4th failing) and returns the folder.
    fn folder_with_log() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut log = String::from("t_s,latency_ms,status\n");
        for i in 0..10 {
            log.push_str(&format!("{},{},{}\n", 1_000 + i, 20 + i, if i == 3 { 503 } else { 200 }));
        }
        std::fs::write(dir.path().join("calls.csv"), log).unwrap();
        dir
    }

    #[test]
    fn trace_table_builds_a_trace_source() {
        let dir = folder_with_log();
        let path = dir.path().join("s.toml");
        let s = parse(&path, "[trace]\nfile = \"calls.csv\"\nslo = \"error_rate > 0\"\n").unwrap();
        // Span: the last call ends at 9 s + 29 ms, rounded up to 10 s.
        assert_eq!(s.duration, Dur::from_secs(10));
        assert_eq!(s.import_report().unwrap().rows, 10);
        let Source::Trace { trace, file, traffic, truth, .. } = &s.source else {
            panic!("not a trace source")
        };
        assert!(matches!(trace, Trace::Calls(c) if c.len() == 10));
        assert_eq!(file, &dir.path().join("calls.csv"));
        assert!(traffic.is_none());
        assert_eq!(truth.as_ref().unwrap().len(), 1);
        let s = parse(&path, "duration = \"5s\"\n[trace]\nfile = \"calls.csv\"\n").unwrap();
        assert_eq!(s.duration, Dur::from_secs(5));
        assert!(matches!(&s.source, Source::Trace { truth: None, .. }));
    }

    #[test]
    fn trace_tables_are_checked_with_their_position() {
        let dir = folder_with_log();
        let path = dir.path().join("s.toml");
        let err = |text: &str| parse(&path, text).unwrap_err().to_string();
        let e = err("name = \"x\"\n[trace]\nformat = \"calls\"\n");
        assert!(
            e.ends_with(
                "s.toml:2:1: [trace] needs `file = \"PATH.csv\"` or `series = [...]` (relative to this file)"
            ),
            "{e}"
        );
        let e = err("[trace]\nfile = \"calls.csv\"\n[traffic]\nkind = \"poisson\"\nrate = 1.0\n");
        assert!(e.contains("s.toml:1:1: [trace]: ") && e.contains("is a per-call log"), "{e}");
        let e = err("[trace]\nfile = \"calls.csv\"\n[upstream]\np50 = \"10ms\"\np95 = \"20ms\"\n");
        assert!(e.contains("remove [upstream] and [[incidents]]"), "{e}");
        let e = err("[trace]\nfile = \"nowhere.csv\"\n");
        assert!(e.contains("nowhere.csv"), "{e}");
        let e = err("[trace]\nfile = \"calls.csv\"\nlatency_unit = \"min\"\n");
        assert!(e.contains("s.toml:3:16") && e.contains("unknown variant `min`"), "{e}");
        let e = err("duration = \"0s\"\n[trace]\nfile = \"calls.csv\"\n");
        assert!(e.contains("s.toml:1:12: `duration` must be longer than 0s"), "{e}");
        let e = err("script = \"calls.csv\"\n[trace]\nfile = \"calls.csv\"\n");
        assert!(e.contains("remove [trace]"), "{e}");
    }
}
