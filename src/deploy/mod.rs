//! From a recommendation to a deployed configuration: the nearest configuration a breaker
//! library can express ([`nearest`]), read through a [`shape`](shape) every library shares.

pub mod import;
pub mod nearest;
pub mod shape;

/// `preset` with `key=value` overrides, as the command line gives them (tests).
#[cfg(test)]
pub(crate) fn spec(preset: &str, sets: &[&str]) -> crate::policy::PolicySpec {
    let mut s = crate::policy::PolicySpec::new(preset);
    for a in sets {
        let (k, v) = crate::policy::PolicySpec::parse_set(a).unwrap();
        s.overrides.insert(k, v);
    }
    s
}
