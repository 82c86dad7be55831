//! A toy family that exists only in tests, to prove what adding a family costs: this file plus
//! one registry line (which also declares this module). It opens after `threshold` failures in a row, stays open `open_for`, then
//! lets one probe decide.

use crate::policy::evidence::{Evidence, Test};
use crate::policy::family::{Family, Preset};
use crate::policy::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use crate::policy::param::{PolicyError, at_least_one, family_config};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// The toy's parameters.
    ToyConfig {
        threshold: u32, "calls", "failures in a row that open";
        open_for: Dur, "duration", "time open before one probe";
    }
}

impl Family for ToyConfig {
    type Breaker = ToyBreaker;
    const NAME: &'static str = "toy";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "toy",
        library: "",
        summary: "test-only: 2 failures in a row open it for 1 s",
        source: "src/policy/toy.rs",
        quirks: &[],
        config: || ToyConfig { threshold: 2, open_for: Dur::from_secs(1) },
        classifier: Classifier::DEFAULT,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("threshold", self.threshold)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> ToyBreaker {
        ToyBreaker { cfg: self.clone(), phase: Phase::new(), failures: 0, opened_at: SimTime::ZERO }
    }
}

/// The toy's state machine.
#[derive(Clone, Debug)]
pub struct ToyBreaker {
    cfg: ToyConfig,
    phase: Phase,
    failures: u32,
    opened_at: SimTime,
}

impl Breaker for ToyBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        match self.phase.state() {
            State::Closed => Admission::Allow(self.phase.ticket(false)),
            State::Open if now.since(self.opened_at) >= self.cfg.open_for => {
                let ev = self.evidence_for(now, out);
                self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", ev, out);
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Reject,
        }
    }

    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        let state = self.phase.state();
        match obs.verdict {
            Verdict::Ignored => {}
            Verdict::Success if state == State::HalfOpen && ticket.probe => {
                let ev = self.evidence_for(now, out);
                self.failures = 0;
                self.phase.enter(now, State::Closed, "probe_successes", ev, out);
            }
            Verdict::Success => self.failures = 0,
            Verdict::Failure if state == State::HalfOpen && ticket.probe => {
                let ev = self.evidence_for(now, out);
                self.opened_at = now;
                self.phase.enter(now, State::Open, "probe_failed", ev, out);
            }
            Verdict::Failure if state == State::Closed => {
                self.failures += 1;
                if self.failures >= self.cfg.threshold {
                    let ev = self.evidence_for(now, out);
                    self.opened_at = now;
                    self.phase.enter(now, State::Open, "consecutive_failures", ev, out);
                }
            }
            Verdict::Failure => {}
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        match self.phase.state() {
            State::Closed => ev.count(
                "consecutive_failures",
                u64::from(self.failures),
                Test::AtLeast,
                "threshold",
                u64::from(self.cfg.threshold),
            ),
            State::Open => {
                ev.open_for(now.since(self.opened_at), Test::AtLeast, "open_for", self.cfg.open_for)
            }
            State::HalfOpen => ev.fact_count("probes", 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::testkit::{C, Ev::*, H, O, drive};
    use crate::policy::{Library, PolicySpec, export::export};

    #[test]
    fn a_registered_family_resolves_builds_runs_and_refuses_export() {
        let mut spec = PolicySpec::new("toy");
        spec.overrides.insert("threshold".into(), toml::Value::Integer(3));
        let cfg = spec.resolve().unwrap();
        assert_eq!((cfg.family(), cfg.label().as_str()), ("toy", "toy[threshold=3]"));
        let mut p = cfg.build(0);
        let r = drive(&mut p, &[(0, A), (0, F(1)), (1, A), (1, F(1)), (2, A), (2, F(1)), (3, A)]);
        assert_eq!(r.tr, vec![(2, C, O, "consecutive_failures")]);
        let r = drive(&mut p, &[(1_002, A), (1_003, S(1))]);
        assert_eq!(r.tr, vec![(1_002, O, H, "cooldown_elapsed"), (1_003, H, C, "probe_successes")]);
        let e = export(&cfg, Library::Polly, "x").unwrap_err().to_string();
        assert!(e.contains("the toy family is not polly's state machine"), "{e}");
        spec.overrides.insert("threshold".into(), toml::Value::Integer(0));
        assert!(spec.resolve().unwrap_err().to_string().contains("`threshold`"));
    }
}
