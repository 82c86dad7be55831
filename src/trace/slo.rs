//! SLO rules as ground truth: `error_rate > 0.2 or p95 > 8s for 3m`.
//!
//! Grammar: `condition ((and | or) condition)* [for DURATION]`, `and` binding tighter than `or`
//! (`&&`/`||` accepted). A condition is `metric op value` with metric `error_rate`,
//! `success_rate`, `p50`, `p90`, `p95` or `p99`, op `>`, `>=`, `<` or `<=`, and value a fraction
//! or percentage (`0.2`, `20%`) for rates, a duration with unit (`8s`, `800ms`) for latencies.
//! An interval is bad when the rule holds on its logged values. Each run of contiguous bad
//! intervals is a window: an `open` incident when it lasts at least the `for` duration, a
//! `stay_closed` blip when shorter (without `for`, every run is an incident).

use super::{Interval, IntervalTrace, TraceError};
use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};

/// A measured quantity of an interval.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Metric {
    ErrorRate,
    SuccessRate,
    Percentile(usize),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Op {
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Copy, Clone, Debug, PartialEq)]
struct Cond {
    metric: Metric,
    op: Op,
    /// A fraction for rates, microseconds for latencies.
    threshold: f64,
}

impl Cond {
    fn holds(&self, iv: &Interval) -> bool {
        let v = match self.metric {
            Metric::ErrorRate => iv.error_rate(),
            Metric::SuccessRate => 1.0 - iv.error_rate(),
            Metric::Percentile(k) => match iv.percentile_us(k) {
                Some(v) => v,
                None => return false,
            },
        };
        match self.op {
            Op::Gt => v > self.threshold,
            Op::Ge => v >= self.threshold,
            Op::Lt => v < self.threshold,
            Op::Le => v <= self.threshold,
        }
    }
}

/// A parsed SLO rule: an OR of ANDs of conditions, and how long a breach must last to count as
/// an incident.
#[derive(Clone, Debug, PartialEq)]
pub struct SloRule {
    text: String,
    any: Vec<Vec<Cond>>,
    sustain: Dur,
}

fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if matches!(c, b'>' | b'<' | b'=' | b'!' | b'&' | b'|') {
            while i < b.len() && matches!(b[i], b'>' | b'<' | b'=' | b'!' | b'&' | b'|') {
                i += 1;
            }
        } else {
            while i < b.len()
                && !b[i].is_ascii_whitespace()
                && !matches!(b[i], b'>' | b'<' | b'=' | b'!' | b'&' | b'|')
            {
                i += 1;
            }
        }
        out.push(&text[start..i]);
    }
    out
}

impl SloRule {
    /// Parses a rule such as `error_rate > 0.2 or p95 > 8s for 3m`.
    pub fn parse(text: &str) -> Result<SloRule, TraceError> {
        let err = |message: String| TraceError::Slo { rule: text.to_string(), message };
        let toks = tokens(text);
        let mut any: Vec<Vec<Cond>> = vec![Vec::new()];
        let mut sustain = Dur::ZERO;
        let mut i = 0;
        loop {
            let Some(name) = toks.get(i) else {
                return Err(err("expected a condition such as `p95 > 8s` or `error_rate > 20%`".into()));
            };
            let metric = match name.to_ascii_lowercase().as_str() {
                "error_rate" | "errors" | "err_rate" | "failure_rate" => Metric::ErrorRate,
                "success_rate" | "availability" => Metric::SuccessRate,
                "p50" | "median" => Metric::Percentile(0),
                "p90" => Metric::Percentile(1),
                "p95" => Metric::Percentile(2),
                "p99" => Metric::Percentile(3),
                other => {
                    return Err(err(format!(
                        "unknown metric `{other}`: expected error_rate, success_rate, p50, p90, p95 or p99"
                    )));
                }
            };
            let op = match toks.get(i + 1).copied() {
                Some(">") => Op::Gt,
                Some(">=") => Op::Ge,
                Some("<") => Op::Lt,
                Some("<=") => Op::Le,
                other => {
                    return Err(err(format!(
                        "after `{name}`: expected >, >=, < or <=, found {:?}",
                        other.unwrap_or("the end")
                    )));
                }
            };
            let Some(value) = toks.get(i + 2).copied() else {
                return Err(err(format!("after `{name}`: expected a threshold")));
            };
            let threshold = match metric {
                Metric::Percentile(_) => {
                    Dur::parse(value).map_err(|e| err(format!("threshold of `{name}`: {e}")))?.0 as f64
                }
                _ => {
                    let (num, scale) = match value.strip_suffix('%') {
                        Some(n) => (n, 100.0),
                        None => (value, 1.0),
                    };
                    let v: f64 = num.parse().map_err(|_| err(format!("threshold of `{name}`: expected a fraction such as 0.2 or a percentage such as 20%, found {value:?}")))?;
                    let v = v / scale;
                    if !(0.0..=1.0).contains(&v) {
                        return Err(err(format!(
                            "threshold of `{name}`: expected a rate between 0 and 1 (0% and 100%), found {value:?}"
                        )));
                    }
                    v
                }
            };
            if let Some(all) = any.last_mut() {
                all.push(Cond { metric, op, threshold });
            }
            i += 3;
            match toks.get(i).map(|t| t.to_ascii_lowercase()).as_deref() {
                None => break,
                Some("and" | "&&") => i += 1,
                Some("or" | "||") => {
                    any.push(Vec::new());
                    i += 1;
                }
                Some("for") => {
                    let Some(d) = toks.get(i + 1) else {
                        return Err(err("after `for`: expected a duration such as 3m".into()));
                    };
                    sustain = Dur::parse(d).map_err(|e| err(format!("after `for`: {e}")))?;
                    if let Some(extra) = toks.get(i + 2) {
                        return Err(err(format!("unexpected {extra:?} after the duration")));
                    }
                    break;
                }
                Some(other) => return Err(err(format!("expected `and`, `or` or `for`, found {other:?}"))),
            }
        }
        Ok(SloRule { text: text.to_string(), any, sustain })
    }

