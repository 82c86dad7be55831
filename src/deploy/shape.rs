//! What any breaker configuration does, in the terms every library shares: when it trips (a
//! run of consecutive failures, a failure rate over a window of calls or of time), how long it
//! stays open, how many calls half-open admits and how many successes close it, plus the rules
//! of the original that these terms cannot carry. Read from a resolved configuration's
//! parameters (by family and parameter name), so no family has to know about it.

use crate::policy::PolicyConfig;
use crate::time::Dur;

/// The window a failure-rate rule is computed over.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Window {
    /// The last N calls.
    Calls(u32),
    /// The calls of the last span of time.
    Time(Dur),
}

/// A failure-rate trip rule: opens when failures / calls reaches `ratio` over `window`, once
/// it holds `min_calls` calls.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Rate {
    /// The failure ratio that trips, in (0, 1].
    pub ratio: f64,
    /// The window it is computed over.
    pub window: Window,
    /// Calls the window must hold before it decides.
    pub min_calls: u32,
}

/// A configuration in the terms every library shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Opens at this many consecutive failures.
    pub consecutive: Option<u32>,
    /// Opens at this failure rate.
    pub rate: Option<Rate>,
    /// Time open before half-open (or before the host returns).
    pub open: Dur,
    /// Calls half-open admits (0 = every call).
    pub probes: u32,
    /// Consecutive half-open successes that close.
    pub close_successes: u32,
    /// The original's rules and behaviours these terms do not carry, in words.
    pub dropped: Vec<String>,
}

/// A configuration's parameters by name, read in their file syntax.
struct Params {
    values: Vec<(String, String)>,
}

impl Params {
    fn text(&self, name: &str) -> &str {
        self.values.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }
    fn num(&self, name: &str) -> f64 {
        self.text(name).parse().unwrap_or(0.0)
    }
    fn count(&self, name: &str) -> u32 {
        self.num(name).max(0.0).min(f64::from(u32::MAX)) as u32
    }
    fn dur(&self, name: &str) -> Dur {
        Dur::parse(self.text(name)).unwrap_or(Dur::ZERO)
    }
    fn is(&self, name: &str, value: &str) -> bool {
        self.text(name) == value
    }
}

