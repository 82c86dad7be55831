//! The nearest configuration a library can express: a configuration the library refuses is
//! read as its [`Shape`] (trip rule, open time, half-open) and rebuilt from the library's own
//! preset, with every difference listed in words. The result always exports: it is checked.

use super::shape::{Rate, Shape, Window, shape};
use crate::policy::export::{ExportError, Library, export};
use crate::policy::{PolicyConfig, PolicySpec};
use crate::time::Dur;

/// A configuration the library can express, standing in for one it cannot.
#[derive(Clone, Debug, PartialEq)]
pub struct Nearest {
    /// The library's preset with its overrides.
    pub spec: PolicySpec,
    /// The same, resolved.
    pub config: PolicyConfig,
    /// What the original does that this one does not, or does otherwise, in words.
    pub differences: Vec<String>,
}

/// `cfg` as `lib` can express it: `cfg` itself when it exports as is (no differences), else
/// the nearest configuration of `lib`'s own preset, or why there is none.
pub fn nearest(cfg: &PolicyConfig, spec: &PolicySpec, lib: Library) -> Result<Nearest, ExportError> {
    if export(cfg, lib, "x").is_ok() {
        return Ok(Nearest { spec: spec.clone(), config: cfg.clone(), differences: vec![] });
    }
    let refuse =
        |reason: String| ExportError::Unsupported { library: lib.name(), label: cfg.label(), reason };
    let s = shape(cfg).map_err(&refuse)?;
    let mut b = Build { sets: Vec::new(), notes: s.dropped.iter().map(|d| format!("drops: {d}")).collect() };
    let preset = b.library(lib, &s).map_err(&refuse)?;
    b.classifier(cfg, lib, preset);
    let mut out = PolicySpec::new(preset);
    for (k, v) in b.sets {
        out.overrides.insert(k, v);
    }
    let resolved =
        out.resolve().map_err(|e| refuse(format!("the nearest `{preset}` configuration is invalid: {e}")))?;
    export(&resolved, lib, "x")?;
    let mut differences =
        vec![format!("family: {} ({}) -> {} ({})", cfg.family(), cfg.preset(), resolved.family(), preset)];
    differences.extend(b.notes);
    Ok(Nearest { spec: out, config: resolved, differences })
}

/// The overrides being built and the notes on what they change.
struct Build {
    sets: Vec<(String, toml::Value)>,
    notes: Vec<String>,
}

fn dur(d: Dur) -> toml::Value {
    toml::Value::String(d.to_string())
}

fn int(n: u32) -> toml::Value {
    toml::Value::Integer(i64::from(n))
}

fn float(x: f64) -> toml::Value {
    toml::Value::Float(x)
}

/// A ratio rounded to 4 decimals (what a configuration file carries).
fn ratio4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

impl Build {
    fn set(&mut self, key: &str, value: toml::Value) {
        self.sets.push((key.to_string(), value));
    }

    fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// The rate rule to use: the shape's, else the consecutive rule as 100 % of the last N
    /// calls (the same trip while closed: N failures in a row are the last N calls failing).
    fn rate_or_run(&mut self, s: &Shape) -> Rate {
        match (s.rate, s.consecutive) {
            (Some(r), c) => {
                if let Some(n) = c {
                    self.note(format!("drops the rule of {n} consecutive failures (keeps the failure rate)"));
                }
                r
            }
            (None, Some(n)) => {
                self.note(format!(
                    "{n} consecutive failures -> a failure rate of 100 % over the last {n} calls"
                ));
                Rate { ratio: 1.0, window: Window::Calls(n), min_calls: n }
            }
            (None, None) => Rate { ratio: 1.0, window: Window::Calls(1), min_calls: 1 },
        }
    }

