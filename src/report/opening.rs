//! The opening of a `run`, `replay` or `compare` page: the command's answer before any chart.
//! Statements first (what was found, with its confidence), a table of the figures behind them,
//! then what the figures rest on (ground truth, the import report, every assumption, the
//! method). The command makes it from what it computed and keeps it in inputs.toml's
//! `[opening]` table, so `breakerlab report DIR` opens the rebuilt page on the same answer.

use super::charts::ChartError;
use super::page::{TextTable, esc_prose, html_table, html_table_stacked, md_cell, md_table};
use crate::InputError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// What a page says first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opening {
    /// The section's heading (`Result`, `Replay result`, `Comparison`).
    pub heading: String,
    /// The answer, one sentence each, the most important first.
    pub statements: Vec<String>,
    /// The figures behind them: the table's headings (empty: no table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
    /// The table's rows, as text (the first cell names the row).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Vec<String>>,
    /// A note under the table (what its intervals are).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table_note: String,
    /// What the figures rest on: ground truth, import report lines, assumptions, the method.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub basis: Vec<String>,
}

impl Opening {
    /// The opening as a TOML table.
    pub fn to_toml(&self) -> Result<String, ChartError> {
        toml::to_string(self).map_err(|e| ChartError::Draw(format!("opening: {e}")))
    }

    /// Parses an opening's TOML table; `path` names it in errors.
    pub fn from_toml(path: &Path, text: &str) -> Result<Opening, ChartError> {
        toml::from_str(text).map_err(|e| ChartError::Toml(InputError::from_toml(path, text, &e)))
    }

    fn table(&self) -> Option<TextTable> {
        if self.headings.is_empty() {
            return None;
        }
        let mut left = vec![false; self.headings.len()];
        left[0] = true;
        Some(TextTable {
            headings: self.headings.clone(),
            rows: self.rows.clone(),
            highlight: None,
            omitted: 0,
            omitted_note: "",
            left,
        })
    }

    /// The section for report.html (`id="result"`).
    pub fn html(&self, h: &mut String) {
        let _ = writeln!(h, "<h2 id=\"result\">{}</h2>", esc_prose(&self.heading));
        for (i, s) in self.statements.iter().enumerate() {
            if i == 0 {
                // A result stated, not judged: neutral, whether it says "better" or "cannot tell".
                let _ = writeln!(h, "<p class=\"verdict said\"><strong>{}</strong></p>", esc_prose(s));
            } else {
                let _ = writeln!(h, "<p>{}</p>", esc_prose(s));
            }
        }
        if let Some(t) = self.table() {
            // Two columns (a metric and its value) fit a phone as they are; wider tables turn
            // into one card per row there.
            match t.headings.len() {
                0..=2 => html_table(h, &t),
                _ => html_table_stacked(h, &t),
            }
            if !self.table_note.is_empty() {
                let _ = writeln!(h, "<p class=\"meta\">{}</p>", esc_prose(&self.table_note));
            }
        }
        if !self.basis.is_empty() {
            h.push_str("<ul class=\"basis\">\n");
            for b in &self.basis {
                let _ = writeln!(h, "<li>{}</li>", esc_prose(b));
            }
            h.push_str("</ul>\n");
        }
    }

    /// The section for report.md.
    pub fn md(&self, m: &mut String) {
        let _ = writeln!(m, "## {}\n", self.heading);
        for (i, s) in self.statements.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(m, "> **{}**\n", md_cell(s));
            } else {
                let _ = writeln!(m, "{s}\n");
            }
        }
        if let Some(t) = self.table() {
            md_table(m, &t);
            m.push('\n');
            if !self.table_note.is_empty() {
                let _ = writeln!(m, "_{}_\n", self.table_note);
            }
        }
        for b in &self.basis {
            let _ = writeln!(m, "- {b}");
        }
        if !self.basis.is_empty() {
            m.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_round_trips_and_renders_its_parts_in_order() {
        let o = Opening {
            heading: "Comparison".into(),
            statements: vec!["B is better than A with 95 % confidence".into(), "second".into()],
            headings: vec!["scenario".into(), "B − A".into()],
            rows: vec![vec!["blip".into(), "-1 ± 0.5".into()]],
            table_note: "intervals".into(),
            basis: vec!["truth: `p95 > 2s`".into()],
        };
        let text = o.to_toml().unwrap();
        assert_eq!(Opening::from_toml(Path::new("result.toml"), &text).unwrap(), o);
        let mut h = String::new();
        o.html(&mut h);
        let at = |s: &str| h.find(s).unwrap_or_else(|| panic!("{s} missing in {h}"));
        assert!(at("<h2 id=\"result\">Comparison") < at("B is better than A"));
        // The first statement is set apart, in the neutral box (a result, not a judgement).
        assert!(h.contains("<p class=\"verdict said\"><strong>B is better than A"), "{h}");
        assert!(at("B is better than A") < at("<table>"));
        assert!(at("<table>") < at("<code>p95 &gt; 2s</code>"));
        // Three columns or more: one card per row on a phone.
        let wide = Opening {
            headings: vec!["scenario".into(), "B − A".into(), "C − A".into()],
            rows: vec![vec!["blip".into(), "-1 ± 0.5".into(), "+2 ± 1".into()]],
            ..o.clone()
        };
        let mut h = String::new();
        wide.html(&mut h);
        assert!(h.contains("<table class=\"stack\">") && !h.contains("<table>"), "{h}");
        let mut m = String::new();
        o.md(&mut m);
        assert!(m.starts_with("## Comparison\n\n> **B is better than A with 95 % confidence**\n"), "{m}");
        assert!(m.contains("| blip | -1 ± 0.5 |"), "{m}");
        let bad = Opening::from_toml(Path::new("r.toml"), "heading = \"x\"\nstatements = []\nextra = 1\n");
        assert!(bad.unwrap_err().to_string().contains("r.toml"));
    }
}
