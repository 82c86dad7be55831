//! The scenario model: a validated [`Scenario`] (traffic, client, dependency, policy, scoring)
//! and the reading of a scenario file's text (TOML) into one, every problem an [`InputError`]
//! with file:line:col before anything is simulated.
//!
//! A scenario may name other files: a script of calls (`script`) or a trace (`[trace]`, see
//! [`crate::trace`]). The model reads no file: [`Scenario::parse_with`] hands those to an
//! [`Inputs`], which `breakerlab` implements over the file system.

mod error;
mod file;
mod origins;
mod providers;

pub use error::{InputError, Spot};
pub use origins::Origins;
pub use providers::{ProviderSpec, RoutingSpec, Strategy};

use crate::client::ClientSpec;
use crate::policy::{PolicyConfig, PolicySpec};
use crate::time::Dur;
use crate::trace::{Trace, TraceOptions};
use crate::traffic::TrafficSpec;
use crate::truth::IncidentWindow;
use crate::upstream::script::ScriptCalls;
use crate::upstream::{IncidentSpec, UpstreamSpec};
use crate::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Most requests one run may offer: arrival times (8 bytes each) and first answers (32 bytes
/// each) are held in memory, so this is about 8 GB, a week at about 330 requests per second.
pub const MAX_REQUESTS: u64 = 200_000_000;

/// The default base seed when neither the file nor the command line gives one.
pub const DEFAULT_SEED: u64 = 1;

/// The refusal of a `[trace]` table that names no file: the model's check and the reader's.
pub const TRACE_NEEDS_FILE: &str =
    "[trace] needs `file = \"PATH.csv\"` or `series = [...]` (relative to this file)";

/// What reads the files a scenario file names. Each answer's error is the message that follows
/// the file, line and column of the key that named the file.
pub trait Inputs {
    /// The calls of the script at `path`.
    fn script(&self, path: &Path) -> Result<ScriptCalls, String>;
    /// The trace `opts` names (paths relative to the scenario file at `scenario`), imported with
    /// its ground truth; `traffic` replaces the trace's arrivals. Returns the source, the trace's
    /// span and every file read.
    fn trace(
        &self,
        scenario: &Path,
        opts: TraceOptions,
        traffic: Option<TrafficSpec>,
    ) -> Result<(Source, Dur, Vec<PathBuf>), String>;
}

/// Reads nothing: a scenario that names a file is refused ([`Scenario::parse`]).
struct NoFiles;

impl Inputs for NoFiles {
    fn script(&self, path: &Path) -> Result<ScriptCalls, String> {
        Err(format!("{} names a file: read it with breakerlab's scenario::parse", path.display()))
    }
    fn trace(
        &self,
        _: &Path,
        _: TraceOptions,
        _: Option<TrafficSpec>,
    ) -> Result<(Source, Dur, Vec<PathBuf>), String> {
        Err("[trace] names a file: read it with breakerlab's scenario::parse".to_string())
    }
}

/// How a run is scored against the ground truth.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScoringSpec {
    /// Extends each incident window at its end for late-completing calls.
    pub tolerance: Dur,
    /// An entry into OPEN this soon after an entry into CLOSED is a flap.
    pub flap_window: Dur,
    /// Width of a timeline bin; chosen from the scenario's span when absent.
    pub timeline_bin: Option<Dur>,
}

impl Default for ScoringSpec {
    fn default() -> ScoringSpec {
        ScoringSpec { tolerance: Dur::from_secs(30), flap_window: Dur::from_secs(300), timeline_bin: None }
    }
}

