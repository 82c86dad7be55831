//! Reads a library configuration back into a policy: the inverse of `export` for the
//! application libraries and Envoy's `outlier_detection`, so a checks file can name the file
//! that is deployed rather than a preset. The text is read as `export --as LIB` writes it (the
//! values, not its header's label; the header's `count as failures: ...; ignore: ...` line,
//! when present, gives the classifier). A value it cannot read is refused naming the field.

use crate::policy::PolicySpec;
use crate::policy::export::Library;
use crate::time::Dur;
use regex::Regex;

/// The libraries whose files can be read back: every library but Istio and gRPC (the last two
/// of [`Library::ALL`]).
pub fn readable() -> &'static [Library] {
    &Library::ALL[..Library::ALL.len() - 2]
}

/// The policy `text` (a `lib` configuration) describes, or what is missing or unreadable.
pub fn import(text: &str, lib: Library) -> Result<PolicySpec, String> {
    let mut r = Reader { text, spec: PolicySpec::new(lib.default_preset()), lib };
    match lib {
        Library::Resilience4j => r.resilience4j()?,
        Library::Polly => r.polly()?,
        Library::Opossum => r.opossum()?,
        Library::Cockatiel => r.cockatiel()?,
        Library::Pybreaker => r.pybreaker()?,
        Library::Gobreaker => r.gobreaker()?,
        Library::FailsafeGo => r.failsafe()?,
        Library::Envoy => r.envoy()?,
        other => {
            let names: Vec<&str> = readable().iter().map(|l| l.name()).collect();
            return Err(format!(
                "reading a {} file back is not supported; readable: {} (name the preset in [policy] instead)",
                other.name(),
                names.join(", ")
            ));
        }
    }
    r.classifier()?;
    Ok(r.spec)
}

struct Reader<'a> {
    text: &'a str,
    spec: PolicySpec,
    lib: Library,
}

fn re(pattern: &str) -> Regex {
    // The patterns are literals of this module, each tested.
    Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| unreachable!()))
}

