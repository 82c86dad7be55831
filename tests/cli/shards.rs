//! Sharded sweeps end to end through plain processes: shards run with an array-job scheduler's
//! variables set (Slurm's, a Kubernetes Indexed Job's, AWS Batch's) or `--shard`, `merge` checks
//! them, and the merged folder is byte-identical to the unsharded sweep's for any number of
//! shards. Bad shard sets are refused with exit code 2, naming the folders and cells.

use crate::util::*;
use std::path::Path;

// Every variable a scheduler may set is cleared, so the test's own environment cannot leak in.
use breakerlab::app::SCHEDULER_VARIABLES;

/// `breakerlab ARGS` in `dir` with exactly the scheduler variables `env`.
fn run(dir: &Path, args: &[&str], env: &[(&str, String)]) -> assert_cmd::assert::Assert {
    let mut cmd = breakerlab(dir);
    for v in SCHEDULER_VARIABLES {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).args(args).assert()
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// The scheduler variables that make a process shard `k` of `n`, in one of four ways.
fn scheduler(how: &str, k: usize, n: usize) -> (Vec<(&'static str, String)>, Vec<String>) {
    match how {
        "slurm" => {
            (vec![("SLURM_ARRAY_TASK_ID", k.to_string()), ("SLURM_ARRAY_TASK_COUNT", n.to_string())], vec![])
        }
        // sbatch --array=1-N
        "slurm-1" => (
            vec![
                ("SLURM_ARRAY_TASK_ID", (k + 1).to_string()),
                ("SLURM_ARRAY_TASK_COUNT", n.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".to_string()),
            ],
            vec![],
        ),
        "kubernetes" => {
            (vec![("JOB_COMPLETION_INDEX", k.to_string())], vec!["--shards".into(), n.to_string()])
        }
        "aws" => (vec![("AWS_BATCH_JOB_ARRAY_INDEX", k.to_string())], vec!["--shards".into(), n.to_string()]),
        _ => (vec![], vec!["--shard".into(), format!("{k}/{n}")]),
    }
}

#[test]
fn merged_shards_are_byte_identical_to_the_unsharded_sweep_for_any_n() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path());
    let sweep = sweep.to_str().unwrap();
    // The unsharded run and every shard get the same command line, from different folders, so
    // even the review page's "reproduce" command is the same.
    let args = ["sweep", sweep, "--out", "out", "--quiet"];
    let whole = dir.path().join("whole");
    std::fs::create_dir(&whole).unwrap();
    run(&whole, &args, &[]).success();
    let expected = files(&whole.join("out"));
    let names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    for f in ["summary.csv", "runs.csv", "review.toml", "recommendation.txt", "pareto.png", "report.html"] {
        assert!(names.contains(&f), "{f} in {names:?}");
    }

    for (n, how) in [(1, "slurm"), (2, "kubernetes"), (3, "aws"), (4, "slurm-1"), (7, "flag")] {
        let sharded = dir.path().join(format!("{how}-{n}"));
        std::fs::create_dir(&sharded).unwrap();
        let mut dirs = Vec::new();
        for k in 0..n {
            let (env, extra) = scheduler(how, k, n);
            let mut a: Vec<&str> = args.to_vec();
            a.extend(extra.iter().map(String::as_str));
            let out = run(&sharded, &a, &env).success();
            let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
            assert!(stdout.starts_with(&format!("shard {k}/{n} of sweep small (from ")), "{stdout}");
            let shard = sharded.join("out").join(format!("shard-{k}-of-{n}"));
            let written: Vec<String> = files(&shard).into_iter().map(|(f, _)| f).collect();
            assert_eq!(written, ["runs.csv", "shard.toml"], "a shard draws no charts");
            dirs.push(shard);
        }
        // Given in any order.
        dirs.reverse();
        let merged = dir.path().join(format!("merged-{how}-{n}"));
        let mut a = vec!["merge".to_string()];
        a.extend(dirs.iter().map(|d| d.display().to_string()));
        a.extend(["--out".to_string(), merged.display().to_string()]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(dir.path(), &a, &[]).success();
        let got = files(&merged);
        assert_eq!(
            got.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            expected.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            "{n} shards ({how}): the same files"
        );
        for ((name, a), (_, b)) in expected.iter().zip(&got) {
            if a != b {
                assert_same_text(&String::from_utf8_lossy(a), &String::from_utf8_lossy(b), name);
                panic!("{name} differs in bytes ({n} shards, {how})");
            }
        }
    }
}

/// Runs the 3 shards of the small sweep into `dir/out` and returns their folders.
fn three_shards(dir: &Path, sweep: &str) -> Vec<String> {
    (0..3)
        .map(|k| {
            run(dir, &["sweep", sweep, "--out", "out", "--quiet", "--shard", &format!("{k}/3")], &[])
                .success();
            format!("out/shard-{k}-of-3")
        })
        .collect()
}

/// `merge DIRS --out merged` in `dir`: must fail with exit code 2, write nothing, and say each of
/// `expected` on stderr.
fn refused(dir: &Path, dirs: &[&str], expected: &[&str]) {
    let mut args = vec!["merge"];
    args.extend_from_slice(dirs);
    args.extend(["--out", "merged"]);
    let out = run(dir, &args, &[]).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    for e in expected {
        assert!(stderr.contains(e), "{e:?} in {stderr}");
    }
    assert!(!dir.join("merged").exists(), "nothing written");
}

#[test]
fn merge_refuses_missing_duplicated_foreign_and_corrupt_shards_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = small_sweep(d);
    let s = three_shards(d, sweep.to_str().unwrap());
    let (s0, s1, s2) = (s[0].as_str(), s[1].as_str(), s[2].as_str());

    // A missing shard: its index and its cells are named.
    refused(d, &[s0, s2], &["missing shard(s) 1 of 3", "cells never run: `"]);

    // Two shards with the same index.
    copy_dir(&d.join(s1), &d.join("copy"));
    refused(
        d,
        &[s0, s1, "copy", s2],
        &["two shards have the same index: shard 1/3 in out/shard-1-of-3 and copy"],
    );

    // A shard of another sweep (the sweep file changed between shards).
    let other = d.join("other");
    std::fs::create_dir(&other).unwrap();
    let changed = read(&sweep).replace("failure_rate = [0.2, 0.5]", "failure_rate = [0.2, 0.6]");
    let changed = write(&other, "small.toml", &changed);
    run(&other, &["sweep", changed.to_str().unwrap(), "--out", "out", "--quiet", "--shard", "2/3"], &[])
        .success();
    refused(
        d,
        &[s0, s1, "other/out/shard-2-of-3"],
        &["not of one sweep", "other/out/shard-2-of-3: sweep `small` (hash"],
    );

    // A shard of another version.
    copy_dir(&d.join(s2), &d.join("old"));
    let manifest = d.join("old/shard.toml");
    std::fs::write(&manifest, read(&manifest).replace("version = \"", "version = \"0.0.0-")).unwrap();
    refused(d, &[s0, s1, "old"], &["old: sweep `small`", "breakerlab 0.0.0-"]);

    // A runs.csv cut short (the last row lost), and one garbled.
    copy_dir(&d.join(s2), &d.join("cut"));
    let runs = d.join("cut/runs.csv");
    let text = read(&runs);
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&runs, kept[..kept.len() - 1].join("\n") + "\n").unwrap();
    refused(d, &[s0, s1, "cut"], &["cut/runs.csv: holds", "the file is cut short or corrupt"]);
    std::fs::write(&runs, text.replacen("\n", "\nblip,0,x\n", 1)).unwrap();
    refused(d, &[s0, s1, "cut"], &["cut/runs.csv:2:1: expected"]);

    // A folder that is no shard, and a shard that did not finish.
    refused(d, &[s0, s1, "other"], &["other: no shard.toml"]);
    std::fs::remove_file(d.join("cut/shard.toml")).unwrap();
    refused(d, &[s0, s1, "cut"], &["cut: no shard.toml: not a shard's folder, or its shard did not finish"]);

    // Bad shard arguments and scheduler variables: exit 2 before anything runs.
    let sweep = sweep.to_str().unwrap();
    for (args, env, expected) in [
        (vec!["--shard", "3/3"], vec![], "--shard 3/3: shard index 3 is not below"),
        (vec!["--shards", "4"], vec![], "--shards 4 needs the shard's index"),
        (vec![], vec![("JOB_COMPLETION_INDEX", "1".to_string())], "give --shards N"),
        (vec![], vec![("SLURM_ARRAY_TASK_ID", "1".to_string())], "SLURM_ARRAY_TASK_COUNT is not"),
    ] {
        let mut a = vec!["sweep", sweep, "--out", "bad", "--quiet"];
        a.extend(args);
        let out = run(d, &a, &env).code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(expected), "{expected:?} in {stderr}");
        assert!(!d.join("bad").exists());
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (name, bytes) in files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
}