/// Where the dependency's answers come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Arrivals from the traffic model, answers from the upstream model and its incidents.
    Model {
        /// The arrival process.
        traffic: TrafficSpec,
        /// The dependency's baseline.
        upstream: UpstreamSpec,
        /// Incidents (they also give the ground truth).
        incidents: Vec<IncidentSpec>,
        /// A pool of hosts behind a load balancer (`[upstream] hosts`, `[[hosts]]`); `None` for
        /// one dependency.
        pool: Option<crate::upstream::pool::PoolSpec>,
    },
    /// Exactly these calls, no retries (`t_ms,latency_ms,ok`). Incidents, if any, are ground
    /// truth only.
    Script {
        /// The calls, sorted by time (shared with the workloads that stream them).
        rows: std::sync::Arc<ScriptCalls>,
        /// Ground-truth windows for scoring.
        incidents: Vec<IncidentSpec>,
    },
    /// Logged data replayed (`[trace]`): an interval trace answers from its fitted intervals, a
    /// per-call log replays its calls exactly and answers unlogged attempts from nearby calls.
    Trace {
        /// The imported trace (shared, never copied).
        trace: Trace,
        /// The trace file, resolved against the scenario file.
        file: PathBuf,
        /// An arrival process replacing the trace's own arrivals: required for an interval trace
        /// without a count column, refused for a per-call log (its calls are the arrivals).
        traffic: Option<TrafficSpec>,
        /// Ground truth from labels, a label column or an SLO rule; `None` when none was given
        /// (the run then reports only what needs no ground truth).
        truth: Option<Vec<IncidentWindow>>,
        /// The balancer in front of the hosts a per-call log names (`[upstream] balancer`,
        /// round robin by default): used when the log replays as a pool.
        balancer: crate::upstream::pool::BalancerSpec,
    },
    /// Arrivals from the traffic model; each request is routed across several providers, each
    /// with its own dependency model, incidents, breakers and price (`[[providers]]`).
    Providers {
        /// The arrival process.
        traffic: TrafficSpec,
        /// How providers are ordered (`[routing]`).
        routing: RoutingSpec,
        /// The providers, in file order (the priority order).
        providers: Vec<ProviderSpec>,
    },
}

/// A validated scenario, ready to simulate.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name used for the output folder and in tables.
    pub name: String,
    /// One line saying what it represents.
    pub description: String,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// Arrivals happen in `[0, duration)`.
    pub duration: Dur,
    /// Base seed (the command line's `--seed` wins).
    pub seed: u64,
    /// The client's behaviour.
    pub client: ClientSpec,
    /// Where answers come from.
    pub source: Source,
    /// The policy named in the file (`[policy]`), if any.
    pub policy: Option<PolicySpec>,
    /// A mixed fleet (`[[instances]]`): client instance `i` runs policy `i`. Used by `run`
    /// without `--policy`; a sweep, `compare` or `--policy` runs one configuration everywhere.
    pub instance_policies: Vec<PolicySpec>,
    /// Scoring options.
    pub scoring: ScoringSpec,
    /// Where the fields that size it were written (for limits checked later).
    pub origins: Origins,
    /// Files read besides [`Scenario::path`] (a script, a trace and its labels), so a
    /// shard's manifest can hash every input.
    pub inputs: Vec<PathBuf>,
}

