//! The preset catalogue: every named policy, its family, a one-line summary, where its behaviour
//! comes from (a seed file or a library source file) and its documented quirks, plus the
//! parameter documentation `breakerlab presets` prints and sweeps rely on. Each family declares
//! its own presets ([`Family::PRESETS`]); the catalogue lists them in registry order.

use super::family::{Family, Preset};
use super::param::{ParamMeta, PolicyError};
use super::registry::{FamilyConfig, catalogue, resolvable};
use super::spec::{render_classes, unknown_preset};

/// One preset of the catalogue.
#[derive(Copy, Clone, Debug)]
pub struct PresetInfo {
    /// The name used in files and on the command line, e.g. `connector-breaker`.
    pub name: &'static str,
    /// The family (state machine) it configures: `none`, `generic`, `connector`, ...
    pub family: &'static str,
    /// The library and version it reproduces (empty for breakerlab's own and the seeds').
    pub library: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where the behaviour comes from (seed file or library source), to check it against.
    pub source: &'static str,
    /// Behaviours of the original that a reader would not expect, each reproduced.
    pub quirks: &'static [&'static str],
}

/// One parameter of a preset with its default, for listings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamDoc {
    /// The key used in files and `--set`.
    pub name: String,
    /// The preset's default, in file syntax (`30s`, `0.5`, `true`, `["error", "timeout"]`).
    pub default: String,
    /// Unit or value set.
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

/// The two classifier keys every preset accepts.
pub const CLASSIFIER_PARAMS: [ParamMeta; 2] = [
    ParamMeta::new(
        "failure_on",
        "list of classes",
        "outcome classes counted as failures (error, timeout, rate_limited, client_error), replacing the preset's list (without it: the preset's failures minus `ignore`); the rest not ignored are successes",
    ),
    ParamMeta::new(
        "ignore",
        "list of classes",
        "outcome classes the breaker does not record at all, replacing the preset's list (without it: the preset's ignored minus `failure_on`)",
    ),
];

impl PresetInfo {
    /// The catalogue entry of one of family `C`'s presets.
    pub fn of<C: Family>(p: &Preset<C>) -> PresetInfo {
        PresetInfo {
            name: p.name,
            family: C::NAME,
            library: p.library,
            summary: p.summary,
            source: p.source,
            quirks: p.quirks,
        }
    }
}

/// Every preset, in a fixed order (the registry's, each family's presets in its order).
pub fn presets() -> &'static [PresetInfo] {
    catalogue()
}

/// Looks a preset up by name.
pub fn find(name: &str) -> Option<&'static PresetInfo> {
    resolvable().iter().find(|p| p.name == name)
}

/// The parameters of preset `name`, each with its default, in the fixed order `params()` uses.
pub fn preset_params(name: &str) -> Result<Vec<ParamDoc>, PolicyError> {
    let (family, classifier) = FamilyConfig::preset_default(name).ok_or_else(|| unknown_preset(name))?;
    let mut docs: Vec<ParamDoc> = family
        .params()
        .into_iter()
        .zip(family.meta())
        .map(|((name, default), m)| ParamDoc { name, default, unit: m.unit, doc: m.doc })
        .collect();
    let defaults = [render_classes(&classifier.failures()), render_classes(&classifier.ignored())];
    for (m, default) in CLASSIFIER_PARAMS.iter().zip(defaults) {
        docs.push(ParamDoc { name: m.name.to_string(), default, unit: m.unit, doc: m.doc });
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_complete_and_documented() {
        let names: Vec<&str> = presets().iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "none",
                "consecutive",
                "windowed",
                "connector-breaker",
                "circuit-gate",
                "ai-service-breaker",
                "node-breaker",
                "resilience4j-count",
                "resilience4j-time",
                "hystrix",
                "opossum",
                "polly",
                "cockatiel-consecutive",
                "cockatiel-count",
                "cockatiel-sampling",
                "pybreaker",
                "circuitbreaker",
                "gobreaker",
                "failsafe-go",
                "finagle",
                "envoy-outlier",
                "istio-outlier",
                "grpc-outlier",
                "sre-throttle",
            ]
        );
        for p in presets() {
            assert!(FamilyConfig::preset_default(p.name).is_some(), "{}", p.name);
            let library = ["pybreaker", "circuitbreaker", "gobreaker"].contains(&p.family);
            if p.name.ends_with("breaker") && !library || p.name == "circuit-gate" {
                assert!(p.source.contains("../shared/seeds/"), "{}", p.name);
                assert!(p.quirks.len() >= 5, "{}", p.name);
            }
            if names.iter().position(|n| *n == p.name).unwrap() >= 7 {
                // Library presets name the repository and the file they reproduce.
                assert!(p.source.contains('/') && p.quirks.len() >= 4, "{}", p.name);
            }
        }
    }

    #[test]
    fn params_are_listed_with_defaults() {
        let docs = preset_params("connector-breaker").unwrap();
        let pairs: Vec<(&str, &str)> = docs.iter().map(|d| (d.name.as_str(), d.default.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("window", "15m"),
                ("min_samples", "8"),
                ("error_rate_open", "0.5"),
                ("p95_open", "8s"),
                ("cooldown", "5m"),
                ("half_open_success", "3"),
                ("half_open_max_calls", "0"),
                ("clear_window_on_close", "false"),
                ("failure_on", "[\"error\", \"timeout\", \"rate_limited\", \"client_error\"]"),
                ("ignore", "[]"),
            ]
        );
        let docs = preset_params("consecutive").unwrap();
        assert_eq!(docs.len(), 28);
        assert!(docs.iter().any(|d| d.name == "comparison" && d.default == ">="));
        assert!(docs.iter().any(|d| d.name == "ignore" && d.default == "[\"client_error\"]"));
        assert!(matches!(preset_params("nope"), Err(PolicyError::UnknownPreset { .. })));
    }
}
