//! Test helper: drives any [`Breaker`] through a scripted sequence of admits and results at
//! given millisecond times and returns what it did (admissions and transitions).

use super::{Admission, Breaker, Observation, State, Ticket, Transitions};
use crate::outcome::Verdict;
use crate::time::{Dur, SimTime};

/// Closed, for short transition tuples.
pub const C: State = State::Closed;
/// Open.
pub const O: State = State::Open;
/// Half-open.
pub const H: State = State::HalfOpen;

/// One scripted step.
#[derive(Copy, Clone, Debug)]
pub enum Ev {
    /// A call asks to start.
    A,
    /// The oldest outstanding admitted call succeeds with this latency (ms).
    S(u64),
    /// The oldest outstanding admitted call fails with this latency (ms).
    F(u64),
    /// The oldest outstanding admitted call ends with a result the classifier ignores.
    I,
    /// The `n`-th admission of the script (counting every `A`, allowed or not) ends: ok, latency ms.
    Done(usize, bool, u64),
    /// The policy's deadline handler runs.
    Tick,
}

/// What a script produced.
#[derive(Debug, Default)]
pub struct Run {
    /// `(t_ms, from, to, reason)` for each transition, in order.
    pub tr: Vec<(u64, State, State, &'static str)>,
    /// For each `A`, whether it was allowed.
    pub admits: Vec<bool>,
    /// For each `A`, the ticket handed out (default when rejected).
    pub tickets: Vec<Ticket>,
    /// The admissions (indices of `A`) answered [`Admission::Wait`] (also `false` in `admits`;
    /// a script offers a waiting call again with another `A`).
    pub waits: Vec<usize>,
}

impl Run {
    /// The allowed flags as a compact string: `1` allowed, `0` rejected.
    pub fn admit_string(&self) -> String {
        self.admits.iter().map(|&a| if a { '1' } else { '0' }).collect()
    }
}

/// Time in ms to a [`SimTime`].
pub fn ms(t: u64) -> SimTime {
    SimTime(t * 1000)
}

/// Runs `script` against `b`. Panics (test failure) when a result refers to no outstanding call.
pub fn drive<B: Breaker>(b: &mut B, script: &[(u64, Ev)]) -> Run {
    let mut run = Run::default();
    let mut out = Transitions::new();
    let mut outstanding: Vec<usize> = Vec::new();
    for &(t, ev) in script {
        let now = ms(t);
        let finish = |idx: usize, verdict: Verdict, lat: u64, b: &mut B, run: &Run, out: &mut Transitions| {
            let obs = Observation { verdict, latency: Dur::from_millis(lat) };
            b.record(now, run.tickets[idx], obs, out);
        };
        match ev {
            Ev::A => {
                let a = b.admit(now, &mut out);
                let idx = run.admits.len();
                match a {
                    Admission::Allow(tk) => {
                        run.admits.push(true);
                        run.tickets.push(tk);
                        outstanding.push(idx);
                    }
                    Admission::Reject => {
                        run.admits.push(false);
                        run.tickets.push(Ticket::default());
                    }
                    Admission::Wait => {
                        run.waits.push(idx);
                        run.admits.push(false);
                        run.tickets.push(Ticket::default());
                    }
                }
            }
            Ev::S(lat) | Ev::F(lat) => {
                assert!(!outstanding.is_empty(), "result at {t} ms with no outstanding call");
                let idx = outstanding.remove(0);
                let v = if matches!(ev, Ev::S(_)) { Verdict::Success } else { Verdict::Failure };
                finish(idx, v, lat, b, &run, &mut out);
            }
            Ev::I => {
                assert!(!outstanding.is_empty(), "result at {t} ms with no outstanding call");
                let idx = outstanding.remove(0);
                finish(idx, Verdict::Ignored, 1, b, &run, &mut out);
            }
            Ev::Done(n, ok, lat) => {
                let pos = outstanding.iter().position(|&i| i == n).expect("admission not outstanding");
                outstanding.remove(pos);
                let v = if ok { Verdict::Success } else { Verdict::Failure };
                finish(n, v, lat, b, &run, &mut out);
            }
            Ev::Tick => b.on_deadline(now, &mut out),
        }
    }
    run.tr = out.iter().map(|x| (x.at.micros() / 1000, x.from, x.to, x.reason)).collect();
    run
}

/// `n` copies of `(t, ev)`: a burst at one instant.
pub fn burst(t: u64, ev: Ev, n: usize) -> Vec<(u64, Ev)> {
    vec![(t, ev); n]
}

/// `5 + extra` calls admitted at 0, then five of them failing at 0: trips a breaker that opens
/// at 5 consecutive failures, leaving `extra` calls outstanding (late results to come).
pub fn tripped_by_five(extra: usize) -> Vec<(u64, Ev)> {
    let mut s = burst(0, Ev::A, 5 + extra);
    s.extend(burst(0, Ev::F(1), 5));
    s
}

/// One call every `step_ms` from 0, admitted and completed at once (1 ms) with each outcome.
pub fn alternating(outcomes: &[bool], step_ms: u64) -> Vec<(u64, Ev)> {
    let mut s = Vec::with_capacity(outcomes.len() * 2);
    for (i, ok) in outcomes.iter().enumerate() {
        let t = i as u64 * step_ms;
        s.push((t, Ev::A));
        s.push((t, if *ok { Ev::S(1) } else { Ev::F(1) }));
    }
    s
}

/// `n` calls `step_ms` apart from `t0_ms`, each admitted and answered at once with `ok`.
pub fn calls(t0_ms: u64, n: u64, step_ms: u64, ok: bool) -> Vec<(u64, Ev)> {
    (0..n)
        .flat_map(|i| {
            let t = t0_ms + i * step_ms;
            [(t, Ev::A), (t, if ok { Ev::S(1) } else { Ev::F(1) })]
        })
        .collect()
}

/// Offers `n` calls, one every `step_ms` from `t0_ms`; each admitted call completes at once
/// with `outcome(t_ms) = (ok, latency_ms)`. Returns the number of transitions.
pub fn offer<B: Breaker>(
    b: &mut B,
    t0_ms: u64,
    n: u64,
    step_ms: u64,
    outcome: impl Fn(u64) -> (bool, u64),
) -> usize {
    let mut out = Transitions::new();
    for i in 0..n {
        let t = t0_ms + i * step_ms;
        if let Admission::Allow(tk) = b.admit(ms(t), &mut out) {
            let (ok, lat) = outcome(t);
            let verdict = if ok { Verdict::Success } else { Verdict::Failure };
            b.record(ms(t), tk, Observation { verdict, latency: Dur::from_millis(lat) }, &mut out);
        }
    }
    out.len()
}

/// A day-like cycle for steady-state checks: an outage for the first `bad_ms` of every
/// `period_ms`, one failure in ten otherwise.
pub fn cyclic(period_ms: u64, bad_ms: u64) -> impl Fn(u64) -> (bool, u64) {
    move |t| {
        let phase = t % period_ms;
        if phase < bad_ms { (false, 5_000) } else { ((t / 100) % 10 != 0, 50) }
    }
}

/// One quirk of a library as a scripted case: what the library does, the source line that does
/// it (tag or commit, file and line), a breaker configured to show it, the script and what the
/// library makes of it (every transition with its time, every admission).
pub struct Quirk<B> {
    /// The behaviour, in a few words.
    pub quirk: &'static str,
    /// Where the library's code does it: repository, tag or commit, file and line.
    pub source: &'static str,
    /// A breaker in a configuration that shows the quirk.
    pub breaker: B,
    /// The calls and results, at their times (ms).
    pub script: Vec<(u64, Ev)>,
    /// The transitions the library makes: `(t_ms, from, to, reason)`.
    pub transitions: Vec<(u64, State, State, &'static str)>,
    /// Each `A` in order: `1` admitted, `0` refused.
    pub admits: &'static str,
}

/// Drives every quirk of a table and checks it; a failure names the quirk and its source line.
pub fn check_quirks<B: Breaker>(table: Vec<Quirk<B>>) {
    for mut q in table {
        let r = drive(&mut q.breaker, &q.script);
        assert_eq!(r.tr, q.transitions, "transitions: {} ({})", q.quirk, q.source);
        assert_eq!(r.admit_string(), q.admits, "admissions: {} ({})", q.quirk, q.source);
    }
}
