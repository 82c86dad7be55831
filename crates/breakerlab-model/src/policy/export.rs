//! Writes a resolved [`PolicyConfig`] in a breaker library's own configuration syntax, or
//! refuses with the reason when the library cannot express it.
//!
//! A library's own family exports exactly (every parameter has a native counterpart). The
//! generic family exports to Resilience4j only, and only when its blocks are exactly
//! Resilience4j's (rate rules over a count window or 1 s buckets, `>=`, no consecutive or
//! percentile rule, half-open deciding on the same thresholds, counted late results);
//! every other pairing has a semantic difference (trip timing, windows, late results) and
//! is refused. Outcome classification cannot be written as exception types: every export
//! carries a comment naming the classes counted as failures and ignored.

use super::library::ExportInput;
pub use super::library::{ExportError, Library};
use super::spec::PolicyConfig;
use crate::outcome::OutcomeClass;

/// Writes `cfg` in `lib`'s syntax; `name` names the breaker instance where the syntax has one.
pub fn export(cfg: &PolicyConfig, lib: Library, name: &str) -> Result<String, ExportError> {
    let header = header(cfg, lib);
    let input = ExportInput { header: &header, name, classifier: cfg.classifier() };
    cfg.family_config().export(lib, &input).map_err(|reason| ExportError::Unsupported {
        library: lib.name(),
        label: cfg.label(),
        reason: reason.to_string(),
    })
}

