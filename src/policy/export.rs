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

use super::spec::{FamilyConfig, PolicyConfig};
use super::{CloseRule, Comparison, GenericConfig, HalfOpenTransition, LateResults};
use super::{CockatielConfig, EnvoyConfig, FailsafeConfig, GobreakerConfig, OpossumConfig};
use super::{PollyConfig, PybreakerConfig, Resilience4jConfig};
use crate::outcome::{OutcomeClass, Verdict};
use crate::time::Dur;
use std::fmt::Write as _;

/// A library `export` can write for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Library {
    /// Spring Boot `resilience4j.circuitbreaker.instances.<name>` YAML.
    Resilience4j,
    /// Polly v8 C# `CircuitBreakerStrategyOptions`.
    Polly,
    /// opossum options object (JavaScript).
    Opossum,
    /// cockatiel TypeScript `circuitBreaker(...)`.
    Cockatiel,
    /// pybreaker constructor call (Python).
    Pybreaker,
    /// gobreaker v2 `Settings` (Go).
    Gobreaker,
    /// failsafe-go circuit breaker builder (Go).
    FailsafeGo,
    /// Envoy cluster `outlier_detection` YAML.
    Envoy,
}

impl Library {
    /// Every library, in a fixed order.
    pub const ALL: [Library; 8] = [
        Library::Resilience4j,
        Library::Polly,
        Library::Opossum,
        Library::Cockatiel,
        Library::Pybreaker,
        Library::Gobreaker,
        Library::FailsafeGo,
        Library::Envoy,
    ];