impl Scenario {
    /// Validates the text of a scenario file that names no other file (no `script`, no
    /// `[trace]`); `path` names it in errors. `breakerlab`'s `scenario::parse` reads any file.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, InputError> {
        file::parse(path, text, &NoFiles)
    }

    /// Validates the text of a scenario file; `path` names it in errors and anchors relative
    /// paths; `inputs` reads the files it names.
    pub fn parse_with(path: &Path, text: &str, inputs: &dyn Inputs) -> Result<Scenario, InputError> {
        file::parse(path, text, inputs)
    }

    /// A scenario made of scripted calls alone (`breakerlab run --script FILE`), read from `path`:
    /// the client makes exactly those calls, with no retries and no timeout of its own.
    pub fn from_calls(path: &Path, rows: ScriptCalls) -> Result<Scenario, InputError> {
        let end = script_span(&rows);
        let name =
            path.file_stem().map_or_else(|| "script".to_string(), |s| s.to_string_lossy().into_owned());
        let scenario = Scenario {
            name,
            description: format!("scripted calls from {}", path.display()),
            path: Some(path.to_path_buf()),
            duration: end,
            seed: DEFAULT_SEED,
            client: ClientSpec::scripted(),
            source: Source::Script { rows: std::sync::Arc::new(rows), incidents: Vec::new() },
            policy: None,
            instance_policies: Vec::new(),
            scoring: ScoringSpec::default(),
            origins: Origins::of_file(path, "the script's rows"),
            inputs: Vec::new(),
        };
        scenario.check()?;
        Ok(scenario)
    }

    /// What the trace import did, for a trace scenario.
    pub fn import_report(&self) -> Option<&crate::trace::ImportReport> {
        match &self.source {
            Source::Trace { trace, .. } => Some(trace.report()),
            _ => None,
        }
    }

    /// The policy to run: `preset` from the command line if given (replacing the file's), else the
    /// file's `[policy]`, else `consecutive`; `overrides` are applied on top.
    pub fn policy_spec(&self, preset: Option<&str>, overrides: &[(String, toml::Value)]) -> PolicySpec {
        let mut spec = match (preset, &self.policy) {
            (Some(p), _) => PolicySpec::new(p),
            (None, Some(s)) => s.clone(),
            (None, None) => PolicySpec::new("consecutive"),
        };
        for (k, v) in overrides {
            spec.overrides.insert(k.clone(), v.clone());
        }
        spec
    }

    /// Resolves a policy for this scenario, turning a policy error into an input error.
    pub fn resolve_policy(&self, spec: &PolicySpec) -> Result<PolicyConfig, InputError> {
        spec.resolve().map_err(|e| InputError::argument(format!("policy `{}`: {e}", spec.preset)))
    }

    /// Whether runs of this scenario may send to a pool of hosts: `[upstream] hosts`, or a
    /// per-call log that names each call's host (run as a pool by outlier detectors, or by any
    /// policy when `host_column` names the column).
    pub fn has_pool(&self) -> bool {
        match &self.source {
            Source::Model { pool, .. } => pool.is_some(),
            Source::Trace { trace: Trace::Calls(log), traffic: None, .. } => log.hosts().is_some(),
            _ => false,
        }
    }

    /// The arrival process, when arrivals are modelled rather than logged.
    fn traffic(&self) -> Option<&TrafficSpec> {
        match &self.source {
            Source::Model { traffic, .. } | Source::Providers { traffic, .. } => Some(traffic),
            Source::Trace { traffic, .. } => traffic.as_ref(),
            Source::Script { .. } => None,
        }
    }

    /// About how many requests one run offers: the traffic's mean rate over the duration, or
    /// the calls a script or trace holds. A sharded sweep balances its shards by it.
    pub fn expected_requests(&self) -> f64 {
        if let Some(traffic) = self.traffic() {
            return traffic.mean_rate() * self.duration.as_secs_f64();
        }
        match &self.source {
            Source::Script { rows, .. } => rows.len() as f64,
            Source::Trace { trace: Trace::Calls(calls), .. } => calls.len() as f64,
            Source::Trace { trace: Trace::Interval(t), .. } => t.expected_arrivals().unwrap_or(0.0),
            Source::Model { .. } | Source::Providers { .. } => 0.0,
        }
    }

    /// Checks that need the whole scenario, each error located at the field it is about:
    /// scoring options, the request cap, incidents that would never happen, and a `[policy]`
    /// that a fleet would silently ignore.
    pub fn check(&self) -> Result<(), InputError> {
        let o = &self.origins;
        if self.scoring.flap_window.is_zero() {
            return Err(o.flap_window.error("must be longer than 0s"));
        }
        if let Some(bin) = self.scoring.timeline_bin {
            let options = crate::metrics::RecorderOptions {
                horizon: crate::time::SimTime(self.duration.micros()),
                instances: 1,
                timeline_bin: Some(bin),
                truth: Vec::new(),
            };
            options.validate().map_err(|m| o.timeline_bin.error(m))?;
        }
        let requests = self.expected_requests();
        if requests > MAX_REQUESTS as f64 {
            return Err(self.requests_spot().error(format!(
                "would offer about {requests:.3e} requests over {}; at most {MAX_REQUESTS} fit in one run: \
                 lower the rate or the duration",
                self.duration
            )));
        }
        let horizon = crate::time::SimTime(self.duration.micros());
        let incidents = match &self.source {
            Source::Model { incidents, .. } | Source::Script { incidents, .. } => incidents.as_slice(),
            _ => &[],
        };
        for (i, inc) in incidents.iter().enumerate() {
            if inc.occurrences(horizon, 1).is_ok_and(|o| o.is_empty()) {
                let spot = o.incidents.get(i).cloned().unwrap_or_else(|| o.duration.clone());
                return Err(spot.error(never_happens(inc, self.duration)));
            }
        }
        if self.policy.is_some() && !self.instance_policies.is_empty() {
            return Err(o.policy.error(
                "a fleet's [[instances]] give every client instance its own policy, so this [policy] \
                 would never run: remove it (or the [[instances]])",
            ));
        }
        Ok(())
    }

    /// The field that sets [`Scenario::expected_requests`]: the traffic rate, or the trace's
    /// or script's calls.
    pub fn requests_spot(&self) -> &Spot {
        if self.traffic().is_some() { &self.origins.rate } else { &self.origins.calls }
    }
}

