//! The review page's sections on the selection (a sweep's review.toml): whether the winner is
//! separated from the rest and by how much, and where a configuration misses incidents. The
//! page ([`super::page`]) calls these where its sections go.

use super::page::{TextTable, esc, esc_prose, html_table_stacked, md_table};
use crate::sweep::recommend::num;
use crate::sweep::regress::Regressions;
use crate::sweep::review::Review;
use crate::sweep::selection::Confidence;
use std::fmt::Write as _;

/// The recommendation's regressions as a table: scenario, what is worse, the paired difference.
fn regressions_table(r: &Regressions) -> TextTable {
    let headings = ["scenario", "worse than the reference", "paired difference"].map(String::from).to_vec();
    let rows =
        r.items.iter().map(|x| vec![x.scenario.clone(), x.text.clone(), x.difference.clone()]).collect();
    TextTable { headings, rows, highlight: None, omitted: 0, omitted_note: "", left: vec![true, true, false] }
}

/// The first section of a sweep's page: where the recommendation is worse than the baseline
/// (else the runner-up) beyond noise, per scenario, before any total.
pub fn html_regressions(h: &mut String, r: &Review) {
    let (Some(x), Some(chosen)) = (&r.regressions, &r.recommended) else { return };
    let _ = writeln!(
        h,
        "<h3 id=\"regressions\">Where the recommendation is worse than the {}</h3>",
        esc(&x.against)
    );
    let _ = writeln!(h, "<p><strong>{}</strong>: {}.</p>", esc(chosen), esc(&x.heading()));
    match x.items.is_empty() {
        true => {
            let _ = writeln!(
                h,
                "<p class=\"verdict fine\">{}</p>",
                esc(x.render("").lines().nth(1).unwrap_or("").trim())
            );
        }
        false => html_table_stacked(h, &regressions_table(x)),
    }
}

/// [`html_regressions`] for report.md.
pub fn md_regressions(m: &mut String, r: &Review) {
    let (Some(x), Some(chosen)) = (&r.regressions, &r.recommended) else { return };
    let _ = writeln!(
        m,
        "### Where the recommendation is worse than the {}\n\n**{chosen}**: {}.\n",
        x.against,
        x.heading()
    );
    match x.items.is_empty() {
        true => {
            let _ = writeln!(m, "> ✔ {}\n", x.render("").lines().nth(1).unwrap_or("").trim());
        }
        false => {
            md_table(m, &regressions_table(x));
            m.push('\n');
        }
    }
}

/// An alternative's regressions against the baseline, one list item each (HTML).
pub fn html_risks(risks: &[String]) -> String {
    let items: String = risks.iter().map(|r| format!("<li>{}</li>", esc_prose(r))).collect();
    format!("<ul>{items}</ul>")
}

/// [`html_risks`] for report.md: a list nested under the alternative's item.
pub fn md_risks(risks: &[String]) -> String {
    risks.iter().map(|r| format!("\n   - {r}")).collect()
}

/// The statement's sentence, then the tie-break naming the recommendation (when one was used).
fn statement(c: &Confidence, chosen: &str) -> (String, Option<String>) {
    (format!("{}.", c.sentence()), c.tie_break.as_ref().map(|t| format!("{t}: {chosen}.")))
}

/// The recommendation against the runner-up and the baseline: paired differences of total
/// cost with their intervals.
fn versus_table(c: &Confidence) -> TextTable {
    let pct = num(100.0 * c.confidence);
    let headings = vec![
        "against".to_string(),
        "configuration".to_string(),
        "total cost".to_string(),
        "− recommended (paired)".to_string(),
        format!("{pct} % interval"),
        "replicates".to_string(),
        "simultaneous lower bound".to_string(),
    ];
    let rows = c
        .versus
        .iter()
        .map(|v| {
            let interval = match (v.gap.mean, v.gap.half) {
                (Some(m), Some(h)) => format!("{} to {}", num(m - h), num(m + h)),
                _ => "–".to_string(),
            };
            vec![
                v.role.clone(),
                v.label.clone(),
                num(v.total_cost),
                v.gap.text(),
                interval,
                v.gap.n.to_string(),
                v.gap.bound.map_or_else(|| "–".to_string(), num),
            ]
        })
        .collect();
    let mut left = vec![false; headings.len()];
    (left[0], left[1]) = (true, true);
    TextTable { headings, rows, highlight: None, omitted: 0, omitted_note: "", left }
}