    /// A count of failures standing for the shape's trip rule (for the consecutive-only
    /// libraries): the consecutive rule, else the rate × minimum calls.
    fn run_or_rate(&mut self, s: &Shape) -> u32 {
        match (s.consecutive, s.rate) {
            (Some(n), r) => {
                if r.is_some() {
                    self.note("drops the failure-rate rule (keeps the consecutive failures)".into());
                }
                n
            }
            (None, Some(r)) => {
                let n = ((r.ratio * f64::from(r.min_calls.max(1))).ceil() as u32).max(1);
                self.note(format!(
                    "a failure rate of {} over {} ({} calls minimum) -> {n} consecutive failures",
                    ratio4(r.ratio),
                    window_words(r.window),
                    r.min_calls
                ));
                n
            }
            (None, None) => 1,
        }
    }

    fn half_open(&mut self, s: &Shape, library_probes: u32, what: &str) {
        let want = if s.probes == 0 { "every call".to_string() } else { s.probes.to_string() };
        if s.probes != library_probes {
            let have =
                if library_probes == 0 { "every call".to_string() } else { library_probes.to_string() };
            self.note(format!("half-open admits {have} ({what}) where the original admits {want}"));
        }
    }

    /// Sets `lib`'s preset parameters from `s`; returns the preset.
    fn library(&mut self, lib: Library, s: &Shape) -> Result<&'static str, String> {
        let open = s.open;
        Ok(match lib {
            Library::Resilience4j => {
                let r = self.rate_or_run(s);
                match r.window {
                    Window::Calls(n) => {
                        self.set("sliding_window_type", "count_based".into());
                        self.set("sliding_window_size", int(n));
                    }
                    Window::Time(d) => {
                        let secs = d.micros().div_ceil(1_000_000).max(1) as u32;
                        self.set("sliding_window_type", "time_based".into());
                        self.set("sliding_window_size", int(secs));
                        self.note(format!(
                            "a {d} time window -> {secs} epoch-aligned one-second buckets (spans {} to {secs} s)",
                            secs - 1
                        ));
                    }
                }
                self.set("minimum_number_of_calls", int(r.min_calls.max(1)));
                self.set("failure_rate_threshold", float(ratio4(r.ratio * 100.0)));
                self.set("wait_duration_in_open_state", dur(open));
                let probes = if s.probes == 0 { s.close_successes.max(1) } else { s.probes };
                self.set("permitted_number_of_calls_in_half_open_state", int(probes));
                self.half_open(s, probes, "permittedNumberOfCallsInHalfOpenState");
                if probes > 1 || s.close_successes > 1 {
                    self.note(format!(
                        "half-open closes when the failure rate of its {probes} calls stays under the threshold (not on {} consecutive successes)",
                        s.close_successes
                    ));
                }
                "resilience4j-count"
            }
            Library::Polly => {
                let r = self.rate_or_run(s);
                let sampling = match r.window {
                    Window::Time(d) => d,
                    Window::Calls(n) => {
                        self.note(format!(
                            "a window of the last {n} calls -> Polly's 30 s sampling duration (Polly has no count window)"
                        ));
                        Dur::from_secs(30)
                    }
                };
                self.set("failure_ratio", float(ratio4(r.ratio)));
                self.set("minimum_throughput", int(r.min_calls.max(2)));
                self.set("sampling_duration", dur(sampling));
                self.set("break_duration", dur(open));
                self.half_open(s, 1, "one probe");
                "polly"
            }
            Library::Opossum => {
                let r = self.rate_or_run(s);
                let window = match r.window {
                    Window::Time(d) => round_ms(d),
                    Window::Calls(n) => {
                        self.note(format!("a window of the last {n} calls -> opossum's 10 s rolling window"));
                        Dur::from_secs(10)
                    }
                };
                // Strictly above: the nearest percentage just under the ratio trips at it.
                let pct = ratio4(r.ratio * 100.0 - 0.01).max(0.0);
                self.note(format!(
                    "opossum trips strictly above {pct} % of fires (rejected and in-flight calls included)"
                ));
                self.set("error_threshold_percentage", float(pct));
                self.set("rolling_count_timeout", dur(window));
                self.set("volume_threshold", int(r.min_calls));
                self.set("reset_timeout", dur(round_ms(open)));
                self.note("opossum imposes its 10 s call timeout (a timeout is a failure)".into());
                self.half_open(s, 1, "one probe");
                "opossum"
            }
            Library::Cockatiel => {
                match (s.consecutive, s.rate) {
                    (Some(n), r) => {
                        if r.is_some() {
                            self.note("drops the failure-rate rule (keeps the consecutive failures)".into());
                        }
                        self.set("breaker", "consecutive".into());
                        self.set("consecutive_threshold", int(n));
                    }
                    (None, Some(r)) => {
                        let threshold = ratio4(r.ratio - 0.0001).clamp(0.0001, 0.9999);
                        self.note(format!(
                            "cockatiel trips when failures exceed {threshold} of the calls (strictly)"
                        ));
                        self.set("threshold", float(threshold));
                        match r.window {
                            Window::Calls(n) => {
                                self.set("breaker", "count".into());
                                self.set("size", int(n));
                                self.set("minimum_number_of_calls", int(r.min_calls.clamp(1, n)));
                            }
                            Window::Time(d) => {
                                let d = round_ms(d);
                                self.set("breaker", "sampling".into());
                                self.set("duration", dur(d));
                                let rps = ratio4(f64::from(r.min_calls.max(1)) / d.as_secs_f64().max(0.001));
                                self.set("minimum_rps", float(rps));
                                self.note(format!("{} calls minimum -> minimumRps {rps}", r.min_calls));
                            }
                        }
                    }
                    (None, None) => return Err("no trip rule".into()),
                }
                self.set("half_open_after", dur(round_ms(open)));
                self.half_open(s, 1, "one test call");
                "cockatiel-consecutive"
            }
            Library::Pybreaker => {
                let n = self.run_or_rate(s);
                self.set("fail_max", int(n));
                self.set("reset_timeout", dur(open));
                self.set("success_threshold", int(s.close_successes.max(1)));
                self.half_open(s, 1, "the trial call");
                "pybreaker"
            }
            Library::Gobreaker => {
                let n = self.run_or_rate(s);
                self.set("ready_to_trip_consecutive_failures", int(n.saturating_sub(1)));
                self.note(format!("ReadyToTrip opens at ConsecutiveFailures > {}", n.saturating_sub(1)));
                let timeout = if open.is_zero() { Dur::from_micros(1) } else { open };
                self.set("timeout", dur(timeout));
                let probes = if s.probes == 0 { s.close_successes.max(1) } else { s.probes };
                self.set("max_requests", int(probes));
                self.half_open(s, probes, "MaxRequests");
                if s.close_successes != probes {
                    self.note(format!(
                        "closes after MaxRequests = {probes} successes where the original closes after {}",
                        s.close_successes
                    ));
                }
                "gobreaker"
            }
            Library::FailsafeGo => {
                match (s.consecutive, s.rate) {
                    (Some(n), None) => {
                        self.set("failure_threshold", int(n));
                        self.set("failure_thresholding_capacity", int(n));
                    }
                    _ => {
                        let r = self.rate_or_run(s);
                        match r.window {
                            Window::Calls(n) => {
                                let k = ((r.ratio * f64::from(n)).ceil() as u32).clamp(1, n.max(1));
                                self.set("failure_threshold", int(k));
                                self.set("failure_thresholding_capacity", int(n.max(1)));
                                if f64::from(k) / f64::from(n.max(1)) != r.ratio {
                                    self.note(format!(
                                        "a failure rate of {} -> {k} of the last {n}",
                                        ratio4(r.ratio)
                                    ));
                                }
                                if r.min_calls > k && r.min_calls < n {
                                    self.note(format!(
                                        "no minimum of {} calls (failsafe-go decides on the whole window)",
                                        r.min_calls
                                    ));
                                }
                            }
                            Window::Time(d) => {
                                let pct = (r.ratio * 100.0).round().clamp(1.0, 100.0) as u32;
                                self.set("failure_thresholding_period", dur(d));
                                self.set("failure_rate_threshold", int(pct));
                                self.set("failure_execution_threshold", int(r.min_calls.max(1)));
                                self.note(format!(
                                    "10 buckets of {} from the closed state's start",
                                    dur(Dur::from_micros(d.micros() / 10))
                                ));
                            }
                        }
                    }
                }
                self.set("delay", dur(open));
                let close = s.close_successes.max(1);
                let probes = if s.probes == 0 { close } else { s.probes.max(close) };
                self.set("success_threshold", int(close));
                self.set("success_thresholding_capacity", int(probes));
                self.half_open(s, probes, "the success-thresholding capacity");
                "failsafe-go"
            }
            Library::Envoy | Library::Istio => {
                let n = self.run_or_rate(s);
                self.set("consecutive_5xx", int(n));
                let base = if lib == Library::Istio { round_ms(open) } else { open };
                self.set("base_ejection_time", dur(base));
                if base > Dur::from_secs(300) {
                    self.set("max_ejection_time", dur(base));
                }
                self.note(format!(
                    "the host returns to full traffic {} after ejection, at the first 10 s interval tick (no half-open)",
                    base
                ));
                self.note(
                    "the ejection time grows by the base on each consecutive ejection (up to 300 s)".into(),
                );
                if s.probes != 0 {
                    self.half_open(s, 0, "no half-open: full traffic");
                }
                if lib == Library::Istio { "istio-outlier" } else { "envoy-outlier" }
            }
            Library::Grpc => {
                return Err(
                    "gRPC's outlier detection ejects by success rate or failure percentage across a pool of hosts, \
                     and has no rule for one breaker to stand in for it: sweep the `grpc-outlier` preset"
                        .into(),
                );
            }
        })
    }

    /// Carries the classifier over (set only where `preset`'s differs); Envoy counts exactly
    /// the 5xx (errors and timeouts).
    fn classifier(&mut self, cfg: &PolicyConfig, lib: Library, preset: &str) {
        let classes = |c: &PolicyConfig| {
            let params = c.params();
            let get =
                |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
            (get("failure_on"), get("ignore"))
        };
        let (failures, ignored) = classes(cfg);
        let default = PolicySpec::new(preset).resolve().map(|d| classes(&d)).unwrap_or_default();
        if matches!(lib, Library::Envoy | Library::Istio) {
            let want = ("[\"error\", \"timeout\"]", "[]");
            if (default.0.as_str(), default.1.as_str()) != want {
                self.sets.push(("failure_on".into(), list(want.0)));
                self.sets.push(("ignore".into(), list(want.1)));
            }
            if (failures.as_str(), ignored.as_str()) != want {
                self.note(format!(
                    "counts the 5xx (error, timeout) as failures and nothing as ignored, where the original fails {failures} and ignores {ignored}"
                ));
            }
        } else {
            // One list left unset is derived from the other as the original's is.
            if failures != default.0 {
                self.sets.push(("failure_on".into(), list(&failures)));
            }
            if ignored != default.1 {
                self.sets.push(("ignore".into(), list(&ignored)));
            }
        }
    }
}