/// The shape of `cfg`, or why it has none (a policy that is not a breaker).
pub fn shape(cfg: &PolicyConfig) -> Result<Shape, String> {
    let p = Params { values: cfg.params() };
    let mut s = Shape {
        consecutive: None,
        rate: None,
        open: Dur::ZERO,
        probes: 1,
        close_successes: 1,
        dropped: vec![],
    };
    let positive = |n: u32| (n > 0).then_some(n);
    match cfg.family() {
        "generic" => generic(&p, &mut s),
        "connector" => {
            let rate = Rate {
                ratio: p.num("error_rate_open"),
                window: Window::Time(p.dur("window")),
                min_calls: p.count("min_samples"),
            };
            s.rate = Some(rate);
            if !p.dur("p95_open").is_zero() {
                s.dropped.push(format!("the p95 latency rule (opens at p95 >= {})", p.text("p95_open")));
            }
            s.dropped.push("the window is checked on every result, successes included".into());
            if !p.is("clear_window_on_close", "true") {
                s.dropped.push("the window is kept on closing (the outage's failures can reopen it)".into());
            }
            s.dropped.push("a bad result while open restarts the cooldown".into());
            s.open = p.dur("cooldown");
            s.probes = p.count("half_open_max_calls");
            s.close_successes = p.count("half_open_success");
        }
        "gate" => {
            s.consecutive = positive(p.count("max_failures"));
            s.dropped.push(format!(
                "{} failures within {} open it whatever successes come between (the nearest counts consecutive failures)",
                p.text("max_failures"),
                p.text("window")
            ));
            s.dropped.push(
                "a late result while open closes it at once (a late failure restarts the cooloff)".into(),
            );
            s.open = p.dur("cooloff");
        }
        "ai_service" => {
            s.consecutive = positive(p.count("failure_threshold"));
            s.open = p.dur("timeout_duration");
            s.probes = p.count("half_open_max_calls");
            s.close_successes = p.count("success_threshold");
            s.dropped.push(format!(
                "the call timeout of {} (signal.alarm, whole seconds)",
                p.text("call_timeout")
            ));
            s.dropped.push(
                "late successes while open count toward closing; half-open slots are freed only by successes"
                    .into(),
            );
        }
        "node" => {
            s.consecutive = positive(p.count("failure_threshold"));
            s.open = p.dur("cooldown");
            s.probes = 0;
            s.dropped.push(format!("the call timeout of {} (a call at or over it fails)", p.text("timeout")));
            s.dropped.push("a late failure while open restarts the cooldown".into());
        }
        "resilience4j" => {
            let window = if p.is("sliding_window_type", "time_based") {
                Window::Time(Dur::from_secs(u64::from(p.count("sliding_window_size"))))
            } else {
                Window::Calls(p.count("sliding_window_size"))
            };
            let rate = p.num("failure_rate_threshold") / 100.0;
            if rate <= 1.0 {
                s.rate = Some(Rate { ratio: rate, window, min_calls: p.count("minimum_number_of_calls") });
            }
            if p.num("slow_call_rate_threshold") < 100.0 {
                s.dropped.push(format!(
                    "the slow-call rule ({} % of calls slower than {})",
                    p.text("slow_call_rate_threshold"),
                    p.text("slow_call_duration_threshold")
                ));
            }
            if p.num("exponential_backoff_multiplier") > 1.0 {
                s.dropped.push(format!(
                    "the wait growing x{} on each reopen",
                    p.text("exponential_backoff_multiplier")
                ));
            }
            s.open = p.dur("wait_duration_in_open_state");
            s.probes = p.count("permitted_number_of_calls_in_half_open_state");
            s.close_successes = s.probes;
        }
        "polly" => {
            let window = Window::Time(p.dur("sampling_duration"));
            s.rate = Some(Rate {
                ratio: p.num("failure_ratio"),
                window,
                min_calls: p.count("minimum_throughput"),
            });
            s.open = p.dur("break_duration");
        }
        "hystrix" => {
            let window = Window::Time(p.dur("rolling_window"));
            let ratio = p.num("error_threshold_percentage") / 100.0;
            s.rate = Some(Rate { ratio, window, min_calls: p.count("request_volume_threshold") });
            s.dropped.push(format!(
                "decisions only at the {} health snapshots",
                p.text("health_snapshot_interval")
            ));
            if !p.dur("execution_timeout").is_zero() {
                s.dropped.push(format!("the execution timeout of {}", p.text("execution_timeout")));
            }
            s.open = p.dur("sleep_window");
        }
        "opossum" => {
            let window = Window::Time(p.dur("rolling_count_timeout"));
            let ratio = p.num("error_threshold_percentage") / 100.0;
            s.rate = Some(Rate { ratio, window, min_calls: p.count("volume_threshold") });
            s.dropped.push(format!("the call timeout of {}", p.text("timeout")));
            s.dropped
                .push("the rate strictly above the threshold, counting rejected and in-flight calls".into());
            s.open = p.dur("reset_timeout");
        }
        "cockatiel" => {
            match p.text("breaker") {
                "consecutive" => s.consecutive = positive(p.count("consecutive_threshold")),
                "count" => {
                    let size = p.count("size");
                    let min = match p.count("minimum_number_of_calls") {
                        0 => size,
                        n => n,
                    };
                    s.rate =
                        Some(Rate { ratio: p.num("threshold"), window: Window::Calls(size), min_calls: min });
                }
                _ => {
                    let d = p.dur("duration");
                    let rps = p.num("minimum_rps");
                    let min =
                        if rps > 0.0 { rps * d.as_secs_f64() } else { 5.0 / p.num("threshold").max(1e-9) };
                    let rate = Rate {
                        ratio: p.num("threshold"),
                        window: Window::Time(d),
                        min_calls: min.ceil() as u32,
                    };
                    s.rate = Some(rate);
                }
            }
            if p.is("half_open_backoff", "exponential") {
                s.dropped.push("the exponential half-open backoff".into());
            }
            s.open = p.dur("half_open_after");
        }
        "pybreaker" => {
            s.consecutive = positive(p.count("fail_max"));
            s.open = p.dur("reset_timeout");
            s.close_successes = p.count("success_threshold");
        }
        "circuitbreaker" => {
            s.consecutive = positive(p.count("failure_threshold"));
            s.open = p.dur("recovery_timeout");
            s.probes = 0;
        }
        "gobreaker" => {
            s.consecutive = Some(p.count("ready_to_trip_consecutive_failures") + 1);
            let timeout = p.dur("timeout");
            s.open = if timeout.is_zero() { Dur::from_secs(60) } else { timeout };
            s.probes = p.count("max_requests").max(1);
            s.close_successes = s.probes;
            if !p.dur("interval").is_zero() {
                s.dropped.push(format!("the closed-state counts cleared every {}", p.text("interval")));
            }
        }
        "failsafe" => failsafe(&p, &mut s),
        "finagle" => {
            s.consecutive = positive(p.count("consecutive_failures"));
            if p.num("success_rate") > 0.0 {
                let window = Window::Time(p.dur("success_rate_window"));
                let ratio = 1.0 - p.num("success_rate");
                s.rate = Some(Rate { ratio, window, min_calls: p.count("min_request_threshold") });
                s.dropped
                    .push("the success rate is an exponentially weighted average, not a window count".into());
            }
            s.open = p.dur("backoff_start");
            s.dropped.push(format!("the dead time grows (jittered) up to {}", p.text("backoff_max")));
        }
        "envoy" if p.is("implementation", "envoy") => {
            s.consecutive =
                positive(p.count("consecutive_5xx")).filter(|_| p.count("enforcing_consecutive_5xx") > 0);
            s.open = p.dur("base_ejection_time");
            s.probes = 0;
            s.dropped.push(format!(
                "returns only at the {} interval ticks; the ejection time grows per ejection",
                p.text("interval")
            ));
        }
        family => {
            return Err(format!("the {family} family ({}) has no breaker rule to carry over", cfg.preset()));
        }
    }
    if s.consecutive.is_none() && s.rate.is_none() {
        return Err(format!("policy `{}` has no trip rule on", cfg.label()));
    }
    Ok(s)
}

