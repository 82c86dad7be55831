//! The state-machine vocabulary every family speaks: the three states, transitions, tickets,
//! admissions, observations, the [`Breaker`] trait, and [`Phase`], the one place where a state
//! changes (as Resilience4j's `CircuitBreakerStateMachine` routes every change through
//! `stateTransition`), with the evidence the family saw. A leaf: it imports nothing else of
//! `policy` but the evidence record.

use super::evidence::Evidence;
use crate::outcome::Verdict;
use crate::time::{Dur, SimTime};

/// The three states every breaker reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Calls pass.
    Closed,
    /// Calls are rejected.
    Open,
    /// Some calls pass as probes of recovery.
    HalfOpen,
}

impl State {
    /// Every state, in a fixed order.
    pub const ALL: [State; 3] = [State::Closed, State::Open, State::HalfOpen];

    /// Position in [`State::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in files: `closed`, `open`, `half_open`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
        }
    }
}

/// One state change, with the rule that caused it. What that rule saw is kept beside it, in
/// [`Transitions`], only when the run explains: 32 bytes here against about 570 for the
/// evidence, which a sweep never writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// When it happened.
    pub at: SimTime,
    /// The state left.
    pub from: State,
    /// The state entered.
    pub to: State,
    /// A short snake_case reason, e.g. `consecutive_failures`, `cooldown_elapsed`, `probe_failed`.
    pub reason: &'static str,
}

/// Handed out by [`Breaker::admit`] and given back to [`Breaker::record`] with the call's result,
/// so a policy can tell a probe from an ordinary call and a result of an earlier generation from
/// a current one. Its meaning belongs to the policy that issued it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ticket {
    /// The policy's generation (or epoch) when the call was admitted.
    pub generation: u64,
    /// True when the call was admitted as a half-open probe.
    pub probe: bool,
}

/// The answer to "may this call start now?".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Send the call; return the ticket with its result.
    Allow(Ticket),
    /// Do not send it (the client falls back).
    Reject,
    /// Hold it: the engine parks the call and offers it again (in arrival order) once the
    /// breaker, after recording a result or running its timer, no longer
    /// [holds](Breaker::holds) what it waits for, as a caller blocked on the library's lock or
    /// on the half-open test would wake. The wait counts in the caller's latency.
    Wait,
}

/// How one admitted call ended, as the breaker is told.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Success, failure or ignored, from the policy's classifier.
    pub verdict: Verdict,
    /// How long the call took as the client saw it (capped at the client's timeout).
    pub latency: Dur,
}

/// Where a policy reports its state changes, in order, each with its evidence (what the left
/// state's rules saw at that instant, [`Breaker::evidence`] just before the change) when the
/// buffer keeps it ([`Transitions::new`]; [`Transitions::without_evidence`] drops it, as a sweep
/// writes no explain.csv). The engine passes one reusable buffer, so reporting allocates nothing
/// once the buffer has grown. Reads as a slice of the transitions.
#[derive(Clone, Debug)]
pub struct Transitions {
    list: Vec<Transition>,
    /// The evidence of each transition of `list` (empty unless `keep_evidence`).
    evidence: Vec<Evidence>,
    keep_evidence: bool,
}

impl Default for Transitions {
    fn default() -> Transitions {
        Transitions::new()
    }
}

impl Transitions {
    /// An empty buffer that keeps each transition's evidence.
    pub fn new() -> Transitions {
        Transitions::with_capacity(0, true)
    }

    /// An empty buffer that keeps the transitions only.
    pub fn without_evidence() -> Transitions {
        Transitions::with_capacity(0, false)
    }

    /// An empty buffer with room for `capacity` transitions, keeping their evidence or not.
    pub fn with_capacity(capacity: usize, keep_evidence: bool) -> Transitions {
        let evidence = if keep_evidence { Vec::with_capacity(capacity) } else { Vec::new() };
        Transitions { list: Vec::with_capacity(capacity), evidence, keep_evidence }
    }

    /// True when each transition's evidence is kept: a family may skip working it out when not.
    #[inline]
    pub fn keeps_evidence(&self) -> bool {
        self.keep_evidence
    }

    /// Adds a transition seen as `evidence` (dropped unless kept).
    #[inline]
    pub fn push(&mut self, t: Transition, evidence: Evidence) {
        self.list.push(t);
        if self.keep_evidence {
            self.evidence.push(evidence);
        }
    }

    /// The evidence of transition `i`, when kept.
    pub fn evidence(&self, i: usize) -> Option<&Evidence> {
        self.evidence.get(i)
    }

