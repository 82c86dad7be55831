//! The scenario file as written (TOML) and its reading into a [`Scenario`]: each table checked
//! where it stands, so every refusal names the file, line and column; the dependency's source
//! (script, trace, providers or model) chosen from the tables present.

use super::origins::Origins;
use super::providers;
use super::{
    DEFAULT_SEED, InputError, Inputs, RoutingSpec, Scenario, ScoringSpec, Source, is_plain_name, relative_to,
    script_span,
};
use crate::client::ClientSpec;
use crate::policy::PolicySpec;
use crate::time::Dur;
use crate::trace::TraceOptions;
use crate::traffic::TrafficSpec;
use crate::upstream::pool::{HostOverride, PoolSpec};
use crate::upstream::{IncidentSpec, UpstreamSpec};
use crate::{Error, Result};
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    instances: Vec<Spanned<toml::Table>>,
    #[serde(default)]
    scoring: ScoringSpec,
    trace: Option<Spanned<TraceOptions>>,
    routing: Option<Spanned<RoutingSpec>>,
    #[serde(default)]
    providers: Vec<Spanned<providers::ProviderFile>>,
    #[serde(default)]
    hosts: Vec<Spanned<HostOverride>>,
}

/// Validates the text of a scenario file; `path` names it in errors and anchors relative paths.
pub(super) fn parse(path: &Path, text: &str, inputs: &dyn Inputs) -> Result<Scenario, InputError> {
    let mut file: ScenarioFile = toml::from_str(text).map_err(|e| InputError::from_toml(path, text, &e))?;
    let origins = Origins::read(path, text);
    let r = Reading { path, text, inputs };
    let name = r.name(file.name.take(), &origins)?;
    let mut client = r.checked(file.client.take(), "[client]", ClientSpec::validate)?.unwrap_or_default();
    let first_incident = file.incidents.first().map(|i| i.span());
    let incident_spans: Vec<Range<usize>> = file.incidents.iter().map(|i| i.span()).collect();
    let incidents = r.incidents(std::mem::take(&mut file.incidents))?;
    let mut inputs = Vec::new();
    let (source, duration) = if let Some(script) = file.script.take() {
        r.script(&mut file, script, incidents, &mut inputs)?
    } else if let Some(table) = file.trace.take() {
        r.trace(&mut file, table, incidents, &mut inputs)?
    } else {
        r.model(&mut file, incidents, first_incident)?
    };
    r.pool_fits(&source, &incident_spans, &client)?;
    let policy = file.policy.take().map(|table| r.policy(table, "[policy]")).transpose()?;
    let instance_policies = r.instances(std::mem::take(&mut file.instances), &mut client, &origins)?;
    let scenario = Scenario {
        name,
        description: file.description.unwrap_or_default(),
        path: Some(path.to_path_buf()),
        duration,
        seed: file.seed.unwrap_or(DEFAULT_SEED),
        client,
        source,
        policy,
        instance_policies,
        scoring: file.scoring,
        origins,
        inputs,
    };
    scenario.check()?;
    Ok(scenario)
}

/// A scenario file's text being read: names each refusal by its place in the file.
struct Reading<'a> {
    path: &'a Path,
    text: &'a str,
    /// What reads the files the scenario names.
    inputs: &'a dyn Inputs,
}

