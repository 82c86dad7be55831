//! Where the values that size a run were written in a scenario file, read from the text apart
//! from validation, so checks made after parsing (resource limits, incidents outside the run,
//! scoring options) can name the file, line and field.

use super::error::{Spot, key_position};
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

/// The layout of a scenario file: only where its tables and keys start.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Layout {
    name: Option<Spanned<toml::Value>>,
    duration: Option<Spanned<toml::Value>>,
    script: Option<Spanned<toml::Value>>,
    traffic: Option<Spanned<toml::Value>>,
    client: Option<Spanned<toml::Value>>,
    upstream: Option<Spanned<toml::Value>>,
    trace: Option<Spanned<toml::Value>>,
    scoring: Option<Spanned<toml::Value>>,
    policy: Option<Spanned<toml::Value>>,
    instances: Vec<Spanned<toml::Value>>,
    incidents: Vec<Spanned<toml::Value>>,
}

/// Spots of the fields that size a run or are checked after parsing. A field the file does not
/// write points at the file alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origins {
    /// `name`.
    pub name: Spot,
    /// `duration` (for a trace or script without one: the trace or script).
    pub duration: Spot,
    /// `[traffic] rate`.
    pub rate: Spot,
    /// `[client] instances`.
    pub instances: Spot,
    /// `[client.retry] max_attempts`.
    pub attempts: Spot,
    /// `[upstream] p95`.
    pub latency: Spot,
    /// `[client.fallback] cycle` (a retry queue's), or `--fallback` for a replay.
    pub cycle: Spot,
    /// `[trace] file` or `script`: the logged or scripted calls.
    pub calls: Spot,
    /// `[scoring] timeline_bin`.
    pub timeline_bin: Spot,
    /// `[scoring] flap_window`.
    pub flap_window: Spot,
    /// `[policy]`.
    pub policy: Spot,
    /// Each `[[instances]]` table.
    pub fleet: Vec<Spot>,
    /// Each `[[incidents]]` table.
    pub incidents: Vec<Spot>,
}

impl Origins {
    /// Reads the layout of a scenario file's text (a text that does not parse gives spots
    /// without lines; the parser reports the syntax error itself).
    pub fn read(path: &Path, text: &str) -> Origins {
        let layout: Layout = toml::from_str(text).unwrap_or_default();
        let spot = |offset: Option<usize>, field: &str| Spot::in_file(path, text, offset, field);
        let start = |v: &Option<Spanned<toml::Value>>| v.as_ref().map(|v| v.span().start);
        let key = |table: &Option<Spanned<toml::Value>>, key: &str| {
            start(table).and_then(|s| key_position(text, s, key))
        };
        let calls = match (&layout.trace, &layout.script) {
            (Some(_), _) => spot(key(&layout.trace, "file").or(start(&layout.trace)), "[trace] file"),
            (None, Some(s)) => spot(Some(s.span().start), "script"),
            (None, None) => spot(None, "calls"),
        };
        let duration = if layout.duration.is_none() && (layout.trace.is_some() || layout.script.is_some()) {
            Spot { field: format!("duration (the span of {})", calls.field), ..calls.clone() }
        } else {
            spot(start(&layout.duration), "duration")
        };
        Origins {
            name: spot(start(&layout.name), "name"),
            duration,
            rate: spot(key(&layout.traffic, "rate").or(start(&layout.traffic)), "[traffic] rate"),
            instances: spot(key(&layout.client, "instances"), "[client] instances"),
            attempts: spot(key(&layout.client, "max_attempts"), "[client.retry] max_attempts"),
            latency: spot(key(&layout.upstream, "p95"), "[upstream] p95"),
            cycle: spot(key(&layout.client, "cycle"), "[client.fallback] cycle"),
            calls,
            timeline_bin: spot(key(&layout.scoring, "timeline_bin"), "[scoring] timeline_bin"),
            flap_window: spot(key(&layout.scoring, "flap_window"), "[scoring] flap_window"),
            policy: spot(start(&layout.policy), "[policy]"),
            fleet: layout
                .instances
                .iter()
                .enumerate()
                .map(|(i, t)| spot(Some(t.span().start), &format!("[[instances]] #{}", i + 1)))
                .collect(),
            incidents: layout
                .incidents
                .iter()
                .enumerate()
                .map(|(i, t)| spot(Some(t.span().start), &format!("[[incidents]] #{}", i + 1)))
                .collect(),
        }
    }

    /// Spots for a scenario built from command-line input alone (a script or a trace given on
    /// the command line): every field points at `path`, with no line.
    pub fn of_file(path: &Path, calls_field: &str) -> Origins {
        let spot = |field: &str| Spot { path: Some(path.to_path_buf()), position: None, field: field.into() };
        Origins {
            name: spot("name"),
            duration: spot(&format!("duration (the span of {calls_field})")),
            rate: spot(calls_field),
            instances: spot("instances"),
            attempts: spot("max_attempts"),
            latency: spot(calls_field),
            cycle: Spot::flag("--fallback"),
            calls: spot(calls_field),
            timeline_bin: spot("timeline_bin"),
            flap_window: spot("flap_window"),
            policy: spot("policy"),
            fleet: Vec::new(),
            incidents: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spots_point_at_the_keys() {
        let text = "name = \"x\"\nduration = \"1h\"\n[traffic]\nkind = \"poisson\"\nrate = 5.0\n\
                    [client]\ninstances = 3\n[client.retry]\nmax_attempts = 2\n[scoring]\ntimeline_bin = \"1s\"\n\
                    [[incidents]]\nkind = \"outage\"\n";
        let o = Origins::read(Path::new("s.toml"), text);
        assert_eq!(o.name.position, Some((1, 8)));
        assert_eq!(o.duration.position, Some((2, 12)));
        assert_eq!(o.rate.position, Some((5, 1)));
        assert_eq!(o.instances.position, Some((7, 1)));
        assert_eq!(o.attempts.position, Some((9, 1)));
        assert_eq!(o.timeline_bin.position, Some((11, 1)));
        assert_eq!(o.incidents[0].position, Some((12, 1)));
        assert_eq!(o.latency.position, None);
        assert_eq!(o.rate.error("too fast").to_string(), "s.toml:5:1: [traffic] rate: too fast");
    }
}