    /// Forgets every transition (keeping the room).
    #[inline]
    pub fn clear(&mut self) {
        self.list.clear();
        self.evidence.clear();
    }
}

impl std::ops::Deref for Transitions {
    type Target = [Transition];
    fn deref(&self) -> &[Transition] {
        &self.list
    }
}

impl<'a> IntoIterator for &'a Transitions {
    type Item = &'a Transition;
    type IntoIter = std::slice::Iter<'a, Transition>;
    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

/// A breaker state machine, driven by the engine in event order.
pub trait Breaker {
    /// A call wants to start at `now`.
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission;
    /// A call admitted with `ticket` completed at `now`.
    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions);
    /// The current state (without side effects).
    fn state(&self) -> State;
    /// What the current state's rules see at `now`, named after the family's parameters: in
    /// closed, each trip rule's measure against its threshold (and gates such as a minimum
    /// number of calls); in open, the time open against the open duration; in half-open, the
    /// probes and their results against what closes or reopens it. Read-only: `now` is the
    /// instant of a change or of a result just recorded. Filled into `ev` at every state
    /// change ([`Phase::enter`]) and at an incident's moments (explain.csv).
    fn evidence(&self, now: SimTime, ev: &mut Evidence);
    /// [`Breaker::evidence`] as a fresh record.
    fn evidence_at(&self, now: SimTime) -> Evidence {
        let mut ev = Evidence::EMPTY;
        self.evidence(now, &mut ev);
        ev
    }
    /// [`Breaker::evidence_at`] when `out` keeps each transition's evidence, otherwise an empty
    /// record, not worked out (a sweep's runs never read it).
    #[inline]
    fn evidence_for(&self, now: SimTime, out: &Transitions) -> Evidence {
        if out.keeps_evidence() { self.evidence_at(now) } else { Evidence::EMPTY }
    }
    /// False for a breaker without a timer (its [`Breaker::deadline`] is always `None`): the
    /// engine's direct path then never asks for one. One that overrides `deadline` keeps it true.
    const TIMED: bool = true;
    /// The next instant at which the policy wants [`Breaker::on_deadline`] called (active
    /// transitions, periodic evaluation), or `None`.
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    /// Called by the engine at (or after) the instant [`Breaker::deadline`] returned.
    fn on_deadline(&mut self, _now: SimTime, _out: &mut Transitions) {}
    /// What a call told to [`Admission::Wait`] now waits for (the policy's own key, e.g. the
    /// half-open test in flight); the engine keeps it with the parked call.
    fn wait_key(&self) -> u64 {
        0
    }
    /// True while what a call parked with `key` waits for is still busy (a lock held, its
    /// half-open test in flight): the engine offers it again only once this is false.
    fn holds(&self, _key: u64) -> bool {
        false
    }
}

/// A breaker's current state and generation. Every family changes state only through
/// [`Phase::enter`], which reports the transition and starts a new generation, so no family can
/// forget either.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    state: State,
    generation: u64,
}

impl Default for Phase {
    fn default() -> Phase {
        Phase::new()
    }
}

impl Phase {
    /// Closed, generation 0.
    pub const fn new() -> Phase {
        Phase { state: State::Closed, generation: 0 }
    }

    /// The current state.
    #[inline]
    pub fn state(&self) -> State {
        self.state
    }

    /// The current generation (one more per state change, see [`Phase::next_generation`]).
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A ticket of the current generation.
    #[inline]
    pub fn ticket(&self, probe: bool) -> Ticket {
        Ticket { generation: self.generation, probe }
    }

    /// Moves to `to` at `at` for `reason`, seen as `evidence` (the breaker's
    /// [`Breaker::evidence_at`] just before the change): reports the transition to `out` and
    /// starts a new generation.
    #[inline]
    pub fn enter(
        &mut self,
        at: SimTime,
        to: State,
        reason: &'static str,
        evidence: Evidence,
        out: &mut Transitions,
    ) {
        out.push(Transition { at, from: self.state, to, reason }, evidence);
        self.state = to;
        self.generation += 1;
    }

    /// As [`Phase::enter`], but only when `to` differs from the current state (libraries whose
    /// `setState` ignores a move to the state it is in); returns whether it moved.
    #[inline]
    pub fn change(
        &mut self,
        at: SimTime,
        to: State,
        reason: &'static str,
        evidence: Evidence,
        out: &mut Transitions,
    ) -> bool {
        let moved = self.state != to;
        if moved {
            self.enter(at, to, reason, evidence, out);
        }
        moved
    }

    /// Starts a new generation without a state change (gobreaker's closed-state interval).
    #[inline]
    pub fn next_generation(&mut self) {
        self.generation += 1;
    }
}
