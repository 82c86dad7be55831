//! A sweep's deployment target (`target = "<library>"`, `target_mode`, `--target`): before
//! anything runs, every configuration of the grid is checked against the library's exporter.
//! With `exact` (the default) each one the library cannot express is refused with where it is
//! written, the field and what the library lacks; with `nearest` each is replaced, under its
//! id, by the nearest configuration the library expresses ([`crate::deploy::nearest`]), and the
//! replacements are listed. The baseline is exempt (it is what runs today, perhaps in another
//! library), and so is the `none` preset (no breaker needs no configuration).

use super::SweepError;
use super::file::SweepFile;
use super::grid::Configuration;
use crate::deploy::nearest::nearest;
use crate::policy::export::{ExportError, Library, export};
use crate::policy::{PolicyConfig, PolicySpec};
use std::fmt::Write as _;

/// Whether configurations the library cannot express are refused or replaced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TargetMode {
    /// Refuse them.
    Exact,
    /// Replace each by the nearest expressible configuration.
    Nearest,
}

impl TargetMode {
    /// Parses `exact` or `nearest`.
    pub fn parse(text: &str) -> Result<TargetMode, String> {
        match text.trim() {
            "exact" => Ok(TargetMode::Exact),
            "nearest" => Ok(TargetMode::Nearest),
            other => Err(format!("expected \"exact\" or \"nearest\", found {other:?}")),
        }
    }

    /// `exact` or `nearest`.
    pub fn name(self) -> &'static str {
        match self {
            TargetMode::Exact => "exact",
            TargetMode::Nearest => "nearest",
        }
    }
}

/// The library a sweep's recommendation is deployed to.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The library.
    pub library: Library,
    /// Exact or nearest.
    pub mode: TargetMode,
    /// Line and column of `target` in the sweep file (`None` when given as `--target`).
    pub at: Option<(usize, usize)>,
}

/// Where a `[[policies]]` entry (or the baseline) is written: the entry, its preset and each
/// parameter's values, as (line, column).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpots {
    /// The entry.
    pub entry: (usize, usize),
    /// Its `preset`.
    pub preset: (usize, usize),
    /// Each parameter's values.
    pub params: Vec<(String, (usize, usize))>,
}

/// A configuration run in place of one the library cannot express.
#[derive(Clone, Debug, PartialEq)]
pub struct Replacement {
    /// The configuration's id.
    pub id: usize,
    /// What the grid had there.
    pub original: String,
    /// What runs instead.
    pub replacement: String,
    /// What differs, in words.
    pub differences: Vec<String>,
    /// An earlier replacement that runs the same configuration, if any (both run: ids stay
    /// the grid's).
    pub same_as: Option<usize>,
}

/// A sweep's target after the check: the library, the mode and the replacements made.
#[derive(Clone, Debug, PartialEq)]
pub struct Deployment {
    /// The target.
    pub target: Target,
    /// Replacements, by id.
    pub replaced: Vec<Replacement>,
    /// Configurations checked (the baseline's excluded).
    pub checked: usize,
}

/// Refusals listed in full before the rest are counted.
const LISTED: usize = 20;

/// The configuration's policy spec, resolved.
fn resolve(c: &Configuration) -> Result<(PolicySpec, PolicyConfig), String> {
    let mut spec = PolicySpec::new(&c.preset);
    for (k, v) in &c.overrides {
        spec.overrides.insert(k.clone(), v.clone());
    }
    let cfg = spec.resolve().map_err(|e| e.to_string())?;
    Ok((spec, cfg))
}