    /// The name used with `--as`.
    pub fn name(self) -> &'static str {
        match self {
            Library::Resilience4j => "resilience4j",
            Library::Polly => "polly",
            Library::Opossum => "opossum",
            Library::Cockatiel => "cockatiel",
            Library::Pybreaker => "pybreaker",
            Library::Gobreaker => "gobreaker",
            Library::FailsafeGo => "failsafe-go",
            Library::Envoy => "envoy",
        }
    }

    /// Parses a `--as` value.
    pub fn parse(name: &str) -> Result<Library, ExportError> {
        Library::ALL.into_iter().find(|l| l.name() == name.trim()).ok_or_else(|| {
            ExportError::UnknownLibrary {
                name: name.to_string(),
                known: Library::ALL.iter().map(|l| l.name()).collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// The preset exported when no `--policy` is given.
    pub fn default_preset(self) -> &'static str {
        match self {
            Library::Resilience4j => "resilience4j-count",
            Library::Polly => "polly",
            Library::Opossum => "opossum",
            Library::Cockatiel => "cockatiel-consecutive",
            Library::Pybreaker => "pybreaker",
            Library::Gobreaker => "gobreaker",
            Library::FailsafeGo => "failsafe-go",
            Library::Envoy => "envoy-outlier",
        }
    }
}

/// Why a configuration cannot be exported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// `--as` named no known library.
    #[error("unknown library `{name}` for --as; known libraries: {known}")]
    UnknownLibrary {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The library cannot express the configuration.
    #[error("{library} cannot express policy `{label}`: {reason}")]
    Unsupported {
        /// The target library.
        library: &'static str,
        /// The policy's label (preset and overrides).
        label: String,
        /// What it lacks.
        reason: String,
    },
}

/// Writes `cfg` in `lib`'s syntax; `name` names the breaker instance where the syntax has one.
pub fn export(cfg: &PolicyConfig, lib: Library, name: &str) -> Result<String, ExportError> {
    let refuse =
        |reason: String| ExportError::Unsupported { library: lib.name(), label: cfg.label(), reason };
    let header = header(cfg, lib);
    match (lib, cfg.family_config()) {
        (Library::Resilience4j, FamilyConfig::Resilience4j(c)) => Ok(resilience4j(&header, name, c)),
        (Library::Resilience4j, FamilyConfig::Generic(g)) => {
            generic_to_r4j(g).map(|c| resilience4j(&header, name, &c)).map_err(refuse)
        }
        (Library::Polly, FamilyConfig::Polly(c)) => Ok(polly(&header, c)),
        (Library::Opossum, FamilyConfig::Opossum(c)) => opossum(&header, name, c).map_err(refuse),
        (Library::Cockatiel, FamilyConfig::Cockatiel(c)) => cockatiel(&header, c).map_err(refuse),
        (Library::Pybreaker, FamilyConfig::Pybreaker(c)) => Ok(pybreaker(&header, name, c)),
        (Library::Gobreaker, FamilyConfig::Gobreaker(c)) => Ok(gobreaker(&header, name, c)),
        (Library::FailsafeGo, FamilyConfig::Failsafe(c)) => Ok(failsafe(&header, c)),
        (Library::Envoy, FamilyConfig::Envoy(c)) => {
            let c5xx = [OutcomeClass::Error, OutcomeClass::Timeout];
            let classifier = cfg.classifier();
            let exact = OutcomeClass::ALL.iter().all(|&k| {
                let want = if c5xx.contains(&k) { Verdict::Failure } else { Verdict::Success };
                classifier.verdict(k) == want
            });
            if !exact {
                return Err(refuse(
                    "consecutive_5xx counts exactly the 5xx responses (errors and gateway timeouts) and every other response resets it; failure_on/ignore must be error,timeout / none".into(),
                ));
            }
            Ok(envoy(&header, c))
        }
        (_, FamilyConfig::Generic(_)) => Err(refuse(format!(
            "the generic family does not map exactly onto {} (trip timing, window alignment or late-result handling differ); start from the `{}` preset instead",
            lib.name(),
            lib.default_preset()
        ))),
        (_, other) => Err(refuse(format!(
            "the {} family is not {}'s state machine; start from the `{}` preset",
            family_name(other),
            lib.name(),
            lib.default_preset()
        ))),
    }
}

fn family_name(f: &FamilyConfig) -> &'static str {
    match f {
        FamilyConfig::None => "none (no breaker)",
        FamilyConfig::Connector(_) => "connector (seed 000)",
        FamilyConfig::Gate(_) => "gate (seed 001)",
        FamilyConfig::AiService(_) => "ai_service (seed 002)",
        FamilyConfig::Node(_) => "node (seed 003)",
        FamilyConfig::Hystrix(_) => "hystrix",
        FamilyConfig::Finagle(_) => "finagle",
        FamilyConfig::Throttle(_) => "sre-throttle",
        FamilyConfig::Resilience4j(_) => "resilience4j",
        FamilyConfig::Polly(_) => "polly",
        FamilyConfig::Opossum(_) => "opossum",
        FamilyConfig::Cockatiel(_) => "cockatiel",
        FamilyConfig::Pybreaker(_) => "pybreaker",
        FamilyConfig::Gobreaker(_) => "gobreaker",
        FamilyConfig::Failsafe(_) => "failsafe-go",
        FamilyConfig::Envoy(_) => "envoy",
        FamilyConfig::Generic(_) => "generic",
    }
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

fn commented(out: &mut String, marker: &str, header: &[String]) {
    for h in header {
        let _ = writeln!(out, "{marker} {h}");
    }
}

/// A float as configuration files write it: `50`, `12.5`, `0.1`.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

/// Spring Boot's single-unit duration: `60s`, `1500ms`, `250us`.
fn spring_duration(d: Dur) -> String {
    let us = d.micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// A protobuf Duration in YAML: `10s`, `0.500s`.
fn proto_duration(d: Dur) -> String {
    let us = d.micros();
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        format!("{s}s")
    } else {
        let f = format!("{frac:06}");
        format!("{s}.{}s", f.trim_end_matches('0'))
    }
}

/// A Go duration expression: `60 * time.Second`, `1500 * time.Millisecond`.
fn go_duration(d: Dur) -> String {
    let us = d.micros();
    if us == 0 {
        "0".into()
    } else if us.is_multiple_of(60_000_000) {
        format!("{} * time.Minute", us / 60_000_000)
    } else if us.is_multiple_of(1_000_000) {
        format!("{} * time.Second", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{} * time.Millisecond", us / 1000)
    } else {
        format!("{us} * time.Microsecond")
    }
}

/// A C# TimeSpan expression.
fn timespan(d: Dur) -> String {
    let us = d.micros();
    if us.is_multiple_of(1_000_000) {
        format!("TimeSpan.FromSeconds({})", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("TimeSpan.FromMilliseconds({})", us / 1000)
    } else {
        format!("TimeSpan.FromTicks({})", us * 10)
    }
}

/// Whole milliseconds for the JavaScript libraries.
fn js_ms(d: Dur, field: &str) -> Result<String, String> {
    let us = d.micros();
    if !us.is_multiple_of(1000) {
        return Err(format!("{field} takes whole milliseconds; {d} is not"));
    }
    Ok((us / 1000).to_string())
}

/// Python seconds: `60`, `0.5`.
fn py_seconds(d: Dur) -> String {
    let us = d.micros();
    if us.is_multiple_of(1_000_000) { (us / 1_000_000).to_string() } else { num(us as f64 / 1e6) }
}

fn resilience4j(header: &[String], name: &str, c: &Resilience4jConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let kind = match c.sliding_window_type {
        super::resilience4j::SlidingWindowType::CountBased => "COUNT_BASED",
        super::resilience4j::SlidingWindowType::TimeBased => "TIME_BASED",
    };
    let _ = writeln!(s, "resilience4j:");
    let _ = writeln!(s, "  circuitbreaker:");
    let _ = writeln!(s, "    instances:");
    let _ = writeln!(s, "      {name}:");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "        {k}: {v}");
    };
    kv("slidingWindowType", kind.into());
    kv("slidingWindowSize", c.sliding_window_size.to_string());
    kv("minimumNumberOfCalls", c.minimum_number_of_calls.to_string());
    kv("failureRateThreshold", num(c.failure_rate_threshold));
    kv("slowCallRateThreshold", num(c.slow_call_rate_threshold));
    kv("slowCallDurationThreshold", spring_duration(c.slow_call_duration_threshold));
    kv("permittedNumberOfCallsInHalfOpenState", c.permitted_number_of_calls_in_half_open_state.to_string());
    kv("waitDurationInOpenState", spring_duration(c.wait_duration_in_open_state));
    kv(
        "automaticTransitionFromOpenToHalfOpenEnabled",
        c.automatic_transition_from_open_to_half_open_enabled.to_string(),
    );
    kv("maxWaitDurationInHalfOpenState", spring_duration(c.max_wait_duration_in_half_open_state));
    if c.exponential_backoff_multiplier > 1.0 {
        kv("enableExponentialBackoff", "true".into());
        kv("exponentialBackoffMultiplier", num(c.exponential_backoff_multiplier));
        if !c.exponential_max_wait_duration_in_open_state.is_zero() {
            kv(
                "exponentialMaxWaitDurationInOpenState",
                spring_duration(c.exponential_max_wait_duration_in_open_state),
            );
        }
    }
    s
}

/// The generic family as Resilience4j, when it is exactly Resilience4j.
fn generic_to_r4j(g: &GenericConfig) -> Result<Resilience4jConfig, String> {
    if !g.latency_threshold.is_zero() {
        return Err(
            "it has no latency-percentile trip rule (only a slow-call rate over slowCallDurationThreshold)"
                .into(),
        );
    }
    if g.failure_threshold > 0 {
        return Err("it has no consecutive-failure rule (use count_window with count_failure_rate)".into());
    }
    if g.window_failures > 0 {
        return Err("it has no failures-within-a-time-window count rule".into());
    }
    if g.comparison != Comparison::AtLeast {
        return Err("its thresholds compare with >=, not >".into());
    }
    if g.jitter > 0.0 {
        return Err("its wait in open state has no jitter".into());
    }
    if g.late_results != LateResults::Count {
        return Err("it has no generation check: late results are always recorded".into());
    }
    if !g.clear_on_close {
        return Err("it starts a fresh window on every close".into());
    }
    let time_rules = g.failure_rate > 0.0 || g.slow_call_rate > 0.0;
    let (kind, size, failure_rate) = match (g.count_window > 0, time_rules) {
        (true, false) => {
            (super::resilience4j::SlidingWindowType::CountBased, g.count_window, g.count_failure_rate)
        }
        (false, true) => {
            let secs = g.time_window.micros() / 1_000_000;
            if !g.time_window.micros().is_multiple_of(1_000_000) || g.buckets as u64 != secs {
                return Err(format!(
                    "its time window is whole seconds in one-second epoch buckets: set buckets = {} with a whole-second time_window (exact windows are not expressible)",
                    secs.max(1)
                ));
            }
            (super::resilience4j::SlidingWindowType::TimeBased, secs as u32, g.failure_rate)
        }
        (true, true) => return Err("it has one window, count- or time-based, not both".into()),
        (false, false) => return Err("no rate rule is enabled".into()),
    };
    if kind == super::resilience4j::SlidingWindowType::CountBased && g.slow_call_rate > 0.0 {
        return Err("the slow-call rule must use the same window as the failure rate".into());
    }
    if g.half_open_transition != HalfOpenTransition::Active {
        return Err("its passive open -> half-open needs the clock strictly after the wait, the generic family's passive transition happens at it: set half_open_transition = \"active\" (automaticTransitionFromOpenToHalfOpenEnabled)".into());
    }
    if g.slow_call_rate > 0.0 {
        return Err(
            "its half-open state also applies the slow-call rate, the generic family's half-open does not"
                .into(),
        );
    }
    if g.probes == 0 {
        return Err("half-open always permits a fixed number of calls (probes must be at least 1)".into());
    }
    if g.close_rule != CloseRule::FailureRate {
        return Err(
            "half-open decides on the failure rate of its calls (close_rule = \"failure_rate\")".into()
        );
    }
    if g.probe_failure_rate != failure_rate {
        return Err("half-open reopens at the same failure rate threshold as closed".into());
    }
    if g.min_calls < g.probes {
        return Err(format!(
            "half-open decides after min(minimumNumberOfCalls, permitted) results: min_calls ({}) must be at least probes ({})",
            g.min_calls, g.probes
        ));
    }
    if failure_rate == 0.0 && kind == super::resilience4j::SlidingWindowType::CountBased {
        return Err("a count window needs count_failure_rate above 0".into());
    }
    let pct = |r: f64| if r > 0.0 { r * 100.0 } else { 100.0 };
    Ok(Resilience4jConfig {
        sliding_window_type: kind,
        sliding_window_size: size,
        minimum_number_of_calls: g.min_calls.max(1),
        failure_rate_threshold: pct(failure_rate),
        slow_call_rate_threshold: pct(g.slow_call_rate),
        // A disabled slow-call rule: 100 % of the calls slower than a day never happens.
        slow_call_duration_threshold: if g.slow_call_rate > 0.0 {
            g.slow_call_duration
        } else {
            Dur::from_secs(86_400)
        },
        permitted_number_of_calls_in_half_open_state: g.probes,
        wait_duration_in_open_state: g.open_duration,
        exponential_backoff_multiplier: g.backoff_multiplier,
        exponential_max_wait_duration_in_open_state: g.max_open_duration,
        automatic_transition_from_open_to_half_open_enabled: g.half_open_transition
            == HalfOpenTransition::Active,
        max_wait_duration_in_half_open_state: g.max_half_open,
    })
}

fn polly(header: &[String], c: &PollyConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "using Polly;");
    let _ = writeln!(s, "using Polly.CircuitBreaker;");
    let _ = writeln!(s);
    let _ = writeln!(s, "var options = new CircuitBreakerStrategyOptions");
    let _ = writeln!(s, "{{");
    let _ = writeln!(s, "    FailureRatio = {},", num(c.failure_ratio));
    let _ = writeln!(s, "    MinimumThroughput = {},", c.minimum_throughput);
    let _ = writeln!(s, "    SamplingDuration = {},", timespan(c.sampling_duration));
    let _ = writeln!(s, "    BreakDuration = {},", timespan(c.break_duration));
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "var pipeline = new ResiliencePipelineBuilder().AddCircuitBreaker(options).Build();");
    s
}

