//! Arrival processes: when requests reach the client. A scenario's `[traffic]` table is a
//! [`TrafficSpec`]; [`TrafficSpec::arrivals`] turns it into the sorted arrival times of one run.
//!
//! Random processes draw from one generator seeded by `seed.seed_for(Stream::Arrivals, 0)`, so
//! every configuration of a sweep sees the same arrivals for the same (scenario, replicate).

use crate::rng::{Rng, RunSeed, Stream, rng_from_seed};
use crate::time::{Dur, MICROS_PER_SEC, SimTime};
use crate::units::Positive;
use crate::{Error, Result};
use rand::RngExt;
use serde::{Deserialize, Deserializer, Serialize};

/// Microseconds in one hour: the length of one step of a diurnal profile.
const HOUR_US: u64 = 3_600 * MICROS_PER_SEC;

/// Hours in a diurnal profile.
pub const HOURS_PER_DAY: usize = 24;

/// How requests arrive. `rate` is in requests per second.
///
/// Read from a flat table (`kind`, `rate`, `hourly`) rather than through serde's buffered
/// tagged-enum path, so a bad value is reported at its own line and column.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "RawTraffic")]
pub enum TrafficSpec {
    /// One request every `1 / rate` seconds, the first at time 0 (a cron job, a poller).
    Constant {
        /// Requests per second.
        rate: Positive,
    },
    /// A Poisson process: independent exponential gaps with mean `1 / rate` seconds.
    Poisson {
        /// Requests per second.
        rate: Positive,
    },
    /// A Poisson process whose rate in hour `h` (hour 0 = the scenario's first hour) is
    /// `rate × hourly[h mod 24]`: quiet nights, busy afternoons.
    Diurnal {
        /// Requests per second at multiplier 1.
        rate: Positive,
        /// 24 non-negative multipliers, one per hour of the day, not all zero.
        hourly: Vec<f64>,
    },
}

impl Default for TrafficSpec {
    /// One request per second, Poisson.
    fn default() -> TrafficSpec {
        TrafficSpec::Poisson { rate: Positive(1.0) }
    }
}

/// Checks a diurnal profile; the message names the field.
fn check_hourly(hourly: &[f64]) -> Result<()> {
    if hourly.len() != HOURS_PER_DAY {
        return Err(Error::invalid(format!(
            "`hourly` needs exactly {HOURS_PER_DAY} multipliers (one per hour of the day), found {}",
            hourly.len()
        )));
    }
    if let Some((h, v)) = hourly.iter().enumerate().find(|(_, v)| !(v.is_finite() && **v >= 0.0)) {
        return Err(Error::invalid(format!("`hourly[{h}]` must be a finite number >= 0, found {v}")));
    }
    if hourly.iter().all(|v| *v == 0.0) {
        return Err(Error::invalid("`hourly` multipliers are all 0, so no request would ever arrive"));
    }
    Ok(())
}

/// Deserializes and checks `hourly`, so a bad profile is reported at its line and column.
fn de_hourly<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<f64>>, D::Error> {
    let v = Vec::<f64>::deserialize(d)?;
    check_hourly(&v).map_err(serde::de::Error::custom)?;
    Ok(Some(v))
}

/// The names of the traffic kinds, as written in files.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TrafficKind {
    Constant,
    Poisson,
    Diurnal,
}

/// The `[traffic]` table as written: every field of every kind, checked field by field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    kind: TrafficKind,
    rate: Positive,
    #[serde(default, deserialize_with = "de_hourly")]
    hourly: Option<Vec<f64>>,
}

impl TryFrom<RawTraffic> for TrafficSpec {
    type Error = crate::Error;
    fn try_from(raw: RawTraffic) -> Result<TrafficSpec> {
        let rate = raw.rate;
        match (raw.kind, raw.hourly) {
            (TrafficKind::Constant, None) => Ok(TrafficSpec::Constant { rate }),
            (TrafficKind::Poisson, None) => Ok(TrafficSpec::Poisson { rate }),
            (TrafficKind::Diurnal, Some(hourly)) => Ok(TrafficSpec::Diurnal { rate, hourly }),
            (TrafficKind::Diurnal, None) => {
                Err(Error::invalid("kind `diurnal` needs `hourly`: 24 multipliers, one per hour of the day"))
            }
            (_, Some(_)) => Err(Error::invalid("`hourly` applies only to kind `diurnal`")),
        }
    }
}