const VERSUS_NOTE: &str = "Paired by replicate: each configuration ran the same request streams, so the \
difference of total cost (summed over the scenarios) is taken replicate by replicate. Positive: it costs more \
than the recommendation. The lower bound is the one the selection used (Bonferroni over its comparisons).";

/// The selection's statement and the gaps table, under the recommended configuration (HTML).
pub fn html_confidence(h: &mut String, r: &Review) {
    let (Some(c), Some(chosen)) = (&r.selection, &r.recommended) else { return };
    let (sentence, tie) = statement(c, chosen);
    let tie = tie.map(|t| format!("<br>{}", esc_prose(&t))).unwrap_or_default();
    let _ = writeln!(
        h,
        "<p class=\"verdict {}\"><strong>Selection:</strong> {}{tie}</p>",
        if c.separated { "fine" } else { "warn" },
        esc_prose(&sentence)
    );
    if !c.versus.is_empty() {
        html_table_stacked(h, &versus_table(c));
        let _ = writeln!(h, "<p class=\"meta\">{}</p>", esc(VERSUS_NOTE));
    }
    if !r.stages.is_empty() {
        h.push_str("<p><strong>replicates = \"auto\":</strong></p>\n<ul>\n");
        for line in &r.stages {
            let _ = writeln!(h, "<li>{}</li>", esc_prose(line));
        }
        h.push_str("</ul>\n");
    }
}

/// [`html_confidence`] for report.md.
pub fn md_confidence(m: &mut String, r: &Review) {
    let (Some(c), Some(chosen)) = (&r.selection, &r.recommended) else { return };
    let mark = if c.separated { "✔" } else { "⚠" };
    let (sentence, tie) = statement(c, chosen);
    let tie = tie.map(|t| format!("\n> {t}")).unwrap_or_default();
    let _ = writeln!(m, "> {mark} **Selection:** {sentence}{tie}\n");
    if !c.versus.is_empty() {
        md_table(m, &versus_table(c));
        let _ = writeln!(m, "\n_{VERSUS_NOTE}_\n");
    }
    if !r.stages.is_empty() {
        m.push_str("**replicates = \"auto\":**\n\n");
        for line in &r.stages {
            let _ = writeln!(m, "- {line}");
        }
        m.push('\n');
    }
}