fn opossum(header: &[String], name: &str, c: &OpossumConfig) -> Result<String, String> {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "const CircuitBreaker = require('opossum');");
    let _ = writeln!(s);
    let _ = writeln!(s, "const options = {{");
    let _ = writeln!(s, "  name: {name:?},");
    let _ = writeln!(s, "  timeout: {},", js_ms(c.timeout, "timeout")?);
    let _ = writeln!(s, "  resetTimeout: {},", js_ms(c.reset_timeout, "resetTimeout")?);
    let _ = writeln!(s, "  errorThresholdPercentage: {},", num(c.error_threshold_percentage));
    let _ = writeln!(s, "  rollingCountTimeout: {},", js_ms(c.rolling_count_timeout, "rollingCountTimeout")?);
    let _ = writeln!(s, "  rollingCountBuckets: {},", c.rolling_count_buckets);
    let _ = writeln!(s, "  volumeThreshold: {},", c.volume_threshold);
    let _ = writeln!(s, "  allowWarmUp: {},", c.allow_warm_up);
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "const breaker = new CircuitBreaker(action, options);");
    Ok(s)
}

fn cockatiel(header: &[String], c: &CockatielConfig) -> Result<String, String> {
    use super::cockatiel::{CockatielBackoff, CockatielGenerator, CockatielKind};
    let mut s = String::new();
    commented(&mut s, "//", header);
    let (import, breaker) = match c.breaker {
        CockatielKind::Consecutive => {
            ("ConsecutiveBreaker", format!("new ConsecutiveBreaker({})", c.consecutive_threshold))
        }
        CockatielKind::Count => {
            let min = if c.minimum_number_of_calls == 0 { c.size } else { c.minimum_number_of_calls };
            (
                "CountBreaker",
                format!(
                    "new CountBreaker({{ threshold: {}, size: {}, minimumNumberOfCalls: {} }})",
                    num(c.threshold),
                    c.size,
                    min
                ),
            )
        }
        CockatielKind::Sampling => {
            let rps = if c.minimum_rps > 0.0 {
                format!(", minimumRps: {}", num(c.minimum_rps))
            } else {
                String::new()
            };
            (
                "SamplingBreaker",
                format!(
                    "new SamplingBreaker({{ threshold: {}, duration: {}{rps} }})",
                    num(c.threshold),
                    js_ms(c.duration, "duration")?
                ),
            )
        }
    };
    let (half_open_after, extra) = match c.half_open_backoff {
        CockatielBackoff::Constant => (js_ms(c.half_open_after, "halfOpenAfter")?, String::new()),
        CockatielBackoff::Exponential => {
            let generator = match c.generator {
                CockatielGenerator::Decorrelated => "decorrelatedJitterGenerator",
                CockatielGenerator::NoJitter => "noJitterGenerator",
                CockatielGenerator::FullJitter => "fullJitterGenerator",
                CockatielGenerator::HalfJitter => "halfJitterGenerator",
            };
            (
                format!(
                    "new ExponentialBackoff({{ initialDelay: {}, maxDelay: {}, exponent: {}, generator: {generator} }})",
                    js_ms(c.initial_delay, "initialDelay")?,
                    js_ms(c.max_delay, "maxDelay")?,
                    num(c.exponent)
                ),
                format!(", ExponentialBackoff, {generator}"),
            )
        }
    };
    let _ = writeln!(s, "import {{ circuitBreaker, handleAll, {import}{extra} }} from 'cockatiel';");
    let _ = writeln!(s);
    let _ = writeln!(s, "export const breaker = circuitBreaker(handleAll, {{");
    let _ = writeln!(s, "  halfOpenAfter: {half_open_after},");
    let _ = writeln!(s, "  breaker: {breaker},");
    let _ = writeln!(s, "}});");
    Ok(s)
}

