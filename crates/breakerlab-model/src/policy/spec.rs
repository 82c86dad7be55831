//! From a preset name plus overrides to a validated [`PolicyConfig`]: the preset's defaults are
//! serialised to a TOML table, the overrides merged in, the result deserialised into the
//! family's config (unknown keys refused) and validated. Errors name the preset, the parameter,
//! what was expected and what was found.

use super::family::Family;
use super::param::{PolicyError, impossible, invalid};
use super::presets::{CLASSIFIER_PARAMS, find, presets};
use super::registry::{FamilyConfig, Policy};
use crate::outcome::{Classifier, OutcomeClass};
use crate::time::Dur;
use crate::{Error, Result};
use serde::Serialize;

/// A policy as a user names it: a preset and parameter overrides (from a file or `--set`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicySpec {
    /// The preset's name, e.g. `consecutive`.
    pub preset: String,
    /// Parameter overrides, keyed by parameter name.
    pub overrides: toml::Table,
}

/// The error for an unknown preset, listing the known ones.
pub fn unknown_preset(name: &str) -> PolicyError {
    let known: Vec<&str> = presets().iter().map(|p| p.name).collect();
    PolicyError::UnknownPreset { name: name.into(), known: known.join(", ") }
}

/// A family's parameters as a TOML table.
pub fn table_of<C: Serialize>(c: &C) -> toml::Table {
    // Every family config is a flat struct of numbers, strings and booleans: always a table.
    toml::Table::try_from(c).unwrap_or_default()
}

/// Merges `overrides` over `defaults`, deserialises and validates; a failure is pinned on the
/// override that causes it.
pub fn merge<C: Family>(defaults: &C, overrides: &toml::Table) -> Result<C, PolicyError> {
    let base = table_of(defaults);
    let mut merged = base.clone();
    for (k, v) in overrides {
        merged.insert(k.clone(), v.clone());
    }
    super::bounds::check(C::PARAMS, &merged)?;
    match merged.try_into::<C>() {
        Ok(c) => {
            c.validate()?;
            Ok(c)
        }
        Err(whole) => {
            for (k, v) in overrides {
                let mut one = base.clone();
                one.insert(k.clone(), v.clone());
                if let Err(e) = one.try_into::<C>() {
                    return Err(invalid(k, &clean_de_message(&e.to_string()), &render_toml(v)));
                }
            }
            Err(impossible(clean_de_message(&whole.to_string())))
        }
    }
}

/// serde's messages read "invalid type: string \"x\", expected u32"; keep the expectation,
/// in words.
fn clean_de_message(msg: &str) -> String {
    let msg = msg.trim();
    let rest = match msg.split_once("expected ") {
        Some((_, rest)) => rest,
        None => return msg.to_string(),
    };
    // toml appends "\nin `field`" and some messages repeat ", found ...": keep the expectation.
    let rest = rest.lines().next().unwrap_or(rest);
    let rest = rest.split(", found").next().unwrap_or(rest).trim();
    match rest {
        "u32" | "u64" => "a whole number (0 or more)".to_string(),
        "f64" => "a number".to_string(),
        other => other.to_string(),
    }
}

