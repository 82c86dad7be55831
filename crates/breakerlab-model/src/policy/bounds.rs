//! Upper bounds on policy parameters, by unit. Values far beyond any real deployment (a count
//! window of four billion calls, a rolling window of 10,000 weeks) are typos, and several would
//! be allocated up front; each bound is stated in the error so the user can see what fits.

use super::param::{ParamMeta, PolicyError, invalid};
use crate::time::Dur;

/// Most calls a "calls" parameter may count (window sizes, thresholds, probe limits): a window
/// of a million calls already spans hours of busy traffic.
pub const MAX_CALLS: u64 = 1_000_000;

/// Most buckets a "count" parameter may ask for.
pub const MAX_BUCKETS: u64 = 100_000;

/// Longest a "duration" parameter may be (windows, open times, timeouts, backoff caps).
pub const MAX_DURATION: Dur = Dur::from_secs(30 * 86_400);

/// Largest "factor" (backoff multipliers and exponents).
pub const MAX_FACTOR: f64 = 1_000.0;

/// Checks every value of a resolved family table against the bound of its parameter's unit.
pub fn check(meta: &[ParamMeta], table: &toml::Table) -> Result<(), PolicyError> {
    for m in meta {
        let Some(value) = table.get(m.name) else { continue };
        check_one(m, value)?;
    }
    Ok(())
}

fn check_one(m: &ParamMeta, value: &toml::Value) -> Result<(), PolicyError> {
    let too_big = |expected: String, found: String| Err(invalid(m.name, &expected, &found));
    // `calls | seconds`: Resilience4j's window size counts calls or one-second buckets.
    let unit = if m.unit.starts_with("calls |") { "calls" } else { m.unit };
    match (unit, value) {
        ("calls", toml::Value::Integer(n)) if *n as u64 > MAX_CALLS => too_big(
            format!("at most {MAX_CALLS} calls (a larger count is almost surely a typo)"),
            n.to_string(),
        ),
        ("count", toml::Value::Integer(n)) if *n as u64 > MAX_BUCKETS => {
            too_big(format!("at most {MAX_BUCKETS} buckets"), n.to_string())
        }
        ("duration", toml::Value::String(s)) => match Dur::parse(s) {
            Ok(d) if d > MAX_DURATION => too_big(
                format!("a duration of at most {MAX_DURATION} (a longer one is almost surely a typo)"),
                format!("{s:?}"),
            ),
            _ => Ok(()),
        },
        ("factor", toml::Value::Float(x)) if *x > MAX_FACTOR => {
            too_big(format!("a factor of at most {MAX_FACTOR}"), x.to_string())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicySpec;

    fn err(preset: &str, set: &str) -> String {
        let mut s = PolicySpec::new(preset);
        let (k, v) = PolicySpec::parse_set(set).unwrap();
        s.overrides.insert(k, v);
        s.resolve().unwrap_err().to_string()
    }

    #[test]
    fn huge_values_are_refused_with_the_bound() {
        let e = err("windowed", "count_window=4000000000");
        assert!(
            e.contains("`count_window`") && e.contains("at most 1000000 calls") && e.contains("4000000000"),
            "{e}"
        );
        let e = err("resilience4j-count", "sliding_window_size=4000000000");
        assert!(e.contains("`sliding_window_size`") && e.contains("at most 1000000"), "{e}");
        let e = err("resilience4j-count", "permitted_number_of_calls_in_half_open_state=4000000000");
        assert!(e.contains("permitted_number_of_calls_in_half_open_state"), "{e}");
        for p in [
            "failure_threshold",
            "failure_thresholding_capacity",
            "success_threshold",
            "success_thresholding_capacity",
        ] {
            let e = err("failsafe-go", &format!("{p}=4000000000"));
            assert!(e.contains(&format!("`{p}`")) && e.contains("at most 1000000"), "{e}");
        }
        let e = err("hystrix", "rolling_window=10000w");
        assert!(e.contains("`rolling_window`") && e.contains("at most 30d") && e.contains("10000w"), "{e}");
        let e = err("cockatiel-sampling", "duration=10000w");
        assert!(e.contains("`duration`") && e.contains("at most 30d"), "{e}");
        let e = err("sre-throttle", "buckets=1000000");
        assert!(e.contains("`buckets`") && e.contains("at most 100000 buckets"), "{e}");
    }

    #[test]
    fn values_at_the_bounds_are_accepted() {
        for (preset, set) in [
            ("windowed", "count_window=1000000"),
            ("hystrix", "rolling_window=30d"),
            ("resilience4j-count", "sliding_window_size=1000000"),
        ] {
            let mut s = PolicySpec::new(preset);
            let (k, v) = PolicySpec::parse_set(set).unwrap();
            s.overrides.insert(k, v);
            assert!(s.resolve().is_ok(), "{preset} {set}: {:?}", s.resolve());
        }
    }
}
