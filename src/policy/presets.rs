//! The preset catalogue: every named policy, its family, a one-line summary, where its behaviour
//! comes from (a seed file or a library source file) and its documented quirks, plus the
//! parameter documentation `breakerlab presets` prints and sweeps rely on.

use super::spec::{FamilyConfig, PolicyError, render_classes, unknown_preset};

/// One preset of the catalogue.
#[derive(Copy, Clone, Debug)]
pub struct PresetInfo {
    /// The name used in files and on the command line, e.g. `connector-breaker`.
    pub name: &'static str,
    /// The family (state machine) it configures: `none`, `generic`, `connector`, `gate`,
    /// `ai_service`, `node`.
    pub family: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where the behaviour comes from (seed file or library source), to check it against.
    pub source: &'static str,
    /// Behaviours of the original that a reader would not expect, each reproduced.
    pub quirks: &'static [&'static str],
}

/// Static description of one parameter of a family (name, unit, meaning).
#[derive(Copy, Clone, Debug)]
pub struct ParamMeta {
    /// The key used in files and `--set`.
    pub name: &'static str,
    /// Its unit or value set (`duration`, `ratio`, `calls`, ...).
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

impl ParamMeta {
    /// Builds a description (usable in `const` tables).
    pub const fn new(name: &'static str, unit: &'static str, doc: &'static str) -> ParamMeta {
        ParamMeta { name, unit, doc }
    }
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
pub(crate) const CLASSIFIER_PARAMS: [ParamMeta; 2] = [
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

static PRESETS: [PresetInfo; 7] = [
    PresetInfo {
        name: "none",
        family: "none",
        summary: "no breaker: every call is sent (the baseline to compare against)",
        source: "breakerlab (src/policy/mod.rs, NoBreaker)",
        quirks: &[],
    },
    PresetInfo {
        name: "consecutive",
        family: "generic",
        summary: "opens after 5 consecutive failures; open 30 s; one probe; one success closes",
        source: "breakerlab generic family (src/policy/generic.rs); the classic consecutive-count breaker (pybreaker, cockatiel ConsecutiveBreaker)",
        quirks: &[],
    },
    PresetInfo {
        name: "windowed",
        family: "generic",
        summary: "opens when failures are >= 50 % of at least 10 calls in the last 60 s; open 30 s; one probe",
        source: "breakerlab generic family (src/policy/generic.rs), exact time window",
        quirks: &[],
    },
    PresetInfo {
        name: "connector-breaker",
        family: "connector",
        summary: "seed 000: error rate >= 0.5 or p95 >= 8 s over 15 min (8 samples min); cooldown 5 min; 3 successes close",
        source: "seed 000, ../shared/seeds/000_f673d46eee20f6c2.txt (Python ConnectorBreaker: allow, record, _prune, _p95_latency)",
        quirks: &[
            "thresholds are checked on every record once min_samples are held, whatever the outcome: it can open on a success",
            "comparisons are >=: exactly 50 % errors opens it",
            "p95 is the sorted window's element at max(0, floor(0.95 n) - 1): with 8 samples one slow call is ignored",
            "a sample exactly `window` old is still in the window (pruned only when strictly older)",
            "open -> half-open only inside allow() (passive), when now - opened_at >= cooldown",
            "half-open admits every call (no probe limit; override: half_open_max_calls)",
            "half-open ignores latency: slow successes count as successes",
            "the window is never cleared: after closing, the outage's failures re-open it until they age out (override: clear_window_on_close)",
            "a result recorded while open re-evaluates the thresholds and, if still exceeded, moves opened_at (restarts the cooldown, no transition)",
        ],
    },
    PresetInfo {
        name: "circuit-gate",
        family: "gate",
        summary: "seed 001: 5 failures within 60 s open it; cooloff 30 s; exactly one probe",
        source: "seed 001, ../shared/seeds/001_c8f3fdb67a80a5ac.txt (Python circuit_gate.py: CircuitGate.allow, record, _open, _reset)",
        quirks: &[
            "old failures are pruned only in allow(), and only when strictly older than the window: a failure exactly 60 s old still counts",
            "the failure list is cleared on open and on close; successes in closed do not reset it",
            "half-open admits exactly one probe until a result is recorded: a probe never recorded leaves it stuck",
            "any result recorded while not closed acts as the probe's result: a late success closes at once (open -> closed, skipping half-open)",
            "a late failure while open restarts the cooloff (no transition)",
            "allow() in closed returns len(failures) < max_failures after pruning (always true once max_failures >= 1)",
            "the seed's usage wrapper records only timeouts and successes; model it with failure_on = [\"timeout\"], ignore = [\"error\", \"rate_limited\", \"client_error\"]",
        ],
    },
    PresetInfo {
        name: "ai-service-breaker",
        family: "ai_service",
        summary: "seed 002: 5 consecutive failures open it; 30 s; half-open admits up to 3; 2 consecutive successes close",
        source: "seed 002, ../shared/seeds/002_b00b859d389ac923.txt (Python CircuitBreaker: state, _check_state_transition, _record_success, _record_failure, call)",
        quirks: &[
            "open -> half-open when the state is read after timeout_duration (passive, on the next call)",
            "half-open's call counter is decremented only on success: failures never free a slot, late successes can drive it negative",
            "consecutive_successes is not reset on opening or entering half-open: late successes while open count toward closing",
            "any failure in half-open reopens; a failure while open does nothing (no cooldown restart)",
            "every exception is a failure, auth errors included despite the article's text",
            "the call timeout is signal.alarm(int(call_timeout)): whole seconds, and under 1 s means no timeout",
            "SIGALRM works only in the main thread: that runtime accident is out of scope",
        ],
    },
    PresetInfo {
        name: "node-breaker",
        family: "node",
        summary: "seed 003: 5 failures (reset by any success) open it; cooldown 30 s; calls time out at 5 s",
        source: "seed 003, ../shared/seeds/003_984450fd97c1e1b4.txt (Node.js breaker.js: call, onSuccess, onFailure)",
        quirks: &[
            "open -> half-open on the first call after the cooldown (passive)",
            "half-open admits every call until a result arrives (the text says one probe)",
            "a success zeroes the failure count and closes from half-open; a late success while open zeroes the count but stays open",
            "a late failure while open restarts the cooldown (openedAt moves, no transition)",
            "a call at or over the timeout fails at t + timeout; the dependency still does the work (Promise.race does not cancel)",
        ],
    },
];

/// Every preset, in a fixed order.
pub fn presets() -> &'static [PresetInfo] {
    &PRESETS
}

/// Looks a preset up by name.
pub(crate) fn find(name: &str) -> Option<&'static PresetInfo> {
    PRESETS.iter().find(|p| p.name == name)
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
                "node-breaker"
            ]
        );
        for p in presets() {
            assert!(FamilyConfig::preset_default(p.name).is_some(), "{}", p.name);
            if p.name.ends_with("breaker") || p.name == "circuit-gate" {
                assert!(p.source.contains("../shared/seeds/"), "{}", p.name);
                assert!(p.quirks.len() >= 5, "{}", p.name);
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
