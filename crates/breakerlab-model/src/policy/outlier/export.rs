//! The `envoy` family written as the three meshes configure it: an Envoy cluster's
//! `outlier_detection` block (`export --as envoy`), an Istio `DestinationRule`
//! (`--as istio`, networking.istio.io/v1) and a gRPC service config with the
//! `outlier_detection_experimental` policy (`--as grpc`). Text only.
//!
//! Field names are those of Envoy's `config.cluster.v3.OutlierDetection`, Istio's
//! `networking.v1.OutlierDetection` (consecutive5xxErrors, consecutiveGatewayErrors,
//! consecutiveLocalOriginFailures, splitExternalLocalOriginErrors, interval, baseEjectionTime,
//! maxEjectionPercent, minHealthPercent; checked against istio/api
//! networking/v1alpha3/destination_rule.proto @ 0246298, message `OutlierDetection`) and gRFC A50's
//! `OutlierDetectionLoadBalancingConfig` in JSON (camelCase). A setting a target cannot express
//! is refused with the reason, never dropped.

use super::super::envoy::{EnvoyConfig, EnvoyVersion, Implementation, envoy_block};
use super::super::library::{ExportInput, commented, proto_duration};
use crate::time::Dur;
use crate::{Error, Result};
use std::fmt::Write as _;

/// Envoy's defaults, against which the extra fields are written only when they differ.
fn defaults() -> EnvoyConfig {
    EnvoyConfig::default()
}

/// The Envoy cluster block: the five fields every export writes, then each other field that
/// differs from Envoy's default, and the panic threshold as the cluster's `common_lb_config`.
pub fn envoy_cluster(input: &ExportInput, c: &EnvoyConfig) -> Result<String> {
    if c.implementation == Implementation::Grpc {
        return Err(Error::invalid(
            "implementation = grpc runs gRPC's balancer: export it with --as grpc (a service config)",
        ));
    }
    let mut s = envoy_block(input.header, c);
    let d = defaults();
    let numbers = [
        ("max_ejection_percent", c.max_ejection_percent, d.max_ejection_percent),
        ("consecutive_gateway_failure", c.consecutive_gateway_failure, d.consecutive_gateway_failure),
        (
            "enforcing_consecutive_gateway_failure",
            c.enforcing_consecutive_gateway_failure,
            d.enforcing_consecutive_gateway_failure,
        ),
        (
            "consecutive_local_origin_failure",
            c.consecutive_local_origin_failure,
            d.consecutive_local_origin_failure,
        ),
        (
            "enforcing_consecutive_local_origin_failure",
            c.enforcing_consecutive_local_origin_failure,
            d.enforcing_consecutive_local_origin_failure,
        ),
        ("success_rate_minimum_hosts", c.success_rate_minimum_hosts, d.success_rate_minimum_hosts),
        ("success_rate_request_volume", c.success_rate_request_volume, d.success_rate_request_volume),
        ("success_rate_stdev_factor", c.success_rate_stdev_factor, d.success_rate_stdev_factor),
        ("enforcing_success_rate", c.enforcing_success_rate, d.enforcing_success_rate),
        (
            "enforcing_local_origin_success_rate",
            c.enforcing_local_origin_success_rate,
            d.enforcing_local_origin_success_rate,
        ),
        ("failure_percentage_threshold", c.failure_percentage_threshold, d.failure_percentage_threshold),
        (
            "failure_percentage_minimum_hosts",
            c.failure_percentage_minimum_hosts,
            d.failure_percentage_minimum_hosts,
        ),
        (
            "failure_percentage_request_volume",
            c.failure_percentage_request_volume,
            d.failure_percentage_request_volume,
        ),
        ("enforcing_failure_percentage", c.enforcing_failure_percentage, d.enforcing_failure_percentage),
        (
            "enforcing_failure_percentage_local_origin",
            c.enforcing_failure_percentage_local_origin,
            d.enforcing_failure_percentage_local_origin,
        ),
    ];
    for (name, v, default) in numbers {
        if v != default {
            let _ = writeln!(s, "  {name}: {v}");
        }
    }
    if c.max_ejection_time_jitter != d.max_ejection_time_jitter {
        let _ = writeln!(s, "  max_ejection_time_jitter: {}", proto_duration(c.max_ejection_time_jitter));
    }
    if c.split_external_local_origin_errors {
        let _ = writeln!(s, "  split_external_local_origin_errors: true");
    }
    if c.always_eject_one_host {
        let _ = writeln!(s, "  always_eject_one_host: true");
    }
    if !c.successful_active_health_check_uneject_host {
        let _ = writeln!(s, "  successful_active_health_check_uneject_host: false");
    }
    if !c.health_check_interval.is_zero() {
        let _ =
            writeln!(s, "# simulated with the cluster's active HTTP health checks (health_checks, beside");
        let _ = writeln!(
            s,
            "# outlier_detection): interval {}, timeout {}, unhealthy_threshold {}, healthy_threshold {}",
            proto_duration(c.health_check_interval),
            proto_duration(c.health_check_timeout),
            c.health_check_unhealthy_threshold,
            c.health_check_healthy_threshold
        );
    }
    if c.healthy_panic_threshold != d.healthy_panic_threshold {
        let _ = writeln!(s, "# the cluster's load balancer (beside outlier_detection):");
        let _ = writeln!(s, "common_lb_config:");
        let _ = writeln!(s, "  healthy_panic_threshold:");
        let _ = writeln!(s, "    value: {}", super::super::library::num(c.healthy_panic_threshold));
    }
    if c.envoy_version != EnvoyVersion::V1_28 {
        let _ = writeln!(s, "# simulated with Envoy {} rules", version_name(c.envoy_version));
    }
    Ok(s)
}

