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
use crate::policy::{Evidence, Item, Test, Transition, Unit, phrase};
use crate::time::Dur;
use crate::{Error, Result};
use std::collections::HashMap;
use std::io::{Read, Write};

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

fn snapshot_fixed(s: &Snapshot) -> [String; 9] {
    let results =
        if s.moment == crate::metrics::Moment::Best { s.results.to_string() } else { String::new() };
    [
        s.moment.kind().to_string(),
        s.at.micros().to_string(),
        s.instance.to_string(),
        "closed".to_string(),
        String::new(),
        String::new(),
        (s.incident + 1).to_string(),
        results,
        evidence_spec(&s.evidence),
    ]
}

fn transition_fixed(instance: usize, t: &Transition, evidence: &Evidence) -> [String; 9] {
    [
        TRANSITION_KIND.to_string(),
        t.at.micros().to_string(),
        instance.to_string(),
        t.from.as_str().to_string(),
        t.to.as_str().to_string(),
        t.reason.to_string(),
        String::new(),
        String::new(),
        evidence_spec(evidence),
    ]
}

/// explain.csv for `rows` (label, record), runs in the given order: each run's transitions in
/// event order, then its incident snapshots by incident (numbered from 1, as incidents.csv's
/// rows), instance and moment.
pub fn explain_csv(rows: &[(&str, &RunRecord)]) -> Vec<u8> {
    let mut w = ExplainWriter::new(rows.len() > 1);
    let mut body = Vec::new();
    // Writing into a Vec cannot fail.
    for (label, record) in rows {
        for (k, (instance, t)) in record.transitions.iter().enumerate() {
            let evidence = record.evidence_of(k).unwrap_or(&Evidence::EMPTY);
            let _ = w.transition(&mut body, label, *instance, t, evidence);
        }
        for s in &record.snapshots {
            let _ = w.snapshot(&mut body, label, s);
        }
    }
    let mut out = Vec::new();
    let _ = w.finish(&mut body.as_slice(), &mut out);
    out
}

/// explain.csv written a row at a time, so a run with a million state changes streams it to a
/// file as it goes instead of holding every row. The dynamic columns are laid out in order of
/// first appearance, so the header is known only at the end: rows go to a body first, each with
/// the columns known when it was written, and [`ExplainWriter::finish`] writes the header and
/// then the body, padding the rows written before the last column appeared with empty cells
/// (those few are read back; the rest is copied as it is). The bytes are those of
/// [`explain_csv`] for the same rows.
#[derive(Debug)]
pub struct ExplainWriter {
    labelled: bool,
    columns: Vec<&'static str>,
    /// One row's bytes at a time.
    row: Vec<u8>,
    /// Bytes of body written so far.
    written: u64,
    /// The body's length when the last column appeared: the rows before have fewer cells.
    short_until: u64,
}

impl ExplainWriter {
    /// A writer of one file; `labelled`: a leading `policy` column (more than one run).
    pub fn new(labelled: bool) -> ExplainWriter {
        ExplainWriter { labelled, columns: Vec::new(), row: Vec::new(), written: 0, short_until: 0 }
    }

    fn builder() -> csv::WriterBuilder {
        let mut b = csv::WriterBuilder::new();
        b.terminator(csv::Terminator::Any(b'\n')).flexible(true);
        b
    }

    /// Appends the row of a state change of breaker `instance` of the run `label` to `body`.
    pub fn transition(
        &mut self,
        body: &mut dyn Write,
        label: &str,
        instance: usize,
        t: &Transition,
        evidence: &Evidence,
    ) -> std::io::Result<()> {
        self.row(body, label, transition_fixed(instance, t, evidence), evidence)
    }

    /// Appends the row of an incident snapshot of the run `label` to `body`.
    pub fn snapshot(&mut self, body: &mut dyn Write, label: &str, s: &Snapshot) -> std::io::Result<()> {
        self.row(body, label, snapshot_fixed(s), &s.evidence)
    }

    fn row(
        &mut self,
        body: &mut dyn Write,
        label: &str,
        fixed: [String; 9],
        evidence: &Evidence,
    ) -> std::io::Result<()> {
        for item in evidence.items() {
            for (name, _) in cells(item) {
                if !self.columns.contains(&name) {
                    self.columns.push(name);
                    self.short_until = self.written;
                }
            }
        }
        let mut dynamic = vec![String::new(); self.columns.len()];
        let mut filled = vec![false; self.columns.len()];
        for item in evidence.items() {
            for (name, text) in cells(item) {
                if let Some(k) = self.columns.iter().position(|c| *c == name)
                    && !filled[k]
                {
                    dynamic[k] = text;
                    filled[k] = true;
                }
            }
        }
        let label = self.labelled.then_some(label);
        let cells = label
            .into_iter()
            .chain(fixed.iter().map(String::as_str))
            .chain(dynamic.iter().map(String::as_str));
        let mut csv = Self::builder().buffer_capacity(256).from_writer(std::mem::take(&mut self.row));
        csv.write_record(cells)?;
        self.row = csv.into_inner().map_err(|e| e.into_error())?;
        body.write_all(&self.row)?;
        self.written += self.row.len() as u64;
        self.row.clear();
        Ok(())
    }