/// The decision table's "missed incidents" cell, with where the configuration missed an
/// incident in some replicate: `0.3333 of 14 (missed on hang in 1 of 3 replicates)`.
pub fn with_missed_in(cell: String, missed_in: Option<&str>) -> String {
    match missed_in {
        Some(m) => format!("{cell} (missed on {m})"),
        None => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::selection::{Gap, Tied, Versus};

    fn review(separated: bool) -> Review {
        let versus = vec![Versus {
            role: "runner-up".into(),
            label: "b".into(),
            config_id: 1,
            total_cost: 36.18,
            gap: Gap { n: 3, mean: Some(0.1266), half: Some(3.378), bound: Some(-4.065) },
        }];
        let selection = Confidence {
            separated,
            confidence: 0.95,
            indifference: 1.0,
            replicates: 3,
            comparisons: 3,
            alpha_share: 1.0,
            tied: if separated { 1 } else { 2 },
            listed: if separated {
                vec![]
            } else {
                vec![
                    Tied { label: "a".into(), config_id: 0, total_cost: 36.05 },
                    Tied { label: "b".into(), config_id: 1, total_cost: 36.18 },
                ]
            },
            tie_break: (!separated).then(|| "tie-break: the simplest".to_string()),
            versus,
        };
        Review {
            recommended: Some("a".into()),
            bounds: vec![],
            regressions: Some(Regressions {
                against: "baseline".into(),
                label: "base".into(),
                config_id: 2,
                confidence: 0.95,
                replicates: 3,
                items: if separated {
                    vec![]
                } else {
                    vec![crate::sweep::regress::Regression {
                        scenario: "hard-outage".into(),
                        metric: "detection_delay_mean_s".into(),
                        text: "detects in 29.9 s vs 0.75 s".into(),
                        difference: "+29.15 ± 0.621 s".into(),
                    }]
                },
            }),
            selection: Some(selection),
            decision: vec![],
            baseline: None,
            stages: vec!["stage 1: replicate 0 of 4 configuration(s), 8 cells".into()],
        }
    }

    #[test]
    fn the_regressions_open_the_page() {
        let mut h = String::new();
        html_regressions(&mut h, &review(false));
        assert!(h.starts_with("<h3 id=\"regressions\">Where the recommendation is worse than the baseline</h3>\n<p><strong>a</strong>: Worse than the baseline base beyond noise"), "{h}");
        assert!(h.contains("<td class=\"t\" data-label=\"scenario\">hard-outage</td><td class=\"t\" data-label=\"worse than the reference\">detects in 29.9 s vs 0.75 s</td><td data-label=\"paired difference\">+29.15 ± 0.621 s</td>"), "{h}");
        let mut m = String::new();
        md_regressions(&mut m, &review(true));
        assert!(m.contains("> ✔ nothing: no metric is worse on any scenario\n"), "{m}");
    }

    #[test]
    fn an_alternatives_regressions_are_a_list() {
        let risks =
            ["s0: detects in 20 s vs 5 s (+15 ± 0 s)".to_string(), "s1: flaps 3 times vs 0".to_string()];
        assert_eq!(
            html_risks(&risks),
            "<ul><li>s0: detects in 20 s vs 5 s (+15 ± 0 s)</li><li>s1: flaps 3 times vs 0</li></ul>"
        );
        assert_eq!(
            md_risks(&risks),
            "\n   - s0: detects in 20 s vs 5 s (+15 ± 0 s)\n   - s1: flaps 3 times vs 0"
        );
    }

    #[test]
    fn the_statement_and_the_gaps_are_on_the_page() {
        let mut h = String::new();
        html_confidence(&mut h, &review(false));
        assert!(h.starts_with("<p class=\"verdict warn\"><strong>Selection:</strong> 2 configurations cannot be told apart at 3 replicates"), "{h}");
        assert!(h.contains("a (cost 36.05); b (cost 36.18).<br>tie-break: the simplest: a.</p>"), "{h}");
        assert!(h.contains("<td class=\"t\" data-label=\"against\">runner-up</td><td class=\"t\" data-label=\"configuration\">b</td>"), "{h}");
        for cell in [">36.18</td>", ">+0.1266 ± 3.378</td>", ">-3.251 to 3.505</td>", ">-4.065</td>"] {
            assert!(h.contains(cell), "{cell}: {h}");
        }
        let mut m = String::new();
        md_confidence(&mut m, &review(true));
        assert!(m.starts_with("> ✔ **Selection:** best with 95 % confidence"), "{m}");
        assert!(
            m.contains("| runner-up | b | 36.18 | +0.1266 ± 3.378 | -3.251 to 3.505 | 3 | -4.065 |"),
            "{m}"
        );
        let mut none = String::new();
        html_confidence(&mut none, &Review { selection: None, ..review(true) });
        assert!(none.is_empty());
    }

    #[test]
    fn the_missed_cell_says_where() {
        assert_eq!(with_missed_in("0 of 4".into(), None), "0 of 4");
        assert_eq!(
            with_missed_in("0.3333 of 4".into(), Some("hang in 1 of 3 replicates")),
            "0.3333 of 4 (missed on hang in 1 of 3 replicates)"
        );
    }
}
