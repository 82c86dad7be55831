//! Atomic file writes: write to a temporary file in the target's directory, flush it to disk,
//! then rename it over the target, so an interrupted run never leaves a half-written file.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes temporary names of concurrent writes within one process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: a temporary file `.<name>.tmp.<pid>.<n>` in the same
/// directory (same file system, so the rename is atomic), synced, then renamed over `path`.
/// On any error the temporary file is removed and the error names `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path)?;
    let result = write_then_rename(&tmp, path, bytes);
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// The temporary name next to `path` (same folder, so renaming it over `path` is atomic).
pub fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{}: expected a file path", path.display()))
    })?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!(".{}.tmp.{}.{n}", name.to_string_lossy(), std::process::id())))
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.csv");
        write_atomic(&path, b"a,b\n1,2\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"a,b\n1,2\n");
        write_atomic(&path, b"x\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x\n");
        assert_eq!(names(dir.path()), vec!["summary.csv".to_string()]);
    }

    #[test]
    fn failure_names_the_path_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out.csv");
        let err = write_atomic(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("out.csv"), "{err}");
        assert!(names(dir.path()).is_empty());
        // The target is a directory: the rename fails, the temp file is removed.
        let sub = dir.path().join("taken");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("inside"), b"keep").unwrap();
        assert!(write_atomic(&sub, b"x").is_err());
        assert_eq!(names(dir.path()), vec!["taken".to_string()]);
        assert!(write_atomic(Path::new("/"), b"x").is_err());
    }
}
