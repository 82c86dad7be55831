//! A targeted sweep's deployable outputs: the recommendation, the runner-up, the baseline and
//! its alternatives written in the target library's own syntax (the section appended to
//! recommendation.txt and shown on the page and the terminal), and `recommended.<ext>`.

use crate::policy::PolicySpec;
use crate::policy::export::{Library, export};
use crate::sweep::grid::Configuration;
use crate::sweep::recommend::Recommendation;
use crate::sweep::review::BaselineReview;
use crate::sweep::table::ResultTable;
use crate::sweep::target::{Deployment, TargetMode};
use std::fmt::Write as _;

/// The breaker instance name the exports use (as `export` does without `--name`).
const NAME: &str = "backend";

/// The file extension of `lib`'s configuration syntax.
pub fn extension(lib: Library) -> &'static str {
    match lib {
        Library::Resilience4j | Library::Envoy | Library::Istio => "yaml",
        Library::Polly => "cs",
        Library::Opossum => "js",
        Library::Cockatiel => "ts",
        Library::Pybreaker => "py",
        Library::Gobreaker | Library::FailsafeGo => "go",
        Library::Grpc => "json",
    }
}

/// The file the recommended configuration is written to: `recommended.<ext>`.
pub fn recommended_file(lib: Library) -> String {
    format!("recommended.{}", extension(lib))
}

/// `c` in `lib`'s syntax, or why it cannot be written.
pub fn export_of(c: &Configuration, lib: Library) -> Result<String, String> {
    let mut spec = PolicySpec::new(&c.preset);
    for (k, v) in &c.overrides {
        spec.overrides.insert(k.clone(), v.clone());
    }
    let cfg = spec.resolve().map_err(|e| e.to_string())?;
    export(&cfg, lib, NAME).map_err(|e| e.to_string())
}

/// What a targeted sweep writes besides its other outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Deployed {
    /// The section appended to recommendation.txt.
    pub section: String,
    /// `recommended.<ext>` and its text, when a configuration is recommended.
    pub file: Option<(String, String)>,
}

fn indented(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "    {line}");
    }
}

/// The export section of a targeted sweep and its `recommended.<ext>`.
pub fn deployed(
    deployment: &Deployment,
    table: &ResultTable,
    recommendation: &Recommendation,
    baseline: Option<&BaselineReview>,
) -> Deployed {
    let lib = deployment.target.library;
    let mut s = String::new();
    let how = match deployment.target.mode {
        TargetMode::Exact => "every configuration was checked to export exactly".to_string(),
        TargetMode::Nearest => format!(
            "{} of the {} configuration(s) ran as the nearest configuration {} expresses",
            deployment.replaced.len(),
            deployment.checked,
            lib.name()
        ),
    };
    let _ = writeln!(
        s,
        "\nDeploy to {} (target_mode = \"{}\": {how}):",
        lib.name(),
        deployment.target.mode.name()
    );
    let mut file = None;
    let shown = |s: &mut String, title: &str, c: &Configuration| {
        match export_of(c, lib) {
            Ok(text) => {
                let _ = writeln!(s, "{title}, as {} reads it:", lib.name());
                indented(s, &text);
            }
            Err(reason) => {
                let _ = writeln!(s, "{title}: not exported: {reason}");
            }
        }
        if let Some(r) = deployment.replacement(c.id) {
            let _ = writeln!(
                s,
                "  It runs in place of {} (configuration {}), which {} cannot express; what differs:",
                r.original,
                r.id,
                lib.name()
            );
            for d in &r.differences {
                let _ = writeln!(s, "    {d}");
            }
        }
    };
    match recommendation.chosen() {
        Some(chosen) => {
            let name = recommended_file(lib);
            if let Ok(text) = export_of(&chosen.config, lib) {
                file = Some((name.clone(), text));
            }
            shown(
                &mut s,
                &format!("Recommended: {} (configuration {}; in {name})", chosen.label, chosen.config.id),
                &chosen.config,
            );
        }
        None => {
            let _ = writeln!(s, "Nothing is recommended, so nothing is exported.");
        }
    }
    if let Some(second) = recommendation.runner_up() {
        shown(
            &mut s,
            &format!("Runner-up: {} (configuration {})", second.label, second.config.id),
            &second.config,
        );
    }
    if let Some(b) = baseline {
        if let Some(c) = find(table, &b.label) {
            shown(&mut s, &format!("Baseline (in use today): {}: {}", b.label, b.verdict), &c);
        }
        for (i, alt) in b.alternatives.iter().enumerate() {
            if let Some(c) = find(table, &alt.label) {
                shown(&mut s, &format!("Alternative {} to the baseline: {}", i + 1, alt.label), &c);
            }
        }
    }
    Deployed { section: s, file }
}

/// The table's configuration labelled `label`.
fn find(table: &ResultTable, label: &str) -> Option<Configuration> {
    table.configs().find(|c| c.label == label).map(|c| (*c.config).clone())
}
