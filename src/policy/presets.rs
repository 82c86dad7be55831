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
    /// The library and version it reproduces (empty for breakerlab's own and the seeds').
    pub library: &'static str,
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

static PRESETS: [PresetInfo; 21] = [
    PresetInfo {
        name: "none",
        family: "none",
        library: "",
        summary: "no breaker: every call is sent (the baseline to compare against)",
        source: "breakerlab (src/policy/mod.rs, NoBreaker)",
        quirks: &[],
    },
    PresetInfo {
        name: "consecutive",
        family: "generic",
        library: "",
        summary: "opens after 5 consecutive failures; open 30 s; one probe; one success closes",
        source: "breakerlab generic family (src/policy/generic.rs); the classic consecutive-count breaker (pybreaker, cockatiel ConsecutiveBreaker)",
        quirks: &[],
    },
    PresetInfo {
        name: "windowed",
        family: "generic",
        library: "",
        summary: "opens when failures are >= 50 % of at least 10 calls in the last 60 s; open 30 s; one probe",
        source: "breakerlab generic family (src/policy/generic.rs), exact time window",
        quirks: &[],
    },
    PresetInfo {
        name: "connector-breaker",
        family: "connector",
        library: "",
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
        library: "",
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
        library: "",
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
        library: "",
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
    PresetInfo {
        name: "resilience4j-count",
        family: "resilience4j",
        library: "Resilience4j 2.x (resilience4j-circuitbreaker)",
        summary: "Resilience4j 2.x defaults: failure rate >= 50 % (or slow-call rate >= 100 %) over the last 100 calls, 100 calls minimum; open 60 s; 10 half-open calls",
        source: R4J_SOURCE,
        quirks: R4J_QUIRKS,
    },
    PresetInfo {
        name: "resilience4j-time",
        family: "resilience4j",
        library: "Resilience4j 2.x (resilience4j-circuitbreaker)",
        summary: "Resilience4j 2.x defaults with a TIME_BASED window: 100 epoch-aligned 1 s buckets, 100 calls minimum (not clamped); open 60 s; 10 half-open calls",
        source: R4J_SOURCE,
        quirks: R4J_QUIRKS,
    },
    PresetInfo {
        name: "hystrix",
        family: "hystrix",
        library: "Hystrix 1.5.18 (hystrix-core)",
        summary: "Hystrix 1.5.18 defaults: every 500 ms, opens when >= 20 results in the last 10 s have an error % >= 50; sleep 5 s; one test request; 1 s execution timeout",
        source: "Netflix/Hystrix @ 001526b797310fa0b5befa767750cb20e82376a1, hystrix-core/src/main/java/com/netflix/hystrix/HystrixCircuitBreaker.java (+ HystrixCommandMetrics.HealthCounts, metric/consumer/HealthCountsStream.java)",
        quirks: &[
            "decides only at health snapshots every 500 ms (a burst of failures trips up to 500 ms late), modelled as timer events in simulation time",
            "error % is (int)((double) errors / total * 100): truncated, so 57 of 100 is 56 %",
            "the 20-call volume threshold applies to the whole 10 s window",
            "open -> half-open on the first call strictly after the sleep window; exactly one test request",
            "in half-open any success closes and any failure reopens, even from a call admitted before the trip",
            "closing resets the metrics stream: counts discarded and the 500 ms snapshot clock restarts at the close",
            "execution timeout 1 s is imposed on every call (set execution_timeout=0 to disable)",
        ],
    },
    PresetInfo {
        name: "opossum",
        family: "opossum",
        library: "opossum 10.x",
        summary: "opossum 10 defaults: on a failure, opens when failures / fires > 50 % over 10 s (10 buckets); a timer half-opens after 30 s; one probe; 10 s call timeout",
        source: "nodeshift/opossum 10.x, lib/circuit.js (fire, fail, _startTimer; copy read: index file 741075302) and lib/status.js @ 0045b3717a9bd3fa4bc60e20e3162edcc292e022",
        quirks: &[
            "strictly greater: exactly 50 % does not open",
            "fires counts every fire(): rejected calls and calls still in flight dilute the error rate",
            "volumeThreshold 0: one failure after idle opens it (opossum#232)",
            "only a failure can trip; a failure whose fire has rotated out divides by zero (Infinity) and trips",
            "stats are never reset: after closing, the outage's counts stay in the 10 s window",
            "half-open is active (a timer after resetTimeout); the first call is the probe, the rest are rejected",
            "in half-open any success closes and any failure reopens, whichever call it came from",
            "buckets rotate on a setInterval from the breaker's creation: modelled as buckets aligned on time zero",
            "timeout 10 s is imposed on every call; the action is not cancelled",
        ],
    },
    PresetInfo {
        name: "polly",
        family: "polly",
        library: "Polly 8.x (Polly.Core)",
        summary: "Polly v8 defaults: on a failure, opens when >= 100 calls in the last 30 s have a failure ratio >= 0.1; break 5 s; one probe",
        source: "App-vNext/Polly v8, src/Polly.Core/CircuitBreaker/Controller/CircuitStateController.cs @ 008b9524f9db83c76548247492282d08022913ba, Controller/AdvancedCircuitBehavior.cs and Health/RollingHealthMetrics.cs @ 13428cc098f863965c41737265597ab2ba5f16d6, CircuitBreakerConstants.cs @ 07124acf6b127192f687447b75cddf2b8c19b873",
        quirks: &[
            "the trip is checked only when a failure is recorded in Closed: a success never trips, even at the ratio",
            ">= for the ratio: exactly 0.1 opens",
            "10 sub-windows that start at their first event (not aligned); a sub-window leaves once SamplingDuration old",
            "metrics reset when the circuit closes, not when it opens",
            "half-open is passive: the first call after the break is the only probe; a probe that never returns leaves it half-open",
            "in half-open any success closes and any failure reopens, whichever call it came from (Polly#219)",
            "results arriving while open are counted but never extend the break",
            "no ignored outcome: what ShouldHandle does not handle is a success (classes in `ignore` count as successes)",
        ],
    },
    PresetInfo {
        name: "cockatiel-consecutive",
        family: "cockatiel",
        library: "cockatiel 3.2.1",
        summary: "cockatiel ConsecutiveBreaker(5): opens at the 5th failure in a row; halfOpenAfter 10 s (README); one test call",
        source: COCKATIEL_SOURCE,
        quirks: COCKATIEL_QUIRKS,
    },
    PresetInfo {
        name: "cockatiel-count",
        family: "cockatiel",
        library: "cockatiel 3.2.1",
        summary: "cockatiel CountBreaker({threshold: 0.2, size: 100}): opens when failures > 20 % of the last 100 calls (100 needed); halfOpenAfter 10 s",
        source: COCKATIEL_SOURCE,
        quirks: COCKATIEL_QUIRKS,
    },
    PresetInfo {
        name: "cockatiel-sampling",
        family: "cockatiel",
        library: "cockatiel 3.2.1",
        summary: "cockatiel SamplingBreaker({threshold: 0.2, duration: 30 s}): opens when failures > 20 % of >= 750 calls over 30 windows of 1 s; halfOpenAfter 10 s",
        source: COCKATIEL_SOURCE,
        quirks: COCKATIEL_QUIRKS,
    },
    PresetInfo {
        name: "pybreaker",
        family: "pybreaker",
        library: "pybreaker 1.4.1",
        summary: "pybreaker defaults: 5 failures (reset by any success) open it; reset_timeout 60 s; the next call is the trial; calls serialized by the breaker's lock",
        source: "danielfm/pybreaker tag v1.4.1 (faf54de652991899768d7075feab6fcc10b72ba7), src/pybreaker/__init__.py (CircuitBreaker.call, calling, open, close, CircuitBreakerState.call, generator_call, _handle_error, Circuit*State)",
        quirks: &[
            "call() holds the breaker's RLock for the whole call: concurrent calls wait for it in arrival order (the wait is part of their latency); serialize = false is `with breaker.calling():`, which runs the block outside the lock",
            "a result is handled by the state current when the call was admitted: a half-open admission's failure reopens, its success can close a circuit that reopened meanwhile; a failure while open restarts reset_timeout",
            "excluded errors count as successes and reset the failure counter (no 'ignored' outcome)",
            "opens when the counter reaches fail_max (>=); half-open at now >= opened_at + reset_timeout, on the next call",
            "the trial's failure reopens; success_threshold trial successes close (1 in the revision read)",
        ],
    },
    PresetInfo {
        name: "gobreaker",
        family: "gobreaker",
        library: "gobreaker v2",
        summary: "sony/gobreaker v2 defaults: opens at ConsecutiveFailures > 5 (the 6th); Timeout 60 s; MaxRequests 1 probe; counts never cleared while closed",
        source: "sony/gobreaker @ 0a18939f35cd354331b2f536acbcc56f734cbea5, v2/gobreaker.go (beforeRequest, afterRequest, currentState, toNewGeneration) and v2/counter.go",
        quirks: &[
            "ReadyToTrip default is ConsecutiveFailures > 5: six failures in a row, not five",
            "every state change (and every Interval end while closed) starts a new generation: results of calls admitted earlier are dropped",
            "Interval 0: closed-state counts are never cleared (only a success resets the consecutive count)",
            "half-open after the clock is strictly past opened + Timeout, on the next request",
            "half-open admits MaxRequests calls in total per episode; finished probes do not free slots; any failure reopens",
            "the rolling BucketPeriod window is not modelled",
        ],
    },
    PresetInfo {
        name: "failsafe-go",
        family: "failsafe",
        library: "failsafe-go (circuitbreaker package)",
        summary: "failsafe-go defaults: count-based, opens on 1 failure of the last 1; delay 1 minute; 1 half-open execution, its success closes (time-based rate thresholds available)",
        source: "failsafe-go/failsafe-go @ 0e452f4ad247f2e5cb4e65bc00ee3c553cb6e6d5, circuitbreaker/circuitstates.go and circuitbreaker/circuitbreakerbuilder.go; circuitbreaker/circuitstats.go @ 19dfc0d31d1dcbe23ee6d009930206285d2083e7",
        quirks: &[
            "the default opens on the first failure (threshold 1 of 1)",
            "a ratio n of m has no minimum: n failures in the first n calls open it",
            "half-open permits capacity executions and frees a permit after each result",
            "without a success threshold, half-open closes at successes > capacity - failure_threshold",
            "no generation check: a late result is counted in the current state and frees a half-open permit",
            "no ignored outcome: an unhandled result is recorded as a success (classes in `ignore` count as successes)",
            "time-based thresholds: 10 buckets of period / 10 on a grid from the closed state's start, rolled only when a result is recorded; rates are rounded percentages (math.Round), compared with >=",
            "delay functions (WithDelayFn) are not modelled",
        ],
    },
    PresetInfo {
        name: "finagle",
        family: "finagle",
        library: "Finagle (finagle-core liveness)",
        summary: "Finagle FailureAccrual default: EMA success rate < 0.8 over 30 s (5 requests min) or 5 consecutive failures mark dead for an equal-jittered 5 s..300 s; one probe",
        source: "twitter/finagle, finagle-core/src/main/scala/com/twitter/finagle/liveness/FailureAccrualFactory.scala (copy read: index file 3128568080) and FailureAccrualPolicy.scala @ 06ace3be6feaac3013375503a8930fc337021d2f",
        quirks: &[
            "the success rate is an exponentially weighted moving average over time, not a window count",
            "no success-rate decision in the first 30 s after start or after a revival",
            "the dead time is an equal-jittered backoff (5 s, then 5-10 s, 10-20 s, ... capped at 300 s) drawn from the build seed; it restarts on revival",
            "dead -> probing by a timer; one probe; a probe failure the policy does not act on returns to probing",
            "results arriving while dead are ignored, except successes, which always feed the policy",
            "Finagle fails open (a lone endpoint is still used); modelled as rejection, as the load balancer sees it",
        ],
    },
    PresetInfo {
        name: "envoy-outlier",
        family: "envoy",
        library: "Envoy (config.cluster.v3 API)",
        summary: "Envoy outlier detection: 5 consecutive 5xx eject the host for 30 s x consecutive ejections (max 300 s), checked every 10 s; automatic return",
        source: "envoyproxy/data-plane-api, envoy/config/cluster/v3/outlier_detection.proto; envoyproxy/envoy source/common/upstream/outlier_detection_impl.cc (DetectorImpl::checkHostForUneject; copy read: index file 114077890)",
        quirks: &[
            "only 5xx count: 429 and other 4xx reset the consecutive counter (classifier: rate_limited and client_error are successes)",
            "the host returns at the first 10 s interval tick after its ejection time, not at the exact instant",
            "ejection time = min(base x multiplier, max); the multiplier grows by one per ejection while multiplier x base < max + base (so up to 11 with the defaults) and drops by one per healthy interval",
            "no half-open: the host returns to full traffic; no probe limit",
            "success-rate and failure-percentage ejection compare hosts of a cluster: not modelled for one host",
        ],
    },
    PresetInfo {
        name: "sre-throttle",
        family: "throttle",
        library: "Google SRE book, 2016",
        summary: "Google SRE client-side adaptive throttling: reject with probability max(0, (requests - 2 accepts) / (requests + 1)) over 2 minutes",
        source: "Site Reliability Engineering (O'Reilly 2016), ch. 21 Handling Overload, Client-Side Throttling; ../shared/PRESETS.md",
        quirks: &[
            "not a breaker: it rejects a fraction of calls, drawn from the build seed, whenever requests exceed K x accepts",
            "requests count locally rejected attempts too, so the probability keeps rising while the backend fails",
            "reported state: open while the probability is above zero, closed otherwise; never half-open",
            "history in 120 epoch-aligned 1 s buckets",
        ],
    },
    // @@PRESETS@@
];

const R4J_SOURCE: &str = "resilience4j/resilience4j @ 1a4a71641b064ea1b7eacfb303d865ef6ec5c064, resilience4j-circuitbreaker/src/main/java/io/github/resilience4j/circuitbreaker/internal/CircuitBreakerStateMachine.java and CircuitBreakerMetrics.java; resilience4j-core/.../metrics/SlidingTimeWindowMetrics.java (resilience4j 2.x)";
const R4J_QUIRKS: &[&str] = &[
    "evaluated on every recorded result, success or failure; >= for both rates (float percentages)",
    "count_based clamps minimum_number_of_calls to the window size; time_based does not (a 10 s window with minimum 100 needs 100 calls in it)",
    "time_based buckets are epoch-aligned whole seconds: the window spans between size - 1 and size seconds",
    "slow = duration strictly above slow_call_duration_threshold, failures included",
    "open -> half-open on the first call strictly after the wait (isAfter), or by a timer exactly at it when automatic",
    "half-open decides as soon as min(minimum_number_of_calls, permitted) results are in, not after all permitted calls (resilience4j#1523)",
    "late results are not generation-checked: a call admitted while closed that ends in half-open is a probe result",
    "an ignored result releases a half-open permission even when its call was admitted before half-open",
    "the wait grows only on half-open -> open (attempts + 1) with an exponential interval function; a fresh window on closing",
];

const COCKATIEL_SOURCE: &str = "connor4312/cockatiel tag v3.2.1 (32a70686ef3470f6c94c1325fbc7982d582b8432), src/CircuitBreakerPolicy.ts (execute, halfOpen, open, close), src/breaker/ConsecutiveBreaker.ts, CountBreaker.ts, SamplingBreaker.ts (push, rotateWindow, resetWindows), src/backoff/ExponentialBackoff.ts and ExponentialBackoffGenerators.ts";
const COCKATIEL_QUIRKS: &[&str] = &[
    "halfOpenAfter has no library default: 10 s as in the README; half_open_backoff = exponential reproduces ExponentialBackoff (128 ms, 30 s, exponent 2, decorrelated jitter from the build seed), advanced on each reopen and restarted on closing",
    "a call reports its result with the state it started in: a late failure of a closed-state call can reopen a half-open circuit",
    "ConsecutiveBreaker's count is not reset on opening (>= threshold); count and sampling use strictly greater than threshold * total",
    "CountBreaker needs minimumNumberOfCalls (default size) results; a half-open success clears its ring",
    "SamplingBreaker recycles one window per result: after an idle spell old windows keep their counts until overwritten",
    "SamplingBreaker's default minimumRps is 5 / threshold: with 0.2 over 30 s it needs 750 calls",
    "calls arriving during the half-open test wait for it: they run if it closed the circuit and are rejected if it reopened it (the wait is part of their latency)",
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
                "gobreaker",
                "failsafe-go",
                "finagle",
                "envoy-outlier",
                "sre-throttle",
            ]
        );
        for p in presets() {
            assert!(FamilyConfig::preset_default(p.name).is_some(), "{}", p.name);
            if p.name.ends_with("breaker") && p.family != "pybreaker" && p.family != "gobreaker"
                || p.name == "circuit-gate"
            {
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