fn pybreaker(header: &[String], name: &str, c: &PybreakerConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let _ = writeln!(s, "import pybreaker");
    let _ = writeln!(s);
    let mut args =
        vec![format!("fail_max={}", c.fail_max), format!("reset_timeout={}", py_seconds(c.reset_timeout))];
    if c.success_threshold != 1 {
        let _ = writeln!(s, "# success_threshold needs pybreaker >= 1.4");
        args.push(format!("success_threshold={}", c.success_threshold));
    }
    args.push(format!("name={name:?}"));
    let _ = writeln!(s, "breaker = pybreaker.CircuitBreaker({})", args.join(", "));
    if c.serialize {
        let _ = writeln!(s, "# use: breaker.call(func, ...)  (its lock serializes calls)");
    } else {
        let _ = writeln!(s, "# use: with breaker.calling(): ...  (no lock: calls overlap)");
    }
    s
}

fn gobreaker(header: &[String], name: &str, c: &GobreakerConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "// import \"github.com/sony/gobreaker/v2\"");
    let _ = writeln!(s, "cb := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{{");
    let _ = writeln!(s, "\tName:        {name:?},");
    let _ = writeln!(s, "\tMaxRequests: {},", c.max_requests);
    let _ = writeln!(s, "\tInterval:    {},", go_duration(c.interval));
    let _ = writeln!(s, "\tTimeout:     {},", go_duration(c.timeout));
    let _ = writeln!(s, "\tReadyToTrip: func(counts gobreaker.Counts) bool {{");
    let _ = writeln!(s, "\t\treturn counts.ConsecutiveFailures > {}", c.ready_to_trip_consecutive_failures);
    let _ = writeln!(s, "\t}},");
    let _ = writeln!(s, "}})");
    s
}

