//! The output folder is always consistent: a run killed at any moment leaves all of the old set
//! or all of the new one (never a mix, never a half-written file), temporaries of killed runs are
//! removed by the next run, and two runs into one folder at once both succeed, one after the
//! other, leaving one complete set.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A run of hard-outage into `cwd/out` with `seed`, as a child process.
fn spawn(cwd: &Path, seed: u32) -> Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("breakerlab"))
        .current_dir(cwd)
        .arg("run")
        .arg(scenario("hard-outage.toml"))
        .args(["--seed", &seed.to_string(), "--out", "out"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("breakerlab starts")
}

/// Every file of a folder with its bytes, sorted by name.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_in(dir).into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap())).collect()
}

/// The complete set a run with `seed` writes, made in a folder of its own with the same command
/// line (so inputs.toml and the pages match byte for byte).
fn reference(root: &Path, seed: u32) -> Vec<(String, Vec<u8>)> {
    let cwd = root.join(format!("ref{seed}"));
    std::fs::create_dir_all(&cwd).unwrap();
    assert!(spawn(&cwd, seed).wait().unwrap().success());
    contents(&cwd.join("out"))
}

/// The temporary folders beside `cwd/out`.
fn temporaries(cwd: &Path) -> Vec<PathBuf> {
    files_in(cwd).into_iter().filter(|n| n.starts_with(".out.tmp.")).map(|n| cwd.join(n)).collect()
}

/// Waits until `ready` holds (or the child ends), then kills the child.
fn kill_when(child: &mut Child, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() && child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill();
    child.wait().unwrap();
}

#[test]
fn a_killed_run_leaves_the_old_set_or_the_new_one() {
    let root = tempfile::tempdir().unwrap();
    let old = reference(root.path(), 1);
    let new = reference(root.path(), 2);
    assert_ne!(old, new);
    let cwd = root.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    assert!(spawn(&cwd, 1).wait().unwrap().success());
    let staged = |at_least: usize| {
        let cwd = cwd.clone();
        move || temporaries(&cwd).iter().any(|t| files_in(t).len() >= at_least)
    };
    // Killed at once, as the new set starts, while the run streams transitions.csv and
    // explain.csv into it (both are there from the start), after most files, and late.
    let moments: Vec<Box<dyn Fn() -> bool>> = vec![
        Box::new(|| true),
        Box::new(staged(0)),
        Box::new(staged(1)),
        Box::new(staged(6)),
        Box::new(staged(9)),
    ];
    for (i, ready) in moments.iter().enumerate() {
        let mut child = spawn(&cwd, 2);
        kill_when(&mut child, ready);
        let now = contents(&cwd.join("out"));
        assert!(now == old || now == new, "after kill {i}: a mixed folder {:?}", files_in(&cwd.join("out")));
        // Back to the old set for the next moment.
        if now == new {
            assert!(spawn(&cwd, 1).wait().unwrap().success());
        }
    }
    // The next run removes what killed runs left and writes its complete set.
    assert!(spawn(&cwd, 2).wait().unwrap().success());
    assert!(temporaries(&cwd).is_empty(), "{:?}", temporaries(&cwd));
    assert_eq!(contents(&cwd.join("out")), new);
}

#[test]
fn two_runs_into_one_folder_take_turns() {
    let root = tempfile::tempdir().unwrap();
    let one = reference(root.path(), 1);
    let two = reference(root.path(), 2);
    let cwd = root.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    for _ in 0..3 {
        let mut a = spawn(&cwd, 1);
        let mut b = spawn(&cwd, 2);
        assert!(a.wait().unwrap().success() && b.wait().unwrap().success(), "both writers succeed");
        let now = contents(&cwd.join("out"));
        assert!(now == one || now == two, "a mixed folder {:?}", files_in(&cwd.join("out")));
        assert!(temporaries(&cwd).is_empty());
    }
}
