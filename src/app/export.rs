//! `breakerlab export`: a preset plus overrides, written in a breaker library's own syntax.

use super::parse_sets;
use crate::Result;
use crate::policy::PolicySpec;
use crate::policy::export::{Library, export};

/// What `export` was asked for.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    /// `--as`: the target library.
    pub library: Library,
    /// `--policy`: the preset (default: the library's own preset).
    pub policy: Option<String>,
    /// `--set key=value` overrides.
    pub sets: Vec<String>,
    /// `--name`: the breaker instance's name where the syntax has one (default `backend`).
    pub name: Option<String>,
}

impl ExportRequest {
    /// The request for `preset` with `overrides` (as a sweep's configuration holds them).
    pub fn of(library: Library, preset: &str, overrides: &[(String, toml::Value)]) -> ExportRequest {
        let sets = overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
        ExportRequest { library, policy: Some(preset.to_string()), sets, name: None }
    }
}

/// The configuration text, or the reason the library cannot express it.
pub fn run(req: &ExportRequest) -> Result<String> {
    let mut spec = PolicySpec::new(req.policy.as_deref().unwrap_or(req.library.default_preset()));
    for (k, v) in parse_sets(&req.sets)? {
        spec.overrides.insert(k, v);
    }
    let cfg = spec.resolve().map_err(|e| super::name_flag(e, req.policy.as_deref(), &req.sets))?;
    let name = req.name.as_deref().unwrap_or("backend");
    Ok(export(&cfg, req.library, name)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_the_library_preset_and_applies_sets() {
        let req = ExportRequest {
            library: Library::Gobreaker,
            policy: None,
            sets: vec!["max_requests=2".into()],
            name: None,
        };
        let out = run(&req).unwrap();
        assert!(out.contains("MaxRequests: 2,") && out.contains("Name:        \"backend\","), "{out}");
        let bad = ExportRequest {
            policy: Some("consecutive".into()),
            ..ExportRequest::of(Library::Resilience4j, "x", &[])
        };
        let e = run(&bad).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("resilience4j cannot express policy `consecutive`"), "{e}");
        assert!(Library::parse("nope").unwrap_err().to_string().contains("unknown library"));
    }
}