/// The release's name, as `envoy_version` writes it.
fn version_name(v: EnvoyVersion) -> &'static str {
    match v {
        EnvoyVersion::V1_26 => "1.26",
        EnvoyVersion::V1_27 => "1.27",
        EnvoyVersion::V1_28 => "1.28",
    }
}

/// A duration as Istio's API reference writes one: a whole number of one unit, the largest
/// that divides it (`1h`, `5m`, `90s`, `500ms`; "format: 1h/1m/1s/1ms" in istio/api
/// networking/v1alpha3/destination_rule.proto @ 0246298).
fn istio_duration(d: Dur) -> String {
    let us = d.micros();
    let units = [(3_600_000_000, "h"), (60_000_000, "m"), (1_000_000, "s"), (1_000, "ms")];
    match units.iter().find(|(size, _)| us.is_multiple_of(*size) && us > 0) {
        Some((size, unit)) => format!("{}{unit}", us / size),
        None => format!("{us}us"),
    }
}

/// An Istio `DestinationRule` with this `outlierDetection` (and the panic threshold as
/// `minHealthPercent`), refusing what Istio cannot set: Istio forces `enforcing_success_rate` to
/// 0, enforces a consecutive rule at 100 % exactly when its threshold is set, and leaves the
/// failure-percentage rule, the jitter and `max_ejection_time` (but for a long base time) at
/// Envoy's defaults.
pub fn destination_rule(input: &ExportInput, c: &EnvoyConfig) -> Result<String> {
    let d = defaults();
    let mut refused: Vec<String> = Vec::new();
    if c.implementation == Implementation::Grpc {
        refused.push("implementation = grpc (export it with --as grpc)".into());
    }
    if c.enforcing_success_rate != 0 || c.enforcing_local_origin_success_rate != 0 {
        refused.push("a success-rate rule (Istio sets enforcing_success_rate to 0)".into());
    }
    let rule_on = |threshold: u32, enforcing: u32| threshold > 0 && enforcing > 0;
    if rule_on(c.consecutive_5xx, c.enforcing_consecutive_5xx) && c.enforcing_consecutive_5xx != 100 {
        refused.push(format!(
            "enforcing_consecutive_5xx = {} (Istio enforces a set rule at 100)",
            c.enforcing_consecutive_5xx
        ));
    }
    if rule_on(c.consecutive_gateway_failure, c.enforcing_consecutive_gateway_failure)
        && c.enforcing_consecutive_gateway_failure != 100
    {
        refused.push(format!(
            "enforcing_consecutive_gateway_failure = {} (Istio enforces a set rule at 100)",
            c.enforcing_consecutive_gateway_failure
        ));
    }
    for (name, same) in [
        (
            "the failure-percentage rule",
            c.enforcing_failure_percentage == 0 && c.enforcing_failure_percentage_local_origin == 0,
        ),
        ("max_ejection_time_jitter", c.max_ejection_time_jitter == d.max_ejection_time_jitter),
        ("always_eject_one_host", !c.always_eject_one_host),
        ("active health checks (health_check_interval)", c.health_check_interval.is_zero()),
        (
            "max_ejection_time (Istio sets it only to a base time over 300s)",
            c.max_ejection_time == d.max_ejection_time.max(c.base_ejection_time),
        ),
        ("max_ejection_percent = 0 (Istio reads 0 as unset: Envoy's 10)", c.max_ejection_percent > 0),
    ] {
        if !same {
            refused.push(name.to_string());
        }
    }
    if !refused.is_empty() {
        return Err(Error::invalid(format!("Istio's DestinationRule cannot set {}", refused.join("; "))));
    }
    let mut s = String::new();
    commented(&mut s, "#", input.header);
    let name = if input.name.is_empty() { "my-service" } else { input.name };
    let _ = writeln!(s, "apiVersion: networking.istio.io/v1");
    let _ = writeln!(s, "kind: DestinationRule");
    let _ = writeln!(s, "metadata:");
    let _ = writeln!(s, "  name: {name}");
    let _ = writeln!(s, "spec:");
    let _ = writeln!(s, "  host: {name}");
    let _ = writeln!(s, "  trafficPolicy:");
    let _ = writeln!(s, "    outlierDetection:");
    let five_xx = if c.enforcing_consecutive_5xx == 0 { 0 } else { c.consecutive_5xx };
    let _ = writeln!(s, "      consecutive5xxErrors: {five_xx}");
    if rule_on(c.consecutive_gateway_failure, c.enforcing_consecutive_gateway_failure) {
        let _ = writeln!(s, "      consecutiveGatewayErrors: {}", c.consecutive_gateway_failure);
    }
    if c.split_external_local_origin_errors {
        let _ = writeln!(s, "      splitExternalLocalOriginErrors: true");
        let lo = if c.enforcing_consecutive_local_origin_failure == 0 {
            0
        } else {
            c.consecutive_local_origin_failure
        };
        let _ = writeln!(s, "      consecutiveLocalOriginFailures: {lo}");
    }
    let _ = writeln!(s, "      interval: {}", istio_duration(c.interval));
    let _ = writeln!(s, "      baseEjectionTime: {}", istio_duration(c.base_ejection_time));
    let _ = writeln!(s, "      maxEjectionPercent: {}", c.max_ejection_percent);
    let _ = writeln!(s, "      minHealthPercent: {}", c.healthy_panic_threshold.round() as i64);
    if c.healthy_panic_threshold.fract() != 0.0 {
        return Err(Error::invalid(
            "Istio's minHealthPercent is a whole percentage: healthy_panic_threshold must be whole",
        ));
    }
    Ok(s)
}

