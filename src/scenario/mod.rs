//! Scenario files (TOML) → a validated [`Scenario`]. Every problem is reported as an
//! [`InputError`] with file:line:col before anything is simulated.
//!
//! A scenario names the traffic, the client (timeout, retries, fallback, instances), the
//! dependency (baseline and incidents, or a scripted CSV of calls), the breaker policy and the
//! scoring options. See the README for the full format.

mod error;
mod providers;

pub use error::{InputError, line_col};
pub use providers::{MAX_PROVIDERS, ProviderSpec, RoutingSpec, Strategy};

use crate::client::ClientSpec;
use crate::policy::{PolicyConfig, PolicySpec};
use crate::time::Dur;
use crate::traffic::TrafficSpec;
use crate::upstream::script::{ScriptRow, load_script};
use crate::upstream::{IncidentSpec, UpstreamSpec};
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The default base seed when neither the file nor the command line gives one.
pub const DEFAULT_SEED: u64 = 1;

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

/// A scenario as written in the file (before validation).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Option<String>,
    description: Option<String>,
    duration: Option<Spanned<Dur>>,
    seed: Option<u64>,
    script: Option<Spanned<String>>,
    traffic: Option<Spanned<TrafficSpec>>,
    client: Option<Spanned<ClientSpec>>,
    upstream: Option<Spanned<UpstreamSpec>>,
    #[serde(default)]
    incidents: Vec<Spanned<IncidentSpec>>,
    policy: Option<Spanned<toml::Table>>,
    #[serde(default)]
    scoring: ScoringSpec,
    routing: Option<Spanned<RoutingSpec>>,
    #[serde(default)]
    providers: Vec<Spanned<providers::ProviderFile>>,
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
    },
    /// Exactly these calls, no retries (`t_ms,latency_ms,ok`). Incidents, if any, are ground
    /// truth only.
    Script {
        /// The calls, sorted by time.
        rows: Vec<ScriptRow>,
        /// Ground-truth windows for scoring.
        incidents: Vec<IncidentSpec>,
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
    /// Scoring options.
    pub scoring: ScoringSpec,
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, InputError> {
        let text = read_text(path)?;
        Scenario::parse(path, &text)
    }

    /// Validates the text of a scenario file; `path` names it in errors and anchors relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, InputError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| InputError::from_toml(path, text, &e))?;
        let at = |span: Range<usize>, message: String| InputError::at_offset(path, text, span.start, message);
        let name = match file.name {
            Some(n) if n.trim().is_empty() => return Err(InputError::file(path, "`name` must not be empty")),
            Some(n) => n,
            None => {
                path.file_stem().map_or_else(|| "scenario".to_string(), |s| s.to_string_lossy().into_owned())
            }
        };
        let client = match file.client {
            Some(c) => {
                let span = c.span();
                let c = c.into_inner();
                c.validate().map_err(|m| at(span, format!("[client]: {m}")))?;
                c
            }
            None => ClientSpec::default(),
        };
        let first_incident = file.incidents.first().map(|i| i.span());
        let mut incidents = Vec::with_capacity(file.incidents.len());
        for (i, inc) in file.incidents.into_iter().enumerate() {
            let span = inc.span();
            let inc = inc.into_inner();
            inc.validate().map_err(|m| at(span, format!("[[incidents]] #{}: {m}", i + 1)))?;
            incidents.push(inc);
        }
        let (source, duration) = if let Some(script) = file.script {
            for (present, key) in [
                (file.traffic.is_some(), "traffic"),
                (file.upstream.is_some(), "upstream"),
                (!file.providers.is_empty(), "[providers]"),
                (file.routing.is_some(), "routing"),
            ] {
                if present {
                    return Err(at(
                        script.span(),
                        format!("a scripted scenario takes its calls from `script`; remove [{key}]"),
                    ));
                }
            }
            let script_path = relative_to(path, script.get_ref());
            let rows = load_script(&script_path).map_err(|e| at(script.span(), e.to_string()))?;
            let duration = file.duration.map_or_else(|| script_span(&rows), |d| d.into_inner());
            (Source::Script { rows, incidents }, duration)
        } else {
            let Some(duration) = file.duration else {
                return Err(InputError::file(path, "missing `duration` (for example duration = \"2h\")"));
            };
            let duration_span = duration.span();
            let duration = duration.into_inner();
            if duration.is_zero() {
                return Err(at(duration_span, "`duration` must be longer than 0s".into()));
            }
            let traffic = match file.traffic {
                Some(t) => {
                    let span = t.span();
                    let t = t.into_inner();
                    t.validate().map_err(|m| at(span, format!("[traffic]: {m}")))?;
                    t
                }
                None => {
                    return Err(InputError::file(
                        path,
                        "missing [traffic] (for example kind = \"poisson\", rate = 5.0)",
                    ));
                }
            };
            if !file.providers.is_empty() {
                if let Some(u) = &file.upstream {
                    return Err(at(
                        u.span(),
                        "with [[providers]], each provider has its own [providers.upstream]; \
                         remove the top-level [upstream]"
                            .into(),
                    ));
                }
                if let Some(span) = first_incident {
                    return Err(at(
                        span,
                        "with [[providers]], incidents belong to a provider ([[providers.incidents]]); \
                         remove the top-level [[incidents]]"
                            .into(),
                    ));
                }
                let routing = file.routing.map(Spanned::into_inner).unwrap_or_default();
                let providers = providers::validate(path, text, file.providers)?;
                (Source::Providers { traffic, routing, providers }, duration)
            } else {
                if let Some(r) = &file.routing {
                    return Err(at(
                        r.span(),
                        "[routing] needs [[providers]] to route between (see the README)".into(),
                    ));
                }
                let upstream = match file.upstream {
                    Some(u) => {
                        let span = u.span();
                        let u = u.into_inner();
                        u.validate().map_err(|m| at(span, format!("[upstream]: {m}")))?;
                        u
                    }
                    None => UpstreamSpec::default(),
                };
                (Source::Model { traffic, upstream, incidents }, duration)
            }
        };
        let policy = match file.policy {
            Some(table) => {
                let span = table.span();
                let table = table.into_inner();
                let spec = policy_from_table(table).map_err(|m| at(span.clone(), m))?;
                spec.resolve().map_err(|e| {
                    let message = e.to_string();
                    let offset = key_offset(text, span.clone(), &spec, &message).unwrap_or(span.start);
                    InputError::at_offset(path, text, offset, format!("[policy]: {message}"))
                })?;
                Some(spec)
            }
            None => None,
        };
        let scenario = Scenario {
            name,
            description: file.description.unwrap_or_default(),
            path: Some(path.to_path_buf()),
            duration,
            seed: file.seed.unwrap_or(DEFAULT_SEED),
            client,
            source,
            policy,
            scoring: file.scoring,
        };
        scenario.check_scoring().map_err(|m| InputError::file(path, m))?;
        Ok(scenario)
    }

    /// A scenario made of a scripted CSV alone (`breakerlab run --script FILE`): the client
    /// makes exactly those calls, with no retries and no timeout of its own.
    pub fn from_script(path: &Path) -> Result<Scenario, InputError> {
        let rows = load_script(path).map_err(|e| InputError::argument(e.to_string()))?;
        let end = script_span(&rows);
        let name =
            path.file_stem().map_or_else(|| "script".to_string(), |s| s.to_string_lossy().into_owned());
        Ok(Scenario {
            name,
            description: format!("scripted calls from {}", path.display()),
            path: Some(path.to_path_buf()),
            duration: end,
            seed: DEFAULT_SEED,
            client: ClientSpec::scripted(),
            source: Source::Script { rows, incidents: Vec::new() },
            policy: None,
            scoring: ScoringSpec::default(),
        })
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

    fn check_scoring(&self) -> Result<(), String> {
        if self.scoring.flap_window.is_zero() {
            return Err("[scoring] flap_window must be longer than 0s".into());
        }
        if self.scoring.timeline_bin.is_some_and(|b| b.is_zero()) {
            return Err("[scoring] timeline_bin must be longer than 0s".into());
        }
        Ok(())
    }
}

