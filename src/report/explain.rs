//! explain.csv: the evidence behind every state change, and each breaker's evidence at the
//! incidents' moments (start, peak, end, best), one row each.
//!
//! Fixed columns `kind,at_us,instance,from,to,reason,incident,results,evidence`, then one
//! column per measured quantity and per parameter, named as the policy names them
//! (`window_calls`, `min_calls`, `window_failure_rate`, `failure_rate`), in order of first
//! appearance; a row leaves the others empty. `evidence` says how the row's columns relate:
//! `window_calls>=min_calls;window_failure_rate>=failure_rate;latency_threshold` (a check per
//! `;`, `/` for "admitted of", a bare name for a plain value). Counts are integers, ratios
//! shortest decimals, durations as in scenario files (`30s`). With more than one run a leading
//! `policy` column holds each run's label, as in transitions.csv.

use crate::metrics::{RunRecord, Snapshot};
use crate::policy::{Evidence, Item, Test, Unit};
use crate::time::Dur;

/// The fixed columns, after the optional `policy`.
pub const FIXED_COLUMNS: [&str; 9] =
    ["kind", "at_us", "instance", "from", "to", "reason", "incident", "results", "evidence"];

/// The `kind` of a transition row (snapshot rows use [`crate::metrics::Moment::kind`]).
pub const TRANSITION_KIND: &str = "transition";

/// A value of `unit` as explain.csv writes it.
pub fn value_text(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Count => format!("{}", v.round() as i64),
        Unit::Ratio => super::format_float(v),
        Unit::Time => Dur::from_micros(v.max(0.0).round() as u64).to_string(),
    }
}

/// The `evidence` column: each item's relation, in order.
pub fn evidence_spec(ev: &Evidence) -> String {
    let parts: Vec<String> = ev
        .items()
        .iter()
        .map(|i| match i.test {
            Test::Fact => i.name.to_string(),
            t => format!("{}{}{}", i.name, t.symbol(), i.param),
        })
        .collect();
    parts.join(";")
}

/// The cells an item fills: its value under its name, its limit under its parameter.
fn cells(i: &Item) -> impl Iterator<Item = (&'static str, String)> {
    let limit = (i.test != Test::Fact).then(|| (i.param, value_text(i.unit, i.limit)));
    std::iter::once((i.name, value_text(i.unit, i.value))).chain(limit)
}

/// One row before its dynamic columns are laid out.
struct Row<'a> {
    label: &'a str,
    fixed: [String; 9],
    evidence: &'a Evidence,
}

fn snapshot_row<'a>(label: &'a str, s: &'a Snapshot) -> Row<'a> {
    let results =
        if s.moment == crate::metrics::Moment::Best { s.results.to_string() } else { String::new() };
    Row {
        label,
        fixed: [
            s.moment.kind().to_string(),
            s.at.micros().to_string(),
            s.instance.to_string(),
            "closed".to_string(),
            String::new(),
            String::new(),
            (s.incident + 1).to_string(),
            results,
            evidence_spec(&s.evidence),
        ],
        evidence: &s.evidence,
    }
}

/// explain.csv for `rows` (label, record), runs in the given order: each run's transitions in
/// event order, then its incident snapshots by incident (numbered from 1, as incidents.csv's
/// rows), instance and moment.
pub fn explain_csv(rows: &[(&str, &RunRecord)]) -> Vec<u8> {
    let mut all: Vec<Row> = Vec::new();
    for (label, record) in rows {
        for (instance, t) in &record.transitions {
            all.push(Row {
                label,
                fixed: [
                    TRANSITION_KIND.to_string(),
                    t.at.micros().to_string(),
                    instance.to_string(),
                    t.from.as_str().to_string(),
                    t.to.as_str().to_string(),
                    t.reason.to_string(),
                    String::new(),
                    String::new(),
                    evidence_spec(&t.evidence),
                ],
                evidence: &t.evidence,
            });
        }
        all.extend(record.snapshots.iter().map(|s| snapshot_row(label, s)));
    }
    let mut columns: Vec<&'static str> = Vec::new();
    for row in &all {
        for item in row.evidence.items() {
            for (name, _) in cells(item) {
                if !columns.contains(&name) {
                    columns.push(name);
                }
            }
        }
    }
    let labelled = rows.len() > 1;
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let header = labelled.then_some("policy").into_iter().chain(FIXED_COLUMNS).chain(columns.iter().copied());
    // Writing into a Vec cannot fail.
    let _ = w.write_record(header);
    for row in &all {
        let mut dynamic = vec![String::new(); columns.len()];
        let mut filled = vec![false; columns.len()];
        for item in row.evidence.items() {
            for (name, text) in cells(item) {
                if let Some(k) = columns.iter().position(|c| *c == name)
                    && !filled[k]
                {
                    dynamic[k] = text;
                    filled[k] = true;
                }
            }
        }
        let label = labelled.then(|| row.label.to_string());
        let _ = w.write_record(label.into_iter().chain(row.fixed.iter().cloned()).chain(dynamic));
    }
    w.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_relations_are_written_as_the_policy_names_them() {
        let mut ev = Evidence::EMPTY;
        ev.count("window_calls", 7, Test::AtLeast, "min_calls", 20);
        ev.rate("window_failure_rate", 3, 4, Test::AtLeast, "failure_rate", 0.5);
        ev.time("time_open", Dur::from_millis(1_500), Test::AtLeast, "cooldown", Dur::from_secs(30));
        ev.fact_time("latency_threshold", Dur::from_secs(8));
        assert_eq!(
            evidence_spec(&ev),
            "window_calls>=min_calls;window_failure_rate>=failure_rate;time_open>=cooldown;latency_threshold"
        );
        let cells: Vec<(&str, String)> = ev.items().iter().flat_map(cells).collect();
        let text: Vec<String> = cells.iter().map(|(n, v)| format!("{n}={v}")).collect();
        assert_eq!(
            text,
            [
                "window_calls=7",
                "min_calls=20",
                "window_failure_rate=0.75",
                "failure_rate=0.5",
                "time_open=1s500ms",
                "cooldown=30s",
                "latency_threshold=8s"
            ]
        );
    }
}