/// The comment lines every export starts with (without the comment marker).
fn header(cfg: &PolicyConfig, lib: Library) -> Vec<String> {
    let classes = |v: Vec<OutcomeClass>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
        }
    };
    let c = cfg.classifier();
    vec![
        format!("breakerlab export --as {} of policy {}", lib.name(), cfg.label()),
        format!(
            "count as failures: {}; ignore: {}; everything else is a success (map these to the library's exception/result predicates)",
            classes(c.failures()),
            classes(c.ignored())
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;
    use std::collections::BTreeMap;

    fn cfg(preset: &str, sets: &[&str]) -> PolicyConfig {
        let mut s = PolicySpec::new(preset);
        for a in sets {
            let (k, v) = PolicySpec::parse_set(a).unwrap();
            s.overrides.insert(k, v);
        }
        s.resolve().unwrap()
    }

    /// A minimal YAML reader for block mappings of scalars: checks indentation (2 spaces per
    /// level, children only under a `key:` line) and returns dotted paths to values.
    fn yaml(text: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut stack: Vec<String> = Vec::new();
        let mut expect_child = false;
        for line in text.lines() {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.len() - trimmed.len();
            assert_eq!(indent % 2, 0, "odd indent: {line:?}");
            let level = indent / 2;
            if expect_child {
                assert_eq!(level, stack.len(), "a mapping key needs children one level deeper: {line:?}");
            } else {
                assert!(level <= stack.len(), "unexpected indent: {line:?}");
            }
            stack.truncate(level);
            let (key, value) = trimmed.split_once(':').unwrap_or_else(|| panic!("no `key:` in {line:?}"));
            assert!(!key.is_empty() && !key.contains(' '), "bad key in {line:?}");
            let value = value.trim();
            if value.is_empty() {
                stack.push(key.to_string());
                expect_child = true;
            } else {
                let mut path = stack.clone();
                path.push(key.to_string());
                out.insert(path.join("."), value.to_string());
                expect_child = false;
            }
        }
        assert!(!expect_child, "a mapping key with no children at the end");
        out
    }

    /// Brackets, braces and parentheses balance outside string literals.
    fn balanced(text: &str) -> bool {
        let mut stack = Vec::new();
        let mut in_str: Option<char> = None;
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") || code.starts_with('#') {
                continue;
            }
            for ch in line.chars() {
                match (in_str, ch) {
                    (Some(q), c) if c == q => in_str = None,
                    (Some(_), _) => {}
                    (None, '"' | '\'') => in_str = Some(ch),
                    (None, '(' | '[' | '{') => stack.push(ch),
                    (None, ')') if stack.pop() != Some('(') => return false,
                    (None, ']') if stack.pop() != Some('[') => return false,
                    (None, '}') if stack.pop() != Some('{') => return false,
                    _ => {}
                }
            }
        }
        stack.is_empty() && in_str.is_none()
    }

    #[test]
    fn resilience4j_yaml_carries_every_value() {
        let c = cfg(
            "resilience4j-time",
            &[
                "sliding_window_size=20",
                "failure_rate_threshold=25.5",
                "exponential_backoff_multiplier=2",
                "wait_duration_in_open_state=1500ms",
            ],
        );
        let out = export(&c, Library::Resilience4j, "payments").unwrap();
        let m = yaml(&out);
        let p = |k: &str| m.get(&format!("resilience4j.circuitbreaker.instances.payments.{k}")).cloned();
        assert_eq!(p("slidingWindowType").as_deref(), Some("TIME_BASED"));
        assert_eq!(p("slidingWindowSize").as_deref(), Some("20"));
        assert_eq!(p("minimumNumberOfCalls").as_deref(), Some("100"));
        assert_eq!(p("failureRateThreshold").as_deref(), Some("25.5"));
        assert_eq!(p("slowCallRateThreshold").as_deref(), Some("100"));
        assert_eq!(p("slowCallDurationThreshold").as_deref(), Some("60s"));
        assert_eq!(p("permittedNumberOfCallsInHalfOpenState").as_deref(), Some("10"));
        assert_eq!(p("waitDurationInOpenState").as_deref(), Some("1500ms"));
        assert_eq!(p("enableExponentialBackoff").as_deref(), Some("true"));
        assert_eq!(p("exponentialBackoffMultiplier").as_deref(), Some("2"));
        assert_eq!(m.len(), 12);
        assert!(out.starts_with("# breakerlab export --as resilience4j of policy resilience4j-time["));
    }

    #[test]
    fn generic_exports_to_resilience4j_only_when_exact() {
        let ok = cfg(
            "windowed",
            &[
                "buckets=60",
                "close_rule=failure_rate",
                "probes=5",
                "probe_failure_rate=0.5",
                "min_calls=10",
                "half_open_transition=active",
            ],
        );
        let m = yaml(&export(&ok, Library::Resilience4j, "x").unwrap());
        assert_eq!(m["resilience4j.circuitbreaker.instances.x.slidingWindowType"], "TIME_BASED");
        assert_eq!(m["resilience4j.circuitbreaker.instances.x.slidingWindowSize"], "60");
        assert_eq!(m["resilience4j.circuitbreaker.instances.x.failureRateThreshold"], "50");
        assert_eq!(m["resilience4j.circuitbreaker.instances.x.slowCallDurationThreshold"], "86400s");
        let refused = |preset: &str, sets: &[&str], lib: Library, needle: &str| {
            let e = export(&cfg(preset, sets), lib, "x").unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        };
        refused(
            "windowed",
            &["latency_threshold=2s"],
            Library::Resilience4j,
            "no latency-percentile trip rule",
        );
        refused("windowed", &[], Library::Resilience4j, "one-second epoch buckets");
        refused("windowed", &["buckets=60"], Library::Resilience4j, "strictly after the wait");
        refused("consecutive", &[], Library::Resilience4j, "no consecutive-failure rule");
        refused("consecutive", &[], Library::Gobreaker, "start from the `gobreaker` preset");
        refused("connector-breaker", &[], Library::Polly, "connector (seed 000)");
        refused("polly", &[], Library::Resilience4j, "polly family is not resilience4j");
        refused("envoy-outlier", &["failure_on=error,timeout,rate_limited"], Library::Envoy, "5xx");
        refused("opossum", &["timeout=1500us"], Library::Opossum, "whole milliseconds");
    }

    #[test]
    fn polly_options_are_csharp_with_values() {
        let out =
            export(&cfg("polly", &["failure_ratio=0.25", "break_duration=1500ms"]), Library::Polly, "x")
                .unwrap();
        assert!(balanced(&out), "{out}");
        for needle in [
            "FailureRatio = 0.25,",
            "MinimumThroughput = 100,",
            "SamplingDuration = TimeSpan.FromSeconds(30),",
            "BreakDuration = TimeSpan.FromMilliseconds(1500),",
        ] {
            assert!(out.contains(needle), "{needle} in {out}");
        }
    }

    #[test]
    fn opossum_and_cockatiel_objects_balance_and_carry_values() {
        let out = export(&cfg("opossum", &["volume_threshold=10"]), Library::Opossum, "inventory").unwrap();
        assert!(balanced(&out), "{out}");
        for needle in [
            "timeout: 10000,",
            "resetTimeout: 30000,",
            "errorThresholdPercentage: 50,",
            "rollingCountTimeout: 10000,",
            "rollingCountBuckets: 10,",
            "volumeThreshold: 10,",
            "allowWarmUp: false,",
            "name: \"inventory\",",
        ] {
            assert!(out.contains(needle), "{needle} in {out}");
        }
        let out = export(&cfg("cockatiel-sampling", &["minimum_rps=2"]), Library::Cockatiel, "x").unwrap();
        assert!(balanced(&out), "{out}");
        assert!(
            out.contains("new SamplingBreaker({ threshold: 0.2, duration: 30000, minimumRps: 2 })"),
            "{out}"
        );
        assert!(out.contains("halfOpenAfter: 10000,"));
        let out = export(&cfg("cockatiel-count", &[]), Library::Cockatiel, "x").unwrap();
        assert!(out.contains("new CountBreaker({ threshold: 0.2, size: 100, minimumNumberOfCalls: 100 })"));
        let out =
            export(&cfg("cockatiel-consecutive", &["consecutive_threshold=3"]), Library::Cockatiel, "x")
                .unwrap();
        assert!(out.contains("breaker: new ConsecutiveBreaker(3),") && balanced(&out));
        let out = export(
            &cfg("cockatiel-consecutive", &["half_open_backoff=exponential"]),
            Library::Cockatiel,
            "x",
        )
        .unwrap();
        assert!(balanced(&out), "{out}");
        assert!(out.contains(
            "halfOpenAfter: new ExponentialBackoff({ initialDelay: 128, maxDelay: 30000, exponent: 2, generator: decorrelatedJitterGenerator }),"
        ));
        assert!(out.contains("ExponentialBackoff, decorrelatedJitterGenerator } from 'cockatiel';"));
    }

    #[test]
    fn python_and_go_calls_balance_and_carry_values() {
        let out = export(&cfg("pybreaker", &["reset_timeout=500ms"]), Library::Pybreaker, "db").unwrap();
        assert!(balanced(&out));
        assert!(
            out.contains("breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=0.5, name=\"db\")"),
            "{out}"
        );
        let out =
            export(&cfg("gobreaker", &["max_requests=3", "interval=1m"]), Library::Gobreaker, "db").unwrap();
        assert!(balanced(&out), "{out}");
        for needle in
            ["MaxRequests: 3,", "Interval:    1 * time.Minute,", "Timeout:     0,", "ConsecutiveFailures > 5"]
        {
            assert!(out.contains(needle), "{needle} in {out}");
        }
        let out = export(
            &cfg(
                "failsafe-go",
                &["failure_threshold=3", "failure_thresholding_capacity=5", "success_threshold=2"],
            ),
            Library::FailsafeGo,
            "x",
        )
        .unwrap();
        assert!(balanced(&out), "{out}");
        for needle in [
            "WithFailureThresholdRatio(3, 5).",
            "WithSuccessThresholdRatio(2, 2).",
            "WithDelay(1 * time.Minute).",
        ] {
            assert!(out.contains(needle), "{needle} in {out}");
        }
    }

    #[test]
    fn envoy_yaml_carries_values() {
        let out = export(&cfg("envoy-outlier", &["interval=500ms"]), Library::Envoy, "x").unwrap();
        let m = yaml(&out);
        assert_eq!(m["outlier_detection.consecutive_5xx"], "5");
        assert_eq!(m["outlier_detection.interval"], "0.5s");
        assert_eq!(m["outlier_detection.base_ejection_time"], "30s");
        assert_eq!(m["outlier_detection.max_ejection_time"], "300s");
    }

    #[test]
    fn every_library_exports_its_default_preset_and_names_parse() {
        for lib in Library::ALL {
            assert_eq!(Library::parse(lib.name()), Ok(lib));
            let out = export(&cfg(lib.default_preset(), &[]), lib, "svc").unwrap();
            assert!(out.contains("count as failures:"), "{}", lib.name());
        }
        let e = Library::parse("linkerd").unwrap_err().to_string();
        assert!(e.contains("linkerd") && e.contains("resilience4j, polly"), "{e}");
    }
}