impl TrafficSpec {
    /// Checks what deserialization cannot (a spec built in code); the message names the field.
    pub fn validate(&self) -> Result<()> {
        let rate = match self {
            TrafficSpec::Constant { rate } | TrafficSpec::Poisson { rate } => rate,
            TrafficSpec::Diurnal { rate, hourly } => {
                check_hourly(hourly)?;
                rate
            }
        };
        Positive::new(rate.get()).map(|_| ()).map_err(|e| Error::invalid(format!("`rate`: {e}")))
    }

    /// Long-run mean rate in requests per second (the diurnal mean over a whole day).
    pub fn mean_rate(&self) -> f64 {
        match self {
            TrafficSpec::Constant { rate } | TrafficSpec::Poisson { rate } => rate.get(),
            TrafficSpec::Diurnal { rate, hourly } => {
                rate.get() * hourly.iter().sum::<f64>() / HOURS_PER_DAY as f64
            }
        }
    }

    /// Streams the arrival times in `[0, horizon)`, sorted (equal times possible at very high
    /// rates), without holding them all in memory.
    pub fn arrival_iter(&self, horizon: Dur, seed: &RunSeed) -> ArrivalIter {
        let rng = rng_from_seed(seed.seed_for(Stream::Arrivals, 0));
        let horizon = horizon.micros();
        let mut hourly = [0.0; HOURS_PER_DAY];
        let (kind, rate) = match self {
            TrafficSpec::Constant { rate } => (Kind::Constant { next: 0 }, rate.get()),
            TrafficSpec::Poisson { rate } => {
                hourly = [1.0; HOURS_PER_DAY];
                (Kind::Poisson { segment: u64::MAX }, rate.get())
            }
            TrafficSpec::Diurnal { rate, hourly: profile } => {
                for (slot, v) in hourly.iter_mut().zip(profile) {
                    *slot = *v;
                }
                (Kind::Poisson { segment: HOUR_US }, rate.get())
            }
        };
        let mut it = ArrivalIter {
            kind,
            rate,
            hourly,
            horizon,
            rng,
            seg_start: 0,
            seg_end: 0,
            seg_rate: 0.0,
            elapsed: 0.0,
        };
        it.enter_segment(0);
        it
    }

    /// Every arrival time in `[0, horizon)`, sorted.
    pub fn arrivals(&self, horizon: Dur, seed: &RunSeed) -> Vec<SimTime> {
        let expected = self.mean_rate() * horizon.as_secs_f64();
        // A capacity hint only (capped, so an absurd estimate cannot reserve absurd memory).
        let hint = if expected.is_finite() { (expected * 1.01 + 16.0).min(1e8) as usize } else { 16 };
        let mut out = Vec::with_capacity(hint);
        out.extend(self.arrival_iter(horizon, seed));
        out
    }
}

/// Which generator an [`ArrivalIter`] runs.
#[derive(Clone, Debug)]
enum Kind {
    /// Deterministic: the `next`-th arrival is at `round(next × 10⁶ / rate)` µs (no drift).
    Constant { next: u64 },
    /// Piecewise-constant Poisson, exact: exponential gaps within segments of `segment` µs whose
    /// rate is `rate × hourly[segment index mod 24]`; a gap that crosses a segment's end is
    /// discarded and drawing restarts at the boundary (memorylessness makes this exact).
    Poisson { segment: u64 },
}

/// The arrival times of one run, generated lazily in increasing order.
#[derive(Clone, Debug)]
pub struct ArrivalIter {
    kind: Kind,
    rate: f64,
    hourly: [f64; HOURS_PER_DAY],
    horizon: u64,
    rng: Rng,
    seg_start: u64,
    seg_end: u64,
    seg_rate: f64,
    /// Seconds since `seg_start` of the last arrival drawn in this segment.
    elapsed: f64,
}