fn generic(p: &Params, s: &mut Shape) {
    s.consecutive = Some(p.count("failure_threshold")).filter(|n| *n > 0);
    let min = p.count("min_calls");
    if p.count("count_window") > 0 {
        let w = Window::Calls(p.count("count_window"));
        s.rate = Some(Rate { ratio: p.num("count_failure_rate"), window: w, min_calls: min });
    } else if !p.dur("time_window").is_zero() && p.num("failure_rate") > 0.0 {
        s.rate = Some(Rate {
            ratio: p.num("failure_rate"),
            window: Window::Time(p.dur("time_window")),
            min_calls: min,
        });
    }
    if p.count("window_failures") > 0 {
        let text = format!("{} failures within {}", p.text("window_failures"), p.text("failure_window"));
        if s.consecutive.is_none() && s.rate.is_none() {
            s.consecutive = Some(p.count("window_failures"));
            s.dropped.push(format!(
                "{text} open it whatever successes come between (the nearest counts consecutive failures)"
            ));
        } else {
            s.dropped.push(format!("the rule of {text}"));
        }
    }
    if p.num("slow_call_rate") > 0.0 {
        s.dropped.push(format!(
            "the slow-call rule ({} of calls slower than {})",
            p.text("slow_call_rate"),
            p.text("slow_call_duration")
        ));
    }
    if !p.dur("latency_threshold").is_zero() {
        s.dropped.push(format!(
            "the latency rule (p{} >= {})",
            p.num("latency_percentile") * 100.0,
            p.text("latency_threshold")
        ));
    }
    if p.is("comparison", ">") {
        s.dropped.push("trip rules compare strictly (>)".into());
    }
    if p.num("backoff_multiplier") > 1.0 {
        s.dropped.push(format!("the open duration growing x{} on each reopen", p.text("backoff_multiplier")));
    }
    if p.num("jitter") > 0.0 {
        s.dropped.push(format!("the open duration's jitter of {}", p.text("jitter")));
    }
    s.open = p.dur("open_duration");
    s.probes = p.count("probes");
    if p.is("close_rule", "successes") {
        s.close_successes = p.count("close_successes");
    } else {
        s.close_successes = s.probes.max(1);
        s.dropped
            .push(format!("half-open deciding on a probe failure rate of {}", p.text("probe_failure_rate")));
    }
}

fn failsafe(p: &Params, s: &mut Shape) {
    let period = p.dur("failure_thresholding_period");
    let rate_pct = p.num("failure_rate_threshold");
    if !period.is_zero() && rate_pct > 0.0 {
        let min = p.count("failure_execution_threshold");
        s.rate = Some(Rate { ratio: rate_pct / 100.0, window: Window::Time(period), min_calls: min });
    } else {
        let (n, cap) = (p.count("failure_threshold"), p.count("failure_thresholding_capacity"));
        let exec = p.count("failure_execution_threshold");
        let size = if exec > 0 { exec } else { cap };
        if n == size && exec == 0 {
            s.consecutive = Some(n);
        } else {
            let ratio = f64::from(n) / f64::from(size.max(1));
            s.rate = Some(Rate { ratio, window: Window::Calls(size), min_calls: exec.max(n) });
        }
    }
    s.open = p.dur("delay");
    let success = p.count("success_threshold");
    s.close_successes = success.max(1);
    s.probes = match p.count("success_thresholding_capacity") {
        0 => s.close_successes,
        n => n,
    };
}