/// A list value in file syntax (`["error", "timeout"]`) as TOML.
fn list(text: &str) -> toml::Value {
    PolicySpec::parse_set(&format!("v={text}")).map(|(_, v)| v).unwrap_or(toml::Value::Array(vec![]))
}

/// `d` rounded up to whole milliseconds (the JavaScript libraries' unit).
fn round_ms(d: Dur) -> Dur {
    Dur::from_millis(d.micros().div_ceil(1000))
}

fn window_words(w: Window) -> String {
    match w {
        Window::Calls(n) => format!("the last {n} calls"),
        Window::Time(d) => format!("{d}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::presets;

    fn resolved(preset: &str, sets: &[&str]) -> (PolicyConfig, PolicySpec) {
        let s = crate::deploy::spec(preset, sets);
        (s.resolve().unwrap(), s)
    }

    #[test]
    fn every_seed_and_library_preset_has_a_nearest_in_every_library_but_grpc() {
        for p in presets() {
            if ["none", "sre-throttle", "grpc-outlier"].contains(&p.name) {
                continue;
            }
            let (cfg, spec) = resolved(p.name, &[]);
            for lib in Library::ALL.into_iter().filter(|l| *l != Library::Grpc) {
                let n =
                    nearest(&cfg, &spec, lib).unwrap_or_else(|e| panic!("{} -> {}: {e}", p.name, lib.name()));
                export(&n.config, lib, "x").unwrap();
                if !matches!(lib, Library::Envoy | Library::Istio) {
                    assert_eq!(n.config.classifier(), cfg.classifier(), "{} -> {}", p.name, lib.name());
                }
                let exact = export(&cfg, lib, "x").is_ok();
                assert_eq!(n.differences.is_empty(), exact, "{} -> {}", p.name, lib.name());
            }
        }
    }

    #[test]
    fn connector_to_resilience4j_keeps_the_rate_and_lists_what_it_drops() {
        let (cfg, spec) = resolved("connector-breaker", &[]);
        let n = nearest(&cfg, &spec, Library::Resilience4j).unwrap();
        assert_eq!(
            n.config.label(),
            "resilience4j-count[sliding_window_type=time_based,sliding_window_size=900,minimum_number_of_calls=8,\
             failure_rate_threshold=50.0,permitted_number_of_calls_in_half_open_state=3,wait_duration_in_open_state=5m]"
        );
        assert_eq!(n.config.classifier(), cfg.classifier());
        let text = n.differences.join("\n");
        assert!(
            text.starts_with("family: connector (connector-breaker) -> resilience4j (resilience4j-count)"),
            "{text}"
        );
        assert!(text.contains("drops: the p95 latency rule (opens at p95 >= 8s)"), "{text}");
        assert!(
            text.contains("a 15m time window -> 900 epoch-aligned one-second buckets (spans 899 to 900 s)"),
            "{text}"
        );
        assert!(text.contains("half-open admits 3 (permittedNumberOfCallsInHalfOpenState) where the original admits every call"), "{text}");
    }

    #[test]
    fn consecutive_becomes_a_full_count_window_or_a_consecutive_rule() {
        let (cfg, spec) = resolved("ai-service-breaker", &["failure_threshold=4"]);
        let r = nearest(&cfg, &spec, Library::Resilience4j).unwrap();
        let p = |n: &Nearest, k: &str| n.config.params().into_iter().find(|(name, _)| name == k).unwrap().1;
        assert_eq!(p(&r, "sliding_window_size"), "4");
        assert_eq!(p(&r, "minimum_number_of_calls"), "4");
        assert_eq!(p(&r, "failure_rate_threshold"), "100.0");
        assert!(
            r.differences
                .iter()
                .any(|d| d == "4 consecutive failures -> a failure rate of 100 % over the last 4 calls")
        );
        let g = nearest(&cfg, &spec, Library::Gobreaker).unwrap();
        assert_eq!(p(&g, "ready_to_trip_consecutive_failures"), "3");
        assert_eq!(p(&g, "max_requests"), "3");
        let e = nearest(&cfg, &spec, Library::Envoy).unwrap();
        assert_eq!(p(&e, "consecutive_5xx"), "4");
        assert!(
            e.differences.iter().any(|d| d.starts_with("counts the 5xx (error, timeout) as failures")),
            "{:?}",
            e.differences
        );
    }

    #[test]
    fn an_exact_configuration_is_its_own_nearest_and_grpc_or_none_is_refused() {
        let (cfg, spec) = resolved("resilience4j-time", &[]);
        let n = nearest(&cfg, &spec, Library::Resilience4j).unwrap();
        assert!(n.differences.is_empty() && n.spec == spec);
        let (cfg, spec) = resolved("consecutive", &[]);
        let e = nearest(&cfg, &spec, Library::Grpc).unwrap_err().to_string();
        assert!(
            e.contains("grpc cannot express policy `consecutive`: gRPC's outlier detection ejects"),
            "{e}"
        );
        let (cfg, spec) = resolved("none", &[]);
        let e = nearest(&cfg, &spec, Library::Polly).unwrap_err().to_string();
        assert_eq!(
            e,
            "polly cannot express policy `none`: the none family (none) has no breaker rule to carry over"
        );
    }
}