/// Edit distance between two short names (for "did you mean").
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// ` (did you mean `x`?)` for the closest known name within 3 edits, else empty.
fn did_you_mean(given: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|k| (distance(given, k), *k))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// A TOML value as it would be written in a file (strings quoted).
fn render_toml(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Array(a) => format!("[{}]", a.iter().map(render_toml).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// A parameter value in file syntax for listings and CSV columns: strings bare (`30s`, `>=`),
/// numbers and booleans as TOML writes them, lists as TOML arrays. `PolicySpec::parse_set`
/// reads every such value back.
fn render_param(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => render_toml(other),
    }
}

/// A class list as a TOML array: `["error", "timeout"]`.
pub fn render_classes(classes: &[OutcomeClass]) -> String {
    let items: Vec<String> = classes.iter().map(|c| format!("\"{}\"", c.as_str())).collect();
    format!("[{}]", items.join(", "))
}

/// A class list: a TOML array of names, or (from the command line) one string of
/// comma-separated names such as `error,timeout`.
fn parse_classes(param: &str, v: &toml::Value) -> Result<Vec<OutcomeClass>, PolicyError> {
    const EXPECTED: &str =
        "a list of outcome classes among \"ok\", \"error\", \"timeout\", \"rate_limited\", \"client_error\"";
    let class = |name: &str, shown: String| {
        OutcomeClass::ALL
            .into_iter()
            .find(|c| c.as_str() == name.trim())
            .ok_or_else(|| invalid(param, EXPECTED, &shown))
    };
    match v {
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item.as_str() {
                Some(name) => class(name, render_toml(item)),
                None => Err(invalid(param, EXPECTED, &render_toml(item))),
            })
            .collect(),
        toml::Value::String(text) => {
            text.split(',').map(|name| class(name, format!("{:?}", name.trim()))).collect()
        }
        other => Err(invalid(param, EXPECTED, &render_toml(other))),
    }
}

impl FamilyConfig {
    /// Every family parameter with its value in file syntax, in [`FamilyConfig::meta`] order.
    pub fn params(&self) -> Vec<(String, String)> {
        let t = self.table();
        self.meta()
            .iter()
            .map(|m| (m.name.to_string(), t.get(m.name).map(render_param).unwrap_or_default()))
            .collect()
    }
}

impl PolicySpec {
    /// A preset with no overrides.
    pub fn new(preset: &str) -> PolicySpec {
        PolicySpec { preset: preset.to_string(), overrides: toml::Table::new() }
    }

    /// Parses a command-line `key=value`: the value is read as a TOML value (`3`, `0.5`, `true`,
    /// `["error"]`), else taken as a plain string (`30s`, `>=`).
    pub fn parse_set(arg: &str) -> Result<(String, toml::Value)> {
        let (key, value) = arg.split_once('=').ok_or_else(|| {
            Error::invalid(format!("expected key=value (e.g. failure_threshold=3), found {arg:?}"))
        })?;
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(Error::invalid(format!(
                "expected a parameter name of letters, digits and underscores before '=', found {key:?} in {arg:?}"
            )));
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(Error::invalid(format!("expected a value after '=' for `{key}`, found nothing")));
        }
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        Ok((key.to_string(), parsed))
    }

    /// Resolves the preset's defaults plus the overrides into a validated configuration.
    pub fn resolve(&self) -> Result<PolicyConfig, PolicyError> {
        let info = find(&self.preset).ok_or_else(|| unknown_preset(&self.preset))?;
        let (defaults, default_classifier) =
            FamilyConfig::preset_default(info.name).ok_or_else(|| unknown_preset(&self.preset))?;
        let meta = defaults.meta();
        let mut family_overrides = toml::Table::new();
        let mut failure_on = None;
        let mut ignore = None;
        for (k, v) in &self.overrides {
            match k.as_str() {
                "failure_on" => failure_on = Some(parse_classes(k, v)?),
                "ignore" => ignore = Some(parse_classes(k, v)?),
                _ if meta.iter().any(|m| m.name == k) => {
                    family_overrides.insert(k.clone(), v.clone());
                }
                _ => {
                    let known: Vec<&str> =
                        meta.iter().chain(CLASSIFIER_PARAMS.iter()).map(|m| m.name).collect();
                    return Err(PolicyError::UnknownParam {
                        preset: info.name.into(),
                        param: k.clone(),
                        hint: did_you_mean(k, &known),
                        known: known.join(", "),
                    });
                }
            }
        }
        let family = defaults.with_overrides(&family_overrides)?;
        let classifier = match (failure_on, ignore) {
            (None, None) => default_classifier,
            (f, i) => {
                let i = i.unwrap_or_else(|| {
                    let f = f.as_deref().unwrap_or(&[]);
                    default_classifier.ignored().into_iter().filter(|c| !f.contains(c)).collect()
                });
                let f = f.unwrap_or_else(|| {
                    default_classifier.failures().into_iter().filter(|c| !i.contains(c)).collect()
                });
                Classifier::from_lists(&f, &i).map_err(|e| impossible(e.to_string()))?
            }
        };
        let overridden = self.overrides.keys().cloned().collect();
        Ok(PolicyConfig { preset: info.name, family_name: info.family, family, classifier, overridden })
    }
}

