//! Build script: records the commit the binary is built from, for the `version` a sweep's
//! shards write (so `merge` can tell shards of two builds apart). `BREAKERLAB_BUILD` is the
//! output of `git rev-parse HEAD` when the source is a git checkout and `git` runs, else the
//! package version (a build from a source archive).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git` with `args` in the package's folder: its trimmed output, if it ran and succeeded.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(manifest_dir()).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The package's folder, as Cargo gives it to the running script.
fn manifest_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

/// Asks Cargo to run this script again when `path` changes (only if it exists: a missing file
/// would make every build rerun it).
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit =
        git(&["rev-parse", "HEAD"]).filter(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()));
    if let (Some(dir), Some(common)) =
        (git(&["rev-parse", "--git-dir"]), git(&["rev-parse", "--git-common-dir"]))
    {
        let root = manifest_dir();
        let abs = |p: &str| if Path::new(p).is_absolute() { PathBuf::from(p) } else { root.join(p) };
        let (dir, common) = (abs(&dir), abs(&common));
        watch(&dir.join("HEAD"));
        watch(&common.join("packed-refs"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch(&common.join(branch));
        }
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let build = commit.unwrap_or(version);
    println!("cargo:rustc-env=BREAKERLAB_BUILD={build}");
}
