//! Issue 35's list walked again as a user would: the cases that still misbehaved. A shard's
//! `--out` that is a symbolic link to nothing is named as one (it read "a file of that name
//! exists"); `report` and `explain` on a device or a plain file say what it is instead of "no
//! such directory". Exit 2, nothing written.

use crate::util::*;
use std::path::Path;

/// Runs `breakerlab ARGS` in `dir`, checks exit 2 and that stderr holds `piece`.
fn refused(dir: &Path, args: &[&str], piece: &str) {
    let output = breakerlab(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let command = args.join(" ");
    assert_eq!(output.status.code(), Some(2), "{command}:\n{stderr}");
    assert!(stderr.contains(piece), "{command}: stderr lacks {piece:?}:\n{stderr}");
}

#[test]
fn a_shards_dangling_out_link_is_named_as_one_and_nothing_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = small_sweep(d).display().to_string();
    std::os::unix::fs::symlink(d.join("nowhere/else"), d.join("link")).unwrap();
    refused(
        d,
        &["sweep", &sweep, "--shard", "0/2", "--quiet", "--out", "link"],
        "link: is a symbolic link to",
    );
    // A link further up the path too.
    refused(
        d,
        &["run", &root().join("tests/hostile/base.toml").display().to_string(), "--out", "link/run"],
        "link: is a symbolic link to",
    );
    assert_eq!(files_in(d), vec!["link", "small.toml"]);
    assert!(!d.join("nowhere").exists());
}

#[test]
fn report_and_explain_on_something_not_a_folder_say_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "plain.txt", "not a folder\n");
    for command in ["report", "explain"] {
        refused(d, &[command, "/dev/zero"], "/dev/zero: not an output folder (a device, not a folder)");
        refused(d, &[command, "plain.txt"], "plain.txt: not an output folder (a file, not a folder)");
        refused(d, &[command, "none"], "none: not an output folder (no such directory)");
    }
    assert_eq!(files_in(d), vec!["plain.txt"]);
}