    /// Writes the whole file to `out`: the header, then `body` (what the rows went to, read
    /// from its start) with every row as wide as the header.
    pub fn finish(&self, body: &mut dyn Read, out: &mut dyn Write) -> std::io::Result<()> {
        let mut w = Self::builder().from_writer(out);
        let header = self
            .labelled
            .then_some("policy")
            .into_iter()
            .chain(FIXED_COLUMNS)
            .chain(self.columns.iter().copied());
        w.write_record(header)?;
        let width = usize::from(self.labelled) + FIXED_COLUMNS.len() + self.columns.len();
        let mut short = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader((&mut *body).take(self.short_until));
        let mut record = csv::ByteRecord::new();
        while short.read_byte_record(&mut record)? {
            while record.len() < width {
                record.push_field(b"");
            }
            w.write_byte_record(&record)?;
        }
        drop(short);
        let out = w.into_inner().map_err(|e| e.into_error())?;
        std::io::copy(body, out)?;
        Ok(())
    }
}

/// One item of a row read back: the cells as written, and whether the check held.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    /// The measured quantity's column.
    pub name: String,
    /// Its cell.
    pub value: String,
    /// How it was compared.
    pub test: Test,
    /// The parameter's column (empty for a fact).
    pub param: String,
    /// Its cell.
    pub limit: String,
}

impl Said {
    /// Whether the check held (`None` for facts and `Of`, or an unreadable cell).
    pub fn holds(&self) -> Option<bool> {
        if !self.test.decides() {
            return None;
        }
        Some(self.test.holds(number(&self.value)?, number(&self.limit)?))
    }

    /// The quantity in words: `7 calls in the window`, `1 call in the window`,
    /// `latency_threshold 8s`.
    pub fn quantity(&self) -> String {
        let value = rounded(&self.value);
        match phrase(&self.name) {
            Some(p) if value == "1" && p.starts_with("{} ") => singular(p).replace("{}", &value),
            Some(p) => p.replace("{}", &value),
            None => format!("{} {value}", self.name),
        }
    }

    /// The item in words, e.g. `min_calls 20 not reached: 7 calls in the window`; with
    /// `never`, an unmet check reads `never reached: at most 7 calls in the window`.
    pub fn words(&self, never: bool) -> String {
        let (met, unmet, bound) = match self.test {
            Test::Fact => return self.quantity(),
            Test::Of => return format!("{} (of {} {})", self.quantity(), self.param, rounded(&self.limit)),
            Test::AtLeast => ("reached", "not reached", "at most"),
            Test::Above => ("exceeded", "not exceeded", "at most"),
            Test::AtMost => ("reached from above", "not reached from above", "at least"),
            Test::Below => ("undercut", "not undercut", "at least"),
        };
        let (param, limit) = (&self.param, rounded(&self.limit));
        match (self.holds(), never) {
            (Some(true), _) => format!("{param} {limit} {met}: {}", self.quantity()),
            (_, true) => format!("{param} {limit} never {}: {bound} {}", &unmet[4..], self.quantity()),
            _ => format!("{param} {limit} {unmet}: {}", self.quantity()),
        }
    }
}