impl ArrivalIter {
    /// Starts the segment beginning at `start` µs.
    fn enter_segment(&mut self, start: u64) {
        if let Kind::Poisson { segment } = self.kind {
            self.seg_start = start;
            self.seg_end = start.saturating_add(segment).min(self.horizon);
            let hour = if segment == u64::MAX { 0 } else { (start / segment) as usize % HOURS_PER_DAY };
            self.seg_rate = self.rate * self.hourly[hour];
            self.elapsed = 0.0;
        }
    }
}

impl Iterator for ArrivalIter {
    type Item = SimTime;

    fn next(&mut self) -> Option<SimTime> {
        match &mut self.kind {
            Kind::Constant { next } => {
                let at = (*next as f64 * MICROS_PER_SEC as f64 / self.rate).round();
                if at >= self.horizon as f64 {
                    return None;
                }
                *next += 1;
                Some(SimTime(at as u64))
            }
            Kind::Poisson { .. } => loop {
                if self.seg_start >= self.horizon {
                    return None;
                }
                if self.seg_rate > 0.0 {
                    let u: f64 = self.rng.random();
                    // Inverse CDF of Exp(rate); 1 − u lies in (0, 1].
                    self.elapsed += -(-u).ln_1p() / self.seg_rate;
                    let at = self.seg_start.saturating_add((self.elapsed * MICROS_PER_SEC as f64) as u64);
                    if at < self.seg_end {
                        return Some(SimTime(at));
                    }
                }
                let next = self.seg_end;
                self.enter_segment(next);
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> RunSeed {
        RunSeed::new(7, "traffic", 0)
    }

    fn parse(text: &str) -> Result<TrafficSpec, String> {
        toml::from_str::<TrafficSpec>(text).map_err(|e| e.to_string())
    }

    fn within_4_sigma(n: usize, expected: f64) {
        let sigma = expected.sqrt();
        assert!((n as f64 - expected).abs() < 4.0 * sigma, "{n} arrivals, expected {expected} ± {sigma}");
    }

    #[test]
    fn constant_is_evenly_spaced_from_zero() {
        let spec = TrafficSpec::Constant { rate: Positive(10.0) };
        let a = spec.arrivals(Dur::from_secs(1), &seed());
        let want: Vec<SimTime> = (0..10).map(|k| SimTime(k * 100_000)).collect();
        assert_eq!(a, want);
        let thirds = TrafficSpec::Constant { rate: Positive(3.0) }.arrivals(Dur::from_secs(2), &seed());
        assert_eq!(thirds, [0, 333_333, 666_667, 1_000_000, 1_333_333, 1_666_667].map(SimTime).to_vec());
        assert_eq!(spec.mean_rate(), 10.0);
    }

    #[test]
    fn poisson_count_is_exact_for_the_seed_and_plausible() {
        let spec = TrafficSpec::Poisson { rate: Positive(50.0) };
        let a = spec.arrivals(Dur::from_secs(3_600), &seed());
        assert_eq!(a.len(), POISSON_COUNT);
        within_4_sigma(a.len(), 180_000.0);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        assert!(*a.last().unwrap() < SimTime(3_600 * MICROS_PER_SEC));
        // Mean gap is 20 ms: the first minute holds about 3,000.
        let first_minute = a.iter().take_while(|t| t.0 < 60 * MICROS_PER_SEC).count();
        within_4_sigma(first_minute, 3_000.0);
    }

    const POISSON_COUNT: usize = 180_519;
    const DIURNAL_COUNT: usize = 361_182;

    #[test]
    fn same_seed_same_arrivals_other_replicate_differs() {
        let spec = TrafficSpec::Poisson { rate: Positive(5.0) };
        let a = spec.arrivals(Dur::from_secs(600), &seed());
        assert_eq!(a, spec.arrivals(Dur::from_secs(600), &seed()));
        assert_ne!(a, spec.arrivals(Dur::from_secs(600), &RunSeed::new(7, "traffic", 1)));
        // A longer horizon only appends.
        let longer = spec.arrivals(Dur::from_secs(1_200), &seed());
        assert_eq!(&longer[..a.len()], &a[..]);
    }

    #[test]
    fn diurnal_follows_its_profile() {
        let mut hourly = vec![1.0; 24];
        hourly[0] = 0.0; // midnight silent
        hourly[3] = 0.0;
        hourly[12] = 4.0; // busy noon
        let spec = TrafficSpec::Diurnal { rate: Positive(2.0), hourly };
        assert!(spec.validate().is_ok());
        let a = spec.arrivals(Dur::from_secs(2 * 86_400), &seed());
        assert_eq!(a.len(), DIURNAL_COUNT);
        let mut per_hour = [0usize; 48];
        for t in &a {
            per_hour[(t.0 / HOUR_US) as usize] += 1;
        }
        for day in 0..2 {
            assert_eq!(per_hour[day * 24], 0);
            assert_eq!(per_hour[day * 24 + 3], 0);
            within_4_sigma(per_hour[day * 24 + 1], 7_200.0);
            within_4_sigma(per_hour[day * 24 + 12], 28_800.0);
        }
        within_4_sigma(a.len(), spec.mean_rate() * 2.0 * 86_400.0);
        assert!((spec.mean_rate() - 2.0 * 25.0 / 24.0).abs() < 1e-12);
    }

    #[test]
    fn horizon_cuts_partial_hours() {
        let spec = TrafficSpec::Diurnal { rate: Positive(10.0), hourly: vec![1.0; 24] };
        let a = spec.arrivals(Dur::from_secs(90), &seed());
        assert!(a.iter().all(|t| t.0 < 90 * MICROS_PER_SEC));
        within_4_sigma(a.len(), 900.0);
        assert!(spec.arrivals(Dur::ZERO, &seed()).is_empty());
    }

    #[test]
    fn parses_each_kind() {
        assert_eq!(
            parse("kind = \"constant\"\nrate = 2").unwrap(),
            TrafficSpec::Constant { rate: Positive(2.0) }
        );
        assert_eq!(
            parse("kind = \"poisson\"\nrate = 0.5").unwrap(),
            TrafficSpec::Poisson { rate: Positive(0.5) }
        );
        let profile = (0..24).map(|h| if h < 6 { "0.1" } else { "1" }).collect::<Vec<_>>().join(", ");
        let d = parse(&format!("kind = \"diurnal\"\nrate = 3\nhourly = [{profile}]")).unwrap();
        assert!((d.mean_rate() - 3.0 * (0.6 + 18.0) / 24.0).abs() < 1e-12);
        // Round trip through TOML.
        let text = toml::to_string(&d).unwrap();
        assert_eq!(parse(&text).unwrap(), d);
    }

    #[test]
    fn refuses_bad_specs_naming_the_field() {
        for (text, expected) in [
            ("kind = \"poisson\"\nrate = 0", "greater than 0"),
            ("kind = \"poisson\"\nrate = -3", "greater than 0"),
            ("kind = \"poisson\"\nrate = 1\nburst = 2", "unknown field `burst`"),
            ("kind = \"poisson\"\nrate = 1\nhourly = [1]", "exactly 24"),
            ("kind = \"diurnal\"\nrate = 1", "needs `hourly`"),
            ("kind = \"gamma\"\nrate = 1", "unknown variant `gamma`"),
            ("kind = \"diurnal\"\nrate = 1\nhourly = [1, 2]", "exactly 24"),
            ("rate = 1", "kind"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
        let flat = format!("kind = \"poisson\"\nrate = 1\nhourly = [{}]", vec!["1"; 24].join(","));
        assert!(parse(&flat).unwrap_err().contains("only to kind `diurnal`"));
        // Field errors point at the field's own line.
        let err = parse("kind = \"poisson\"\n\nrate = -2").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        let zeros = format!("kind = \"diurnal\"\nrate = 1\nhourly = [{}]", vec!["0"; 24].join(","));
        assert!(parse(&zeros).unwrap_err().contains("all 0"));
        let mut negative = vec!["1"; 24];
        negative[5] = "-1";
        let err =
            parse(&format!("kind = \"diurnal\"\nrate = 1\nhourly = [{}]", negative.join(","))).unwrap_err();
        assert!(err.contains("hourly[5]"), "{err}");
        let built = TrafficSpec::Diurnal { rate: Positive(1.0), hourly: vec![1.0; 23] };
        assert!(built.validate().unwrap_err().to_string().contains("`hourly`"));
        let built = TrafficSpec::Poisson { rate: Positive(f64::NAN) };
        assert!(built.validate().unwrap_err().to_string().contains("`rate`"));
    }
}
