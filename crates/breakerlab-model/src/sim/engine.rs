//! The run loop: the one place where the client, the breaker and the dependency meet.
//!
//! Arrivals come from the pre-generated stream; every other event (a call's result reaching the
//! client, a retry falling due, a breaker's timer, a retry-queue cycle) goes through the
//! [`EventQueue`]. At one instant, results, call timeouts and breaker timers come first, then the
//! arrivals in trace order, then retries, retry-queue cycles and restarts ([`Phase`]): a client
//! that calls again the instant an answer returns has already seen it. Results are recorded when
//! each call completes, in event order, so a call that started before a state change completes
//! after it.
//!
//! A call waiting in the queue (for its result or its retry) is kept in the [`CallSlab`], and
//! its event carries only the slab index: the queue moves its entries on every push and pop, so
//! a small entry is what makes it cheap.
//!
//! Routing (`[[providers]]`): each client attempt is a routing pass over the providers, in the
//! order of [`routing::Router`]. The pass tries the first provider whose breaker admits the
//! call; a failed try fails over at once (no backoff, seed 002) to the next untried provider, a
//! rejection skips to the next one. When every provider was tried or rejected, the pass ends as
//! an attempt ends without routing: retried by the client's ladder (a new pass, every provider
//! untried again) or answered by the fallback. Breakers, health scores and the breaker index in
//! the record are per (breaker slot, provider): `slot · providers + provider`
//! ([`Engine::guard_index`]). A scenario without providers is the same with one provider.

mod parked;
mod pool;
mod routing;

use super::queue::{EventQueue, Key, Phase};
use super::workload::{Answers, Chunk, Workload};
use crate::client::{Budget, ClientSpec, FallbackSpec, Persist};
use crate::metrics::{
    AttemptKind, CallRecord, FallbackKind, Finish, Recorder, RecorderOptions, RunRecord, Snapshots,
};
use crate::outcome::{Answer, Classifier, OutcomeClass};
use crate::policy::{
    Admission, Breaker, FamilyVisitor, Observation, Policy, PolicyConfig, State, Ticket, Transition,
    Transitions, Variant,
};
use crate::rng::Stream;
use crate::scenario::Strategy;
use crate::time::{Dur, SimTime};
use crate::upstream::Load;
use parked::Parked;
use pool::PoolRun;
use routing::Router;
use std::collections::VecDeque;
use std::marker::PhantomData;

/// Options of one run that do not change the simulation itself.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Width of timeline bins, or `None` to skip the timeline (sweeps).
    pub timeline_bin: Option<Dur>,
    /// Keep each breaker's evidence at the incidents' moments (explain.csv); sweeps do not.
    pub explain: bool,
}

/// One attempt of one request.
#[derive(Copy, Clone, Debug)]
struct Call {
    request: u64,
    arrival: SimTime,
    /// 1 for the first try; every retry or deferred re-try adds one.
    attempt: u32,
    /// The client instance that made the request (its breaker slot is [`Engine::slot`]).
    instance: u32,
    /// The provider of the try in flight.
    provider: u8,
    /// Providers tried or rejected in this routing pass (bit per provider).
    tried: u32,
    /// True once a try of this pass went upstream (a pass with none was shed).
    sent: bool,
    /// True while this attempt is a retry in flight (for the concurrency budget).
    retry_in_flight: bool,
    /// What the retry quota charged for this attempt (refunded if it succeeds).
    retry_cost: u32,
    /// The client process that sent the attempt (a restarted process never hears of it).
    epoch: u32,
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
    /// With a pool of hosts: the host of the try in flight.
    host: u16,
}

/// What the queue carries: small, as the heap moves its entries on every push and pop. A call
/// is carried by its index in its [`Slab`].
#[derive(Copy, Clone, Debug)]
enum Event {
    /// An attempt's result reaches the client.
    Complete(u32),
    /// A first try sent on the direct path reaches the client ([`Engine::flights`]).
    Landed(u32),
    /// A retry falls due.
    Retry(u32),
    /// A breaker's timer (the breaker's [`Engine::guard_index`]).
    Deadline(u32),
    /// The retry queue is worked through.
    QueueCycle,
    /// A provider's dependency finished a call (capacity model only).
    UpstreamDone(u32),
    /// The client process restarts (a scheduled job's next run).
    Restart,
    /// A client's outlier detector's interval timer (the client's breaker slot).
    PoolTick(u32),
}

/// A first try in flight on the direct path ([`Engine::direct`]): all its completion needs,
/// 40 bytes against the 104 of a [`Call`].
#[derive(Copy, Clone, Debug)]
struct Flight {
    arrival: SimTime,
    /// The latency the client saw.
    latency: Dur,
    ticket: Ticket,
    /// The class the client saw (Timeout when it gave up).
    class: OutcomeClass,
}

/// The calls the queue's events refer to: preallocated places reused as calls come and go, so
/// a run allocates only while its number of calls in flight reaches a new high.
struct Slab<T> {
    calls: Vec<T>,
    /// Places free for reuse.
    free: Vec<u32>,
}

impl<T: Copy> Slab<T> {
    fn with_capacity(capacity: usize) -> Slab<T> {
        Slab { calls: Vec::with_capacity(capacity), free: Vec::with_capacity(capacity) }
    }

    /// Stores `call`; returns its place.
    #[inline]
    fn put(&mut self, call: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.calls[i as usize] = call;
                i
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as u32
            }
        }
    }

    /// Takes the call out of place `i`, which becomes free.
    #[inline]
    fn take(&mut self, i: u32) -> T {
        self.free.push(i);
        self.calls[i as usize]
    }
}

/// One breaker slot (a client instance, or the one shared breaker): its configuration.
struct Slot<'a> {
    policy: &'a PolicyConfig,
    /// Which outcome classes the policy counts as failures.
    classifier: Classifier,
    /// The call timeout the client applies (the policy's own when it imposes one).
    timeout: Dur,
}

/// One breaker (a breaker slot's, for one provider) with its timer and the calls it holds.
struct Guard {
    breaker: Policy,
    /// The instant of the timer event in the queue for it, if one is live.
    scheduled: Option<SimTime>,
    /// Calls it told to wait ([`Admission::Wait`]), in arrival order, with their attempt kind
    /// and wait key.
    parked: Parked<(Call, AttemptKind)>,
}

/// One client instance: its retry budget and what it has in flight.
struct Instance {
    budget: Budget,
    /// Requests not yet answered (on the direct path, only those parked as a [`Call`], which
    /// finish the general way: only the retry budget reads it, and the direct path has none).
    active_requests: u64,
    /// Retries in flight.
    active_retries: u64,
}

/// How the run loop reaches breakers: the general way (through [`Policy`]'s dispatch), or on
/// the direct path ([`Engine::direct`]) straight to family `F`'s breaker, so the calls of the
/// hot loop are monomorphised and inlined. Either is correct for any breaker of the run: the
/// direct lane only skips the dispatch.
trait Lane {
    /// True on the direct path: arrivals run by [`Engine::arrive_direct`].
    const DIRECT: bool;
    /// The breaker type reached.
    type Breaker: Breaker;
    /// The breaker in `policy`.
    fn of(policy: &mut Policy) -> &mut Self::Breaker;
    /// As [`Lane::of`], read-only.
    fn of_ref(policy: &Policy) -> &Self::Breaker;
}

/// Every run that is not direct, and the rare events of a direct one.
struct General;

impl Lane for General {
    const DIRECT: bool = false;
    type Breaker = Policy;
    #[inline(always)]
    fn of(policy: &mut Policy) -> &mut Policy {
        policy
    }
    #[inline(always)]
    fn of_ref(policy: &Policy) -> &Policy {
        policy
    }
}

/// The direct path of a run whose policy is of family `F`.
struct Direct<F>(PhantomData<F>);

impl<F: Variant> Lane for Direct<F> {
    const DIRECT: bool = true;
    type Breaker = F::Breaker;
    #[inline(always)]
    fn of(policy: &mut Policy) -> &mut F::Breaker {
        F::of(policy)
    }
    #[inline(always)]
    fn of_ref(policy: &Policy) -> &F::Breaker {
        F::of_ref(policy)
    }
}

/// [`Engine::advance`] on the direct lane of the policy's family ([`FamilyConfig::visit`]).
struct DirectRun<'e, 'a, 'c> {
    engine: &'e mut Engine<'a>,
    chunk: &'c Chunk,
    last: bool,
}

impl FamilyVisitor for DirectRun<'_, '_, '_> {
    type Out = ();
    fn visit<F: Variant>(self) {
        self.engine.run::<Direct<F>>(self.chunk, self.last);
    }
}

/// Simulates one configuration on one workload and returns the raw record.
pub fn simulate(
    client: &ClientSpec,
    workload: &Workload,
    policy: &PolicyConfig,
    opts: &RunOptions,
) -> RunRecord {
    simulate_fleet(client, workload, std::slice::from_ref(policy), opts)
}