impl Reading<'_> {
    /// A refusal at the start of `span`.
    fn at(&self, span: Range<usize>, message: impl Into<String>) -> InputError {
        InputError::at_offset(self.path, self.text, span.start, message.into())
    }

    /// The table's value once `validate` accepts it; a refusal names `section` at its line.
    fn checked<T>(
        &self,
        table: Option<Spanned<T>>,
        section: &str,
        validate: impl Fn(&T) -> Result<()>,
    ) -> Result<Option<T>, InputError> {
        let Some(table) = table else { return Ok(None) };
        let span = table.span();
        let value = table.into_inner();
        validate(&value).map_err(|m| self.at(span, format!("{section}: {m}")))?;
        Ok(Some(value))
    }

    /// The scenario's name (it names the output folder), or the file's stem.
    fn name(&self, name: Option<String>, origins: &Origins) -> Result<String, InputError> {
        match name {
            Some(n) if n.trim().is_empty() => {
                Err(origins.name.error("must not be empty (it names the output folder)"))
            }
            Some(n) if !is_plain_name(&n) => Err(origins.name.error(format!(
                "must be a plain folder name (it names the output folder): at most {} bytes, no `/`, `\\`, \
                     NUL or other control character, found {} ({} bytes)",
                super::MAX_NAME_BYTES,
                short_debug(&n),
                n.len()
            ))),
            Some(n) => Ok(n),
            None => Ok(self
                .path
                .file_stem()
                .map_or_else(|| "scenario".to_string(), |s| s.to_string_lossy().into_owned())),
        }
    }

    /// Every `[[incidents]]` entry, checked in file order.
    fn incidents(&self, incidents: Vec<Spanned<IncidentSpec>>) -> Result<Vec<IncidentSpec>, InputError> {
        incidents
            .into_iter()
            .enumerate()
            .map(|(i, inc)| {
                let span = inc.span();
                let inc = inc.into_inner();
                inc.validate().map_err(|m| self.at(span, format!("[[incidents]] #{}: {m}", i + 1)))?;
                Ok(inc)
            })
            .collect()
    }

    /// A run's `duration`, which must be longer than zero.
    fn duration(&self, duration: Spanned<Dur>) -> Result<Dur, InputError> {
        if duration.get_ref().is_zero() {
            return Err(self.at(duration.span(), "`duration` must be longer than 0s"));
        }
        Ok(duration.into_inner())
    }

    /// A scripted dependency: the calls of `script`, the incidents as ground truth only.
    fn script(
        &self,
        file: &mut ScenarioFile,
        script: Spanned<String>,
        incidents: Vec<IncidentSpec>,
        inputs: &mut Vec<PathBuf>,
    ) -> Result<(Source, Dur), InputError> {
        for (present, key) in [
            (file.traffic.is_some(), "traffic"),
            (file.upstream.is_some(), "upstream"),
            (file.trace.is_some(), "trace"),
            (!file.providers.is_empty(), "[providers]"),
            (file.routing.is_some(), "routing"),
            (!file.hosts.is_empty(), "[hosts]"),
        ] {
            if present {
                return Err(self.at(
                    script.span(),
                    format!("a scripted scenario takes its calls from `script`; remove [{key}]"),
                ));
            }
        }
        let script_path = relative_to(self.path, script.get_ref());
        let rows = self.inputs.script(&script_path).map_err(|e| self.at(script.span(), e))?;
        inputs.push(script_path);
        let duration = file.duration.take().map_or_else(|| script_span(&rows), |d| d.into_inner());
        Ok((Source::Script { rows: std::sync::Arc::new(rows), incidents }, duration))
    }

    /// A logged dependency: `[trace]` imported now, with its ground truth (paths relative to
    /// this file).
    fn trace(
        &self,
        file: &mut ScenarioFile,
        table: Spanned<TraceOptions>,
        incidents: Vec<IncidentSpec>,
        inputs: &mut Vec<PathBuf>,
    ) -> Result<(Source, Dur), InputError> {
        let span = table.span();
        let balancer_only = file.upstream.as_ref().is_none_or(|u| {
            let rest =
                UpstreamSpec { balancer: None, choice_count: None, hash_keys: None, ..u.get_ref().clone() };
            rest == UpstreamSpec::default()
        });
        if !balancer_only || !incidents.is_empty() {
            return Err(self.at(
                span,
                "a trace scenario takes the dependency's behaviour and ground truth from [trace]; \
                 remove [upstream] and [[incidents]] (give labels, label_column or slo instead; a log that \
                 names its hosts takes only [upstream] balancer, choice_count and hash_keys)",
            ));
        }
        // The balancer in front of the hosts a log names, checked as a pool's.
        let upstream_span = file.upstream.as_ref().map(Spanned::span);
        let balancer = self
            .checked(file.upstream.take(), "[upstream]", |u| {
                UpstreamSpec { hosts: Some(1), ..u.clone() }.validate()
            })?
            .map(|u| crate::upstream::pool::BalancerSpec::of(&u));
        if !file.providers.is_empty() || file.routing.is_some() || !file.hosts.is_empty() {
            return Err(self.at(
                span,
                "a trace scenario replays one logged dependency; remove [[providers]], [routing] and [[hosts]]",
            ));
        }
        let opts = table.into_inner();
        if opts.file.is_none() && opts.series.is_empty() {
            return Err(self.at(span, super::TRACE_NEEDS_FILE));
        }
        let traffic = self.checked(file.traffic.take(), "[traffic]", TrafficSpec::validate)?;
        let (mut source, horizon, read) =
            self.inputs.trace(self.path, opts, traffic).map_err(|m| self.at(span, m))?;
        inputs.extend(read);
        if let (Some(chosen), Some(at)) = (balancer, upstream_span) {
            match &mut source {
                Source::Trace { trace: crate::trace::Trace::Calls(log), balancer, traffic: None, .. }
                    if log.hosts().is_some() =>
                {
                    *balancer = chosen;
                }
                _ => {
                    return Err(self.at(
                        at,
                        "[upstream] balancer balances the hosts a per-call log names: give [trace] host_column \
                         (or replay a log with upstream_host, server.address or net.peer.name)",
                    ));
                }
            }
        }
        let duration = match file.duration.take() {
            Some(d) => self.duration(d)?,
            None => horizon,
        };
        Ok((source, duration))
    }

    /// A modelled dependency: `[traffic]` with `[upstream]` and `[[incidents]]`, or with
    /// `[[providers]]` and `[routing]`.
    fn model(
        &self,
        file: &mut ScenarioFile,
        incidents: Vec<IncidentSpec>,
        first_incident: Option<Range<usize>>,
    ) -> Result<(Source, Dur), InputError> {
        let Some(duration) = file.duration.take() else {
            return Err(InputError::file(self.path, "missing `duration` (for example duration = \"2h\")"));
        };
        let duration = self.duration(duration)?;
        let Some(traffic) = self.checked(file.traffic.take(), "[traffic]", TrafficSpec::validate)? else {
            return Err(InputError::file(
                self.path,
                "missing [traffic] (for example kind = \"poisson\", rate = 5.0)",
            ));
        };
        if !file.providers.is_empty() {
            if let Some(u) = &file.upstream {
                return Err(self.at(
                    u.span(),
                    "with [[providers]], each provider has its own [providers.upstream]; \
                     remove the top-level [upstream]",
                ));
            }
            if let Some(span) = first_incident {
                return Err(self.at(
                    span,
                    "with [[providers]], incidents belong to a provider ([[providers.incidents]]); \
                     remove the top-level [[incidents]]",
                ));
            }
            if let Some(h) = file.hosts.first() {
                return Err(self
                    .at(h.span(), "with [[providers]], each provider is one dependency; remove [[hosts]]"));
            }
            let routing: RoutingSpec = file.routing.take().map(Spanned::into_inner).unwrap_or_default();
            let providers = providers::validate(self.path, self.text, std::mem::take(&mut file.providers))?;
            return Ok((Source::Providers { traffic, routing, providers }, duration));
        }
        if let Some(r) = &file.routing {
            return Err(self.at(r.span(), "[routing] needs [[providers]] to route between (docs/scenarios.md, section Multi-provider routing)"));
        }
        let upstream_span = file.upstream.as_ref().map(Spanned::span);
        let upstream =
            self.checked(file.upstream.take(), "[upstream]", UpstreamSpec::validate)?.unwrap_or_default();
        let pool = self.pool(&upstream, upstream_span, std::mem::take(&mut file.hosts))?;
        Ok((Source::Model { traffic, upstream, incidents, pool }, duration))
    }

    /// The pool of hosts of `[upstream] hosts` and the `[[hosts]]` tables, if the file has one;
    /// a refusal points at the `[[hosts]]` entry it is about, else at `[upstream]`.
    fn pool(
        &self,
        upstream: &UpstreamSpec,
        upstream_span: Option<Range<usize>>,
        hosts: Vec<Spanned<HostOverride>>,
    ) -> Result<Option<PoolSpec>, InputError> {
        if upstream.hosts.is_none() && hosts.is_empty() {
            return Ok(None);
        }
        let spans: Vec<Range<usize>> = hosts.iter().map(Spanned::span).collect();
        let overrides: Vec<HostOverride> = hosts.into_iter().map(Spanned::into_inner).collect();
        PoolSpec::new(upstream, &overrides).map(Some).map_err(|e| {
            let message = e.to_string();
            let entry = (1..=spans.len()).find(|k| message.starts_with(&format!("[[hosts]] #{k}")));
            let span = entry.map(|k| spans[k - 1].clone()).or(upstream_span).unwrap_or(0..0);
            self.at(span, message)
        })
    }

    /// Refuses what a source cannot do with its pool: incidents naming hosts (or a status)
    /// without a pool, and a pool with client restarts (a sidecar's detector is not modelled
    /// across a restart).
    fn pool_fits(
        &self,
        source: &Source,
        incident_spans: &[Range<usize>],
        client: &ClientSpec,
    ) -> Result<(), InputError> {
        let (incidents, pool) = match source {
            Source::Model { incidents, pool, .. } => (incidents.as_slice(), pool.as_ref()),
            Source::Script { incidents, .. } => (incidents.as_slice(), None),
            _ => (&[][..], None),
        };
        let spot = |i: usize| incident_spans.get(i).cloned().unwrap_or(0..0);
        if let Some(pool) = pool {
            for (i, inc) in incidents.iter().enumerate() {
                if let Some(sel) = &inc.hosts {
                    sel.resolve(u32::from(pool.len()))
                        .map_err(|e| self.at(spot(i), format!("[[incidents]] #{}: {e}", i + 1)))?;
                }
            }
        } else {
            for (i, inc) in incidents.iter().enumerate() {
                if let Some(m) = super::pool_only(inc) {
                    return Err(self.at(spot(i), format!("[[incidents]] #{}: {m}", i + 1)));
                }
            }
        }
        if pool.is_some() && client.process.is_some() {
            return Err(InputError::file(
                self.path,
                "[client.process] restarts the client, and a pool's outlier detectors are not modelled across a restart: \
                 remove [client.process] or `hosts`",
            ));
        }
        Ok(())
    }

    /// A `[policy]` or `[[instances]]` table, resolved once to check it; a refusal points at the
    /// key it names.
    fn policy(&self, table: Spanned<toml::Table>, section: &str) -> Result<PolicySpec, InputError> {
        let span = table.span();
        let spec = policy_from_table(table.into_inner()).map_err(|m| self.at(span.clone(), m.to_string()))?;
        spec.resolve().map_err(|e| {
            let message = e.to_string();
            let offset = key_offset(self.text, span.clone(), &spec, &message).unwrap_or(span.start);
            InputError::at_offset(self.path, self.text, offset, format!("{section}: {message}"))
        })?;
        Ok(spec)
    }

    /// One policy per client instance (`[[instances]]`), which also sets the instance count.
    fn instances(
        &self,
        tables: Vec<Spanned<toml::Table>>,
        client: &mut ClientSpec,
        origins: &Origins,
    ) -> Result<Vec<PolicySpec>, InputError> {
        let mut policies = Vec::with_capacity(tables.len());
        for (i, table) in tables.into_iter().enumerate() {
            if client.shared_breaker {
                return Err(self.at(
                    table.span(),
                    "[[instances]] give each client instance its own policy; remove `shared_breaker = true`",
                ));
            }
            policies.push(self.policy(table, &format!("[[instances]] #{}", i + 1))?);
        }
        if !policies.is_empty() {
            let n = policies.len() as u32;
            if client.instances == 1 {
                client.instances = n;
            } else if client.instances != n {
                return Err(origins.instances.error(format!(
                    "{} instances but [[instances]] lists {n} policies: give one per instance",
                    client.instances
                )));
            }
        }
        Ok(policies)
    }
}

/// Splits a `[policy]` table into its preset and the overrides.
fn policy_from_table(mut table: toml::Table) -> Result<PolicySpec> {
    let preset = match table.remove("preset") {
        Some(toml::Value::String(s)) => s,
        Some(other) => {
            return Err(Error::invalid(format!("`preset` must be a string naming a preset, found {other}")));
        }
        None => return Err(Error::invalid("[policy] needs `preset = \"NAME\"` (see `breakerlab presets`)")),
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

/// `text` quoted as Rust writes it, cut to its first 60 characters (a long name is not repeated
/// whole in its own error).
fn short_debug(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{:?}…", &text[..i]),
        None => format!("{text:?}"),
    }
}