/// A validated policy: what the engine builds state machines from and reports label.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyConfig {
    preset: &'static str,
    family_name: &'static str,
    family: FamilyConfig,
    classifier: Classifier,
    overridden: Vec<String>,
}

impl PolicyConfig {
    /// The preset's name, e.g. `connector-breaker`.
    pub fn preset(&self) -> &str {
        self.preset
    }

    /// The family's name, e.g. `connector`.
    pub fn family(&self) -> &'static str {
        self.family_name
    }

    /// The resolved family parameters.
    pub fn family_config(&self) -> &FamilyConfig {
        &self.family
    }

    /// A fresh state machine; `seed` feeds any jitter it draws (only the generic family draws).
    pub fn build(&self, seed: u64) -> Policy {
        self.family.build(seed)
    }

    /// What counts as a failure (the preset's default unless `failure_on`/`ignore` are set).
    pub fn classifier(&self) -> Classifier {
        self.classifier
    }

    /// The client's call timeout when the preset imposes one (seed 002: whole seconds, none
    /// under 1 s; seed 003: `timeout`), else `None` (the scenario's client decides).
    pub fn call_timeout(&self) -> Option<Dur> {
        self.family.imposed_call_timeout().flatten()
    }

    /// True when the preset dictates the client's call timeout (seeds 002 and 003): the engine
    /// then uses [`PolicyConfig::call_timeout`] as is, where `None` means no timeout at all
    /// (seed 002's `signal.alarm(0)`), instead of the scenario's client timeout.
    pub fn imposes_call_timeout(&self) -> bool {
        self.family.imposed_call_timeout().is_some()
    }

    /// Every parameter with its resolved value in file syntax, in a fixed order (the family's,
    /// then `failure_on`, `ignore`).
    pub fn params(&self) -> Vec<(String, String)> {
        let mut p = self.family.params();
        p.push(("failure_on".into(), render_classes(&self.classifier.failures())));
        p.push(("ignore".into(), render_classes(&self.classifier.ignored())));
        p
    }

    /// The preset plus its overridden parameters, e.g. `consecutive[failure_threshold=3]`.
    pub fn label(&self) -> String {
        let set: Vec<String> = self
            .params()
            .into_iter()
            .filter(|(k, _)| self.overridden.contains(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if set.is_empty() { self.preset.to_string() } else { format!("{}[{}]", self.preset, set.join(",")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Verdict;
    use crate::policy::Breaker;

    fn spec(preset: &str, sets: &[&str]) -> PolicySpec {
        let mut s = PolicySpec::new(preset);
        for a in sets {
            let (k, v) = PolicySpec::parse_set(a).unwrap();
            s.overrides.insert(k, v);
        }
        s
    }

    fn err(preset: &str, sets: &[&str]) -> String {
        spec(preset, sets).resolve().unwrap_err().to_string()
    }

    #[test]
    fn parse_set_reads_toml_then_strings() {
        let v = |a: &str| PolicySpec::parse_set(a).unwrap().1;
        assert_eq!(v("a=3"), toml::Value::Integer(3));
        assert_eq!(v("a=0.5"), toml::Value::Float(0.5));
        assert_eq!(v("a=true"), toml::Value::Boolean(true));
        assert_eq!(v("a=30s"), toml::Value::String("30s".into()));
        assert_eq!(v("a=>="), toml::Value::String(">=".into()));
        assert_eq!(v("a=\"x y\""), toml::Value::String("x y".into()));
        assert_eq!(v("a=[\"error\"]").as_array().map(|a| a.len()), Some(1));
        assert!(PolicySpec::parse_set("novalue").unwrap_err().to_string().contains("key=value"));
        assert!(PolicySpec::parse_set("a=").unwrap_err().to_string().contains("after '='"));
        assert!(PolicySpec::parse_set("=3").unwrap_err().to_string().contains("parameter name"));
    }

    #[test]
    fn resolution_errors_are_clear() {
        let e = err("nope", &[]);
        assert!(e.contains("unknown policy preset `nope`") && e.contains("connector-breaker"), "{e}");
        let e = err("consecutive", &["failure_treshold=3"]);
        assert!(
            e.contains("`failure_treshold`")
                && e.contains("`consecutive`")
                && e.contains("failure_threshold"),
            "{e}"
        );
        assert!(e.contains("did you mean `failure_threshold`?"), "{e}");
        let e = err("node-breaker", &["zzz=3"]);
        assert!(!e.contains("did you mean"), "{e}");
        assert!(e.contains("failure_threshold, cooldown, timeout, failure_on, ignore"), "{e}");
        let e = err("circuit-gate", &["max_failures=\"five\""]);
        assert!(
            e.contains("`max_failures`") && e.contains("a whole number") && e.contains("\"five\""),
            "{e}"
        );
        let e = err("windowed", &["failure_rate=1.5"]);
        assert!(e.contains("`failure_rate`") && e.contains("between 0 and 1") && e.contains("1.5"), "{e}");
        let e = err("node-breaker", &["cooldown=-5s"]);
        assert!(e.contains("`cooldown`") && e.contains("non-negative"), "{e}");
        let e = err("node-breaker", &["timeout=0s"]);
        assert!(e.contains("`timeout`") && e.contains("greater than 0"), "{e}");
        let e = err("node-breaker", &["cooldown=30"]);
        assert!(e.contains("`cooldown`") && e.contains("with a unit"), "{e}");
        assert_eq!(e.matches("found").count(), 1, "{e}");
        let e = err("consecutive", &["open_duration=0s"]);
        assert!(e.contains("`open_duration`"), "{e}");
        let e = err("consecutive", &["failure_threshold=-1"]);
        assert!(e.contains("`failure_threshold`") && e.contains("-1"), "{e}");
        let e = err("windowed", &["buckets=7"]);
        assert!(e.contains("impossible") && e.contains("bucket"), "{e}");
        let e = err("windowed", &["time_window=5us", "buckets=10"]);
        assert!(e.contains("smaller than one bucket"), "{e}");
        let e = err("consecutive", &["failure_threshold=0"]);
        assert!(e.contains("no trip rule"), "{e}");
        let e = err("consecutive", &["close_successes=3"]);
        assert!(e.contains("exceeds probes"), "{e}");
        let e = err("consecutive", &["comparison=\"=>\""]);
        assert!(e.contains("`comparison`"), "{e}");
        let e = err("consecutive", &["failure_on=[\"errors\"]"]);
        assert!(e.contains("`failure_on`") && e.contains("\"errors\""), "{e}");
        let e = err("consecutive", &["failure_on=[\"error\"]", "ignore=[\"error\"]"]);
        assert!(e.contains("both as a failure and as ignored"), "{e}");
    }

    #[test]
    fn classifier_overrides() {
        let c = spec("consecutive", &["ignore=[\"rate_limited\"]"]).resolve().unwrap().classifier();
        assert_eq!(c.verdict(OutcomeClass::RateLimited), Verdict::Ignored);
        assert_eq!(c.verdict(OutcomeClass::Timeout), Verdict::Failure);
        // The list replaces the preset's: client errors are no longer ignored, and not failures.
        assert_eq!(c.verdict(OutcomeClass::ClientError), Verdict::Success);
        let c = spec("node-breaker", &["failure_on=[\"timeout\"]"]).resolve().unwrap().classifier();
        assert_eq!(c.failures(), vec![OutcomeClass::Timeout]);
        let same = spec("node-breaker", &["failure_on=timeout"]).resolve().unwrap().classifier();
        assert_eq!(same, c);
        let two = spec("node-breaker", &["failure_on=error, timeout"]).resolve().unwrap().classifier();
        assert_eq!(two.failures(), vec![OutcomeClass::Error, OutcomeClass::Timeout]);
        let e = err("node-breaker", &["failure_on=error,oops"]);
        assert!(e.contains("`failure_on`") && e.contains("\"oops\""), "{e}");
        assert_eq!(c.verdict(OutcomeClass::Error), Verdict::Success);
        assert_eq!(spec("node-breaker", &[]).resolve().unwrap().classifier(), Classifier::EVERY_ERROR);
        assert_eq!(spec("windowed", &[]).resolve().unwrap().classifier(), Classifier::DEFAULT);
    }

    #[test]
    fn params_round_trip_through_resolve_for_every_preset() {
        for p in presets() {
            let base = spec(p.name, &[]).resolve().unwrap();
            let sets: Vec<String> = base.params().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
            let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
            let again = spec(p.name, &refs).resolve().unwrap();
            assert_eq!(again.family_config(), base.family_config(), "{}", p.name);
            assert_eq!(again.classifier(), base.classifier(), "{}", p.name);
            assert_eq!(again.params(), base.params(), "{}", p.name);
            assert_eq!(base.label(), p.name);
        }
    }

    #[test]
    fn overrides_apply_and_label_names_them() {
        let c = spec("consecutive", &["open_duration=1m30s", "failure_threshold=3"]).resolve().unwrap();
        assert_eq!(c.label(), "consecutive[failure_threshold=3,open_duration=1m30s]");
        match c.family_config() {
            FamilyConfig::Generic(g) => {
                assert_eq!(g.failure_threshold, 3);
                assert_eq!(g.open_duration, Dur::from_secs(90));
            }
            other => panic!("{other:?}"),
        }
        let c = spec("windowed", &["failure_rate=1"]).resolve().unwrap();
        assert_eq!(c.label(), "windowed[failure_rate=1.0]");
        assert_eq!(c.family(), "generic");
        let c = spec("connector-breaker", &["clear_window_on_close=true", "half_open_max_calls=2"])
            .resolve()
            .unwrap();
        assert_eq!(c.label(), "connector-breaker[half_open_max_calls=2,clear_window_on_close=true]");
        assert_eq!(c.preset(), "connector-breaker");
        assert_eq!(c.family(), "connector");
    }

    #[test]
    fn call_timeouts() {
        let t = |p: &str, sets: &[&str]| spec(p, sets).resolve().unwrap().call_timeout();
        assert_eq!(t("ai-service-breaker", &[]), Some(Dur::from_secs(10)));
        assert_eq!(t("ai-service-breaker", &["call_timeout=2.9s"]), Some(Dur::from_secs(2)));
        assert_eq!(t("ai-service-breaker", &["call_timeout=500ms"]), None);
        assert_eq!(t("node-breaker", &[]), Some(Dur::from_secs(5)));
        assert_eq!(t("connector-breaker", &[]), None);
        assert_eq!(t("consecutive", &[]), None);
        let imposes = |p: &str| spec(p, &[]).resolve().unwrap().imposes_call_timeout();
        assert!(imposes("ai-service-breaker") && imposes("node-breaker"));
        assert!(!imposes("connector-breaker") && !imposes("circuit-gate") && !imposes("windowed"));
    }

    #[test]
    fn build_gives_a_fresh_closed_machine_of_the_family() {
        for p in presets() {
            let policy = spec(p.name, &[]).resolve().unwrap().build(1);
            assert_eq!(policy.state(), crate::policy::State::Closed);
            let family = policy.family();
            assert_eq!(family, p.family);
        }
    }
}