/// A script's span: past the end of its last call, rounded up to a whole second.
fn script_span(rows: &[ScriptRow]) -> Dur {
    let end = rows.iter().map(|r| (r.t + r.latency).0 + 1).max().unwrap_or(1);
    Dur(end.div_ceil(crate::time::MICROS_PER_SEC) * crate::time::MICROS_PER_SEC)
}

/// Splits a `[policy]` table into its preset and the overrides.
fn policy_from_table(mut table: toml::Table) -> Result<PolicySpec, String> {
    let preset = match table.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(other) => return Err(format!("`preset` must be a string naming a preset, found {other}")),
        None => return Err("[policy] needs `preset = \"NAME\"` (see `breakerlab presets`)".into()),
    };
    let mut spec = PolicySpec::new(&preset);
    spec.overrides = table;
    Ok(spec)
}

/// The offset of the first override key that an error message names in backquotes, searched
/// from the `[policy]` header to the next table header.
fn key_offset(text: &str, span: Range<usize>, spec: &PolicySpec, message: &str) -> Option<usize> {
    let key = spec.overrides.keys().find(|k| message.contains(&format!("`{k}`")))?;
    let section = text.get(span.start..)?;
    let mut offset = span.start;
    for (n, line) in section.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if n > 0 && trimmed.starts_with('[') {
            break;
        }
        if trimmed.starts_with(key.as_str()) && trimmed[key.len()..].trim_start().starts_with('=') {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

/// Reads a whole text file, with a clear message when it is missing or unreadable.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => e.to_string(),
        };
        InputError::file(path, format!("cannot read: {why}"))
    })
}

/// `rel` resolved against the folder of `base` (absolute paths are kept).
pub fn relative_to(base: &Path, rel: &str) -> PathBuf {
    let rel = Path::new(rel);
    if rel.is_absolute() { rel.to_path_buf() } else { base.parent().unwrap_or(Path::new(".")).join(rel) }
}