/// Checks (and, with `nearest`, replaces) `file`'s configurations against `target`.
pub fn apply(file: &mut SweepFile, target: Target) -> Result<Deployment, SweepError> {
    let lib = target.library;
    let mut refused: Vec<String> = Vec::new();
    let mut replaced: Vec<Replacement> = Vec::new();
    let mut checked = 0;
    let configs: Vec<Configuration> = file.configurations.iter().collect();
    for c in &configs {
        // The baseline runs today, perhaps elsewhere; no breaker at all needs no configuration.
        if Some(c.id) == file.baseline || c.preset == "none" {
            continue;
        }
        checked += 1;
        let (spec, cfg) =
            resolve(c).map_err(|m| SweepError::File { file: file.path.display().to_string(), message: m })?;
        let Err(refused_as) = export(&cfg, lib, "x") else { continue };
        let reason = match refused_as {
            ExportError::Unsupported { reason, .. } => format!("{} cannot express it: {reason}", lib.name()),
            other => other.to_string(),
        };
        if target.mode == TargetMode::Nearest {
            match nearest(&cfg, &spec, lib) {
                Ok(n) => {
                    let set = n.spec.overrides.clone();
                    let overrides: Vec<(String, toml::Value)> = n
                        .config
                        .params()
                        .into_iter()
                        .filter_map(|(k, _)| set.get(&k).map(|v| (k, v.clone())))
                        .collect();
                    let stand_in = Configuration { id: c.id, preset: n.spec.preset.clone(), overrides };
                    let same_as = replaced.iter().find(|r| r.replacement == stand_in.label()).map(|r| r.id);
                    replaced.push(Replacement {
                        same_as,
                        id: c.id,
                        original: c.label(),
                        replacement: stand_in.label(),
                        differences: n.differences,
                    });
                    file.configurations.replace(c.id, stand_in.preset, stand_in.overrides);
                    continue;
                }
                Err(e) => {
                    let why = match e {
                        ExportError::Unsupported { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    let reason = format!("{reason}; and it has no nearest configuration: {why}");
                    refused.push(refusal(file, c, &cfg, &reason));
                    continue;
                }
            }
        }
        refused.push(refusal(file, c, &cfg, &reason));
    }
    if !refused.is_empty() {
        let n = refused.len();
        let mut message = format!(
            "target {} (target_mode = \"{}\") cannot express {n} of the {checked} configuration(s), each below with \
             where it is written, the field and what the library lacks{}:",
            lib.name(),
            target.mode.name(),
            match target.mode {
                TargetMode::Exact =>
                    "; target_mode = \"nearest\" (or --target-mode nearest) runs the nearest expressible configuration instead",
                TargetMode::Nearest => "",
            }
        );
        for line in refused.iter().take(LISTED) {
            let _ = write!(message, "\n  {line}");
        }
        if n > LISTED {
            let _ = write!(message, "\n  ... and {} more", n - LISTED);
        }
        let file_name = file.path.display().to_string();
        return Err(match target.at {
            Some((line, col)) => SweepError::At { file: file_name, line, col, message },
            None => {
                SweepError::File { file: file_name, message: format!("--target {}: {message}", lib.name()) }
            }
        });
    }
    Ok(Deployment { target, replaced, checked })
}

/// One refused configuration: `file:line:col: configuration N `label` (field `f`): reason`,
/// naming the parameter the reason names first (pointing at its values when the entry sets
/// it), else the preset.
fn refusal(file: &SweepFile, c: &Configuration, cfg: &PolicyConfig, reason: &str) -> String {
    let entry = file
        .grids
        .iter()
        .position(|g| {
            g.preset == c.preset && g.params.iter().map(|p| &p.name).eq(c.overrides.iter().map(|o| &o.0))
        })
        .and_then(|i| file.policy_spots.get(i));
    let params = cfg.params();
    let field = params
        .iter()
        .filter_map(|(k, _)| first_mention(reason, k).map(|at| (at, k.as_str())))
        .min()
        .map(|(_, k)| k);
    let (line, col) = match (entry, field) {
        (Some(e), Some(f)) => e.params.iter().find(|(k, _)| k == f).map_or(e.preset, |(_, at)| *at),
        (Some(e), None) => e.preset,
        (None, _) => (1, 1),
    };
    let field = field.unwrap_or("preset");
    format!(
        "{}:{line}:{col}: configuration {} `{}` (field `{field}`): {reason}",
        file.path.display(),
        c.id,
        c.label()
    )
}

/// Where `text` first names `word` as a whole word (letters, digits and `_` around it do not
/// count).
fn first_mention(text: &str, word: &str) -> Option<usize> {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(word)
        .map(|(i, _)| i)
        .find(|&i| !part(text[..i].chars().next_back()) && !part(text[i + word.len()..].chars().next()))
}

impl Deployment {
    /// The replacements, one line each with what differs below it (at most [`LISTED`], then a
    /// count); empty when none were made.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let lib = self.target.library.name();
        if self.replaced.is_empty() {
            let _ = writeln!(s, "target {lib}: every configuration ({}) exports exactly", self.checked);
            return s;
        }
        let _ = writeln!(
            s,
            "target {lib} (target_mode = \"nearest\"): {} of the {} configuration(s) replaced by the nearest configuration {lib} expresses:",
            self.replaced.len(),
            self.checked
        );
        for r in self.replaced.iter().take(LISTED) {
            let _ = writeln!(s, "  configuration {}: {} -> {}", r.id, r.original, r.replacement);
            if let Some(k) = r.same_as {
                let _ = writeln!(
                    s,
                    "      (the same as configuration {k}'s replacement: both run, under their own ids)"
                );
                continue;
            }
            for d in &r.differences {
                let _ = writeln!(s, "      {d}");
            }
        }
        if self.replaced.len() > LISTED {
            let _ = writeln!(s, "  ... and {} more", self.replaced.len() - LISTED);
        }
        s
    }

    /// The replacement made at configuration `id`, if one was.
    pub fn replacement(&self, id: usize) -> Option<&Replacement> {
        self.replaced.iter().find(|r| r.id == id)
    }
}

/// The target in force: `--target` replaces the file's library, `--target-mode` its mode;
/// `--target-mode` with no target anywhere is refused.
pub fn chosen(
    file: Option<Target>,
    flag: Option<Library>,
    mode: Option<TargetMode>,
) -> Result<Option<Target>, String> {
    let target = match (file, flag) {
        (file, Some(library)) => {
            let mode = file.map_or(TargetMode::Exact, |f| f.mode);
            Some(Target { library, mode, at: None })
        }
        (file, None) => file,
    };
    match (target, mode) {
        (None, Some(_)) => Err("--target-mode applies with a target only: give --target LIBRARY, or set `target` in the sweep file".into()),
        (Some(t), Some(mode)) => Ok(Some(Target { mode, ..t })),
        (t, None) => Ok(t),
    }
}