/// Simulates a mixed fleet: client instance `i` runs `policies[i % policies.len()]` (with a
/// shared breaker, `policies[0]`). One policy for every instance is [`simulate`].
pub fn simulate_fleet(
    client: &ClientSpec,
    workload: &Workload,
    policies: &[PolicyConfig],
    opts: &RunOptions,
) -> RunRecord {
    let mut sim = Simulation::new(client, workload, policies, opts);
    let mut stream = workload.stream();
    let mut chunk = Chunk::default();
    while stream.next_chunk(&mut chunk) {
        sim.feed(&chunk);
    }
    sim.finish()
}

/// One configuration's run, fed the request stream chunk by chunk: a sweep generates each chunk
/// once and feeds it to every configuration. Chunks must come in order, from the workload the
/// simulation was made for; the record is the same however the stream is cut into chunks.
pub struct Simulation<'a> {
    engine: Engine<'a>,
}

impl<'a> Simulation<'a> {
    /// A run of `policies` (client instance `i` runs `policies[i % len]`) on `workload`, before
    /// its first request.
    pub fn new(
        client: &'a ClientSpec,
        workload: &'a Workload,
        policies: &'a [PolicyConfig],
        opts: &RunOptions,
    ) -> Simulation<'a> {
        let mut engine = Engine::new(client, workload, policies, opts);
        engine.start();
        Simulation { engine }
    }

    /// Runs the requests of `chunk` (the stream's next one), and everything that happens before
    /// its last arrival.
    pub fn feed(&mut self, chunk: &Chunk) {
        self.engine.advance(chunk, false);
    }

    /// Hands the state changes recorded since the last call to `f`, with their evidence, and
    /// drops that evidence ([`crate::metrics::Recorder::drain_transitions`]).
    pub fn drain_transitions<E>(
        &mut self,
        f: impl FnMut(usize, &crate::policy::Transition, &crate::policy::Evidence) -> Result<(), E>,
    ) -> Result<(), E> {
        self.engine.rec.drain_transitions(f)
    }

    /// Hands the scripted calls answered since the last call to `f`, in script order, as a
    /// vector of their own (a direct run only: see [`Engine::direct`]); the record keeps the
    /// rest ([`RunRecord::calls_from`]). `f` gives back a vector (emptied, its room reused) for
    /// the calls to come, so a long run copies no call twice and reuses the same few vectors.
    pub fn drain_calls<E>(
        &mut self,
        f: impl FnOnce(Vec<CallRecord>) -> Result<Vec<CallRecord>, E>,
    ) -> Result<(), E> {
        self.engine.drain_calls(f)
    }

    /// Runs what is left after the last request and returns the record.
    pub fn finish(mut self) -> RunRecord {
        self.engine.advance(&Chunk::default(), true);
        self.engine.finish()
    }
}

struct Engine<'a> {
    client: &'a ClientSpec,
    workload: &'a Workload,
    /// Current client process (incremented at every restart).
    epoch: u32,
    /// Each breaker slot (client instance, or the one shared breaker).
    slots: Vec<Slot<'a>>,
    /// Each breaker, at [`Engine::guard_index`].
    guards: Vec<Guard>,
    /// Each client instance.
    instances: Vec<Instance>,
    router: Router,
    /// Each provider's capacity model, when limited.
    loads: Vec<Option<Load>>,
    queue: EventQueue<Event>,
    /// The calls the queue's events refer to.
    slab: Slab<Call>,
    /// The first tries in flight on the direct path.
    flights: Slab<Flight>,
    /// Decided once per run: the scenario has one client instance, one provider, no retries,
    /// no retry queue, no capacity limit and no restarts, so an arrival's first
    /// try is the request's only attempt and [`Engine::arrive_direct`] runs it without the
    /// routing pass and the retry ladder (identical events, fewer steps).
    direct: bool,
    /// The clock: the time of the last event.
    now: SimTime,
    /// The first answer the current chunk drew for the request that arrived last, until its
    /// first try is sent.
    drawn: Option<(u64, Answer)>,
    retry_queue: VecDeque<Call>,
    /// With a pool of hosts (`[upstream] hosts`): each client's balancer and detector.
    pool: Option<Box<PoolRun>>,
    /// Each scripted call's fate, kept for calls.csv (empty unless the workload is a script):
    /// `calls[i]` is request `calls_from + i`; a direct run hands out answered calls as it goes
    /// ([`Engine::drain_calls`]).
    calls: Vec<CallRecord>,
    /// The request number of `calls[0]`.
    calls_from: u64,
    /// Where [`Engine::drain_calls`] keeps the calls still waiting for their answers while the
    /// log's vector is handed out.
    waiting_calls: Vec<CallRecord>,
    /// True for a scripted workload (then `calls` grows by one record per arrival).
    log_calls: bool,
    cycle_scheduled: bool,
    changes: Transitions,
    rec: Recorder,
    /// The incidents' evidence snapshots, when the run explains.
    snapshots: Option<Snapshots>,
}

