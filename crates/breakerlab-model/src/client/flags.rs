//! The client settings a replay takes as flags (`--timeout`, `--retries`, `--backoff`,
//! `--fallback`), applied over the scenario's `[client]` and checked by the same validation.

use super::{ClientSpec, FallbackSpec};
use crate::time::Dur;
use crate::{Error, Result};

/// Client settings given on the command line; unset ones keep the scenario's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientFlags {
    /// Per-attempt call timeout.
    pub timeout: Option<Dur>,
    /// Retries after the first attempt (`max_attempts` − 1).
    pub retries: Option<u32>,
    /// Delay before the first retry and its growth per retry (`200ms` or `200ms*2`).
    pub backoff: Option<(Dur, Option<f64>)>,
    /// What the user gets when the call is refused or fails for good.
    pub fallback: Option<FallbackSpec>,
}

impl ClientFlags {
    /// Applies the flags to `client` and validates the result; the message names the flag.
    pub fn apply(&self, client: &mut ClientSpec) -> Result<()> {
        if let Some(t) = self.timeout {
            client.timeout = t;
        }
        if let Some(r) = self.retries {
            client.retry.max_attempts =
                r.checked_add(1).ok_or_else(|| Error::invalid("--retries: too many"))?;
        }
        if let Some((base, multiplier)) = self.backoff {
            client.retry.base = base;
            client.retry.cap = client.retry.cap.max(base);
            if let Some(m) = multiplier {
                client.retry.multiplier = m;
            }
        }
        if let Some(f) = &self.fallback {
            client.fallback = f.clone();
        }
        client.validate().map_err(|e| Error::invalid(format!("client flags: {e}")))
    }
}

/// Parses `--backoff BASE[*MULTIPLIER]`, e.g. `200ms` or `200ms*2`.
pub fn parse_backoff(text: &str) -> Result<(Dur, Option<f64>)> {
    let (base, mult) = match text.split_once('*') {
        Some((b, m)) => (b, Some(m)),
        None => (text, None),
    };
    let base = Dur::parse(base.trim()).map_err(|e| Error::invalid(e.to_string()))?;
    let mult = match mult {
        Some(m) => {
            Some(m.trim().parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 1.0).ok_or_else(|| {
                Error::invalid(format!(
                    "expected BASE[*MULTIPLIER] with a multiplier >= 1, e.g. 200ms*2, found {text:?}"
                ))
            })?)
        }
        None => None,
    };
    Ok((base, mult))
}

/// Parses `--fallback none | cached[:LATENCY] | local[:LATENCY] | retry_queue:CYCLE`.
pub fn parse_fallback(text: &str) -> Result<FallbackSpec> {
    let (kind, arg) = match text.split_once(':') {
        Some((k, a)) => (k.trim(), Some(a.trim())),
        None => (text.trim(), None),
    };
    let dur = |default: Dur| arg.map_or(Ok(default), |a| Dur::parse(a).map_err(Error::from));
    match kind {
        "none" if arg.is_none() => Ok(FallbackSpec::None),
        "cached" => Ok(FallbackSpec::Cached { latency: dur(Dur::from_millis(1))? }),
        "local" => Ok(FallbackSpec::Local { latency: dur(Dur::from_millis(50))? }),
        "retry_queue" if arg.is_some() => {
            Ok(FallbackSpec::RetryQueue { cycle: dur(Dur::ZERO)?, latency: Dur::from_millis(1) })
        }
        _ => Err(Error::invalid(format!(
            "expected none, cached[:LATENCY], local[:LATENCY] or retry_queue:CYCLE, found {text:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_apply_over_the_scenarios_client() {
        let mut c = ClientSpec::default();
        let flags = ClientFlags {
            timeout: Some(Dur::from_millis(250)),
            retries: Some(2),
            backoff: Some(parse_backoff("200ms*3").unwrap()),
            fallback: Some(parse_fallback("cached").unwrap()),
        };
        flags.apply(&mut c).unwrap();
        assert_eq!(c.timeout, Dur::from_millis(250));
        assert_eq!(c.retry.max_attempts, 3);
        assert_eq!((c.retry.base, c.retry.multiplier), (Dur::from_millis(200), 3.0));
        assert_eq!(c.fallback, FallbackSpec::Cached { latency: Dur::from_millis(1) });
        let mut c = ClientSpec::default();
        assert!(
            ClientFlags { backoff: Some((Dur::from_secs(60), None)), ..ClientFlags::default() }
                .apply(&mut c)
                .is_ok()
        );
        assert_eq!(c.retry.cap, Dur::from_secs(60));
    }

    #[test]
    fn bad_flag_values_say_what_is_expected() {
        assert!(parse_backoff("fast").is_err());
        assert!(parse_backoff("100ms*0.5").unwrap_err().to_string().contains("multiplier >= 1"));
        assert!(parse_fallback("cache").unwrap_err().to_string().contains("expected none, cached"));
        assert_eq!(
            parse_fallback("local:20ms").unwrap(),
            FallbackSpec::Local { latency: Dur::from_millis(20) }
        );
        assert!(parse_fallback("retry_queue").is_err());
        assert!(parse_fallback("retry_queue:0s").map(|f| f.validate()).unwrap().is_err());
        let e = ClientFlags { timeout: Some(Dur::ZERO), ..ClientFlags::default() }
            .apply(&mut ClientSpec::default());
        assert!(e.unwrap_err().to_string().contains("timeout"), "zero timeout");
    }
}