impl Reader<'_> {
    /// The code lines (comments dropped).
    fn code(&self) -> String {
        self.text
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                !(t.starts_with('#') || t.starts_with("//"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The value written after `key` by `pattern` (`{k}` stands for the key), or a refusal.
    fn find(&self, pattern: &str, key: &str) -> Result<String, String> {
        let code = self.code();
        let p = pattern.replace("{k}", &regex::escape(key));
        re(&p)
            .captures(&code)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().trim().to_string())
            .ok_or_else(|| format!("no `{key}` in this {} configuration", self.lib.name()))
    }

    fn optional(&self, pattern: &str, key: &str) -> Option<String> {
        self.find(pattern, key).ok()
    }

    fn set(&mut self, param: &str, value: toml::Value) {
        self.spec.overrides.insert(param.to_string(), value);
    }

    fn int(&mut self, param: &str, key: &str, text: &str) -> Result<(), String> {
        let n: i64 = text.parse().map_err(|_| format!("`{key}`: expected a whole number, found {text:?}"))?;
        self.set(param, toml::Value::Integer(n));
        Ok(())
    }

    fn float(&mut self, param: &str, key: &str, text: &str) -> Result<(), String> {
        let x: f64 = text.parse().map_err(|_| format!("`{key}`: expected a number, found {text:?}"))?;
        self.set(param, toml::Value::Float(x));
        Ok(())
    }

    fn boolean(&mut self, param: &str, key: &str, text: &str) -> Result<(), String> {
        let b = match text {
            "true" | "True" => true,
            "false" | "False" => false,
            _ => return Err(format!("`{key}`: expected true or false, found {text:?}")),
        };
        self.set(param, toml::Value::Boolean(b));
        Ok(())
    }

    fn duration(&mut self, param: &str, d: Dur) {
        self.set(param, toml::Value::String(d.to_string()));
    }

    /// `count as failures: a, b; ignore: c` from the header, when there is one.
    fn classifier(&mut self) -> Result<(), String> {
        let caps = re(r"count as failures: ([^;]*); ignore: ([^;\n]*);").captures(self.text);
        let Some(c) = caps else { return Ok(()) };
        let list = |s: &str| -> toml::Value {
            let items = s.split(',').map(str::trim).filter(|x| !x.is_empty() && *x != "none");
            toml::Value::Array(items.map(|x| toml::Value::String(x.to_string())).collect())
        };
        let (f, i) = (list(&c[1]), list(&c[2]));
        self.set("failure_on", f);
        self.set("ignore", i);
        Ok(())
    }

    fn resilience4j(&mut self) -> Result<(), String> {
        const YAML: &str = r"(?m)^\s*{k}:\s*(\S+)\s*$";
        let kind = self.find(YAML, "slidingWindowType")?;
        let kind = match kind.as_str() {
            "COUNT_BASED" => "count_based",
            "TIME_BASED" => "time_based",
            other => {
                return Err(format!(
                    "`slidingWindowType`: expected COUNT_BASED or TIME_BASED, found {other:?}"
                ));
            }
        };
        self.set("sliding_window_type", kind.into());
        for (key, param) in [
            ("slidingWindowSize", "sliding_window_size"),
            ("minimumNumberOfCalls", "minimum_number_of_calls"),
            ("permittedNumberOfCallsInHalfOpenState", "permitted_number_of_calls_in_half_open_state"),
        ] {
            let v = self.find(YAML, key)?;
            self.int(param, key, &v)?;
        }
        for (key, param) in [
            ("failureRateThreshold", "failure_rate_threshold"),
            ("slowCallRateThreshold", "slow_call_rate_threshold"),
        ] {
            let v = self.find(YAML, key)?;
            self.float(param, key, &v)?;
        }
        for (key, param, required) in [
            ("slowCallDurationThreshold", "slow_call_duration_threshold", true),
            ("waitDurationInOpenState", "wait_duration_in_open_state", true),
            ("maxWaitDurationInHalfOpenState", "max_wait_duration_in_half_open_state", false),
            ("exponentialMaxWaitDurationInOpenState", "exponential_max_wait_duration_in_open_state", false),
        ] {
            let v = if required { Some(self.find(YAML, key)?) } else { self.optional(YAML, key) };
            if let Some(v) = v {
                let d = Dur::parse(&v).map_err(|e| format!("`{key}`: {e}"))?;
                self.duration(param, d);
            }
        }
        if let Some(v) = self.optional(YAML, "automaticTransitionFromOpenToHalfOpenEnabled") {
            self.boolean(
                "automatic_transition_from_open_to_half_open_enabled",
                "automaticTransitionFromOpenToHalfOpenEnabled",
                &v,
            )?;
        }
        if self.optional(YAML, "enableExponentialBackoff").as_deref() == Some("true") {
            let v = self.find(YAML, "exponentialBackoffMultiplier")?;
            self.float("exponential_backoff_multiplier", "exponentialBackoffMultiplier", &v)?;
        }
        Ok(())
    }

    fn polly(&mut self) -> Result<(), String> {
        const CS: &str = r"(?m)^\s*{k}\s*=\s*(.+?),?\s*$";
        let v = self.find(CS, "FailureRatio")?;
        self.float("failure_ratio", "FailureRatio", &v)?;
        let v = self.find(CS, "MinimumThroughput")?;
        self.int("minimum_throughput", "MinimumThroughput", &v)?;
        for (key, param) in [("SamplingDuration", "sampling_duration"), ("BreakDuration", "break_duration")] {
            let v = self.find(CS, key)?;
            self.duration(param, timespan(&v).map_err(|e| format!("`{key}`: {e}"))?);
        }
        Ok(())
    }

    fn opossum(&mut self) -> Result<(), String> {
        const JS: &str = r"(?m)^\s*{k}:\s*([^,]+),?\s*$";
        for (key, param) in [
            ("timeout", "timeout"),
            ("resetTimeout", "reset_timeout"),
            ("rollingCountTimeout", "rolling_count_timeout"),
        ] {
            let v = self.find(JS, key)?;
            self.duration(param, millis(&v).map_err(|e| format!("`{key}`: {e}"))?);
        }
        let v = self.find(JS, "errorThresholdPercentage")?;
        self.float("error_threshold_percentage", "errorThresholdPercentage", &v)?;
        for (key, param) in
            [("rollingCountBuckets", "rolling_count_buckets"), ("volumeThreshold", "volume_threshold")]
        {
            let v = self.find(JS, key)?;
            self.int(param, key, &v)?;
        }
        let v = self.find(JS, "allowWarmUp")?;
        self.boolean("allow_warm_up", "allowWarmUp", &v)
    }

    fn cockatiel(&mut self) -> Result<(), String> {
        const INNER: &str = r"\b{k}:\s*([^,}\s]+)";
        let kind = self.find(r"new (\w+)Breaker\(", "Breaker")?;
        let fields = self.find(r"new \w+Breaker\(([^)]*)\)", "Breaker")?;
        let inner = |key: &str| -> Result<String, String> {
            re(&INNER.replace("{k}", key))
                .captures(&fields)
                .map(|c| c[1].to_string())
                .ok_or_else(|| format!("no `{key}` in the {kind}Breaker"))
        };
        match kind.as_str() {
            "Consecutive" => {
                self.set("breaker", "consecutive".into());
                self.int("consecutive_threshold", "ConsecutiveBreaker", fields.trim())?;
            }
            "Count" => {
                self.set("breaker", "count".into());
                self.float("threshold", "threshold", &inner("threshold")?)?;
                let (size, min) = (inner("size")?, inner("minimumNumberOfCalls")?);
                self.int("size", "size", &size)?;
                // The exporter writes the size for `0 = size`: read it back in that form.
                let min = if min == size { "0".to_string() } else { min };
                self.int("minimum_number_of_calls", "minimumNumberOfCalls", &min)?;
            }
            "Sampling" => {
                self.set("breaker", "sampling".into());
                self.float("threshold", "threshold", &inner("threshold")?)?;
                let d = millis(&inner("duration")?).map_err(|e| format!("`duration`: {e}"))?;
                self.duration("duration", d);
                if let Ok(rps) = inner("minimumRps") {
                    self.float("minimum_rps", "minimumRps", &rps)?;
                }
            }
            other => {
                return Err(format!(
                    "`{other}Breaker`: expected ConsecutiveBreaker, CountBreaker or SamplingBreaker"
                ));
            }
        }
        let after = self.find(r"(?m)^\s*{k}:\s*(.+?),?\s*$", "halfOpenAfter")?;
        if let Some(b) = re(r"new ExponentialBackoff\(\{([^}]*)\}\)").captures(&after) {
            let b = b[1].to_string();
            let get = |key: &str| -> Result<String, String> {
                re(&INNER.replace("{k}", key))
                    .captures(&b)
                    .map(|c| c[1].to_string())
                    .ok_or_else(|| format!("no `{key}` in the ExponentialBackoff"))
            };
            self.set("half_open_backoff", "exponential".into());
            self.duration(
                "initial_delay",
                millis(&get("initialDelay")?).map_err(|e| format!("`initialDelay`: {e}"))?,
            );
            self.duration("max_delay", millis(&get("maxDelay")?).map_err(|e| format!("`maxDelay`: {e}"))?);
            self.float("exponent", "exponent", &get("exponent")?)?;
            let generator = match get("generator")?.as_str() {
                "decorrelatedJitterGenerator" => "decorrelated",
                "noJitterGenerator" => "no_jitter",
                "fullJitterGenerator" => "full_jitter",
                "halfJitterGenerator" => "half_jitter",
                other => return Err(format!("`generator`: unknown generator {other:?}")),
            };
            self.set("generator", generator.into());
        } else {
            self.duration("half_open_after", millis(&after).map_err(|e| format!("`halfOpenAfter`: {e}"))?);
        }
        Ok(())
    }

    fn pybreaker(&mut self) -> Result<(), String> {
        let args = self.find(r"pybreaker\.CircuitBreaker\(([^)]*)\)", "pybreaker.CircuitBreaker")?;
        let arg =
            |key: &str| re(&format!(r"\b{key}\s*=\s*([^,\s]+)")).captures(&args).map(|c| c[1].to_string());
        let fail_max = arg("fail_max").ok_or("no `fail_max` in pybreaker.CircuitBreaker(...)")?;
        self.int("fail_max", "fail_max", &fail_max)?;
        let reset = arg("reset_timeout").ok_or("no `reset_timeout` in pybreaker.CircuitBreaker(...)")?;
        let secs: f64 =
            reset.parse().map_err(|_| format!("`reset_timeout`: expected seconds, found {reset:?}"))?;
        self.duration("reset_timeout", Dur::from_secs_f64(secs));
        if let Some(n) = arg("success_threshold") {
            self.int("success_threshold", "success_threshold", &n)?;
        }
        // How the breaker is called decides whether its lock serialises calls.
        let serialize = !self.text.contains("breaker.calling()");
        self.set("serialize", toml::Value::Boolean(serialize));
        Ok(())
    }

    fn gobreaker(&mut self) -> Result<(), String> {
        const GO: &str = r"(?m)^\s*{k}:\s*(.+?),\s*$";
        let v = self.find(GO, "MaxRequests")?;
        self.int("max_requests", "MaxRequests", &v)?;
        for (key, param) in [("Interval", "interval"), ("Timeout", "timeout")] {
            let v = self.find(GO, key)?;
            self.duration(param, go_duration(&v).map_err(|e| format!("`{key}`: {e}"))?);
        }
        let n = self.find(r"counts\.{k} > (\d+)", "ConsecutiveFailures")?;
        self.int("ready_to_trip_consecutive_failures", "ConsecutiveFailures", &n)
    }

    fn failsafe(&mut self) -> Result<(), String> {
        const CALL: &str = r"\.\s*{k}\(([^)]*)\)";
        let args = |s: &str| s.split(',').map(|x| x.trim().to_string()).collect::<Vec<_>>();
        if let Some(a) = self.optional(CALL, "WithFailureThresholdRatio") {
            let a = args(&a);
            let [n, cap] = a.as_slice() else {
                return Err("`WithFailureThresholdRatio` takes two numbers".into());
            };
            self.int("failure_threshold", "WithFailureThresholdRatio", n)?;
            self.int("failure_thresholding_capacity", "WithFailureThresholdRatio", cap)?;
        } else if let Some(a) = self.optional(CALL, "WithFailureRateThreshold") {
            let a = args(&a);
            let [rate, exec, period] = a.as_slice() else {
                return Err(
                    "`WithFailureRateThreshold` takes a rate, an execution threshold and a period".into()
                );
            };
            self.int("failure_rate_threshold", "WithFailureRateThreshold", rate)?;
            self.int("failure_execution_threshold", "WithFailureRateThreshold", exec)?;
            self.duration("failure_thresholding_period", go_duration(period)?);
        } else if let Some(a) = self.optional(CALL, "WithFailureThresholdPeriod") {
            let a = args(&a);
            let [n, period] = a.as_slice() else {
                return Err("`WithFailureThresholdPeriod` takes a threshold and a period".into());
            };
            self.int("failure_threshold", "WithFailureThresholdPeriod", n)?;
            self.duration("failure_thresholding_period", go_duration(period)?);
        } else {
            return Err("no failure threshold (WithFailureThresholdRatio, WithFailureRateThreshold or WithFailureThresholdPeriod) in this failsafe-go configuration".into());
        }
        if let Some(n) = self.optional(CALL, "WithFailureExecutionThreshold") {
            self.int("failure_execution_threshold", "WithFailureExecutionThreshold", &n)?;
        }
        if let Some(a) = self.optional(CALL, "WithSuccessThresholdRatio") {
            let a = args(&a);
            let [n, cap] = a.as_slice() else {
                return Err("`WithSuccessThresholdRatio` takes two numbers".into());
            };
            self.int("success_threshold", "WithSuccessThresholdRatio", n)?;
            // The exporter writes the threshold for `0 = success_threshold`: read it back so.
            let cap = if cap == n { "0" } else { cap.as_str() };
            self.int("success_thresholding_capacity", "WithSuccessThresholdRatio", cap)?;
        }
        let delay = self.find(CALL, "WithDelay")?;
        self.duration("delay", go_duration(&delay).map_err(|e| format!("`WithDelay`: {e}"))?);
        Ok(())
    }

    fn envoy(&mut self) -> Result<(), String> {
        let code = self.code();
        let block = re(r"(?m)^outlier_detection:\s*$").find(&code).ok_or("no `outlier_detection:` block")?;
        let mut fields = 0;
        for line in code[block.end()..].lines() {
            let Some(c) = re(r"^  ([a-z0-9_]+):\s*(\S+)\s*$").captures(line) else {
                if line.trim().is_empty() || line.starts_with("  ") {
                    continue;
                }
                break;
            };
            let (key, value) = (c[1].to_string(), c[2].to_string());
            fields += 1;
            match key.as_str() {
                "interval" | "base_ejection_time" | "max_ejection_time" | "max_ejection_time_jitter" => {
                    let d = Dur::parse(&value).map_err(|e| format!("`{key}`: {e}"))?;
                    self.duration(&key, d);
                }
                "split_external_local_origin_errors" | "always_eject_one_host" => {
                    self.boolean(&key, &key, &value)?
                }
                _ => self.int(&key, &key, &value)?,
            }
        }
        if fields == 0 {
            return Err("the `outlier_detection:` block is empty".into());
        }
        if let Some(v) = re(r"(?m)^  healthy_panic_threshold:\s*\n\s+value:\s*(\S+)").captures(&code) {
            self.float("healthy_panic_threshold", "healthy_panic_threshold", &v[1])?;
        }
        if let Some(v) = re(r"simulated with Envoy (\S+) rules").captures(self.text) {
            self.set("envoy_version", toml::Value::String(v[1].to_string()));
        }
        Ok(())
    }
}

/// `TimeSpan.FromSeconds(5)`, `TimeSpan.FromMilliseconds(1500)`, `TimeSpan.FromTicks(15000)`.
fn timespan(text: &str) -> Result<Dur, String> {
    let c = re(r"^TimeSpan\.From(Seconds|Milliseconds|Ticks)\((\d+)\)$").captures(text.trim()).ok_or_else(
        || format!("expected TimeSpan.FromSeconds/FromMilliseconds/FromTicks(N), found {text:?}"),
    )?;
    let n: u64 = c[2].parse().map_err(|_| format!("expected a whole number in {text:?}"))?;
    Ok(match &c[1] {
        "Seconds" => Dur::from_secs(n),
        "Milliseconds" => Dur::from_millis(n),
        _ => Dur::from_micros(n / 10),
    })
}

/// Whole milliseconds, as the JavaScript libraries take them.
fn millis(text: &str) -> Result<Dur, String> {
    text.trim()
        .parse::<u64>()
        .map(Dur::from_millis)
        .map_err(|_| format!("expected whole milliseconds, found {text:?}"))
}

/// `0` or `N * time.Unit`.
fn go_duration(text: &str) -> Result<Dur, String> {
    let t = text.trim();
    if t == "0" {
        return Ok(Dur::ZERO);
    }
    let c = re(r"^(\d+) \* time\.(Minute|Second|Millisecond|Microsecond)$").captures(t).ok_or_else(|| {
        format!("expected 0 or N * time.Minute/Second/Millisecond/Microsecond, found {text:?}")
    })?;
    let n: u64 = c[1].parse().map_err(|_| format!("expected a whole number in {text:?}"))?;
    Ok(match &c[2] {
        "Minute" => Dur::from_secs(n * 60),
        "Second" => Dur::from_secs(n),
        "Millisecond" => Dur::from_millis(n),
        _ => Dur::from_micros(n),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::spec;
    use crate::policy::export::export;
    use crate::policy::presets;

    /// Export, read back, resolve: the same parameters and classifier.
    fn round_trip(original: &PolicySpec, lib: Library) {
        let cfg = original.resolve().unwrap();
        let text = export(&cfg, lib, "svc").unwrap();
        let back =
            import(&text, lib).unwrap_or_else(|e| panic!("{} via {}: {e}\n{text}", cfg.label(), lib.name()));
        let again = back.resolve().unwrap_or_else(|e| panic!("{} via {}: {e}", cfg.label(), lib.name()));
        assert_eq!(again.family_config(), cfg.family_config(), "{} via {}:\n{text}", cfg.label(), lib.name());
        assert_eq!(again.classifier(), cfg.classifier(), "{} via {}", cfg.label(), lib.name());
        assert_eq!(
            export(&again, lib, "svc").unwrap().lines().skip(1).collect::<Vec<_>>(),
            text.lines().skip(1).collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_readable_librarys_presets_round_trip() {
        for &lib in readable() {
            let family = spec(lib.default_preset(), &[]).resolve().unwrap().family();
            for p in presets()
                .iter()
                .filter(|p| p.family == family && p.name != "grpc-outlier" && p.name != "istio-outlier")
            {
                round_trip(&spec(p.name, &[]), lib);
            }
        }
    }

    #[test]
    fn changed_values_round_trip_in_every_readable_library() {
        let cases: [(&str, &[&str], Library); 14] = [
            (
                "resilience4j-time",
                &[
                    "sliding_window_size=20",
                    "failure_rate_threshold=25.5",
                    "exponential_backoff_multiplier=2",
                    "exponential_max_wait_duration_in_open_state=5m",
                    "wait_duration_in_open_state=1500ms",
                    "automatic_transition_from_open_to_half_open_enabled=true",
                ],
                Library::Resilience4j,
            ),
            (
                "resilience4j-count",
                &[
                    "slow_call_rate_threshold=30",
                    "slow_call_duration_threshold=250us",
                    "failure_on=error",
                    "ignore=timeout",
                ],
                Library::Resilience4j,
            ),
            (
                "polly",
                &[
                    "failure_ratio=0.25",
                    "break_duration=1500ms",
                    "sampling_duration=10s",
                    "minimum_throughput=7",
                ],
                Library::Polly,
            ),
            ("polly", &["break_duration=700500us"], Library::Polly),
            (
                "opossum",
                &[
                    "volume_threshold=10",
                    "timeout=3s",
                    "error_threshold_percentage=30",
                    "allow_warm_up=true",
                    "rolling_count_buckets=5",
                ],
                Library::Opossum,
            ),
            ("cockatiel-sampling", &["minimum_rps=2", "threshold=0.5", "duration=10s"], Library::Cockatiel),
            (
                "cockatiel-count",
                &["minimum_number_of_calls=10", "size=20", "half_open_after=4s"],
                Library::Cockatiel,
            ),
            (
                "cockatiel-consecutive",
                &["half_open_backoff=exponential", "generator=full_jitter", "max_delay=1m"],
                Library::Cockatiel,
            ),
            (
                "pybreaker",
                &["success_threshold=2", "serialize=false", "reset_timeout=500ms"],
                Library::Pybreaker,
            ),
            (
                "gobreaker",
                &["max_requests=3", "interval=1m", "timeout=90s", "ready_to_trip_consecutive_failures=2"],
                Library::Gobreaker,
            ),
            (
                "failsafe-go",
                &["failure_threshold=3", "failure_thresholding_capacity=5", "success_threshold=2"],
                Library::FailsafeGo,
            ),
            (
                "failsafe-go",
                &[
                    "failure_thresholding_period=1m",
                    "failure_rate_threshold=20",
                    "failure_execution_threshold=10",
                    "delay=30s",
                ],
                Library::FailsafeGo,
            ),
            (
                "failsafe-go",
                &[
                    "failure_thresholding_period=1m",
                    "failure_threshold=4",
                    "failure_execution_threshold=6",
                    "success_threshold=2",
                    "success_thresholding_capacity=3",
                ],
                Library::FailsafeGo,
            ),
            (
                "envoy-outlier",
                &[
                    "interval=500ms",
                    "max_ejection_percent=50",
                    "split_external_local_origin_errors=true",
                    "healthy_panic_threshold=30",
                    "envoy_version=1.26",
                    "max_ejection_time_jitter=2s",
                ],
                Library::Envoy,
            ),
        ];
        for (preset, sets, lib) in cases {
            round_trip(&spec(preset, sets), lib);
        }
    }

    #[test]
    fn unreadable_values_and_files_are_refused_naming_the_field() {
        let e = import("resilience4j:\n  slidingWindowType: SLIDING\n", Library::Resilience4j).unwrap_err();
        assert_eq!(e, "`slidingWindowType`: expected COUNT_BASED or TIME_BASED, found \"SLIDING\"");
        let e = import(
            "var options = new CircuitBreakerStrategyOptions\n{\n    FailureRatio = 0.5,\n};\n",
            Library::Polly,
        )
        .unwrap_err();
        assert_eq!(e, "no `MinimumThroughput` in this polly configuration");
        let e = import("x", Library::Istio).unwrap_err();
        assert!(
            e.starts_with("reading a istio file back is not supported; readable: resilience4j, polly"),
            "{e}"
        );
        let e = import("cb := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{\n\tMaxRequests: 1,\n\tInterval:    1 * time.Hour,\n", Library::Gobreaker).unwrap_err();
        assert_eq!(
            e,
            "`Interval`: expected 0 or N * time.Minute/Second/Millisecond/Microsecond, found \"1 * time.Hour\""
        );
    }
}