impl<'a> Engine<'a> {
    fn new(
        client: &'a ClientSpec,
        workload: &'a Workload,
        policies: &'a [PolicyConfig],
        opts: &RunOptions,
    ) -> Engine<'a> {
        let instances = client.instances.max(1) as usize;
        let slot_count = if client.shared_breaker { 1 } else { instances };
        let providers = workload.providers();
        let router = Router::new(
            providers.map_or(1, |p| p.len() as u32),
            providers.map_or(Strategy::Priority, |p| p.strategy),
            slot_count,
        );
        let slots: Vec<Slot> = (0..slot_count)
            .map(|s| {
                let policy = &policies[s % policies.len()];
                let timeout = if policy.imposes_call_timeout() {
                    policy.call_timeout().unwrap_or(Dur::MAX)
                } else {
                    client.timeout
                };
                Slot { policy, classifier: policy.classifier(), timeout }
            })
            .collect();
        let per_slot = router.providers() as usize;
        let any_detector = slots.iter().any(|s| s.policy.outlier().is_some());
        let pool = workload.pool().filter(|p| p.runs(any_detector)).map(|p| {
            let policies: Vec<&PolicyConfig> = slots.iter().map(|s| s.policy).collect();
            Box::new(PoolRun::new(p, slot_count, &policies, &workload.seed, opts.explain))
        });
        // With a pool run by outlier detectors, the detector steers the balancer and the
        // client has no breaker in front; each host of each client is then one instance.
        let detects = pool.as_ref().is_some_and(|p| p.detects());
        let guards: Vec<Guard> = (0..slot_count * per_slot)
            .map(|b| {
                let policy = slots[b / per_slot].policy;
                Guard {
                    breaker: if detects && policy.outlier().is_some() {
                        crate::policy::outlier::pass_through()
                    } else {
                        policy.build(workload.seed.seed_for(Stream::Policy, b as u64))
                    },
                    scheduled: None,
                    parked: Parked::new(),
                }
            })
            .collect();
        let rec_instances = match &pool {
            Some(p) if detects => slot_count * usize::from(p.hosts()),
            _ => guards.len(),
        };
        let mut rec = Recorder::new(RecorderOptions {
            horizon: workload.horizon,
            instances: rec_instances,
            timeline_bin: opts.timeline_bin,
            truth: workload.truth.clone(),
        });
        let loads = match providers {
            Some(p) => {
                rec.enable_routing(&p.names, &p.prices, &p.open_windows);
                p.capacities
                    .iter()
                    .map(|c| c.as_ref().map(|(spec, service)| Load::new(spec, *service)))
                    .collect()
            }
            None => vec![workload.capacity.as_ref().map(|(spec, service)| Load::new(spec, *service))],
        };
        let budget = Budget::new(&client.retry.budget);
        let log_calls = matches!(workload.answers, Answers::Script);
        let direct = instances == 1
            && pool.is_none()
            && guards.len() == 1
            && providers.is_none()
            && loads.iter().all(Option::is_none)
            && client.process.is_none()
            && client.retry.max_attempts == 1
            && !matches!(client.fallback, FallbackSpec::RetryQueue { .. });
        Engine {
            client,
            workload,
            epoch: 0,
            slots,
            guards,
            instances: (0..instances)
                .map(|_| Instance { budget: budget.clone(), active_requests: 0, active_retries: 0 })
                .collect(),
            router,
            loads,
            queue: EventQueue::with_capacity(1024),
            slab: Slab::with_capacity(1024),
            flights: Slab::with_capacity(1024),
            retry_queue: VecDeque::new(),
            calls: if log_calls { Vec::with_capacity(super::SCRIPT_CHUNK_REQUESTS) } else { Vec::new() },
            calls_from: 0,
            waiting_calls: Vec::new(),
            log_calls,
            direct,
            cycle_scheduled: false,
            changes: Transitions::with_capacity(8, opts.explain),
            // Without incidents there is no moment to keep (and no state to ask per result).
            snapshots: (opts.explain && !workload.truth.is_empty() && !detects)
                .then(|| Snapshots::new(&workload.truth, rec_instances)),
            rec,
            now: SimTime::ZERO,
            drawn: None,
            pool,
        }
    }

    /// Schedules what happens before any request: breaker timers and the first restart.
    fn start(&mut self) {
        for b in 0..self.guards.len() {
            self.reschedule::<General>(b as u32, SimTime::ZERO);
        }
        if let Some(pool) = &mut self.pool {
            pool.record.set_detects(pool.detects());
            for s in 0..self.slots.len() as u32 {
                if let Some(at) = pool.deadline(s).filter(|t| *t < self.workload.horizon) {
                    self.queue.push(at, Phase::Settle, Event::PoolTick(s));
                }
            }
        }
        if let Some(process) = &self.client.process
            && process.first() < self.workload.horizon
        {
            self.queue.push(process.first(), Phase::FollowUp, Event::Restart);
        }
    }

    /// Runs the arrivals of `chunk` with every event due before each of them. At the end of
    /// the stream (`last`), runs every event left; otherwise stops after the chunk's last
    /// arrival, as the next chunk's first arrival may come before the queue's next event.
    fn advance(&mut self, chunk: &Chunk, last: bool) {
        if self.direct {
            let policy: &'a PolicyConfig = self.slots[0].policy;
            policy.family_config().visit(DirectRun { engine: self, chunk, last });
        } else {
            self.run::<General>(chunk, last);
        }
    }

    /// [`Engine::advance`] on lane `L`: with arrivals run by [`Engine::arrive_direct`] on the
    /// direct path.
    #[inline(always)]
    fn run<L: Lane>(&mut self, chunk: &Chunk, last: bool) {
        let arrivals = &chunk.arrivals;
        let mut next_arrival = 0usize;
        loop {
            let arrival_first = match (arrivals.get(next_arrival), self.queue.peek()) {
                (Some(&a), Some(q)) => Key::arrival(a) < q,
                (Some(_), None) => true,
                (None, _) if !last => return,
                (None, Some(_)) => false,
                (None, None) if self.release_parked(self.now) => continue,
                (None, None) => return,
            };
            if arrival_first {
                let i = next_arrival;
                next_arrival += 1;
                self.now = arrivals[i];
                let first_answer = chunk.first_answers.get(i);
                if L::DIRECT {
                    let next = arrivals.get(next_arrival).copied();
                    self.arrive_direct::<L>(self.now, chunk.first + i as u64, first_answer, next);
                } else {
                    self.arrive(self.now, chunk.first + i as u64, first_answer.copied());
                }
                continue;
            }
            let Some((at, event)) = self.queue.pop() else { return };
            self.now = at;
            let now = at;
            match event {
                Event::Complete(i) => {
                    let call = self.slab.take(i);
                    self.complete(now, call);
                }
                Event::Landed(i) => {
                    let flight = self.flights.take(i);
                    self.land::<L>(now, flight);
                }
                Event::Retry(i) => {
                    let call = self.slab.take(i);
                    self.attempt(now, call, AttemptKind::Retry);
                }
                Event::Deadline(b) => {
                    let guard = &mut self.guards[b as usize];
                    if guard.scheduled == Some(now) {
                        guard.scheduled = None;
                        guard.breaker.on_deadline(now, &mut self.changes);
                        self.flush(b);
                        self.reschedule::<General>(b, now);
                        self.reoffer(now, b);
                    }
                }
                Event::QueueCycle => self.work_retry_queue(now),
                Event::UpstreamDone(p) => {
                    if let Some(load) = &mut self.loads[p as usize] {
                        load.finish(now);
                    }
                }
                Event::Restart => self.restart(now),
                Event::PoolTick(s) => self.pool_tick(now, s),
            }
        }
    }

    /// The record, once every event has run.
    fn finish(mut self) -> RunRecord {
        let end = self.now.max(self.workload.horizon);
        for load in self.loads.iter().flatten() {
            self.rec.overloaded_for(load.overloaded_until(end));
        }
        let mut record = self.rec.finish(end);
        record.pool = self.pool.map(|p| p.record.finish(end));
        record.calls = self.calls;
        record.calls_from = self.calls_from;
        record.snapshots = self.snapshots.map(Snapshots::finish).unwrap_or_default();
        record
    }

    /// Request `request` arrives; `first_answer` is its first attempt's answer when the chunk
    /// drew it ahead.
    fn arrive(&mut self, now: SimTime, request: u64, first_answer: Option<Answer>) {
        self.drawn = first_answer.map(|a| (request, a));
        self.log_arrival(CallRecord::new(now));
        self.note_arrival::<General>(now, request, first_answer.map(|a| (a.class, a.latency)));
        let instances = self.instances.len() as u64;
        let instance = if instances == 1 { 0 } else { (request % instances) as u32 };
        let client = &mut self.instances[instance as usize];
        client.budget.on_request(now);
        client.active_requests += 1;
        let call = self.first_call(now, request, instance);
        self.attempt(now, call, AttemptKind::First);
    }

    /// Records request `request`'s arrival (and, with a timeline, the dependency's true health:
    /// its first answer, whether or not the breaker will let it through; with several
    /// providers, every provider's). `first` is the first answer's class and latency when known
    /// (drawn ahead). On the direct path there is one provider.
    #[inline(always)]
    fn note_arrival<L: Lane>(&mut self, now: SimTime, request: u64, first: Option<(OutcomeClass, Dur)>) {
        if !self.rec.records_health() {
            self.rec.request_arrived(now);
            return;
        }
        // The dependency's true health for the timeline: this arrival's first answer, whether
        // or not the breaker will let it through (provider 0 with several)...
        let (class, latency) = first.unwrap_or_else(|| {
            let a = self.workload.first_answer(request, now);
            (a.class, a.latency)
        });
        self.rec.request_arrived_answering(now, class, latency);
        // ... and with several, what each other provider would have answered it.
        let others = if L::DIRECT { 0 } else { self.workload.providers().map_or(0, |p| p.names.len()) };
        for p in 1..others {
            let a = self.workload.provider_answer(p as u32, request, 1, now);
            self.rec.true_answer_of(p, now, a.class, a.latency);
        }
    }

    /// [`Engine::arrive`] on the direct path (see [`Engine::direct`]): the breaker of the one
    /// instance is asked once; an allowed try goes upstream as a [`Flight`], a refused one is
    /// answered by the fallback, and a call told to wait is parked as a [`Call`] and runs the
    /// general way from then on. Budgets and the requests in flight are not kept for the
    /// others: without retries nothing reads them.
    ///
    /// `next` is the chunk's next arrival. A try that lands no later than it, with nothing else
    /// scheduled, lands at once: the loop would pop it next anyway (a result precedes an arrival
    /// of its instant), so a sequential script's calls never enter the queue.
    #[inline]
    fn arrive_direct<L: Lane>(
        &mut self,
        now: SimTime,
        request: u64,
        first_answer: Option<&Answer>,
        next: Option<SimTime>,
    ) {
        // Known ahead on the direct path (a log's first answer is read as cheaply); only its
        // class and latency are read (no retries).
        let answer = match first_answer {
            Some(a) => (a.class, a.latency),
            None => {
                let a = self.workload.first_answer(request, now);
                (a.class, a.latency)
            }
        };
        self.note_arrival::<L>(now, request, Some(answer));
        let admission = L::of(&mut self.guards[0].breaker).admit(now, &mut self.changes);
        self.flush(0);
        self.reschedule::<L>(0, now);
        match admission {
            Admission::Allow(ticket) => {
                let kind = if ticket.probe { AttemptKind::Probe } else { AttemptKind::First };
                self.rec.attempt_sent(now, 0, kind);
                let (class, latency) = self.as_seen(0, answer.0, answer.1);
                // Its caller has the answer when the try lands, as nothing can delay it.
                let landing = now + latency;
                self.log_arrival(CallRecord::with(now, Some(now), Some(landing)));
                let flight = Flight { arrival: now, latency, ticket, class };
                if self.queue.is_empty() && next.is_some_and(|a| landing <= a) {
                    self.now = landing;
                    self.land::<L>(landing, flight);
                } else {
                    let i = self.flights.put(flight);
                    self.queue.push(landing, Phase::Settle, Event::Landed(i));
                }
            }
            Admission::Reject => {
                self.rec.rejected(now, 0);
                self.log_arrival(CallRecord::with(now, None, Some(now)));
                self.fallback(now, now, Some(now));
            }
            Admission::Wait => {
                self.log_arrival(CallRecord::new(now));
                self.instances[0].active_requests += 1;
                let call = self.first_call(now, request, 0);
                let guard = &mut self.guards[0];
                let key = guard.breaker.wait_key();
                guard.parked.push_back((call, AttemptKind::First), key);
            }
        }
    }

    /// A direct-path try's result reaches the client: as [`Engine::complete`] followed by the
    /// end of the request (no retries: a success is answered, anything else falls back).
    #[inline(always)]
    fn land<L: Lane>(&mut self, now: SimTime, f: Flight) {
        let verdict = self.slots[0].classifier.verdict(f.class);
        self.settle::<L>(now, 0, f.ticket, Observation { verdict, latency: f.latency });
        if f.class == OutcomeClass::Ok {
            self.rec.answered_by_attempt(f.arrival, now, 0, verdict, f.latency);
        } else {
            self.rec.attempt_done(now, 0, f.class, verdict, f.latency);
            self.fallback(now, f.arrival, None);
        }
    }

    /// The class and latency the client sees of an answer of `class` after `latency` under slot
    /// `slot`'s call timeout.
    #[inline]
    fn as_seen(&self, slot: u32, class: OutcomeClass, latency: Dur) -> (OutcomeClass, Dur) {
        let timeout = self.slots[slot as usize].timeout;
        if latency >= timeout { (OutcomeClass::Timeout, timeout) } else { (class, latency) }
    }

    /// Breaker `b` records a result of its current client process: reports its state changes,
    /// updates its timer and offers its waiting calls again.
    #[inline(always)]
    fn settle<L: Lane>(&mut self, now: SimTime, b: u32, ticket: Ticket, obs: Observation) {
        L::of(&mut self.guards[b as usize].breaker).record(now, ticket, obs, &mut self.changes);
        self.flush(b);
        if let Some(s) = &mut self.snapshots {
            s.observe(now, b as usize, &self.guards[b as usize].breaker);
        }
        self.reschedule::<L>(b, now);
        self.reoffer(now, b);
    }

    /// The first attempt of request `request` of client instance `instance`, arrived at `now`.
    #[inline]
    fn first_call(&self, now: SimTime, request: u64, instance: u32) -> Call {
        Call {
            request,
            arrival: now,
            attempt: 1,
            instance,
            provider: 0,
            tried: 0,
            sent: false,
            retry_in_flight: false,
            retry_cost: 0,
            epoch: self.epoch,
            ticket: Ticket::default(),
            class: OutcomeClass::Ok,
            latency: Dur::ZERO,
            retry_after: None,
            last_delay: Dur::ZERO,
            deferred_at: None,
            host: 0,
        }
    }

    /// Starts a routing pass for one attempt of a request: tries the providers in the router's
    /// order until a breaker admits the call (see the module documentation).
    fn attempt(&mut self, now: SimTime, mut call: Call, kind: AttemptKind) {
        call.tried = 0;
        call.sent = false;
        self.try_next(now, call, kind);
    }

    /// Asks the next provider's breaker and, if allowed, sends the try upstream; a rejection
    /// moves on to the next provider; with none left the pass ends.
    fn try_next(&mut self, now: SimTime, mut call: Call, kind: AttemptKind) {
        let providers = self.router.providers();
        let slot = self.slot(&call);
        let (p, ticket) = loop {
            let Some(p) = self.router.next(slot, call.tried, &self.workload.seed, call.request, call.attempt)
            else {
                if call.sent {
                    // A try failed and every other provider refused: the pass failed with it.
                    self.pass_failed(now, call);
                } else {
                    if providers > 1 {
                        self.rec.routed(now, u64::from(call.tried));
                    }
                    self.pass_rejected(now, call);
                }
                return;
            };
            call.tried |= 1 << p;
            let b = self.guard_index(slot, p);
            let admission = self.guards[b as usize].breaker.admit(now, &mut self.changes);
            self.flush(b);
            self.reschedule::<General>(b, now);
            match admission {
                Admission::Allow(ticket) => {
                    if let Some(pool) = &mut self.pool {
                        match pool.pick(slot, now, &self.workload.seed, call.request, call.attempt) {
                            Some(host) => call.host = host,
                            // Every host ejected and no panic: Envoy's "no healthy upstream".
                            None => {
                                self.rec.rejected(now, b as usize);
                                continue;
                            }
                        }
                    }
                    break (p, ticket);
                }
                Admission::Wait => {
                    call.tried &= !(1 << p);
                    let guard = &mut self.guards[b as usize];
                    let key = guard.breaker.wait_key();
                    guard.parked.push_back((call, kind), key);
                    return;
                }
                Admission::Reject => self.rec.rejected(now, b as usize),
            }
        };
        if providers > 1 && !call.sent {
            let passed = self.router.passed_over(slot, p, call.tried & !(1 << p), call.tried);
            self.rec.routed(now, u64::from(passed));
        }
        let b = self.guard_index(slot, p);
        if let Some(logged) = self.logged(call.request)
            && logged.start().is_none()
        {
            logged.set_start(now);
        }
        let kind = if ticket.probe { AttemptKind::Probe } else { kind };
        call.epoch = self.epoch;
        call.provider = p as u8;
        call.sent = true;
        self.rec.attempt_sent(now, b as usize, kind);
        let mut answer = match self.drawn.take() {
            Some((request, answer)) if request == call.request && call.attempt == 1 => answer,
            _ => self.answer(p, &call, now),
        };
        if let Some(load) = &mut self.loads[p as usize] {
            let (loaded, took_slot) = load.admit(now, answer);
            answer = loaded;
            if took_slot {
                self.queue.push(now + answer.latency, Phase::Settle, Event::UpstreamDone(p));
            }
        }
        if kind == AttemptKind::Retry && !call.retry_in_flight {
            call.retry_in_flight = true;
            self.instances[call.instance as usize].active_retries += 1;
        }
        let (class, latency) = self.as_seen(slot, answer.class, answer.latency);
        call.ticket = ticket;
        call.class = class;
        call.latency = latency;
        call.retry_after = answer.retry_after;
        let i = self.slab.put(call);
        self.queue.push(now + latency, Phase::Settle, Event::Complete(i));
    }

    /// Offers breaker `b`'s waiting calls again, in arrival order, after it recorded a result or
    /// ran its timer: each whose wait is over (its key no longer [held](Breaker::holds)) tries
    /// again; the others keep waiting. Calls waiting for different keys are independent (as
    /// cockatiel's callers each await their own half-open test); a call told to wait again
    /// keeps its place in line (a lock is taken in arrival order).
    #[inline]
    fn reoffer(&mut self, now: SimTime, b: u32) {
        if self.guards[b as usize].parked.is_empty() {
            return;
        }
        self.reoffer_parked(now, b);
    }

    /// [`Engine::reoffer`] when some calls wait. Between two tries the breaker does not change,
    /// so a key found held stays held until the next try: the walk stops once every key still
    /// waiting is known held (with one key, after the first call that must keep waiting).
    fn reoffer_parked(&mut self, now: SimTime, b: u32) {
        let b = b as usize;
        let mut held = std::collections::BTreeSet::new();
        let mut i = 0;
        while let Some(((call, kind), key)) = self.guards[b].parked.get(i) {
            if held.len() == self.guards[b].parked.keys() {
                break;
            }
            if held.contains(&key) || self.guards[b].breaker.holds(key) {
                held.insert(key);
                i += 1;
                continue;
            }
            self.guards[b].parked.remove(i);
            let waiting = self.guards[b].parked.len();
            self.try_next(now, call, kind);
            held.clear();
            if self.guards[b].parked.len() > waiting {
                let (again, key) = self.guards[b].parked.pop_back().expect("just parked");
                self.guards[b].parked.insert(i, again, key);
                i += 1;
            }
        }
    }

    /// At the end of the run (nothing left to happen), calls still waiting will never be
    /// woken: each is refused as a rejection. Returns true when there were any.
    fn release_parked(&mut self, now: SimTime) -> bool {
        let mut any = false;
        for b in 0..self.guards.len() {
            while let Some(((call, _), _)) = self.guards[b].parked.pop_front() {
                any = true;
                self.rec.rejected(now, b);
                self.pass_rejected(now, call);
            }
        }
        any
    }

    /// The dependency's answer to `call` sent to provider `p` at `now`. Without providers, a
    /// first attempt's answer is the one drawn at the request's arrival (the same draw the
    /// chunk made ahead, for a call that waited before it was sent).
    fn answer(&self, p: u32, call: &Call, now: SimTime) -> Answer {
        if self.pool.is_some() {
            return self.workload.host_answer(call.host, call.request, call.attempt, now).0;
        }
        let at = if call.attempt == 1 && self.router.providers() == 1 && self.workload.providers().is_none() {
            call.arrival
        } else {
            now
        };
        self.workload.provider_answer(p, call.request, call.attempt, at)
    }

    /// Every provider refused the attempt: defer it again, retry it, or shed it.
    fn pass_rejected(&mut self, now: SimTime, call: Call) {
        if call.deferred_at.is_some() {
            self.defer_again(now, call);
        } else if self.client.retry.retries_rejection(call.attempt) {
            self.retry_within_budget(now, call, OutcomeClass::Error, None);
        } else {
            self.give_up(now, call, true);
        }
    }

    /// A try's result reaches the client.
    fn complete(&mut self, now: SimTime, call: Call) {
        let providers = self.router.providers();
        let slot = self.slot(&call);
        let b = self.guard_index(slot, u32::from(call.provider));
        let verdict = self.slots[slot as usize].classifier.verdict(call.class);
        if call.epoch == self.epoch {
            if providers > 1 {
                // Before the waiting calls are offered again: they are routed by the new score.
                self.router.record(slot, u32::from(call.provider), verdict);
            }
            self.settle::<General>(now, b, call.ticket, Observation { verdict, latency: call.latency });
        }
        self.rec.attempt_done(now, b as usize, call.class, verdict, call.latency);
        if self.pool.is_some() {
            self.pool_result(now, slot, &call);
        }
        self.instances[call.instance as usize].budget.on_result(call.class, call.retry_cost);
        if providers > 1 && call.class != OutcomeClass::Ok && call.tried != self.router.all() {
            // Fail over at once to the next untried provider (seed 002: no backoff).
            self.try_next(now, call, AttemptKind::Failover);
            return;
        }
        self.pass_failed(now, call);
    }

    /// A routing pass ended with its last try's result (`call.class`): done, retried, deferred
    /// or answered by the fallback.
    fn pass_failed(&mut self, now: SimTime, call: Call) {
        let inst = call.instance as usize;
        let mut call = call;
        if call.retry_in_flight {
            call.retry_in_flight = false;
            self.instances[inst].active_retries -= 1;
        }
        if let Some(deferred_at) = call.deferred_at {
            if call.class == OutcomeClass::Ok {
                self.rec.deferred_done(deferred_at, now, true);
            } else {
                self.defer_again(now, call);
            }
            return;
        }
        if call.class == OutcomeClass::Ok {
            self.answered(call.request, now);
            self.rec.request_done(call.arrival, now, Finish::Success, None);
            self.instances[inst].active_requests -= 1;
        } else if self.client.retry.retries(call.class, call.attempt) {
            let hint = if self.client.retry.honour_retry_after { call.retry_after } else { None };
            self.retry_within_budget(now, call, call.class, hint);
        } else {
            self.give_up(now, call, false);
        }
    }

    /// Retries if the instance's retry budget allows, else gives up.
    fn retry_within_budget(&mut self, now: SimTime, mut call: Call, class: OutcomeClass, hint: Option<Dur>) {
        let client = &mut self.instances[call.instance as usize];
        match client.budget.try_retry(now, class, client.active_requests, client.active_retries) {
            Some(cost) => {
                call.retry_cost = cost;
                self.schedule_retry(now, call, hint);
            }
            None => {
                self.rec.retry_refused(now);
                self.give_up(now, call, false);
            }
        }
    }

    fn schedule_retry(&mut self, now: SimTime, mut call: Call, hint: Option<Dur>) {
        let mut rng = self.workload.seed.draw(Stream::Backoff, call.request, call.attempt);
        let delay = self.client.retry.delay(call.attempt, call.last_delay, hint, &mut rng);
        call.attempt += 1;
        call.last_delay = delay;
        let i = self.slab.put(call);
        self.queue.push(now + delay, Phase::FollowUp, Event::Retry(i));
    }

    /// The request failed for good (or was shed): answer it with the fallback.
    fn give_up(&mut self, now: SimTime, call: Call, shed: bool) {
        self.answered(call.request, now);
        self.instances[call.instance as usize].active_requests -= 1;
        self.fallback(now, call.arrival, shed.then_some(now));
        if matches!(self.client.fallback, FallbackSpec::RetryQueue { .. }) {
            self.retry_queue.push_back(Call { deferred_at: Some(now), ..call });
            self.schedule_cycle(now);
        }
    }

    /// Records the caller's answer, at `now`, to a request that arrived at `arrival` and failed
    /// for good: the configured fallback's, or the error (`shed`: when a breaker refused it).
    /// A retry queue's work is queued by the caller ([`Engine::give_up`]).
    fn fallback(&mut self, now: SimTime, arrival: SimTime, shed: Option<SimTime>) {
        let (kind, latency) = match self.client.fallback {
            FallbackSpec::None => {
                self.rec.request_done(arrival, now, Finish::Error, shed);
                return;
            }
            FallbackSpec::Cached { latency } => (FallbackKind::Cached, latency),
            FallbackSpec::Local { latency } => (FallbackKind::Local, latency),
            FallbackSpec::RetryQueue { latency, .. } => (FallbackKind::Deferred, latency),
        };
        self.rec.request_done(arrival, now + latency, Finish::Fallback(kind), shed);
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
            self.queue.push(next, Phase::FollowUp, Event::QueueCycle);
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

    /// A new client process starts: its breakers are fresh, reloaded from persisted samples, or
    /// carried over whole; results of calls the old process sent are never recorded.
    fn restart(&mut self, now: SimTime) {
        let Some(process) = &self.client.process else { return };
        self.epoch += 1;
        if process.persist != Persist::State {
            let per_slot = self.router.providers() as usize;
            for b in 0..self.guards.len() {
                let seed =
                    self.workload.seed.seed_for(Stream::Policy, b as u64 | (u64::from(self.epoch) << 32));
                let fresh = self.slots[b / per_slot].policy.build(seed);
                let guard = &mut self.guards[b];
                let new = match process.persist {
                    Persist::Samples => guard.breaker.restarted_with_samples(fresh, now),
                    _ => fresh,
                };
                let old = std::mem::replace(&mut guard.breaker, new);
                guard.scheduled = None;
                if old.state() != State::Closed {
                    let t = Transition {
                        at: now,
                        from: old.state(),
                        to: State::Closed,
                        reason: "process_restart",
                    };
                    if self.changes.keeps_evidence() {
                        self.rec.transition_explained(b, &t, &old.evidence_at(now));
                    } else {
                        self.rec.transition(b, &t);
                    }
                }
                self.reschedule::<General>(b as u32, now);
                self.reoffer(now, b as u32);
            }
            let fresh = Budget::new(&self.client.retry.budget);
            self.instances.iter_mut().for_each(|client| client.budget = fresh.clone());
            self.router.reset();
        }
        let next = now + process.every;
        if next < self.workload.horizon {
            self.queue.push(next, Phase::FollowUp, Event::Restart);
        }
    }

    /// A try to a host of the pool ended at `now`: the client's balancer and detector hear of
    /// it (the status code is the one its answer carried when sent, `now − latency`).
    fn pool_result(&mut self, now: SimTime, slot: u32, call: &Call) {
        let Some(pool) = &mut self.pool else { return };
        let code = match self.workload.pool() {
            Some(p) => {
                p.code(call.host, call.class, SimTime(now.micros().saturating_sub(call.latency.micros())))
            }
            None => 500,
        };
        pool.finished(slot, call.host, now, call.class, code);
        self.flush_pool(slot);
    }

    /// Client `slot`'s detector's interval tick at `now`, and its next one.
    fn pool_tick(&mut self, now: SimTime, slot: u32) {
        let (Some(pool), Some(hosts)) = (&mut self.pool, self.workload.pool()) else { return };
        pool.tick(slot, now, hosts, &self.workload.seed);
        let next = pool.deadline(slot).filter(|t| *t < self.workload.horizon);
        self.flush_pool(slot);
        if let Some(at) = next {
            self.queue.push(at, Phase::Settle, Event::PoolTick(slot));
        }
    }

    /// Records the host ejections and returns client `slot`'s detector just reported.
    fn flush_pool(&mut self, slot: u32) {
        let Engine { pool: Some(pool), rec, changes, .. } = self else { return };
        let explain = changes.keeps_evidence();
        for (i, t, evidence) in pool.drain_changes(slot) {
            if explain {
                rec.transition_explained(i, &t, &evidence);
            } else {
                rec.transition(i, &t);
            }
        }
    }

    /// Logs the next scripted call (its start and end when the direct path knows them as it
    /// arrives), when the run keeps a call log.
    #[inline(always)]
    fn log_arrival(&mut self, call: CallRecord) {
        if self.log_calls {
            self.calls.push(call);
        }
    }

    /// Notes when a scripted call's caller had its answer.
    fn answered(&mut self, request: u64, now: SimTime) {
        if let Some(logged) = self.logged(request) {
            logged.set_end(now);
        }
    }

    /// Request `request`'s entry in the call log, if the run keeps one and still holds it.
    #[inline]
    fn logged(&mut self, request: u64) -> Option<&mut CallRecord> {
        let i = request.checked_sub(self.calls_from)?;
        self.calls.get_mut(i as usize)
    }

    /// Hands the logged calls whose callers have their answers (on the direct path, known when
    /// the try is sent), up to the first one still waiting, to `f` in script order, and drops
    /// them. Only a direct run's answers are final
    /// when given (no retry or retry queue answers again), so other runs keep their log whole
    /// for the record.
    ///
    /// The log's vector goes to `f` whole (no copy): the few calls still waiting move to the
    /// vector `f` gives back, which becomes the log.
    fn drain_calls<E>(
        &mut self,
        f: impl FnOnce(Vec<CallRecord>) -> Result<Vec<CallRecord>, E>,
    ) -> Result<(), E> {
        if !self.direct {
            return Ok(());
        }
        // Only calls parked as a `Call` wait for their answers (counted as requests in flight).
        let done = if self.instances[0].active_requests == 0 {
            self.calls.len()
        } else {
            self.calls.iter().position(|c| c.end().is_none()).unwrap_or(self.calls.len())
        };
        if done > 0 {
            self.waiting_calls.clear();
            self.waiting_calls.extend_from_slice(&self.calls[done..]);
            let mut answered = std::mem::take(&mut self.calls);
            answered.truncate(done);
            self.calls_from += done as u64;
            let mut log = f(answered)?;
            log.clear();
            log.extend_from_slice(&self.waiting_calls);
            self.calls = log;
        }
        Ok(())
    }

    /// The breaker slot of a call: its client instance, or 0 when the breaker is shared.
    #[inline]
    fn slot(&self, call: &Call) -> u32 {
        if self.client.shared_breaker { 0 } else { call.instance }
    }

    /// The index of the breaker of `slot` for `provider` in [`Engine::guards`] (and the
    /// breaker instance number in the record).
    #[inline]
    fn guard_index(&self, slot: u32, provider: u32) -> u32 {
        slot * self.router.providers() + provider
    }

    /// Records the state changes breaker `b` just reported (with their evidence when the run
    /// explains).
    #[inline]
    fn flush(&mut self, b: u32) {
        if self.changes.is_empty() {
            return;
        }
        // A breaker beside outlier detectors in a pool (a mixed fleet) records on its
        // client's first host lane.
        let instance = match &self.pool {
            Some(p) if p.detects() => b as usize * usize::from(p.hosts()),
            _ => b as usize,
        };
        for (i, t) in self.changes.iter().enumerate() {
            match self.changes.evidence(i) {
                Some(evidence) => self.rec.transition_explained(instance, t, evidence),
                None => self.rec.transition(instance, t),
            }
        }
        self.changes.clear();
    }

    /// Keeps one live timer event per breaker: schedules its current deadline if it changed.
    #[inline(always)]
    fn reschedule<L: Lane>(&mut self, b: u32, now: SimTime) {
        if !<L::Breaker as Breaker>::TIMED {
            debug_assert!(self.guards[b as usize].breaker.deadline().is_none(), "an untimed breaker's timer");
            return;
        }
        let guard = &mut self.guards[b as usize];
        let deadline = L::of_ref(&guard.breaker).deadline();
        let wanted = deadline.map(|d| d.max(now)).filter(|d| *d < self.workload.horizon);
        if wanted != guard.scheduled {
            guard.scheduled = wanted;
            if let Some(at) = wanted {
                self.queue.push(at, Phase::Settle, Event::Deadline(b));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::RunRecord;
    use crate::policy::{PolicySpec, State};
    use crate::scenario::Scenario;
    use crate::sim::{RunOptions, Workload, simulate};
    use crate::time::{Dur, SimTime};
    use std::path::Path;

    /// Runs `text` (a scenario) under `preset` with `sets` and returns the record.
    fn run(text: &str, preset: &str, sets: &[(&str, toml::Value)]) -> RunRecord {
        let scenario = Scenario::parse(Path::new("t.toml"), text).expect("valid test scenario");
        let mut spec = PolicySpec::new(preset);
        for (k, v) in sets {
            spec.overrides.insert((*k).to_string(), v.clone());
        }
        let policy = spec.resolve().expect("valid policy");
        let workload = Workload::build(&scenario, 1, 0).expect("workload");
        simulate(&scenario.client, &workload, &policy, &RunOptions::default())
    }

    /// One request per second for a minute against a dependency that fails every call in 50 ms.
    fn always_down(client: &str) -> String {
        format!(
            "duration = \"1m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n{client}\n\
             [upstream]\np50 = \"100ms\"\np95 = \"200ms\"\n\
             [[incidents]]\nkind = \"outage\"\nstart = \"0s\"\nduration = \"2m\"\nlatency = \"50ms\"\n"
        )
    }

    #[test]
    fn retry_ladder_waits_the_exponential_backoff_between_attempts() {
        // 3 attempts, 200 ms then 400 ms backoff, no jitter: each request takes
        // 50 + 200 + 50 + 400 + 50 = 750 ms and makes 3 attempts.
        let client =
            "[client.retry]\nmax_attempts = 3\nbase = \"200ms\"\nmultiplier = 2.0\njitter = \"none\"";
        let r = run(&always_down(client), "none", &[]);
        assert_eq!(r.counters.requests, 60);
        assert_eq!(r.counters.attempts, 180);
        assert_eq!(r.counters.retries, 120);
        assert_eq!(r.counters.errors, 60);
        for permille in [10, 500, 990] {
            let ms = r.latency.percentile_permille(permille).unwrap().as_millis_f64();
            assert!((ms - 750.0).abs() <= 750.0 * 0.008, "p{permille}: {ms} ms");
        }
    }

    #[test]
    fn a_record_does_not_depend_on_how_the_stream_is_cut_into_chunks() {
        // Retries, a capacity limit, restarts, a retry queue and waiting calls: every piece of
        // state that crosses a chunk boundary.
        let text = "duration = \"20m\"\n[traffic]\nkind = \"poisson\"\nrate = 20.0\n\
                    [client]\ntimeout = \"2s\"\ninstances = 3\n\
                    [client.retry]\nmax_attempts = 3\n\
                    [client.fallback]\nkind = \"retry_queue\"\ncycle = \"1m\"\n\
                    [client.process]\nevery = \"7m\"\npersist = \"samples\"\n\
                    [upstream]\np50 = \"200ms\"\np95 = \"1500ms\"\nerror_rate = 0.05\n\
                    [upstream.capacity]\nconcurrency = 8\n\
                    [[incidents]]\nkind = \"outage\"\nstart = \"5m\"\nduration = \"3m\"\n";
        let scenario = Scenario::parse(Path::new("t.toml"), text).expect("valid test scenario");
        let workload = Workload::build(&scenario, 1, 0).unwrap();
        for preset in ["connector-breaker", "cockatiel-consecutive", "pybreaker"] {
            let policy = PolicySpec::new(preset).resolve().unwrap();
            let opts = RunOptions { timeline_bin: Some(Dur::from_secs(30)), explain: false };
            let whole = simulate(&scenario.client, &workload, &policy, &opts);
            for len in [1, 7, 1000] {
                let mut sim =
                    super::Simulation::new(&scenario.client, &workload, std::slice::from_ref(&policy), &opts);
                let mut stream = workload.stream_in_chunks_of(len);
                let mut chunk = super::Chunk::default();
                while stream.next_chunk(&mut chunk) {
                    sim.feed(&chunk);
                }
                let cut = sim.finish();
                assert!(
                    whole.counters.requests > 20_000 && whole.counters.retries > 0,
                    "{:?}",
                    whole.counters
                );
                assert_eq!(format!("{cut:?}"), format!("{whole:?}"), "{preset}, chunks of {len}");
            }
        }
    }

    #[test]
    fn a_timed_out_call_fails_at_the_timeout() {
        // The dependency hangs for the whole run; the client gives up after 1 s, no retries.
        let text = "duration = \"1m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n[client]\ntimeout = \"1s\"\n\
                    [[incidents]]\nkind = \"hang\"\nstart = \"0s\"\nduration = \"2m\"\n";
        let r = run(text, "none", &[]);
        assert_eq!(r.counters.timeouts, 60);
        assert_eq!(r.counters.errors, 60);
        let ms = r.latency.percentile_permille(500).unwrap().as_millis_f64();
        assert!((ms - 1000.0).abs() <= 8.0, "{ms}");
        assert_eq!(r.end, SimTime(60_000_000), "the last call (at 59 s) times out at 60 s");
    }

    #[test]
    fn retry_after_is_a_lower_bound_on_the_backoff() {
        let text = "duration = \"10s\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n\
                    [client.retry]\nmax_attempts = 2\nbase = \"100ms\"\n\
                    [[incidents]]\nkind = \"rate_limit\"\nstart = \"0s\"\nduration = \"1h\"\nretry_after = \"5s\"\n";
        let r = run(text, "none", &[]);
        assert_eq!(r.counters.retries, 10);
        let min_ms = r.latency.min().unwrap().as_millis_f64();
        assert!(min_ms >= 5_000.0, "every request waited out the 5 s retry-after: {min_ms}");
    }

    #[test]
    fn retry_queue_defers_refused_work_to_the_next_cycle() {
        // consecutive(5) opens after the 5th failure; refused work is deferred; the outage ends at
        // 30 s, the queue is worked through every 20 s, and the breaker recovers.
        let text = "duration = \"3m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n\
                    [client.fallback]\nkind = \"retry_queue\"\ncycle = \"20s\"\n\
                    [upstream]\np50 = \"100ms\"\np95 = \"200ms\"\n\
                    [[incidents]]\nkind = \"outage\"\nstart = \"0s\"\nduration = \"30s\"\n";
        let r = run(text, "consecutive", &[("open_duration", "10s".into())]);
        assert!(r.counters.deferred >= 25, "{:?}", r.counters);
        assert_eq!(r.counters.deferred_succeeded, r.counters.deferred, "all deferred work done later");
        assert_eq!(r.deferred_pending, 0);
        assert!(r.counters.deferred_delay_total > Dur::ZERO);
    }

    #[test]
    fn each_instance_has_its_own_breaker_unless_shared() {
        let per_instance = always_down("[client]\ninstances = 4");
        let r = run(&per_instance, "consecutive", &[]);
        assert_eq!(r.instances, 4);
        let opened: Vec<usize> =
            r.transitions.iter().filter(|(_, t)| t.to == State::Open).map(|(i, _)| *i).collect();
        for i in 0..4 {
            assert!(opened.contains(&i), "instance {i} opened its own breaker: {opened:?}");
        }
        // Instance i sees every 4th request, so its 5th failure comes at request 4·4 + i.
        let first_open: Vec<u64> = (0..4)
            .map(|i| {
                r.transitions.iter().find(|(b, t)| *b == i && t.to == State::Open).unwrap().1.at.micros()
            })
            .collect();
        assert_eq!(first_open, vec![16_050_000, 17_050_000, 18_050_000, 19_050_000]);
        let shared = run(&always_down("[client]\ninstances = 4\nshared_breaker = true"), "consecutive", &[]);
        assert_eq!(shared.instances, 1);
        assert_eq!(shared.transitions[0].1.at, SimTime(4_050_000), "one breaker sees every request");
    }

    #[test]
    fn a_restart_loses_the_state_unless_it_is_persisted() {
        // Always down, one call per second: consecutive(5) opens at 4.05 s; the process restarts
        // every 20 s. The call arriving at 20 s precedes the restart at the same instant, so the
        // old process sent it and the new one never hears of it; the fresh, closed breaker needs
        // 5 new failures (21..25 s → 25.05 s).
        let text = |persist: &str| {
            always_down(&format!("[client.process]\nevery = \"20s\"\npersist = \"{persist}\""))
        };
        let fresh = run(&text("none"), "consecutive", &[("open_duration", "1h".into())]);
        let changes: Vec<(u64, State, &str)> =
            fresh.transitions.iter().map(|(_, t)| (t.at.micros(), t.to, t.reason)).take(3).collect();
        assert_eq!(
            changes,
            vec![
                (4_050_000, State::Open, "consecutive_failures"),
                (20_000_000, State::Closed, "process_restart"),
                (25_050_000, State::Open, "consecutive_failures"),
            ]
        );
        let kept = run(&text("state"), "consecutive", &[("open_duration", "1h".into())]);
        assert_eq!(kept.transitions.len(), 1, "the persisted state stays open");
    }

    /// One request per second for `secs` seconds, routed (`strategy`) between `primary` and
    /// `secondary` (extra TOML lines of each provider). Latencies are fixed (p50 = p95).
    fn two_providers(secs: u64, strategy: &str, primary: &str, secondary: &str) -> String {
        format!(
            "duration = \"{secs}s\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n\
             [routing]\nstrategy = \"{strategy}\"\n\
             [[providers]]\nname = \"primary\"\nprice = 0.5\n\
             [providers.upstream]\np50 = \"100ms\"\np95 = \"100ms\"\n{primary}\n\
             [[providers]]\nname = \"secondary\"\nprice = 2.0\n\
             [providers.upstream]\np50 = \"100ms\"\np95 = \"100ms\"\n{secondary}\n"
        )
    }

    /// A provider outage over the whole run; each call fails after 50 ms.
    const DOWN: &str = "[[providers.incidents]]\nkind = \"outage\"\nstart = \"0s\"\nduration = \"2m\"\n";

    fn metrics(r: &RunRecord) -> crate::metrics::Metrics {
        crate::metrics::score(r, &crate::metrics::ScoringOptions::default())
    }

    #[test]
    fn a_failed_try_fails_over_at_once_to_the_next_provider() {
        // No breaker: each request tries the primary (fails at +50 ms), then the secondary
        // straight away (answers at +150 ms).
        let r = run(&two_providers(10, "priority", DOWN, ""), "none", &[]);
        let m = metrics(&r);
        assert_eq!((r.counters.requests, r.counters.attempts, r.counters.failover_attempts), (10, 20, 10));
        assert_eq!((r.counters.answered_ok, r.counters.errors, r.counters.rejections), (10, 0, 0));
        let p: Vec<(&str, u64, u64)> =
            r.providers.iter().map(|p| (p.name.as_str(), p.attempts, p.successes)).collect();
        assert_eq!(p, vec![("primary", 10, 0), ("secondary", 10, 10)]);
        assert_eq!(m.spend, Some(10.0 * 0.5 + 10.0 * 2.0));
        assert_eq!(m.failovers, Some(10));
        assert_eq!(m.column("provider.secondary.successes"), Some(10.0));
        // The primary was tried first until the window's end: 120 s.
        assert_eq!(m.failover_delay_mean_s, Some(120.0));
        assert_eq!(r.latency.min(), r.latency.percentile_permille(1_000));
        assert!((r.latency.min().unwrap().as_millis_f64() - 150.0).abs() <= 1.2);
        assert_eq!(r.instances, 2, "one breaker per provider");
        assert_eq!(r.truth[0].kind, "primary:outage");
    }

    #[test]
    fn a_rejecting_breaker_skips_its_provider() {
        // consecutive(2): the primary's breaker (instance 0) opens when the second failure
        // completes at 1.05 s; from the request at 2 s on, it rejects and the secondary gets the
        // first try: failover delay 2 s.
        let r = run(
            &two_providers(5, "priority", DOWN, ""),
            "consecutive",
            &[("failure_threshold", 2.into()), ("open_duration", "1h".into())],
        );
        let opens: Vec<(usize, u64, State)> =
            r.transitions.iter().map(|(i, t)| (*i, t.at.micros(), t.to)).collect();
        assert_eq!(opens, vec![(0, 1_050_000, State::Open)]);
        let p: Vec<(u64, u64)> = r.providers.iter().map(|p| (p.attempts, p.successes)).collect();
        assert_eq!(p, vec![(2, 0), (5, 5)]);
        assert_eq!((r.counters.rejections, r.counters.failover_attempts, r.counters.shed), (3, 2, 0));
        assert_eq!(metrics(&r).failover_delay_mean_s, Some(2.0));
        assert_eq!(r.counters.answered_ok, 5);
    }

    #[test]
    fn a_request_every_provider_refuses_is_shed() {
        // Both down, consecutive(1): request 0 fails on both (opening both breakers at 50 ms and
        // 100 ms) and ends as an error; every later request is refused by both: shed.
        let r = run(
            &two_providers(4, "priority", DOWN, DOWN),
            "consecutive",
            &[("failure_threshold", 1.into()), ("open_duration", "1h".into())],
        );
        let opens: Vec<(usize, u64)> = r.transitions.iter().map(|(i, t)| (*i, t.at.micros())).collect();
        assert_eq!(opens, vec![(0, 50_000), (1, 100_000)]);
        assert_eq!((r.counters.attempts, r.counters.failover_attempts), (2, 1));
        assert_eq!((r.counters.rejections, r.counters.shed, r.counters.errors), (6, 3, 4));
        // The primary's outage: first passed over (refused) by the request at 1 s. The
        // secondary's: passed over at 0 s already, as it comes after the primary. Mean 0.5 s.
        assert_eq!(metrics(&r).failover_delay_mean_s, Some(0.5));
    }

    #[test]
    fn health_routing_demotes_a_failing_provider_for_good() {
        // Equal scores: the seeded draw picks the first try. The first request that goes to the
        // primary fails (score 1.0 → 0.8) and fails over; after that 0.8 × U < 1.0 × U' always,
        // and the secondary's successes keep it at 1.0: the primary is never tried again.
        let text = two_providers(8, "health", DOWN, "");
        let r = run(&text, "none", &[]);
        let seed = crate::rng::RunSeed::new(1, "t", 0);
        let router = super::Router::new(2, crate::scenario::Strategy::Health, 1);
        let k = (0..8).find(|req| router.next(0, 0, &seed, *req, 1) == Some(0)).expect("a draw picks it");
        let p: Vec<(u64, u64)> = r.providers.iter().map(|p| (p.attempts, p.successes)).collect();
        assert_eq!(p, vec![(1, 0), (8, 8)]);
        assert_eq!(r.counters.failover_attempts, 1);
        // Passes before it lost the primary by the draw alone (equal scores): not a failover.
        // The pass after its failure (request k + 1, at k + 1 s) passed it over for its score.
        assert_eq!(metrics(&r).failover_delay_mean_s, Some((k + 1) as f64));
    }

    #[test]
    fn each_provider_answers_from_its_own_draw() {
        // Same model for both providers: answers differ between providers (their own draws)
        // but not between calls, and a single-provider workload's answer is unchanged.
        let same = "[providers.upstream]\np50 = \"100ms\"\np95 = \"400ms\"\n";
        let text = two_providers(30, "priority", "", "")
            .replace("[providers.upstream]\np50 = \"100ms\"\np95 = \"100ms\"\n", same);
        let sc = Scenario::parse(Path::new("t.toml"), &text).unwrap();
        let w = Workload::build(&sc, 1, 0).unwrap();
        let at = SimTime(5_000_000);
        let differ = (0..30u64)
            .filter(|r| w.provider_answer(0, *r, 1, at).latency != w.provider_answer(1, *r, 1, at).latency)
            .count();
        assert_eq!(differ, 30);
        assert_eq!(w.provider_answer(1, 7, 2, at), w.provider_answer(1, 7, 2, at));
        assert_eq!(w.provider_answer(0, 7, 2, at), w.answer(7, 2, at));
        let chunk = w.stream().collect_chunks().remove(0);
        assert!(chunk.first_answers.is_empty(), "answers depend on when each provider is tried");
    }

    #[test]
    fn routing_keeps_a_call_in_flight_small() {
        // Calls wait in the slab; events move through the heap by value and carry only a slab
        // index, so routing state (a 32-bit mask, a provider byte) and a pool's host (two bytes)
        // cost the queue nothing.
        assert!(std::mem::size_of::<super::Call>() <= 112, "{}", std::mem::size_of::<super::Call>());
        assert!(std::mem::size_of::<super::Event>() <= 8, "{}", std::mem::size_of::<super::Event>());
    }

    #[test]
    fn providers_refuse_a_top_level_upstream() {
        let text = format!("{}[upstream]\np50 = \"1s\"\n", two_providers(5, "priority", "", ""));
        let err = Scenario::parse(Path::new("t.toml"), &text).unwrap_err().to_string();
        assert!(err.contains("remove the top-level [upstream]"), "{err}");
    }

    /// Runs the scripted calls `rows` (`t_ms,latency_ms,ok` lines) through `preset` with `sets`.
    fn scripted_run(rows: &str, preset: &str, sets: &[(&str, toml::Value)]) -> RunRecord {
        let calls = crate::upstream::script::calls_from_text(rows);
        let scenario = Scenario::from_calls(Path::new("calls.csv"), calls).unwrap();
        let mut spec = PolicySpec::new(preset);
        for (k, v) in sets {
            spec.overrides.insert((*k).to_string(), v.clone());
        }
        let policy = spec.resolve().unwrap();
        let workload = Workload::build(&scenario, 1, 0).unwrap();
        simulate(&scenario.client, &workload, &policy, &RunOptions::default())
    }

    /// As [`scripted_run`] with the preset's defaults: `(ms, to)` for each transition, and the
    /// run's counters.
    fn scripted(rows: &str, preset: &str) -> (Vec<(u64, State)>, crate::metrics::Counters) {
        let r = scripted_run(rows, preset, &[]);
        (changes(&r), r.counters)
    }

    fn changes(r: &RunRecord) -> Vec<(u64, State)> {
        r.transitions.iter().map(|(_, t)| (t.at.micros() / 1000, t.to)).collect()
    }

    /// The shortest and longest user latency of a run, in whole ms (the histogram keeps them
    /// within 1 %).
    fn latency_range_ms(r: &RunRecord) -> (u64, u64) {
        let ms = |d: Option<Dur>| d.unwrap().as_millis_f64().round() as u64;
        (ms(r.latency.min()), ms(r.latency.percentile_permille(1_000)))
    }

    #[test]
    fn cockatiel_half_open_callers_wait_for_the_test_then_run() {
        // Five failures open it at 45 ms; the test starts at 10,045 ms and succeeds at 10,145 ms.
        // The call at 10,050 ms waits for it, then runs (10,145 → 10,155 ms): its user latency
        // is 105 ms, and nothing is rejected.
        let rows = "0,5,0\n10,5,0\n20,5,0\n30,5,0\n40,5,0\n10045,100,1\n10050,10,1\n";
        let r = scripted_run(rows, "cockatiel-consecutive", &[]);
        assert_eq!(changes(&r), vec![(45, State::Open), (10_045, State::HalfOpen), (10_145, State::Closed)]);
        assert_eq!((r.counters.attempts, r.counters.rejections), (7, 0));
        assert_eq!(latency_range_ms(&r), (5, 105));
        assert_eq!(r.calls[6].start(), Some(SimTime(10_145_000)), "the waiter ran once the test closed it");
        // The test fails instead: it reopens at 10,145 ms and the waiter is rejected then.
        let rows = rows.replace("10045,100,1", "10045,100,0");
        let r = scripted_run(&rows, "cockatiel-consecutive", &[]);
        assert_eq!(changes(&r), vec![(45, State::Open), (10_045, State::HalfOpen), (10_145, State::Open)]);
        assert_eq!((r.counters.attempts, r.counters.rejections), (6, 1));
        assert_eq!(latency_range_ms(&r), (5, 100), "the waiter was refused after 95 ms");
        assert_eq!((r.calls[6].start(), r.calls[6].end()), (None, Some(SimTime(10_145_000))));
    }

    #[test]
    fn cockatiel_callers_wait_for_their_own_test_only() {
        // Five failures open it at 55 ms. Test A starts at 10,055 ms and hangs until 40,055 ms;
        // the call at 10,060 ms waits for A. The closed-state call of 0 ms fails late at
        // 20,000 ms and reopens the circuit; test B starts at 30,000 ms and closes it at
        // 30,100 ms. B's waiter (30,050 ms) runs then, although A's waiter, ahead of it in
        // line, still waits: it runs when A settles (as in cockatiel 3.2.1, where each caller
        // awaits its own test's promise).
        let rows = "0,20000,0\n10,5,0\n20,5,0\n30,5,0\n40,5,0\n50,5,0\n\
                    10055,30000,1\n10060,10,1\n30000,100,1\n30050,10,1\n";
        let r = scripted_run(rows, "cockatiel-consecutive", &[]);
        assert_eq!(
            changes(&r),
            vec![
                (55, State::Open),
                (10_055, State::HalfOpen),
                (20_000, State::Open),
                (30_000, State::HalfOpen),
                (30_100, State::Closed)
            ]
        );
        assert_eq!(
            r.calls[9].start(),
            Some(SimTime(30_100_000)),
            "B's waiter runs when B closes the circuit"
        );
        assert_eq!(r.calls[7].start(), Some(SimTime(40_055_000)), "A's waiter runs when A settles");
        assert_eq!(r.counters.rejections, 0);
    }

    #[test]
    fn pybreaker_call_serializes_on_its_lock_unless_calling_is_used() {
        // call() (serialize = true): 0–100 ms, then the call of 50 ms takes the lock at 100 and
        // runs to 200 (150 ms), then the call of 60 ms runs 200–210 (150 ms).
        let rows = "0,100,1\n50,100,1\n60,10,0\n";
        let r = scripted_run(rows, "pybreaker", &[]);
        assert_eq!((r.counters.attempts, r.counters.rejections), (3, 0));
        assert_eq!(latency_range_ms(&r), (100, 150));
        let starts: Vec<Option<u64>> = r.calls.iter().map(|c| c.start().map(|t| t.micros() / 1000)).collect();
        assert_eq!(starts, vec![Some(0), Some(100), Some(200)], "each took the lock when it was freed");
        assert_eq!(r.calls[2].end(), Some(SimTime(210_000)));
        // `with breaker.calling():` (serialize = false): the calls overlap.
        let r = scripted_run(rows, "pybreaker", &[("serialize", false.into())]);
        assert_eq!(latency_range_ms(&r), (10, 100));
    }

    #[test]
    fn a_result_precedes_an_arrival_at_the_same_instant() {
        // A sequential log: each row starts when the previous one returned (t_ms = previous
        // t_ms + latency_ms). node-breaker (seed 003): five failures open it at 50 ms; the probe
        // at 30,050 ms half-opens it and fails at 30,150 ms, reopening it. The next call starts
        // at 30,150 ms and sees the reopened breaker: rejected, so the cooldown runs from
        // 30,150 and the call at 60,150 half-opens it (its success closes at 60,160). Were the
        // arrival first, it would be admitted as a half-open call, its failure would restart the
        // cooldown at 30,160, and the call at 60,150 would be rejected.
        let rows = "0,10,0\n10,10,0\n20,10,0\n30,10,0\n40,10,0\n\
                    30050,100,0\n30150,10,0\n60150,10,1\n";
        let (changes, counters) = scripted(rows, "node-breaker");
        assert_eq!(
            changes,
            vec![
                (50, State::Open),
                (30_050, State::HalfOpen),
                (30_150, State::Open),
                (60_150, State::HalfOpen),
                (60_160, State::Closed),
            ]
        );
        assert_eq!((counters.attempts, counters.rejections), (7, 1));
    }

    #[test]
    fn same_instant_arrivals_keep_trace_order_after_the_result() {
        // consecutive (5 failures, open 30 s, one probe): the 5th failure returns at 50 ms, where
        // a call arrives: rejected, it comes after the result. At 30,050 ms two calls arrive
        // together; the first in the trace is the probe (its success closes at 30,060 ms) and the
        // second is rejected. In the other order the failing second row would reopen it.
        let rows = "0,10,0\n10,10,0\n20,10,0\n30,10,0\n40,10,0\n50,10,1\n\
                    30050,10,1\n30050,20,0\n";
        let (changes, counters) = scripted(rows, "consecutive");
        assert_eq!(changes, vec![(50, State::Open), (30_050, State::HalfOpen), (30_060, State::Closed)]);
        assert_eq!((counters.attempts, counters.rejections), (6, 2));
    }

    #[test]
    fn an_active_half_open_transition_fires_without_traffic() {
        // One failing call at 0 s with failure_threshold 1: open at 50 ms; active transition
        // after 30 s, at 30.05 s, although no call arrives until the end.
        let calls = crate::upstream::script::calls_from_text("0,50,0\n59000,10,1\n");
        let mut scenario = Scenario::from_calls(Path::new("calls.csv"), calls).unwrap();
        scenario.duration = Dur::from_secs(60);
        let mut spec = PolicySpec::new("consecutive");
        spec.overrides.insert("failure_threshold".into(), 1.into());
        spec.overrides.insert("half_open_transition".into(), "active".into());
        let policy = spec.resolve().unwrap();
        let workload = Workload::build(&scenario, 1, 0).unwrap();
        let r = simulate(&scenario.client, &workload, &policy, &RunOptions::default());
        let times: Vec<(u64, State)> = r.transitions.iter().map(|(_, t)| (t.at.micros(), t.to)).collect();
        assert_eq!(
            times,
            vec![(50_000, State::Open), (30_050_000, State::HalfOpen), (59_010_000, State::Closed)]
        );
    }
}
