//! The run loop: the one place where the client, the breaker and the dependency meet.
//!
//! Arrivals come from the pre-generated stream; every other event (a call's result reaching the
//! client, a retry falling due, a breaker's timer, a retry-queue cycle) goes through the
//! [`EventQueue`]. An arrival precedes any other event at the same instant, as if all arrivals
//! had been scheduled first. Results are recorded when each call completes, in event order, so a
//! call that started before a state change completes after it.

use super::queue::EventQueue;
use super::workload::Workload;
use crate::client::{ClientSpec, FallbackSpec};
use crate::metrics::{AttemptKind, Finish, Recorder, RecorderOptions, RunRecord};
use crate::outcome::{Classifier, OutcomeClass};
use crate::policy::{Admission, Breaker, Observation, Policy, PolicyConfig, Ticket, Transitions};
use crate::rng::Stream;
use crate::time::{Dur, SimTime};
use std::collections::VecDeque;

/// Options of one run that do not change the simulation itself.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Width of timeline bins, or `None` to skip the timeline (sweeps).
    pub timeline_bin: Option<Dur>,
}

/// One attempt of one request, carried through the queue.
#[derive(Copy, Clone, Debug)]
struct Call {
    request: u64,
    arrival: SimTime,
    /// 1 for the first try; every retry or deferred re-try adds one.
    attempt: u32,
    /// Index of the breaker (and recorder instance) this call goes through.
    breaker: u32,
    ticket: Ticket,
    /// The class the client saw (Timeout when it gave up).
    class: OutcomeClass,
    /// The latency the client saw.
    latency: Dur,
    retry_after: Option<Dur>,
    /// The previous backoff delay (for decorrelated jitter).
    last_delay: Dur,
    /// When the work went into the retry queue, for deferred work.
    deferred_at: Option<SimTime>,
}

enum Event {
    /// An attempt's result reaches the client.
    Complete(Call),
    /// A retry falls due.
    Retry(Call),
    /// A breaker's timer.
    Deadline(u32),
    /// The retry queue is worked through.
    QueueCycle,
}

/// Simulates one configuration on one workload and returns the raw record.
pub fn simulate(client: &ClientSpec, workload: &Workload, policy: &PolicyConfig, opts: &RunOptions) -> RunRecord {
    Engine::new(client, workload, policy, opts).run()
}

struct Engine<'a> {
    client: &'a ClientSpec,
    workload: &'a Workload,
    classifier: Classifier,
    timeout: Dur,
    breakers: Vec<Policy>,
    scheduled: Vec<Option<SimTime>>,
    instances: u64,
    queue: EventQueue<Event>,
    retry_queue: VecDeque<Call>,
    cycle_scheduled: bool,
    changes: Transitions,
    rec: Recorder,
}

