//! Active health checks of one client's hosts, as Envoy's HTTP health checker runs them
//! (source/extensions/health_checkers/common/health_checker_base_impl.cc at v1.28.0,
//! `ActiveHealthCheckSession`), for what they do to outlier detection: a host that fails them is
//! out of rotation (`FAILED_ACTIVE_HC`), and with `successful_active_health_check_uneject_host`
//! (Envoy's default) a check that completes while the host is not marked failed returns a host
//! the detector ejected (outlier_detection_impl.cc :311-321 at v1.28.0).
//!
//! Each host has one session: a check is sent, completes after the host's latency (or fails at
//! the timeout), and the next is sent `interval` after the completion. Rules, from
//! `handleSuccess` (:279-336) and `setUnhealthy` (:348-394):
//! - a success resets the failure count; a host marked failed is marked healthy again at the
//!   `healthy_threshold`-th success in a row;
//! - an answer that is not a 200 marks the host failed at once (not retriable), a timeout or
//!   a connection failure only at the `unhealthy_threshold`-th in a row; a failure resets the
//!   success count.
//!
//! Hosts start healthy, as in a warmed cluster. A leaf: the caller draws each check's answer.

use crate::outcome::OutcomeClass;
use crate::time::{Dur, SimTime};

/// What a check's answer was to the health checker.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A 200 within the timeout.
    Pass,
    /// Any other status: the host is marked failed at once.
    Fail,
    /// A timeout or a connection failure: counts towards `unhealthy_threshold`.
    Network,
}

impl Verdict {
    /// The verdict on an answer of `class` with status `code` that took `latency`, for a check
    /// with `timeout` (`connect_failure` is the pool's code for a refused connection), and when
    /// it completes after being sent.
    pub fn of(class: OutcomeClass, code: u16, latency: Dur, timeout: Dur) -> (Verdict, Dur) {
        if latency > timeout {
            return (Verdict::Network, timeout);
        }
        let verdict = match class {
            OutcomeClass::Ok => Verdict::Pass,
            _ if code == crate::upstream::pool::CONNECT_FAILURE => Verdict::Network,
            OutcomeClass::Timeout => Verdict::Network,
            _ => Verdict::Fail,
        };
        (verdict, latency)
    }
}

/// One host's session.
#[derive(Copy, Clone, Debug)]
struct Session {
    /// `FAILED_ACTIVE_HC`.
    failed: bool,
    /// Successes in a row while failed (`num_healthy_`).
    healthy_run: u32,
    /// Network failures in a row while healthy (`num_unhealthy_`).
    unhealthy_run: u32,
    /// When the check under way completes, and its verdict.
    due: SimTime,
    verdict: Verdict,
    /// Checks sent so far (the next one's number).
    sent: u64,
}

/// The sessions of one client's hosts.
#[derive(Clone, Debug)]
pub struct HealthChecks {
    interval: Dur,
    timeout: Dur,
    unhealthy_threshold: u32,
    healthy_threshold: u32,
    sessions: Vec<Session>,
}

impl HealthChecks {
    /// Sessions for `hosts` hosts checked every `interval` (after each completion) with
    /// `timeout`; each host's first check is sent at time zero and its answer drawn by `draw`
    /// (`host`, sent at, check number → class, status, latency).
    pub fn new(
        hosts: u16,
        interval: Dur,
        timeout: Dur,
        thresholds: (u32, u32),
        draw: &mut dyn FnMut(u16, SimTime, u64) -> (OutcomeClass, u16, Dur),
    ) -> HealthChecks {
        let (unhealthy_threshold, healthy_threshold) = thresholds;
        let mut hc =
            HealthChecks { interval, timeout, unhealthy_threshold, healthy_threshold, sessions: Vec::new() };
        hc.sessions = (0..hosts)
            .map(|h| {
                let (class, code, latency) = draw(h, SimTime::ZERO, 0);
                let (verdict, took) = Verdict::of(class, code, latency, timeout);
                let due = SimTime::ZERO + took;
                Session { failed: false, healthy_run: 0, unhealthy_run: 0, due, verdict, sent: 1 }
            })
            .collect();
        hc
    }

    /// The next instant a check completes.
    pub fn next_due(&self) -> SimTime {
        self.sessions.iter().map(|s| s.due).min().unwrap_or(SimTime(u64::MAX))
    }

