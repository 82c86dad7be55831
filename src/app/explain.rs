//! `breakerlab explain DIR [--at TIME | --incident N]`: why a breaker changed state, or why it
//! did not during an incident, in words, from the folder's explain.csv (and incidents.csv).
//! Without `--at` or `--incident`, every transition and every incident.

use crate::Error;
use crate::Result;
use crate::report::charts::data::Incident;
use crate::report::explain::{
    ExplainRow, RowIndex, TRANSITION_KIND, incident_words, read_explain_csv, readable_dur,
};
use crate::report::folder::parse::{self, Table};
use crate::report::page::{INPUTS_FILE, ReportInputs};
use crate::scenario::InputError;
use crate::time::Dur;
use std::path::{Path, PathBuf};

/// What `explain` was asked for.
#[derive(Clone, Debug, Default)]
pub struct ExplainRequest {
    /// An output folder written by run, replay or compare.
    pub dir: PathBuf,
    /// Explain the transitions at this instant (microseconds since the scenario's start); a
    /// whole millisecond also matches the transitions that round to it, as explain prints them.
    pub at: Option<u64>,
    /// Explain incident N (from 1, incidents.csv's row).
    pub incident: Option<usize>,
}

/// The explanation, one line per fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplainReport {
    /// The lines, in order.
    pub lines: Vec<String>,
}

impl ExplainReport {
    /// The lines as printed.
    pub fn render(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// A `--at` value: a duration since the scenario's start (`90s`, `1h2m`) or whole microseconds
/// as in explain.csv's `at_us` (`90000000`).
pub fn parse_time(text: &str) -> Result<u64> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| Error::invalid(format!("`{t}`: too large")));
    }
    Dur::parse(t).map(Dur::micros).map_err(Error::from)
}

/// Reads the folder's explain.csv and says what was asked.
pub fn explain(req: &ExplainRequest) -> Result<ExplainReport> {
    let dir = &req.dir;
    crate::scenario::output_folder(dir)?;
    let path = dir.join(crate::app::output::EXPLAIN_CSV);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(InputError::file(
            &path,
            "no explain.csv in this folder: run, replay and compare write one (run the command again)",
        )
        .into());
    }
    let text = crate::scenario::read_input(&path, crate::scenario::MAX_DATA_BYTES)?;
    let rows = read_explain_csv(&text).map_err(|m| InputError::file(&path, m.to_string()))?;
    let names = breaker_names(dir)?;
    let mut lines = Vec::new();
    match (req.at, req.incident) {
        (Some(at), _) => {
            let transitions = rows.iter().filter(|r| r.kind == TRANSITION_KIND);
            let mut found: Vec<&ExplainRow> = transitions.clone().filter(|r| r.at_us == at).collect();
            if found.is_empty() && at % 1000 == 0 {
                found = transitions.filter(|r| r.at_us.saturating_add(500) / 1000 * 1000 == at).collect();
            }
            if found.is_empty() {
                return Err(InputError::argument(no_transition_at(at, &rows, &path)).into());
            }
            lines.extend(found.iter().map(|r| r.sentence(&names)));
        }
        (None, Some(n)) => {
            let incidents = read_incidents(dir)?;
            let Some(incident) = n.checked_sub(1).and_then(|i| incidents.get(i)) else {
                let range = match incidents.len() {
                    0 => "it has none".to_string(),
                    1 => "it has 1 (--incident 1)".to_string(),
                    k => format!("it has {k} (--incident 1 to {k})"),
                };
                return Err(InputError::argument(format!(
                    "--incident {n}: no such incident in {}: {range}",
                    dir.join(crate::app::output::INCIDENTS_CSV).display()
                ))
                .into());
            };
            lines.extend(incident_words(&RowIndex::new(&rows), n, incident, &names));
        }
        (None, None) => {
            lines.extend(rows.iter().filter(|r| r.kind == TRANSITION_KIND).map(|r| r.sentence(&names)));
            if lines.is_empty() {
                lines.push("no transition: the breaker never changed state".to_string());
            }
            let index = RowIndex::new(&rows);
            for (i, incident) in read_incidents(dir)?.iter().enumerate() {
                lines.push(String::new());
                lines.extend(incident_words(&index, i + 1, incident, &names));
            }
        }
    }
    Ok(ExplainReport { lines })
}

/// The error for `--at` matching no transition: the nearest ones, to pick from.
fn no_transition_at(at: u64, rows: &[ExplainRow], path: &Path) -> String {
    let mut times: Vec<u64> = rows.iter().filter(|r| r.kind == TRANSITION_KIND).map(|r| r.at_us).collect();
    times.dedup();
    let mut near = times.clone();
    near.sort_by_key(|t| t.abs_diff(at));
    near.truncate(3);
    near.sort();
    let listed: Vec<String> = near.iter().map(|t| format!("{} ({t})", readable_dur(*t))).collect();
    let hint = if listed.is_empty() {
        "it has no transitions".to_string()
    } else {
        format!("the nearest are at {}", listed.join(", "))
    };
    format!(
        "--at {} ({at} us): no transition at that instant in {}: {hint}",
        readable_dur(at),
        path.display()
    )
}

/// The names of the folder's breakers (inputs.toml), empty when it has one or no inputs.toml.
fn breaker_names(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join(INPUTS_FILE);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let text = crate::scenario::read_input_text(&path, crate::scenario::MAX_TEXT_BYTES)?;
    Ok(ReportInputs::from_toml(&path, &text)?.breakers)
}

/// The folder's incidents.csv (none when the run had no ground truth file).
fn read_incidents(dir: &Path) -> Result<Vec<Incident>> {
    let path = dir.join(crate::app::output::INCIDENTS_CSV);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let bytes = crate::scenario::read_input(&path, crate::scenario::MAX_DATA_BYTES)?;
    Ok(parse::incidents(&Table::from_reader(&path, bytes.as_slice())?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_durations_or_microseconds() {
        assert_eq!(parse_time("90s").ok(), Some(90_000_000));
        assert_eq!(parse_time("1m30s").ok(), Some(90_000_000));
        assert_eq!(parse_time("90000000").ok(), Some(90_000_000));
        assert!(parse_time("soon").is_err());
    }
}