fn failsafe(header: &[String], c: &FailsafeConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "// import \"github.com/failsafe-go/failsafe-go/circuitbreaker\"");
    let _ = writeln!(s, "cb := circuitbreaker.Builder[any]().");
    let period = c.failure_thresholding_period;
    if period.is_zero() {
        let _ = writeln!(
            s,
            "\tWithFailureThresholdRatio({}, {}).",
            c.failure_threshold, c.failure_thresholding_capacity
        );
        if c.failure_execution_threshold != 0 {
            let _ = writeln!(s, "\tWithFailureExecutionThreshold({}).", c.failure_execution_threshold);
        }
    } else if c.failure_rate_threshold != 0 {
        let _ = writeln!(
            s,
            "\tWithFailureRateThreshold({}, {}, {}).",
            c.failure_rate_threshold,
            c.failure_execution_threshold,
            go_duration(period)
        );
    } else {
        // WithFailureThresholdPeriod also sets the execution threshold to the failure threshold.
        let _ =
            writeln!(s, "\tWithFailureThresholdPeriod({}, {}).", c.failure_threshold, go_duration(period));
        let _ = writeln!(s, "\tWithFailureExecutionThreshold({}).", c.failure_execution_threshold);
    }
    if c.success_threshold != 0 {
        let cap = if c.success_thresholding_capacity == 0 {
            c.success_threshold
        } else {
            c.success_thresholding_capacity
        };
        let _ = writeln!(s, "\tWithSuccessThresholdRatio({}, {}).", c.success_threshold, cap);
    }
    let _ = writeln!(s, "\tWithDelay({}).", go_duration(c.delay));
    let _ = writeln!(s, "\tBuild()");
    s
}

fn envoy(header: &[String], c: &EnvoyConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let _ = writeln!(s, "outlier_detection:");
    let _ = writeln!(s, "  consecutive_5xx: {}", c.consecutive_5xx);
    let _ = writeln!(s, "  interval: {}", proto_duration(c.interval));
    let _ = writeln!(s, "  base_ejection_time: {}", proto_duration(c.base_ejection_time));
    let _ = writeln!(s, "  max_ejection_time: {}", proto_duration(c.max_ejection_time));
    let _ = writeln!(s, "  enforcing_consecutive_5xx: 100");
    s
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
        let e = Library::parse("istio").unwrap_err().to_string();
        assert!(e.contains("istio") && e.contains("resilience4j, polly"), "{e}");
    }
}