/// A decimal cell to at most four decimals for reading (`0.1667`), a duration cell as
/// [`readable_dur`] writes it (`30.539s`); other cells as written.
fn rounded(cell: &str) -> String {
    match cell.parse::<f64>() {
        Ok(v) if cell.contains('.') => {
            let s = format!("{v:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        Ok(_) => cell.to_string(),
        Err(_) => match Dur::parse(cell) {
            Ok(d) if cell.bytes().any(|b| b.is_ascii_alphabetic()) => readable_dur(d.micros()),
            _ => cell.to_string(),
        },
    }
}

/// A duration for reading: whole days, hours and minutes as `Dur` writes them, then seconds to
/// the millisecond (`5m0.328s`, `30m4.117s`, `1h5s`); under a second, milliseconds (`100ms`,
/// `1.5ms`). `--at` accepts what it prints.
pub fn readable_dur(us: u64) -> String {
    if us == 0 {
        return "0s".to_string();
    }
    if us < 1_000_000 {
        let ms = format!("{:.3}", us as f64 / 1000.0);
        return format!("{}ms", ms.trim_end_matches('0').trim_end_matches('.'));
    }
    let ms = us.saturating_add(500) / 1000;
    let whole = Dur::from_micros(ms / 60_000 * 60_000_000);
    let rest = ms % 60_000;
    let seconds = if rest == 0 {
        String::new()
    } else {
        let s = format!("{}.{:03}", rest / 1000, rest % 1000);
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    };
    match (whole.micros(), seconds.is_empty()) {
        (0, _) => seconds,
        (_, true) => whole.to_string(),
        _ => format!("{whole}{seconds}"),
    }
}

/// `n` and `noun`, plural unless `n` is 1: `1 result`, `7 results`.
pub fn count_of(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A phrase for the value 1: its first plural noun made singular (`{} calls in the window`
/// becomes `{} call in the window`).
fn singular(phrase: &str) -> String {
    const NOUNS: [(&str, &str); 8] = [
        ("calls", "call"),
        ("failures", "failure"),
        ("successes", "success"),
        ("answers", "answer"),
        ("requests", "request"),
        ("executions", "execution"),
        ("fires", "fire"),
        ("results", "result"),
    ];
    let mut words: Vec<&str> = phrase.split(' ').collect();
    if let Some((k, one)) =
        words.iter().enumerate().find_map(|(k, w)| NOUNS.iter().find(|(p, _)| p == w).map(|(_, s)| (k, *s)))
    {
        words[k] = one;
    }
    words.join(" ")
}

/// The name of breaker `instance`: its lane name when `names` has one (`primary`), else
/// `instance 3`.
pub fn breaker_name(instance: usize, names: &[String]) -> String {
    names.get(instance).cloned().unwrap_or_else(|| format!("instance {instance}"))
}

/// A number cell: a count or ratio, or a duration in microseconds.
fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().or_else(|| Dur::parse(cell).ok().map(|d| d.micros() as f64))
}

/// One row of explain.csv, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplainRow {
    /// The run's label (empty when the file holds one run).
    pub policy: String,
    /// `transition` or an incident moment (`incident_start`, `incident_peak`, ...).
    pub kind: String,
    /// When, in microseconds since the scenario's start.
    pub at_us: u64,
    /// The breaker instance.
    pub instance: usize,
    /// The state left (the state, on incident rows).
    pub from: String,
    /// The state entered (empty on incident rows).
    pub to: String,
    /// The transition's reason.
    pub reason: String,
    /// The incident (from 1, incidents.csv's row), on incident rows.
    pub incident: Option<usize>,
    /// Results recorded while closed in the incident, on `incident_best` rows.
    pub results: Option<u64>,
    /// The evidence, in the family's order.
    pub items: Vec<Said>,
}

impl ExplainRow {
    /// The row explain.csv holds for the run `policy` (empty when the file holds one run), the
    /// fixed cells `fixed` and the items of `evidence`: each item's cells are those of the
    /// first item in the row to fill its column, as the file's one cell per column holds them.
    fn of(policy: &str, fixed: [String; 9], evidence: &Evidence) -> ExplainRow {
        let mut filled: Vec<(&'static str, String)> = Vec::new();
        for (name, text) in evidence.items().iter().flat_map(cells) {
            if !filled.iter().any(|(n, _)| *n == name) {
                filled.push((name, text));
            }
        }
        let cell =
            |name: &str| filled.iter().find(|(n, _)| *n == name).map(|(_, t)| t.clone()).unwrap_or_default();
        let items = evidence
            .items()
            .iter()
            .map(|i| {
                let param = if i.test == Test::Fact { "" } else { i.param };
                let limit = if param.is_empty() { String::new() } else { cell(param) };
                Said { name: i.name.into(), value: cell(i.name), test: i.test, param: param.into(), limit }
            })
            .collect();
        let [kind, at_us, instance, from, to, reason, incident, results, _] = fixed;
        ExplainRow {
            policy: policy.to_string(),
            kind,
            at_us: at_us.parse().unwrap_or(0),
            instance: instance.parse().unwrap_or(0),
            from,
            to,
            reason,
            incident: incident.parse().ok(),
            results: results.parse().ok(),
            items,
        }
    }

    /// The evidence in words, items joined by `; `.
    pub fn words(&self, never: bool) -> String {
        self.items.iter().map(|s| s.words(never)).collect::<Vec<_>>().join("; ")
    }

    /// `closed → open (consecutive_failures) at 1m30.25s, instance 0: failure_threshold 5
    /// reached: 5 consecutive failures`, the policy first when the file holds several runs;
    /// the breaker named by `names` when the run had several (`primary`).
    pub fn sentence(&self, names: &[String]) -> String {
        let policy = if self.policy.is_empty() { String::new() } else { format!("{}: ", self.policy) };
        format!(
            "{policy}{} → {} ({}) at {}, {}: {}",
            self.from,
            self.to,
            self.reason,
            readable_dur(self.at_us),
            breaker_name(self.instance, names),
            self.words(false)
        )
    }
}

/// explain.csv's rows arranged for [`incident_words`]: the breakers in order of first
/// appearance, each one's state changes (in file order, which is time order) and its incident
/// snapshots by (incident, kind), so that saying what happened in every incident of a file
/// costs a binary search per breaker and incident, not a pass over every row.
pub struct RowIndex<'a> {
    breakers: Vec<Breaker<'a>>,
}

/// One breaker's rows.
struct Breaker<'a> {
    policy: &'a str,
    instance: usize,
    changes: Vec<&'a ExplainRow>,
    /// The first row of each (incident, kind).
    moments: HashMap<(usize, &'a str), &'a ExplainRow>,
}

impl<'a> RowIndex<'a> {
    /// Arranges `rows`.
    pub fn new(rows: &'a [ExplainRow]) -> RowIndex<'a> {
        let mut breakers: Vec<Breaker<'a>> = Vec::new();
        let mut position: HashMap<(&str, usize), usize> = HashMap::new();
        for r in rows {
            let k = *position.entry((r.policy.as_str(), r.instance)).or_insert_with(|| {
                breakers.push(Breaker {
                    policy: r.policy.as_str(),
                    instance: r.instance,
                    changes: Vec::new(),
                    moments: HashMap::new(),
                });
                breakers.len() - 1
            });
            let b = &mut breakers[k];
            if r.kind == TRANSITION_KIND {
                b.changes.push(r);
            }
            if let Some(n) = r.incident {
                b.moments.entry((n, r.kind.as_str())).or_insert(r);
            }
        }
        for b in &mut breakers {
            b.changes.sort_by_key(|r| r.at_us);
        }
        RowIndex { breakers }
    }
}

/// What each breaker did during incident `n` (from 1) of `incidents`, in words, one line per
/// fact: the window; then per (policy, instance) seen in `rows`, the transitions inside it, or
/// why nothing tripped (each check never met over the incident, from the `incident_best`
/// row, then the evidence at the incident's peak, start and end).
pub fn incident_words(
    rows: &RowIndex<'_>,
    n: usize,
    incident: &super::charts::data::Incident,
    names: &[String],
) -> Vec<String> {
    let (start, end) = (incident.start_us, incident.end_us);
    let mut lines = vec![format!(
        "incident {n}: {} from {} to {} (expect {})",
        if incident.kind.is_empty() { "incident" } else { &incident.kind },
        readable_dur(start),
        readable_dur(end),
        incident.expect.as_str()
    )];
    for b in &rows.breakers {
        let (policy, instance) = (b.policy, b.instance);
        let who = if policy.is_empty() {
            breaker_name(instance, names)
        } else {
            format!("{policy}, {}", breaker_name(instance, names))
        };
        let changes = &b.changes;
        let from = changes.partition_point(|r| r.at_us < start);
        let before = from.checked_sub(1).map(|k| (changes[k].to.as_str(), changes[k].at_us));
        let inside = &changes[from..from + changes[from..].partition_point(|r| r.at_us < end)];
        let moment = |kind: &str| b.moments.get(&(n, kind)).copied();
        match before {
            Some((state, at)) if state != "closed" => {
                lines.push(format!("{who}: already {state} when it began (since {})", readable_dur(at)));
            }
            _ => {}
        }
        if let Some(first) = inside.iter().find(|r| r.to == "open") {
            lines.push(format!(
                "{who}: opened {} after the start ({})",
                readable_dur(first.at_us - start),
                first.reason
            ));
        } else if before.is_none_or(|(state, _)| state == "closed") {
            match moment("incident_best") {
                None => lines.push(format!(
                    "{who}: did not open; it recorded no result while closed during the incident (no call completed), so nothing could trip"
                )),
                Some(best) => {
                    let never: Vec<String> = best
                        .items
                        .iter()
                        .filter(|s| s.holds() == Some(false))
                        .map(|s| s.words(true))
                        .collect();
                    let why = if never.is_empty() {
                        "each threshold was reached at some moment, but never all at once".to_string()
                    } else {
                        never.join("; ")
                    };
                    let results = best.results.unwrap_or(0);
                    let results = count_of(results, "result");
                    lines.push(format!("{who}: did not open ({results} recorded while closed): {why}"));
                }
            }
            for (kind, label) in [
                ("incident_peak", "at the incident's peak"),
                ("incident_start", "at its start"),
                ("incident_end", "at its end"),
            ] {
                if let Some(r) = moment(kind) {
                    lines.push(format!("  {label} ({}): {}", readable_dur(r.at_us), r.words(false)));
                }
            }
        }
        for r in inside {
            lines.push(format!("  {}", r.sentence(names)));
        }
    }
    lines
}

/// Most state-change marks the report lists (a flapping week has thousands; explain.csv has all).
pub const MAX_MARKS: usize = 300;

/// One mark under the report's timeline: a state change or an incident, with its words as the
/// tooltip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When (the transition, or the incident's start).
    pub at_us: u64,
    /// The short text shown: `30m0.686s closed → open`, `incident 1: missed`.
    pub label: String,
    /// What `breakerlab explain` says about it, lines joined by `\n`.
    pub title: String,
    /// An incident a breaker did not open for (expected to open).
    pub missed: bool,
}

impl Mark {
    /// This mark on the clock of a trace whose time zero is `epoch_us` (µs since the Unix
    /// epoch), as the timeline's axis reads: a state change's label starts with its UTC time
    /// instead of the time since the start, and the title's first line gives both.
    pub fn on_clock(&self, epoch_us: Option<i64>) -> Mark {
        let Some(epoch) = epoch_us else { return self.clone() };
        let at = epoch.saturating_add(i64::try_from(self.at_us).unwrap_or(i64::MAX));
        let utc = crate::trace::timestamp::format_utc(at);
        let since = readable_dur(self.at_us);
        // `2022-08-23 12:11:52.12Z` → `08-23 12:11:52`, the axis's `MM-DD hh:mm` with seconds.
        let short = utc.get(5..19).unwrap_or(&utc).to_string();
        let label = match self.label.find(&since) {
            Some(i) if !self.label.starts_with("incident ") => {
                format!("{}{short} UTC{}", &self.label[..i], &self.label[i + since.len()..])
            }
            _ => format!("{} at {short} UTC", self.label),
        };
        let title = format!("at {utc} ({since} after the trace's start)\n{}", self.title);
        Mark { at_us: self.at_us, label, title, missed: self.missed }
    }
}

/// The marks of a folder: each of the first [`MAX_MARKS`] incidents (missed ones flagged) and
/// a mark saying how many more there are, then the first [`MAX_MARKS`] transitions, in file
/// order.
pub fn marks(
    rows: &[ExplainRow],
    incidents: &[super::charts::data::Incident],
    names: &[String],
) -> Vec<Mark> {
    let mut out = Vec::new();
    let index = RowIndex::new(rows);
    for (i, incident) in incidents.iter().enumerate().take(MAX_MARKS) {
        let lines = incident_words(&index, i + 1, incident, names);
        let missed = incident.expect == crate::truth::Expect::Open
            && lines.iter().any(|l| l.contains(": did not open"));
        let verdict = if missed { "missed" } else { incident.expect.as_str() };
        out.push(Mark {
            at_us: incident.start_us,
            label: format!("incident {} ({}): {verdict}", i + 1, incident.kind),
            title: lines.join("\n"),
            missed,
        });
    }
    if incidents.len() > MAX_MARKS {
        // The page stays the same size however many incidents there are: it says so.
        out.push(Mark {
            at_us: u64::MAX,
            label: format!(
                "incidents {} to {}: not listed here, `breakerlab explain` on this folder says what happened in each",
                MAX_MARKS + 1,
                incidents.len()
            ),
            title: format!("breakerlab explain DIR --incident {}", MAX_MARKS + 1),
            missed: false,
        });
    }
    for r in rows.iter().filter(|r| r.kind == TRANSITION_KIND).take(MAX_MARKS) {
        let policy = if r.policy.is_empty() { String::new() } else { format!("{} ", r.policy) };
        out.push(Mark {
            at_us: r.at_us,
            label: format!("{policy}{} {} → {}", readable_dur(r.at_us), r.from, r.to),
            title: r.sentence(names),
            missed: false,
        });
    }
    out
}

/// Reads explain.csv; `Err` names the row and what was wrong.
pub fn read_explain_csv(text: &[u8]) -> Result<Vec<ExplainRow>> {
    let mut rows = Vec::new();
    read_explain_rows(text, |row| rows.push(row))?;
    Ok(rows)
}

/// Reads explain.csv keeping only the rows [`marks`] reads for `incidents` ([`MarkedRows`]).
pub fn read_marked_rows(
    text: impl Read,
    incidents: &[super::charts::data::Incident],
) -> Result<Vec<ExplainRow>> {
    let mut marked = MarkedRows::new(incidents);
    read_explain_rows(text, |row| marked.offer(row))?;
    Ok(marked.finish())
}

/// The rows of explain.csv that [`marks`] reads for some incidents, kept as the rows are
/// offered in file order: every incident row, the first [`MAX_MARKS`] state changes, each
/// breaker's first one, those inside an incident, and each breaker's last one before an
/// incident's start. A week of a breaker that trips every half minute (a million rows) is
/// gone through holding a few hundred, and the marks say exactly what they say over every row.
pub struct MarkedRows {
    /// The incidents' starts, in order.
    starts: Vec<u64>,
    /// The incidents' windows.
    windows: super::windows::Windows,
    /// Rows kept, with their position.
    kept: Vec<(usize, ExplainRow)>,
    /// Each breaker's latest state change not kept (yet), by (policy, instance).
    pending: HashMap<(String, usize), (usize, ExplainRow)>,
    /// The breakers met.
    seen: std::collections::HashSet<(String, usize)>,
    /// Rows offered.
    n: usize,
    /// State changes offered.
    changes: usize,
}

impl MarkedRows {
    /// Keeps rows for `incidents`.
    pub fn new(incidents: &[super::charts::data::Incident]) -> MarkedRows {
        let mut starts: Vec<u64> = incidents.iter().map(|i| i.start_us).collect();
        starts.sort_unstable();
        MarkedRows {
            starts,
            windows: super::windows::Windows::new(incidents.iter().map(|i| (i.start_us, i.end_us))),
            kept: Vec::new(),
            pending: HashMap::new(),
            seen: std::collections::HashSet::new(),
            n: 0,
            changes: 0,
        }
    }

    /// Whether an incident starts in (a, b].
    fn starts_between(&self, a: u64, b: Option<u64>) -> bool {
        let k = self.starts.partition_point(|s| *s <= a);
        self.starts.get(k).is_some_and(|s| b.is_none_or(|b| *s <= b))
    }

    /// Offers the next row.
    pub fn offer(&mut self, row: ExplainRow) {
        self.n += 1;
        let n = self.n;
        if row.kind != TRANSITION_KIND {
            self.kept.push((n, row));
            return;
        }
        let key = (row.policy.clone(), row.instance);
        if let Some((k, before)) = self.pending.remove(&key)
            && self.starts_between(before.at_us, Some(row.at_us))
        {
            self.kept.push((k, before));
        }
        let first = self.seen.insert(key.clone());
        self.changes += 1;
        let inside = self.windows.cover(row.at_us);
        if self.changes <= MAX_MARKS || first || inside {
            self.kept.push((n, row));
        } else {
            self.pending.insert(key, (n, row));
        }
    }

    /// Offers the row of a state change of breaker `instance` of the run `policy` (empty when
    /// the file holds one run) with its `evidence`.
    pub fn transition(&mut self, policy: &str, instance: usize, t: &Transition, evidence: &Evidence) {
        self.offer(ExplainRow::of(policy, transition_fixed(instance, t, evidence), evidence));
    }

    /// Offers the row of an incident snapshot of the run `policy` (empty when the file holds
    /// one run).
    pub fn snapshot(&mut self, policy: &str, s: &Snapshot) {
        self.offer(ExplainRow::of(policy, snapshot_fixed(s), &s.evidence));
    }

    /// The rows kept, in the order offered.
    pub fn finish(mut self) -> Vec<ExplainRow> {
        let pending = std::mem::take(&mut self.pending);
        let rest: Vec<(usize, ExplainRow)> =
            pending.into_values().filter(|(_, r)| self.starts_between(r.at_us, None)).collect();
        self.kept.extend(rest);
        self.kept.sort_by_key(|(k, _)| *k);
        self.kept.into_iter().map(|(_, r)| r).collect()
    }

    /// The marks of the rows kept ([`marks`]).
    pub fn marks(self, incidents: &[super::charts::data::Incident], names: &[String]) -> Vec<Mark> {
        marks(&self.finish(), incidents, names)
    }
}

/// Reads explain.csv row by row, handing each to `each`; `Err` names the row and what was
/// wrong.
fn read_explain_rows(text: impl Read, mut each: impl FnMut(ExplainRow)) -> Result<()> {
    let mut r = csv::ReaderBuilder::new().from_reader(text);
    let header: Vec<String> =
        r.headers().map_err(|e| Error::invalid(e.to_string()))?.iter().map(String::from).collect();
    let col: HashMap<&str, usize> = header.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
    for c in FIXED_COLUMNS {
        if !col.contains_key(c) {
            return Err(Error::invalid(format!(
                "no `{c}` column (expected the header {})",
                FIXED_COLUMNS.join(",")
            )));
        }
    }
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| Error::invalid(format!("row {line}: {e}")))?;
        let cell = |name: &str| col.get(name).and_then(|&i| rec.get(i)).unwrap_or("").to_string();
        let int = |name: &str| -> Result<Option<u64>> {
            let c = cell(name);
            if c.is_empty() {
                return Ok(None);
            }
            c.parse().map(Some).map_err(|_| {
                Error::invalid(format!("row {line}, column {name}: expected a whole number, found `{c}`"))
            })
        };
        let at_us =
            int("at_us")?.ok_or_else(|| Error::invalid(format!("row {line}, column at_us: empty")))?;
        let instance = int("instance")?.unwrap_or(0) as usize;
        let mut items = Vec::new();
        for part in cell("evidence").split(';').filter(|p| !p.is_empty()) {
            let split = [">=", "<=", ">", "<", "/"]
                .iter()
                .find_map(|sym| part.split_once(sym).map(|(a, b)| (a, Test::from_symbol(sym), b)));
            let (name, test, param) = match split {
                Some((a, Some(t), b)) => (a, t, b),
                _ => (part, Test::Fact, ""),
            };
            let limit = if param.is_empty() { String::new() } else { cell(param) };
            items.push(Said { name: name.into(), value: cell(name), test, param: param.into(), limit });
        }
        each(ExplainRow {
            policy: cell("policy"),
            kind: cell("kind"),
            at_us,
            instance,
            from: cell("from"),
            to: cell("to"),
            reason: cell("reason"),
            incident: int("incident")?.map(|i| i as usize),
            results: int("results")?,
            items,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `preset` run on `workload` at once, with a timeline of minutes and its evidence: its
    /// policy, the options and the result.
    fn whole_run(
        scenario: &crate::Scenario,
        workload: &crate::Workload,
        preset: &str,
    ) -> (crate::policy::PolicyConfig, crate::RunOptions, crate::RunResult) {
        let policy = crate::PolicySpec::new(preset).resolve().unwrap();
        let opts = crate::RunOptions { timeline_bin: Some(crate::Dur::from_secs(60)), explain: true };
        let whole = crate::sim::run_fleet(scenario, workload, std::slice::from_ref(&policy), &opts);
        (policy, opts, whole)
    }

    #[test]
    fn a_streamed_run_hands_out_every_transition_with_its_evidence_and_keeps_none() {
        // circuit-gate trips on 1 % errors every half minute or so: hundreds of transitions
        // over several chunks of the stream.
        let text = "duration = \"40m\"\n[traffic]\nkind = \"constant\"\nrate = 300.0\n\
                    [upstream]\np50 = \"300ms\"\np95 = \"900ms\"\nerror_rate = 0.01\n\
                    [[incidents]]\nkind = \"outage\"\nstart = \"10m\"\nduration = \"5m\"\n";
        let scenario = crate::scenario::parse(std::path::Path::new("t.toml"), text).unwrap();
        let workload = crate::Workload::build(&scenario, 1, 0).unwrap();
        let (policy, opts, whole) = whole_run(&scenario, &workload, "circuit-gate");
        let policies = std::slice::from_ref(&policy);
        let mut seen = Vec::new();
        let streamed = crate::sim::run_fleet_streaming(
            &scenario,
            &workload,
            policies,
            &opts,
            |i, t, ev| {
                seen.push((i, *t, *ev));
                Ok::<(), ()>(())
            },
            |_| Ok(Vec::new()),
            |_| {},
        )
        .unwrap();
        assert!(whole.record.counters.requests > 2 * crate::sim::CHUNK_REQUESTS as u64);
        assert!(seen.len() > 100, "{} transitions", seen.len());
        let kept: Vec<_> = whole
            .record
            .transitions
            .iter()
            .zip(&whole.record.evidence)
            .map(|((i, t), ev)| (*i, *t, *ev))
            .collect();
        assert_eq!(whole.record.evidence.len(), whole.record.transitions.len());
        assert_eq!(seen, kept);
        assert!(streamed.record.evidence.is_empty(), "no evidence held at the end");
        assert_eq!(streamed.record.transitions, whole.record.transitions);
        assert_eq!(streamed.metrics, whole.metrics);
        // explain.csv of the record that kept everything, and of the one that kept nothing:
        // the latter's rows were handed out, so it has only its snapshots.
        let mut w = super::ExplainWriter::new(false);
        let mut body = Vec::new();
        for (i, t, ev) in &seen {
            w.transition(&mut body, "", *i, t, ev).unwrap();
        }
        for s in &streamed.record.snapshots {
            w.snapshot(&mut body, "", s).unwrap();
        }
        let mut out = Vec::new();
        w.finish(&mut body.as_slice(), &mut out).unwrap();
        assert_eq!(out, crate::report::explain_csv(&[("", &whole.record)]));
    }
    use crate::policy::State;
    use crate::time::SimTime;

    #[test]
    fn marks_read_from_the_kept_rows_say_what_they_say_over_every_row() {
        use crate::report::charts::data::Incident;
        // Two breakers cycling closed → open → half-open → closed every 30 s for a day, and a
        // third that first changes state late; two incidents.
        let mut trip = Evidence::EMPTY;
        trip.count("failures", 5, Test::AtLeast, "failure_threshold", 5);
        let mut w = ExplainWriter::new(false);
        let mut body = Vec::new();
        let cycle =
            [(State::Closed, State::Open), (State::Open, State::HalfOpen), (State::HalfOpen, State::Closed)];
        for k in 0..8_640u64 {
            let (from, to) = cycle[(k % 3) as usize];
            for instance in [0, 1] {
                let at = SimTime((k * 10 + instance as u64 * 3) * 1_000_000);
                w.transition(&mut body, "", instance, &Transition { at, from, to, reason: "r" }, &trip)
                    .unwrap();
            }
            if k == 7_000 {
                let at = SimTime(70_001 * 1_000_000);
                let t = Transition { at, from: State::Closed, to: State::Open, reason: "late" };
                w.transition(&mut body, "", 2, &t, &trip).unwrap();
            }
        }
        let mut text = Vec::new();
        w.finish(&mut body.as_slice(), &mut text).unwrap();
        let incident = |start_s: u64, end_s: u64| Incident {
            start_us: start_s * 1_000_000,
            end_us: end_s * 1_000_000,
            kind: "outage".into(),
            expect: crate::truth::Expect::Open,
        };
        let incidents = [incident(20_012, 20_100), incident(75_002, 75_050)];
        let all = read_explain_csv(&text).unwrap();
        let kept = read_marked_rows(text.as_slice(), &incidents).unwrap();
        assert_eq!(all.len(), 17_281);
        assert!(kept.len() < MAX_MARKS + 40, "{} rows kept", kept.len());
        let names = Vec::new();
        assert_eq!(marks(&kept, &incidents, &names), marks(&all, &incidents, &names));
    }

    #[test]
    fn streamed_rows_written_before_a_column_appears_are_padded_to_the_header() {
        let t = |at_s: u64, from, to| Transition { at: SimTime(at_s * 1_000_000), from, to, reason: "r,1" };
        let mut trip = Evidence::EMPTY;
        trip.count("failures", 5, Test::AtLeast, "failure_threshold", 5);
        let mut wait = Evidence::EMPTY;
        wait.time("time_open", Dur::from_secs(30), Test::AtLeast, "cooldown", Dur::from_secs(30));
        let mut w = ExplainWriter::new(true);
        let mut body = Vec::new();
        w.transition(&mut body, "a", 0, &t(1, State::Closed, State::Open), &trip).unwrap();
        w.transition(&mut body, "a", 0, &t(31, State::Open, State::HalfOpen), &wait).unwrap();
        w.transition(&mut body, "b \"x\"", 1, &t(40, State::Closed, State::Open), &trip).unwrap();
        let mut out = Vec::new();
        w.finish(&mut body.as_slice(), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "policy,kind,at_us,instance,from,to,reason,incident,results,evidence,failures,failure_threshold,time_open,cooldown\n\
             a,transition,1000000,0,closed,open,\"r,1\",,,failures>=failure_threshold,5,5,,\n\
             a,transition,31000000,0,open,half_open,\"r,1\",,,time_open>=cooldown,,,30s,30s\n\
             \"b \"\"x\"\"\",transition,40000000,1,closed,open,\"r,1\",,,failures>=failure_threshold,5,5,,\n"
        );
    }

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

    #[test]
    fn a_row_reads_back_and_says_what_held() {
        let text = "kind,at_us,instance,from,to,reason,incident,results,evidence,window_calls,min_calls,window_failure_rate,failure_rate,latency_threshold\n\
                    incident_best,90000000,0,closed,,,2,7,window_calls>=min_calls;window_failure_rate>=failure_rate;latency_threshold,7,20,1,0.5,8s\n";
        let rows = read_explain_csv(text.as_bytes()).unwrap();
        assert_eq!((rows[0].incident, rows[0].results, rows[0].at_us), (Some(2), Some(7), 90_000_000));
        assert_eq!(
            rows[0].words(true),
            "min_calls 20 never reached: at most 7 calls in the window; failure_rate 0.5 reached: a failure rate of 1 in the window; latency_threshold 8s"
        );
        assert_eq!(rows[0].items[0].holds(), Some(false));
        assert!(read_explain_csv(b"kind,at_us\n").unwrap_err().to_string().contains("no `instance` column"));
    }

    #[test]
    fn durations_read_as_people_write_them_and_counts_agree_with_their_nouns() {
        assert_eq!(readable_dur(0), "0s");
        assert_eq!(readable_dur(100_000), "100ms");
        assert_eq!(readable_dur(1_500), "1.5ms");
        assert_eq!(readable_dur(30_539_347), "30.539s");
        assert_eq!(readable_dur(300_328_281), "5m0.328s");
        assert_eq!(readable_dur(1_804_117_091), "30m4.117s");
        assert_eq!(readable_dur(3_605_000_000), "1h5s");
        assert_eq!(readable_dur(400_000_000), "6m40s");
        // Rounding to the millisecond carries into the minutes.
        assert_eq!(readable_dur(59_999_700), "1m");
        // What it prints parses back to the millisecond.
        assert_eq!(Dur::parse(&readable_dur(1_804_117_091)).unwrap().micros(), 1_804_117_000);
        let said = |name: &str, value: &str| Said {
            name: name.into(),
            value: value.into(),
            test: Test::Fact,
            param: String::new(),
            limit: String::new(),
        };
        assert_eq!(said("half_open_calls", "1").quantity(), "1 half-open call counted");
        assert_eq!(said("half_open_calls", "3").quantity(), "3 half-open calls counted");
        assert_eq!(
            said("calls_over_latency", "1").quantity(),
            "1 call in the window at or over the latency limit"
        );
        assert_eq!(said("probe_failures", "1").quantity(), "1 probe failure");
        assert_eq!(said("time_open", "30s539ms347us").quantity(), "open for 30.539s");
        assert_eq!(count_of(1, "result"), "1 result");
        assert_eq!(count_of(0, "result"), "0 results");
    }
}