/// Why `incident` needs a pool of hosts it does not have (`hosts` or `status` given), if it
/// does.
pub fn pool_only(incident: &IncidentSpec) -> Option<&'static str> {
    if incident.hosts.is_some() {
        return Some("`hosts` names hosts of a pool: give `[upstream] hosts = N` (or [[hosts]] tables)");
    }
    if incident.status.is_some() {
        return Some(
            "`status` is read by an outlier detector on a pool of hosts: give `[upstream] hosts = N`",
        );
    }
    None
}

/// Why an incident has no occurrence inside a run of length `duration`.
fn never_happens(inc: &IncidentSpec, duration: Dur) -> String {
    let first = match (inc.start, inc.at, inc.offset) {
        (Some(start), _, _) => start,
        (None, Some(at), _) => at.since_midnight(),
        (None, None, Some(offset)) => offset,
        (None, None, None) => Dur::ZERO,
    };
    match inc.until {
        Some(until) if until <= first && first < duration => format!(
            "`until` ({until}) comes before the first occurrence ({first}), so it never happens; \
             move `until` later or remove it"
        ),
        _ => format!(
            "starts at {first}, at or after the end of the run (duration {duration}), so it never happens; \
             start it earlier or lengthen `duration`"
        ),
    }
}

/// A script's span: past the end of its last call, rounded up to a whole second.
pub fn script_span(rows: &ScriptCalls) -> Dur {
    let end = rows.latest_end() + 1;
    Dur(end.div_ceil(crate::time::MICROS_PER_SEC) * crate::time::MICROS_PER_SEC)
}

/// A name that can name a folder inside `output/`: not empty, not `.` or `..`, no path
/// separator (so it can neither be absolute nor climb out), no NUL or other control character,
/// and at most [`MAX_NAME_BYTES`] bytes (the folder's lock and temporary names add to it, and a
/// file system allows 255). Scenario and sweep names follow it.
pub fn is_plain_name(name: &str) -> bool {
    let name = name.trim();
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= MAX_NAME_BYTES
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

/// The longest name of an output folder, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Parses a seed from the command line: seeds are unsigned 64-bit numbers, and a negative one
/// (`--seed -1`) is told so rather than taken for a flag.
pub fn parse_seed(text: &str) -> Result<u64> {
    let text = text.trim();
    text.parse::<u64>().map_err(|_| {
        let why = if text.starts_with('-') { "seeds are unsigned: " } else { "" };
        Error::invalid(format!("{why}expected a whole number from 0 to {}, found {text:?}", u64::MAX))
    })
}

/// `rel` resolved against the folder of `base` (absolute paths are kept).
pub fn relative_to(base: &Path, rel: &str) -> PathBuf {
    let rel = Path::new(rel);
    if rel.is_absolute() { rel.to_path_buf() } else { base.parent().unwrap_or(Path::new(".")).join(rel) }
}
