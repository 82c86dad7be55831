//! Special files in place of an input (issue 35): /dev/zero, /dev/urandom, a FIFO with no
//! writer, a folder and a symbolic link loop, given as a scenario, a trace, a series, a
//! `[trace] file`, labels, a sweep file, a checks file, a script, or in an output folder in
//! place of the files `report` and `explain` read back. Each is refused with exit 2 naming the
//! path, at once: never an allocation abort, never a hang (a timeout fails the test), nothing
//! written.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The special files, made in `dir`: name and path (a FIFO only where `mkfifo` exists).
fn specials(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let mut all = vec![("zero", PathBuf::from("/dev/zero")), ("urandom", PathBuf::from("/dev/urandom"))];
    let folder = dir.join("a-folder.csv");
    std::fs::create_dir(&folder).unwrap();
    all.push(("folder", folder));
    let looped = dir.join("loop.csv");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    all.push(("loop", looped));
    let fifo = dir.join("fifo.csv");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        all.push(("fifo", fifo));
    }
    all
}

/// Runs `breakerlab ARGS` in `dir` (at most 60 s) and checks it exits 2 naming `path`.
fn refused(dir: &Path, args: &[String], path: &Path) {
    let command = args.join(" ");
    let output = breakerlab(dir).args(args).timeout(Duration::from_secs(60)).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{command}:\n{stderr}");
    assert!(!stderr.contains("memory allocation") && !stderr.contains("panicked"), "{command}:\n{stderr}");
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(stderr.contains(&*name), "{command}: stderr does not name {name}:\n{stderr}");
    assert!(!dir.join("output").exists(), "{command}: output written despite exit 2");
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn special_files_given_as_inputs_are_refused_with_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (kind, path) in specials(d) {
        let p = path.display().to_string();
        refused(d, &args(&["run", &p]), &path);
        refused(d, &args(&["replay", &p, "--rate", "5"]), &path);
        refused(
            d,
            &args(&["replay", "--series", &format!("rate={p}"), "--p50", "80ms", "--p95", "250ms"]),
            &path,
        );
        refused(d, &args(&["sweep", &p, "--quiet"]), &path);
        refused(d, &args(&["check", &p]), &path);
        let small = root().join("tests/hostile/small.csv").display().to_string();
        refused(d, &args(&["replay", &small, "--labels", &p]), &path);
        let trace =
            write(d, &format!("trace-{kind}.toml"), &format!("name = \"t\"\n[trace]\nfile = {p:?}\n"));
        refused(d, &args(&["run", &trace.display().to_string()]), &path);
        if kind != "fifo" {
            // A script may be a pipe (it waits for its writer, as a pipe does).
            refused(d, &args(&["run", "--script", &p]), &path);
        }
    }
}

#[test]
fn special_files_in_an_output_folder_are_refused_by_report_and_explain() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let made = d.join("made");
    breakerlab(d)
        .args(["run", &root().join("tests/hostile/base.toml").display().to_string(), "--no-charts", "--out"])
        .arg(&made)
        .assert()
        .success();
    let specials = specials(d);
    for name in ["summary.csv", "inputs.toml", "explain.csv", "incidents.csv", "timeline.csv"] {
        for (kind, special) in &specials {
            let folder = d.join(format!("{kind}-{name}"));
            std::fs::create_dir(&folder).unwrap();
            for entry in std::fs::read_dir(&made).unwrap() {
                let entry = entry.unwrap();
                std::fs::copy(entry.path(), folder.join(entry.file_name())).unwrap();
            }
            let target = folder.join(name);
            let _ = std::fs::remove_file(&target);
            if *kind == "loop" {
                std::os::unix::fs::symlink(&target, &target).unwrap();
            } else {
                std::os::unix::fs::symlink(special, &target).unwrap();
            }
            let before = files_in(&folder);
            refused(d, &args(&["report", &folder.display().to_string()]), &target);
            if ["inputs.toml", "explain.csv", "incidents.csv"].contains(&name) {
                refused(d, &args(&["explain", &folder.display().to_string()]), &target);
            }
            assert_eq!(files_in(&folder), before, "{kind} {name}: the folder changed");
        }
    }
}

#[test]
fn special_files_in_place_of_a_shards_runs_csv_are_refused_by_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = small_sweep(d).display().to_string();
    for k in 0..2 {
        breakerlab(d)
            .args(["sweep", &sweep, "--out", "shards", "--quiet", "--shard", &format!("{k}/2")])
            .assert()
            .success();
    }
    for (kind, special) in specials(d) {
        let shard = d.join(format!("{kind}-shard"));
        std::fs::create_dir(&shard).unwrap();
        for entry in std::fs::read_dir(d.join("shards/shard-1-of-2")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), shard.join(entry.file_name())).unwrap();
        }
        let runs = shard.join("runs.csv");
        std::fs::remove_file(&runs).unwrap();
        if kind == "loop" {
            std::os::unix::fs::symlink(&runs, &runs).unwrap();
        } else {
            std::os::unix::fs::symlink(&special, &runs).unwrap();
        }
        let first = d.join("shards/shard-0-of-2").display().to_string();
        refused(d, &args(&["merge", &first, &shard.display().to_string()]), &runs);
    }
}