    /// How long a breach must last to be an incident.
    pub fn sustain(&self) -> Dur {
        self.sustain
    }

    /// True when the rule holds on this interval's logged values.
    pub fn breached(&self, iv: &Interval) -> bool {
        self.any.iter().any(|all| all.iter().all(|c| c.holds(iv)))
    }

    /// The incident windows (`open`) and blips (`stay_closed`) this rule finds in `trace`, sorted;
    /// kind `slo`. Under `gaps = "healthy"` or `"missing"` a window stops at a gap. A rule on a percentile the trace never logged is an error.
    pub fn windows(&self, trace: &IntervalTrace) -> Result<Vec<IncidentWindow>, TraceError> {
        for cond in self.any.iter().flatten() {
            if let Metric::Percentile(k) = cond.metric
                && trace.intervals().iter().all(|iv| iv.percentile_us(k).is_none())
            {
                return Err(TraceError::Slo {
                    rule: self.text.clone(),
                    message: format!("the trace has no {} column", super::quantile::QUANTILE_NAMES[k]),
                });
            }
        }
        let mut out = Vec::new();
        let mut run: Option<(SimTime, SimTime)> = None;
        let close = |run: (SimTime, SimTime), out: &mut Vec<IncidentWindow>| {
            let expect = if run.1 - run.0 >= self.sustain { Expect::Open } else { Expect::StayClosed };
            out.push(IncidentWindow { start: run.0, end: run.1, kind: "slo".into(), expect });
        };
        // A breach ends where the data ends when a gap follows and gaps are not held: a gap is
        // healthy or unknown, never part of the incident.
        let cut_at_gaps = trace.gap_policy() != super::GapPolicy::Hold;
        for iv in trace.intervals() {
            let bad = self.breached(iv);
            let gap_follows = trace.gaps().binary_search_by_key(&iv.logged_end(), |g| g.start).is_ok();
            let end = if cut_at_gaps && gap_follows { iv.logged_end() } else { iv.end() };
            run = match (run, bad) {
                (Some((s, e)), true) if e == iv.start() => Some((s, end)),
                (Some(r), true) => {
                    close(r, &mut out);
                    Some((iv.start(), end))
                }
                (None, true) => Some((iv.start(), end)),
                (Some(r), false) => {
                    close(r, &mut out);
                    None
                }
                (None, false) => None,
            };
        }
        if let Some(r) = run {
            close(r, &mut out);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{GapPolicy, TraceOptions};

    fn secs(s: u64) -> SimTime {
        SimTime(s * 1_000_000)
    }

    /// Ten minutes: a 1-minute error blip at 1m, a 3-minute p95 breach at 4m..7m, a 2-minute
    /// breach at 8m..10m that only the error rate (25 %, above 20 %) and p95 together make.
    const SERIES: &str = "ts,error_rate,p50_s,p95_s
0,0.01,0.1,1
60,0.5,0.1,1
120,0.0,0.1,1
180,0.2,0.1,2
240,0.0,0.1,9
300,0.0,0.1,8.5
360,0.0,0.2,12
420,0.1,0.1,8
480,0.25,0.1,9
540,0.3,0.1,1
";

    fn trace(opts: &TraceOptions) -> IntervalTrace {
        crate::trace::interval::from_reader("slo.csv", SERIES.as_bytes(), opts).unwrap()
    }

    #[test]
    fn sustained_breaches_open_short_ones_are_blips() {
        let t = trace(&TraceOptions::default());
        let rule = SloRule::parse("error_rate > 0.2 or p95 > 8s for 3m").unwrap();
        assert_eq!(rule.sustain(), Dur::from_secs(180));
        let w = rule.windows(&t).unwrap();
        let got: Vec<(SimTime, SimTime, Expect)> = w.iter().map(|x| (x.start, x.end, x.expect)).collect();
        assert_eq!(
            got,
            vec![
                (secs(60), secs(120), Expect::StayClosed),
                (secs(240), secs(420), Expect::Open),
                (secs(480), secs(600), Expect::StayClosed),
            ]
        );
        assert!(w.iter().all(|x| x.kind == "slo"));
        // `and` binds tighter than `or`; percentages and >= work.
        let rule = SloRule::parse("error_rate >= 20% and p95 > 1500ms || p50>=200ms for 1m").unwrap();
        let w = rule.windows(&t).unwrap();
        let got: Vec<(SimTime, SimTime, Expect)> = w.iter().map(|x| (x.start, x.end, x.expect)).collect();
        assert_eq!(
            got,
            vec![
                (secs(180), secs(240), Expect::Open),
                (secs(360), secs(420), Expect::Open),
                (secs(480), secs(540), Expect::Open)
            ]
        );
        // Without `for`, every breach is an incident.
        let rule = SloRule::parse("success_rate < 75%").unwrap();
        let w = rule.windows(&t).unwrap();
        assert_eq!(
            w.iter().map(|x| (x.start, x.expect)).collect::<Vec<_>>(),
            vec![(secs(60), Expect::Open), (secs(540), Expect::Open)]
        );
    }

    #[test]
    fn missing_data_gaps_split_runs() {
        let data = "ts,error_rate,p95_s\n0,0.5,1\n60,0.5,1\n300,0.5,1\n360,0.5,1\n";
        let missing = TraceOptions { gaps: GapPolicy::Missing, ..TraceOptions::default() };
        let t = crate::trace::interval::from_reader("g.csv", data.as_bytes(), &missing).unwrap();
        let w = SloRule::parse("error_rate > 0.2 for 3m").unwrap().windows(&t).unwrap();
        let got: Vec<(SimTime, SimTime, Expect)> = w.iter().map(|x| (x.start, x.end, x.expect)).collect();
        assert_eq!(
            got,
            vec![(secs(0), secs(120), Expect::StayClosed), (secs(300), secs(420), Expect::StayClosed)]
        );
        // Holding the last value bridges the gap into one sustained incident.
        let t =
            crate::trace::interval::from_reader("g.csv", data.as_bytes(), &TraceOptions::default()).unwrap();
        let w = SloRule::parse("error_rate > 0.2 for 3m").unwrap().windows(&t).unwrap();
        assert_eq!((w.len(), w[0].start, w[0].end, w[0].expect), (1, secs(0), secs(420), Expect::Open));
    }

    #[test]
    fn bad_rules_say_what_was_expected() {
        for (rule, expected) in [
            ("latency > 8s", "unknown metric `latency`"),
            ("p95 = 8s", "expected >, >=, < or <="),
            ("p95 > 8", "a unit after the number"),
            ("error_rate > 1.5", "between 0 and 1"),
            ("error_rate > lots", "a fraction such as 0.2"),
            ("p95 > 8s for", "after `for`"),
            ("p95 > 8s for 3m please", "unexpected \"please\""),
            ("p95 > 8s xor p50 > 1s", "expected `and`, `or` or `for`"),
            ("", "expected a condition"),
            ("p95 >", "expected a threshold"),
        ] {
            let err = SloRule::parse(rule).unwrap_err().to_string();
            assert!(err.contains(expected), "{rule:?}: {err}");
        }
        let t = trace(&TraceOptions::default());
        let err = SloRule::parse("p99 > 1s").unwrap().windows(&t).unwrap_err().to_string();
        assert!(err.contains("the trace has no p99 column"), "{err}");
    }
}