/// A gRPC service config whose `loadBalancingConfig` is the `outlier_detection_experimental`
/// policy (gRFC A50) over round robin, for `implementation = grpc`.
pub fn grpc_service_config(input: &ExportInput, c: &EnvoyConfig) -> Result<String> {
    if c.implementation != Implementation::Grpc {
        return Err(Error::invalid(
            "gRPC runs only the success-rate and failure-percentage rules: use grpc-outlier (implementation = grpc)",
        ));
    }
    let ms = |d: Dur| format!("{}s", proto_duration(d).trim_end_matches('s'));
    let mut body = serde_json::Map::new();
    body.insert("interval".into(), ms(c.interval).into());
    body.insert("baseEjectionTime".into(), ms(c.base_ejection_time).into());
    body.insert("maxEjectionTime".into(), ms(c.max_ejection_time).into());
    body.insert("maxEjectionPercent".into(), c.max_ejection_percent.into());
    if c.enforcing_success_rate > 0 {
        body.insert(
            "successRateEjection".into(),
            serde_json::json!({
                "stdevFactor": c.success_rate_stdev_factor,
                "enforcementPercentage": c.enforcing_success_rate,
                "minimumHosts": c.success_rate_minimum_hosts,
                "requestVolume": c.success_rate_request_volume,
            }),
        );
    }
    if c.enforcing_failure_percentage > 0 {
        body.insert(
            "failurePercentageEjection".into(),
            serde_json::json!({
                "threshold": c.failure_percentage_threshold,
                "enforcementPercentage": c.enforcing_failure_percentage,
                "minimumHosts": c.failure_percentage_minimum_hosts,
                "requestVolume": c.failure_percentage_request_volume,
            }),
        );
    }
    body.insert("childPolicy".into(), serde_json::json!([{ "round_robin": {} }]));
    let config = serde_json::json!({
        "_comment": input.header.join(" | "),
        "loadBalancingConfig": [{ "outlier_detection_experimental": body }],
    });
    let mut s = serde_json::to_string_pretty(&config).map_err(|e| Error::invalid(e.to_string()))?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicySpec;
    use crate::policy::export::{Library, export};

    fn out(preset: &str, sets: &[&str], lib: Library) -> crate::Result<String> {
        let mut s = PolicySpec::new(preset);
        for a in sets {
            let (k, v) = PolicySpec::parse_set(a).unwrap();
            s.overrides.insert(k, v);
        }
        export(&s.resolve().unwrap(), lib, "reviews").map_err(|e| crate::Error::invalid(e.to_string()))
    }

    #[test]
    fn envoy_writes_the_first_five_fields_then_what_differs_from_the_defaults() {
        let text = out("envoy-outlier", &[], Library::Envoy).unwrap();
        assert!(text.ends_with("  enforcing_consecutive_5xx: 100\n"), "{text}");
        let text = out(
            "istio-outlier",
            &["consecutive_gateway_failure=3", "max_ejection_percent=100"],
            Library::Envoy,
        )
        .unwrap();
        for line in [
            "  max_ejection_percent: 100\n",
            "  consecutive_gateway_failure: 3\n",
            "  enforcing_consecutive_gateway_failure: 100\n",
            "  enforcing_success_rate: 0\n",
            "common_lb_config:\n  healthy_panic_threshold:\n    value: 0\n",
        ] {
            assert!(text.contains(line), "{line}: {text}");
        }
        let e = out("grpc-outlier", &[], Library::Envoy).unwrap_err().to_string();
        assert!(e.contains("--as grpc"), "{e}");
    }

    #[test]
    fn istio_writes_a_destination_rule_and_refuses_what_it_cannot_set() {
        let text = out(
            "istio-outlier",
            &[
                "consecutive_5xx=3",
                "interval=90s",
                "base_ejection_time=1m",
                "max_ejection_percent=50",
                "consecutive_gateway_failure=2",
            ],
            Library::Istio,
        )
        .unwrap();
        let body = text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
        assert_eq!(
            body,
            "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: reviews\nspec:\n  host: reviews\n  \
             trafficPolicy:\n    outlierDetection:\n      consecutive5xxErrors: 3\n      consecutiveGatewayErrors: 2\n      \
             interval: 90s\n      baseEjectionTime: 1m\n      maxEjectionPercent: 50\n      minHealthPercent: 0"
        );
        // Envoy's own defaults run the success-rate rule, which Istio turns off.
        let e = out("envoy-outlier", &[], Library::Istio).unwrap_err().to_string();
        assert!(e.contains("a success-rate rule (Istio sets enforcing_success_rate to 0)"), "{e}");
        let e =
            out("istio-outlier", &["enforcing_consecutive_5xx=50"], Library::Istio).unwrap_err().to_string();
        assert!(e.contains("enforcing_consecutive_5xx = 50"), "{e}");
        let e = out("istio-outlier", &["enforcing_failure_percentage=100"], Library::Istio)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the failure-percentage rule"), "{e}");
        // A DestinationRule has no active health checks; Envoy's export notes them.
        let e = out("istio-outlier", &["health_check_interval=5s"], Library::Istio).unwrap_err().to_string();
        assert!(e.contains("active health checks (health_check_interval)"), "{e}");
        let text = out("envoy-outlier", &["health_check_interval=5s"], Library::Envoy).unwrap();
        assert!(
            text.contains("interval 5s, timeout 1s, unhealthy_threshold 3, healthy_threshold 2"),
            "{text}"
        );
        // consecutive 5xx off (0) is written as 0; the panic threshold as minHealthPercent.
        let text = out("istio-outlier", &["consecutive_5xx=0", "healthy_panic_threshold=30"], Library::Istio)
            .unwrap();
        assert!(
            text.contains("consecutive5xxErrors: 0\n") && text.contains("minHealthPercent: 30\n"),
            "{text}"
        );
    }

    #[test]
    fn grpc_writes_a_service_config_with_the_rules_it_runs() {
        let text =
            out("grpc-outlier", &["enforcing_failure_percentage=100", "interval=500ms"], Library::Grpc)
                .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let od = &v["loadBalancingConfig"][0]["outlier_detection_experimental"];
        assert_eq!(od["interval"], "0.5s");
        assert_eq!(od["baseEjectionTime"], "30s");
        assert_eq!(od["maxEjectionPercent"], 10);
        assert_eq!(od["successRateEjection"]["stdevFactor"], 1900);
        assert_eq!(od["failurePercentageEjection"]["threshold"], 85);
        assert_eq!(od["childPolicy"][0], serde_json::json!({ "round_robin": {} }));
        let plain = out("grpc-outlier", &[], Library::Grpc).unwrap();
        assert!(!plain.contains("failurePercentageEjection"), "enforcement 0 leaves the rule out");
        let e = out("envoy-outlier", &[], Library::Grpc).unwrap_err().to_string();
        assert!(e.contains("grpc-outlier"), "{e}");
    }
}