impl<'a> Engine<'a> {
    fn new(client: &'a ClientSpec, workload: &'a Workload, policy: &PolicyConfig, opts: &RunOptions) -> Engine<'a> {
        let instances = u64::from(client.instances.max(1));
        let breaker_count = if client.shared_breaker { 1 } else { instances as usize };
        let breakers =
            (0..breaker_count).map(|b| policy.build(workload.seed.seed_for(Stream::Policy, b as u64))).collect();
        let timeout = policy.call_timeout().unwrap_or(client.timeout);
        let rec = Recorder::new(RecorderOptions {
            horizon: workload.horizon,
            instances: breaker_count,
            timeline_bin: opts.timeline_bin,
            truth: workload.truth.clone(),
        });
        Engine {
            client,
            workload,
            classifier: policy.classifier(),
            timeout: if timeout.is_zero() { Dur::MAX } else { timeout },
            breakers,
            scheduled: vec![None; breaker_count],
            instances,
            queue: EventQueue::with_capacity(1024, workload.arrivals.len() as u64),
            retry_queue: VecDeque::new(),
            cycle_scheduled: false,
            changes: Vec::with_capacity(8),
            rec,
        }
    }

    fn run(mut self) -> RunRecord {
        for b in 0..self.breakers.len() {
            self.reschedule(b as u32, SimTime::ZERO);
        }
        let arrivals = &self.workload.arrivals;
        let mut next_arrival = 0usize;
        let mut now = SimTime::ZERO;
        loop {
            let arrival_first = match (arrivals.get(next_arrival), self.queue.peek_time()) {
                (Some(&a), Some(q)) => a <= q,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if arrival_first {
                let i = next_arrival;
                next_arrival += 1;
                now = arrivals[i];
                self.arrive(now, i as u64);
                continue;
            }
            let Some((at, event)) = self.queue.pop() else { break };
            now = at;
            match event {
                Event::Complete(call) => self.complete(now, call),
                Event::Retry(call) => self.attempt(now, call, AttemptKind::Retry),
                Event::Deadline(b) => {
                    if self.scheduled[b as usize] == Some(now) {
                        self.scheduled[b as usize] = None;
                        self.breakers[b as usize].on_deadline(now, &mut self.changes);
                        self.flush(b);
                        self.reschedule(b, now);
                    }
                }
                Event::QueueCycle => self.work_retry_queue(now),
            }
        }
        self.rec.finish(now.max(self.workload.horizon))
    }

    fn arrive(&mut self, now: SimTime, request: u64) {
        self.rec.request_arrived(now);
        let breaker = if self.client.shared_breaker { 0 } else { (request % self.instances) as u32 };
        let call = Call {
            request,
            arrival: now,
            attempt: 1,
            breaker,
            ticket: Ticket::default(),
            class: OutcomeClass::Ok,
            latency: Dur::ZERO,
            retry_after: None,
            last_delay: Dur::ZERO,
            deferred_at: None,
        };
        self.attempt(now, call, AttemptKind::First);
    }

    /// Asks the breaker and, if allowed, sends the attempt upstream.
    fn attempt(&mut self, now: SimTime, mut call: Call, kind: AttemptKind) {
        let b = call.breaker;
        let admission = self.breakers[b as usize].admit(now, &mut self.changes);
        self.flush(b);
        self.reschedule(b, now);
        let Admission::Allow(ticket) = admission else {
            self.rec.rejected(now, b as usize);
            if call.deferred_at.is_some() {
                self.defer_again(now, call);
            } else if self.client.retry.retries_rejection(call.attempt) {
                self.schedule_retry(now, call, None);
            } else {
                self.give_up(now, call, true);
            }
            return;
        };
        let kind = if ticket.probe { AttemptKind::Probe } else { kind };
        self.rec.attempt_sent(now, b as usize, kind);
        let answer = self.workload.answer(call.request, call.attempt, now);
        let (class, latency) =
            if answer.latency >= self.timeout { (OutcomeClass::Timeout, self.timeout) } else { (answer.class, answer.latency) };
        call.ticket = ticket;
        call.class = class;
        call.latency = latency;
        call.retry_after = answer.retry_after;
        self.queue.push(now + latency, Event::Complete(call));
    }

    /// An attempt's result reaches the client.
    fn complete(&mut self, now: SimTime, call: Call) {
        let b = call.breaker;
        let verdict = self.classifier.verdict(call.class);
        let obs = Observation { verdict, latency: call.latency };
        self.breakers[b as usize].record(now, call.ticket, obs, &mut self.changes);
        self.flush(b);
        self.reschedule(b, now);
        self.rec.attempt_done(now, b as usize, call.class, verdict, call.latency);
        if let Some(deferred_at) = call.deferred_at {
            if call.class == OutcomeClass::Ok {
                self.rec.deferred_done(deferred_at, now, true);
            } else {
                self.defer_again(now, call);
            }
            return;
        }
        if call.class == OutcomeClass::Ok {
            self.rec.request_done(call.arrival, now, Finish::Success, None);
        } else if self.client.retry.retries(call.class, call.attempt) {
            let hint = if self.client.retry.honour_retry_after { call.retry_after } else { None };
            self.schedule_retry(now, call, hint);
        } else {
            self.give_up(now, call, false);
        }
    }

    fn schedule_retry(&mut self, now: SimTime, mut call: Call, hint: Option<Dur>) {
        let mut rng = self.workload.seed.draw(Stream::Backoff, call.request, call.attempt);
        let delay = self.client.retry.delay(call.attempt, call.last_delay, hint, &mut rng);
        call.attempt += 1;
        call.last_delay = delay;
        self.queue.push(now + delay, Event::Retry(call));
    }

    /// The request failed for good (or was shed): answer it with the fallback.
    fn give_up(&mut self, now: SimTime, call: Call, shed: bool) {
        let shed = shed.then_some(now);
        match self.client.fallback {
            FallbackSpec::None => self.rec.request_done(call.arrival, now, Finish::Error, shed),
            FallbackSpec::Cached { latency } | FallbackSpec::Local { latency } => {
                self.rec.request_done(call.arrival, now + latency, Finish::Fallback, shed)
            }
            FallbackSpec::RetryQueue { latency, .. } => {
                self.rec.request_done(call.arrival, now + latency, Finish::Fallback, shed);
                self.rec.deferred(now);
                self.retry_queue.push_back(Call { deferred_at: Some(now), ..call });
                self.schedule_cycle(now);
            }
        }
    }

    /// Deferred work that could not be done this cycle waits for the next one.
    fn defer_again(&mut self, now: SimTime, call: Call) {
        self.retry_queue.push_back(call);
        self.schedule_cycle(now);
    }

    fn schedule_cycle(&mut self, now: SimTime) {
        if self.cycle_scheduled {
            return;
        }
        if let Some(next) = self.client.fallback.next_cycle(now).filter(|t| *t < self.workload.horizon) {
            self.cycle_scheduled = true;
            self.queue.push(next, Event::QueueCycle);
        }
    }

    /// A later run picks up the deferred work, in the order it was deferred.
    fn work_retry_queue(&mut self, now: SimTime) {
        self.cycle_scheduled = false;
        let due = self.retry_queue.len();
        for _ in 0..due {
            let Some(mut call) = self.retry_queue.pop_front() else { break };
            call.attempt += 1;
            self.attempt(now, call, AttemptKind::Deferred);
        }
    }

    fn flush(&mut self, b: u32) {
        for t in self.changes.drain(..) {
            self.rec.transition(b as usize, &t);
        }
    }

    /// Keeps one live timer event per breaker: schedules its current deadline if it changed.
    fn reschedule(&mut self, b: u32, now: SimTime) {
        let wanted = self.breakers[b as usize].deadline().map(|d| d.max(now)).filter(|d| *d < self.workload.horizon);
        if wanted != self.scheduled[b as usize] {
            self.scheduled[b as usize] = wanted;
            if let Some(at) = wanted {
                self.queue.push(at, Event::Deadline(b));
            }
        }
    }
}
