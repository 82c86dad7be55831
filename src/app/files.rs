//! The file system behind sweep files: reading one and finding the scenario files its globs and
//! paths name, for `sweep/file.rs`'s parser, which does no I/O itself.

use crate::sweep::SweepError;
use crate::sweep::file::{ScenarioFiles, SweepFile, Validate};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Reads and validates the sweep file at `path`; `columns` are the known metric columns,
/// `validate` checks each configuration.
pub(super) fn load_sweep<S: AsRef<str>>(
    path: &Path,
    columns: &[S],
    validate: Validate,
) -> Result<SweepFile, SweepError> {
    let text = crate::scenario::read_input_text(path, crate::scenario::MAX_TEXT_BYTES).map_err(|e| {
        let file = path.display().to_string();
        match e.position {
            Some((line, col)) => SweepError::At { file, line, col, message: e.message },
            None => SweepError::File { file, message: e.message },
        }
    })?;
    SweepFile::parse(&text, path, columns, validate, &Disk)
}

/// Scenario files on disk.
pub(super) struct Disk;

impl ScenarioFiles for Disk {
    /// A missing plain path, a bad glob or a glob matching no file is refused.
    fn resolve(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
        let is_glob = pattern.contains(['*', '?', '[']);
        let joined =
            if Path::new(pattern).is_absolute() { PathBuf::from(pattern) } else { base.join(pattern) };
        if !is_glob {
            return if joined.is_file() {
                Ok(vec![joined])
            } else {
                Err(Error::invalid(format!(
                    "scenario file {pattern:?} not found (looked for {})",
                    joined.display()
                )))
            };
        }
        let escaped_base = glob::Pattern::escape(&base.to_string_lossy());
        let full = if Path::new(pattern).is_absolute() || escaped_base.is_empty() {
            pattern.to_string()
        } else {
            format!("{escaped_base}/{pattern}")
        };
        let paths = glob::glob(&full).map_err(|e| Error::invalid(format!("bad glob {pattern:?}: {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).filter(|p| p.is_file()).collect();
        if found.is_empty() {
            return Err(Error::invalid(format!(
                "the glob {pattern:?} matches no file (looked in {})",
                base.display()
            )));
        }
        found.sort();
        Ok(found)
    }

    fn same_file(&self, a: &Path, b: &Path) -> bool {
        matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(dir: &Path, scenarios: &str) -> String {
        let path = dir.join("sw.toml");
        let text = format!("scenarios = [{scenarios}]\n[[policies]]\npreset = \"consecutive\"\n");
        std::fs::write(&path, text).unwrap();
        let check = |_: &str, _: &[(String, toml::Value)]| Ok(());
        match load_sweep(&path, &["flaps"], &check) {
            Ok(f) => f.scenarios.iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect(),
            Err(e) => e.to_string().replace(&dir.display().to_string(), "DIR"),
        }
    }

    #[test]
    fn scenario_entries_are_found_on_disk_or_refused_with_where_it_looked() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("scen")).unwrap();
        for n in ["b.toml", "a.toml", "c.txt"] {
            std::fs::write(d.path().join("scen").join(n), "").unwrap();
        }
        assert_eq!(load(d.path(), "\"scen/*.toml\", \"scen/a.toml\""), "scen/a.tomlscen/b.toml");
        assert_eq!(
            load(d.path(), "\"nope/*.toml\""),
            "DIR/sw.toml:1:14: the glob \"nope/*.toml\" matches no file (looked in DIR)"
        );
        assert_eq!(
            load(d.path(), "\"scen/missing.toml\""),
            "DIR/sw.toml:1:14: scenario file \"scen/missing.toml\" not found (looked for DIR/scen/missing.toml)"
        );
        assert!(
            load(d.path(), "\"scen/[.toml\"").starts_with("DIR/sw.toml:1:14: bad glob \"scen/[.toml\": ")
        );
        assert!(load(d.path(), "\"*.toml\"").contains("matches this sweep file itself"));
        let missing = load_sweep(&d.path().join("none.toml"), &["flaps"], &|_, _| Ok(())).unwrap_err();
        assert!(missing.to_string().ends_with("none.toml: cannot read: no such file"), "{missing}");
    }
}
