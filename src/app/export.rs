//! `breakerlab export`: a preset plus overrides, written in a breaker library's own syntax;
//! with `--nearest`, a configuration the library cannot express is replaced by the nearest one
//! it can, headed by what differs and, given scenarios, the paired difference it makes there
//! (run as `compare` runs it).

use super::compare::Paired;
use super::parse_sets;
use crate::Result;
use crate::deploy::nearest::nearest;
use crate::limits::Limits;
use crate::policy::PolicySpec;
use crate::policy::export::{ExportError, Library, export};
use crate::scenario::InputError;
use crate::sweep::compare::{CompareReport, show};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What `export` was asked for.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    /// `--as`: the target library.
    pub library: Library,
    /// `--policy`: the preset (default: the library's own preset).
    pub policy: Option<String>,
    /// `--set key=value` overrides.
    pub sets: Vec<String>,
    /// `--name`: the breaker instance's name where the syntax has one (default `backend`).
    pub name: Option<String>,
    /// `--nearest`: write the nearest configuration the library expresses instead of refusing.
    pub nearest: bool,
    /// `--scenario`: scenarios on which `--nearest` measures what the replacement changes.
    pub scenarios: Vec<PathBuf>,
    /// Replicates per scenario for that measurement.
    pub replicates: u32,
}

impl ExportRequest {
    /// The request for `preset` with `overrides` (as a sweep's configuration holds them).
    pub fn of(library: Library, preset: &str, overrides: &[(String, toml::Value)]) -> ExportRequest {
        let sets = overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
        ExportRequest {
            library,
            policy: Some(preset.to_string()),
            sets,
            name: None,
            nearest: false,
            scenarios: vec![],
            replicates: DEFAULT_REPLICATES,
        }
    }
}

/// Replicates per scenario for `--nearest --scenario` (as `compare`'s default).
pub const DEFAULT_REPLICATES: u32 = 5;

/// The configuration text, or the reason the library cannot express it.
pub fn run(req: &ExportRequest) -> Result<String> {
    let mut spec = PolicySpec::new(req.policy.as_deref().unwrap_or(req.library.default_preset()));
    for (k, v) in parse_sets(&req.sets)? {
        spec.overrides.insert(k, v);
    }
    let cfg = spec.resolve().map_err(|e| super::name_flag(e, req.policy.as_deref(), &req.sets))?;
    let name = req.name.as_deref().unwrap_or("backend");
    let lib = req.library;
    match export(&cfg, lib, name) {
        Ok(text) => Ok(text),
        Err(ExportError::Unsupported { library, label, reason }) if !req.nearest => {
            let reason = format!(
                "{reason}; --nearest writes the nearest configuration {library} expresses, with what differs"
            );
            Err(ExportError::Unsupported { library, label, reason }.into())
        }
        Err(e) if !req.nearest => Err(e.into()),
        Err(_) => {
            let n = nearest(&cfg, &spec, lib)?;
            let mut head = vec![format!(
                "the nearest configuration {} expresses to policy {} ({}); what differs:",
                lib.name(),
                cfg.label(),
                n.config.label()
            )];
            head.extend(n.differences.iter().map(|d| format!("  {d}")));
            if !req.scenarios.is_empty() {
                head.extend(measured(req, &spec, &n.spec)?);
            }
            let marker = comment_marker(lib);
            let mut out = String::new();
            for line in head {
                let _ = writeln!(out, "{marker} {line}");
            }
            out.push_str(&export(&n.config, lib, name)?);
            Ok(out)
        }
    }
}

/// The line-comment marker of `lib`'s syntax.
fn comment_marker(lib: Library) -> &'static str {
    match lib {
        Library::Resilience4j | Library::Envoy | Library::Istio | Library::Pybreaker => "#",
        _ => "//",
    }
}

/// The paired differences, nearest − original, per scenario and in total, as `compare` gives
/// them (the nearest is policy B, the original A).
fn measured(req: &ExportRequest, original: &PolicySpec, nearest: &PolicySpec) -> Result<Vec<String>> {
    if req.replicates == 0 {
        return Err(InputError::argument("--replicates must be at least 1").into());
    }
    let loaded = super::load_scenarios(&req.scenarios)?;
    let run = Paired {
        scenarios: &loaded,
        replicates: req.replicates,
        seed: None,
        threads: None,
        limits: Limits::default(),
        quiet: true,
        flags: (&[], &[]),
    };
    let scratch = crate::sweep::store::Scratch::in_dir(std::env::temp_dir());
    let (_, table, _, objective) = run.run(&[original.clone(), nearest.clone()], &scratch)?;
    let report = CompareReport::from_table(&table, req.replicates, &objective);
    let mut lines = vec![format!(
        "simulated difference it makes, nearest - original, paired over {} replicate(s) (as `breakerlab compare` \
         gives it, 95 % intervals; the cost, then every metric whose interval excludes zero):",
        req.replicates
    )];
    for sc in &report.scenarios {
        let beyond: Vec<String> = sc
            .rows
            .iter()
            .filter(|r| r.metric != "cost")
            .filter_map(|r| {
                let shown = show(r.differences.first()?, true);
                shown.ends_with('*').then(|| format!("{} {}", r.metric, shown.trim_end_matches(" *")))
            })
            .collect();
        let cost = sc.rows.iter().find(|r| r.metric == "cost").and_then(|r| r.differences.first());
        let cost = cost.map_or("-".to_string(), |d| show(d, true));
        let rest =
            if beyond.is_empty() { "no metric differs beyond noise".to_string() } else { beyond.join("; ") };
        lines.push(format!("  {}: cost {cost}; {rest}", sc.scenario));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_the_library_preset_and_applies_sets() {
        let req = ExportRequest {
            policy: None,
            sets: vec!["max_requests=2".into()],
            ..ExportRequest::of(Library::Gobreaker, "gobreaker", &[])
        };
        let out = run(&req).unwrap();
        assert!(out.contains("MaxRequests: 2,") && out.contains("Name:        \"backend\","), "{out}");
        let bad = ExportRequest {
            policy: Some("consecutive".into()),
            ..ExportRequest::of(Library::Resilience4j, "x", &[])
        };
        let e = run(&bad).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("resilience4j cannot express policy `consecutive`"), "{e}");
        assert!(Library::parse("nope").unwrap_err().to_string().contains("unknown library"));
    }

    #[test]
    fn nearest_heads_the_export_with_what_differs_and_its_paired_difference() {
        let req = ExportRequest::of(Library::Polly, "circuit-gate", &[]);
        let e = run(&req).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "start from the `polly` preset; --nearest writes the nearest configuration polly expresses, with what differs"
            ),
            "{e}"
        );
        let scenario = super::super::bundled("hard-outage.toml");
        let req = ExportRequest { nearest: true, scenarios: vec![scenario], replicates: 2, ..req };
        let out = run(&req).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "// the nearest configuration polly expresses to policy circuit-gate (polly[failure_ratio=1.0,minimum_throughput=5,\
             sampling_duration=30s,break_duration=30s]); what differs:"
        );
        assert_eq!(lines[1], "//   family: gate (circuit-gate) -> polly (polly)");
        assert!(
            out.contains(
                "\n// simulated difference it makes, nearest - original, paired over 2 replicate(s)"
            ),
            "{out}"
        );
        assert!(out.contains("\n//   hard-outage: cost "), "{out}");
        assert!(out.contains("FailureRatio = 1,") && out.contains("MinimumThroughput = 5,"), "{out}");
    }
}