    /// True when `host` is marked failed (`FAILED_ACTIVE_HC`): out of rotation.
    #[inline]
    pub fn failed(&self, host: u16) -> bool {
        self.sessions[usize::from(host)].failed
    }

    /// Completes every check due at `now`, in host order: each host's marking is updated,
    /// `completed(host, changed)` hears of it (the health checker's callbacks), and its next
    /// check is sent `interval` later with its answer drawn by `draw`.
    pub fn complete(
        &mut self,
        now: SimTime,
        draw: &mut dyn FnMut(u16, SimTime, u64) -> (OutcomeClass, u16, Dur),
        completed: &mut dyn FnMut(u16, bool),
    ) {
        for h in 0..self.sessions.len() as u16 {
            let s = &mut self.sessions[usize::from(h)];
            if s.due != now {
                continue;
            }
            let was = s.failed;
            match s.verdict {
                Verdict::Pass => {
                    s.unhealthy_run = 0;
                    if s.failed {
                        s.healthy_run += 1;
                        if s.healthy_run == self.healthy_threshold {
                            s.failed = false;
                        }
                    }
                }
                Verdict::Fail | Verdict::Network => {
                    s.healthy_run = 0;
                    if !s.failed {
                        s.unhealthy_run += 1;
                        if s.verdict == Verdict::Fail || s.unhealthy_run == self.unhealthy_threshold {
                            s.failed = true;
                        }
                    }
                }
            }
            if s.failed != was {
                s.healthy_run = 0;
                s.unhealthy_run = 0;
            }
            let changed = s.failed != was;
            let send = now + self.interval;
            let (class, code, latency) = draw(h, send, s.sent);
            let (verdict, took) = Verdict::of(class, code, latency, self.timeout);
            let s = &mut self.sessions[usize::from(h)];
            s.sent += 1;
            s.due = send + took;
            s.verdict = verdict;
            completed(h, changed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000;

    /// Host 0 answers each check with `script[k]` (class, latency ms), then 200s.
    fn scripted(
        script: Vec<(OutcomeClass, u64)>,
    ) -> impl FnMut(u16, SimTime, u64) -> (OutcomeClass, u16, Dur) {
        move |_, _, k| {
            let (class, ms) = script.get(k as usize).copied().unwrap_or((OutcomeClass::Ok, 10));
            let code = if class == OutcomeClass::Ok { 200 } else { 503 };
            (class, code, Dur::from_millis(ms))
        }
    }

    /// Runs the checks up to `end_ms`: (completion ms, failed after it) per check.
    fn run(script: Vec<(OutcomeClass, u64)>, end_ms: u64) -> Vec<(u64, bool)> {
        let mut draw = scripted(script);
        let mut hc = HealthChecks::new(1, Dur::from_secs(5), Dur::from_secs(1), (3, 2), &mut draw);
        let mut seen = Vec::new();
        while hc.next_due() <= SimTime(end_ms * MS) {
            let now = hc.next_due();
            let mut marks = Vec::new();
            hc.complete(now, &mut draw, &mut |h, _| marks.push(h));
            seen.push((now.micros() / MS, hc.failed(0)));
        }
        seen
    }

    #[test]
    fn a_5xx_fails_at_once_timeouts_after_the_threshold_and_successes_restore() {
        use OutcomeClass::{Error, Ok};
        // Sent at 0, 5.01, 10.02 ...: the first completes at 10 ms, each next 5 s after the
        // last completion plus its own latency.
        let passes = run(vec![], 11_000);
        assert_eq!(passes, vec![(10, false), (5_020, false), (10_030, false)]);
        // A 503 marks the host failed at once; two 200s in a row restore it.
        let fail = run(vec![(Ok, 10), (Error, 10), (Ok, 10), (Ok, 10)], 16_000);
        assert_eq!(fail, vec![(10, false), (5_020, true), (10_030, true), (15_040, false)]);
        // Timeouts (over the 1 s timeout, completing at it) count: the third in a row marks it.
        let slow = run(vec![(Ok, 10), (Ok, 2_000), (Ok, 2_000), (Ok, 2_000), (Ok, 10)], 25_000);
        let marks: Vec<(u64, bool)> = slow.into_iter().take(5).collect();
        assert_eq!(marks, vec![(10, false), (6_010, false), (12_010, false), (18_010, true), (23_020, true)]);
    }
}
