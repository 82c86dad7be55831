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

/// The value of the string field `key` of a shard.toml's text.
fn string_field(manifest: &str, key: &str) -> String {
    let line = manifest.lines().find_map(|l| l.strip_prefix(&format!("{key} = \""))).unwrap();
    line.trim_end_matches('"').to_string()
}

/// The SHA-256 of `text`, hex.
fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
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

/// `merge DIRS --out merged` in `dir`: must fail with exit code 2 and write nothing; its stderr.
fn merge_refused(dir: &Path, dirs: &[&str]) -> String {
    let mut args = vec!["merge"];
    args.extend_from_slice(dirs);
    args.extend(["--out", "merged"]);
    let out = run(dir, &args, &[]).code(2);
    assert!(!dir.join("merged").exists(), "nothing written");
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// `merge DIRS --out merged` in `dir`: must fail with exit code 2, write nothing, and say each of
/// `expected` on stderr.
fn refused(dir: &Path, dirs: &[&str], expected: &[&str]) {
    let stderr = merge_refused(dir, dirs);
    for e in expected {
        assert!(stderr.contains(e), "{e:?} in {stderr}");
    }
}

/// A folder with the small sweep run as 3 shards into `out`: the folder, the sweep file and the
/// shards' folders (relative to it).
fn small_in_three_shards() -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path());
    let shards = three_shards(dir.path(), sweep.to_str().unwrap());
    (dir, sweep, shards)
}

#[test]
fn merge_refuses_missing_duplicated_foreign_and_corrupt_shards_naming_them() {
    let (dir, sweep, s) = small_in_three_shards();
    let d = dir.path();
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

/// Sets field `column` of line `line` (1-based, the header is line 1) of the runs.csv at `path`.
fn edit_field(path: &Path, line: usize, column: &str, value: &str) {
    let text = read(path);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> =
        reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    let k = rows[0].iter().position(|h| h == column).unwrap();
    rows[line - 1][k] = value.to_string();
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    for r in &rows {
        w.write_record(r).unwrap();
    }
    let edited = w.into_inner().unwrap();
    assert_ne!(edited, text.as_bytes(), "the edit changed a byte");
    std::fs::write(path, edited).unwrap();
}

/// The SHA-256 a shard.toml recorded for its runs.csv.
fn recorded_sha256(shard: &Path) -> String {
    let text = read(&shard.join("shard.toml"));
    let runs = text.split("\n[runs]\n").nth(1).unwrap();
    runs.lines().find_map(|l| l.strip_prefix("sha256 = \"")).unwrap().trim_end_matches('"').to_string()
}

#[test]
fn merge_refuses_edited_swapped_and_out_of_range_shards_naming_file_row_and_field() {
    let (dir, sweep, s) = small_in_three_shards();
    let d = dir.path();
    let (s0, s1) = (s[0].as_str(), s[1].as_str());
    let recorded = recorded_sha256(&d.join("out/shard-2-of-3"));
    let sha = |p: &Path| sha256_hex(&read(p));
    // Each case edits a fresh copy of shard 2.
    let fresh = || {
        let t = d.join("t");
        let _ = std::fs::remove_dir_all(&t);
        copy_dir(&d.join("out/shard-2-of-3"), &t);
        t
    };
    let stderr_of = |dirs: &[&str]| merge_refused(d, dirs);

    // One metric value edited, within its range: named by line and field.
    let t = fresh();
    edit_field(&t.join("runs.csv"), 3, "flaps", "7");
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        format!(
            "error: t/runs.csv:3:1: field flaps: edited after the shard wrote it (its SHA-256 is {} but \
             t/shard.toml recorded {recorded} when the shard wrote it)\n",
            sha(&t.join("runs.csv"))
        )
    );
    // The seed column edited.
    let t = fresh();
    edit_field(&t.join("runs.csv"), 4, "seed", "7");
    let seed_line = read(&t.join("runs.csv")).lines().nth(3).unwrap().split(',').next().unwrap().to_string();
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        format!(
            "error: t/runs.csv:4:1: seed: 7 is not the seed 1 of `{seed_line}` that t/shard.toml records: edited, \
             or of another sweep\n"
        )
    );
    // Values no metric can take.
    for (value, shown) in [("-5", "-5"), ("nan", "NaN"), ("inf", "inf")] {
        let t = fresh();
        edit_field(&t.join("runs.csv"), 2, "availability", value);
        assert_eq!(
            stderr_of(&[s0, s1, "t"]),
            format!(
                "error: t/runs.csv:2:1: availability: {shown} is out of range: expected a share of requests \
                 within 0..1\n"
            )
        );
    }
    let t = fresh();
    edit_field(&t.join("runs.csv"), 2, "false_opens", "-1");
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        "error: t/runs.csv:2:1: false_opens: -1 is out of range: expected a finite number, 0 or more\n"
    );

    // The same shard's runs.csv from another sweep (the same grid ranked by another objective:
    // every row is a valid cell, only the bytes tell).
    let other = d.join("other");
    std::fs::create_dir(&other).unwrap();
    let changed = format!("{}\n[objective]\nfalse_opens = 3\n", read(&sweep));
    let changed = write(&other, "small.toml", &changed);
    run(&other, &["sweep", changed.to_str().unwrap(), "--out", "out", "--quiet", "--shard", "2/3"], &[])
        .success();
    let t = fresh();
    std::fs::copy(other.join("out/shard-2-of-3/runs.csv"), t.join("runs.csv")).unwrap();
    let e = stderr_of(&[s0, s1, "t"]);
    assert!(
        e.starts_with(&format!(
            "error: t/runs.csv: not the file this shard wrote: its SHA-256 is {} but t/shard.toml recorded \
             {recorded} when the shard wrote it; ",
            sha(&t.join("runs.csv"))
        )),
        "{e}"
    );
    assert!(e.contains("row blocks differ, the first at line 2 (field cost changed). Was it replaced by another sweep's or another run's runs.csv? Rerun the shard, or restore its own file\n"), "{e}");

    // The objective or a constraint edited in one shard.toml.
    let t = fresh();
    let manifest = t.join("shard.toml");
    let text = read(&manifest);
    std::fs::write(&manifest, text.replacen("[\"false_opens\", 1.0]", "[\"false_opens\", 2.0]", 1)).unwrap();
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        format!(
            "error: t/shard.toml: objective: not what its sweep file ({}, recorded in [sweep_file]) says: the \
             file was edited after the shard ran\n",
            sweep.display()
        )
    );
    std::fs::write(
        &manifest,
        text.replacen("constraints = [\"missed_incidents == 0\"]", "constraints = []", 1),
    )
    .unwrap();
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        format!(
            "error: t/shard.toml: constraints: not what its sweep file ({}, recorded in [sweep_file]) says: \
             the file was edited after the shard ran\n",
            sweep.display()
        )
    );
    // Every shard agrees on the sweep file, so a shard.toml of one build with another's ranking
    // (here the selection's confidence) is named too.
    std::fs::write(&manifest, text.replacen("confidence = 0.95", "confidence = 0.9", 1)).unwrap();
    assert_eq!(
        stderr_of(&[s0, s1, "t"]),
        "error: t/shard.toml: confidence: `Some(0.9)` here but `Some(0.95)` in out/shard-0-of-3/shard.toml: the \
         shards of one sweep agree on it (was a shard.toml edited?)\n"
    );
    // The untouched shards still merge.
    copy_dir(&d.join("out/shard-2-of-3"), &d.join("t2"));
    run(d, &["merge", s0, s1, "t2", "--out", "merged"], &[]).success();
}

/// A new folder with the small sweep written to it, its `replicates = 2` line replaced by
/// `lines`: the folder and the sweep file's path.
fn small_sweep_with(lines: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path());
    std::fs::write(&sweep, read(&sweep).replacen("replicates = 2\n", lines, 1)).unwrap();
    (dir, sweep.display().to_string())
}

/// Slurm's variables for task `id` of an array of `count` tasks starting at `min`.
fn slurm(id: u32, count: u32, min: u32) -> Vec<(&'static str, String)> {
    vec![
        ("SLURM_ARRAY_TASK_ID", id.to_string()),
        ("SLURM_ARRAY_TASK_COUNT", count.to_string()),
        ("SLURM_ARRAY_TASK_MIN", min.to_string()),
    ]
}

#[test]
fn a_failed_shard_reruns_alone_and_an_array_of_another_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = small_sweep(d);
    let sweep = sweep.to_str().unwrap();
    let args = ["sweep", sweep, "--out", "out", "--quiet"];
    // Shards 0 and 2 of a 3-task array finish; shard 1 fails (never ran).
    for k in [0, 2] {
        let out = run(d, &args, &slurm(k, 3, 0)).success();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(
            stderr.lines().next().unwrap(),
            format!(
                "breakerlab: running as shard {k}/3 of an array job (from SLURM_ARRAY_TASK_ID={k}, \
                 SLURM_ARRAY_TASK_COUNT=3); --shard none runs the whole sweep"
            )
        );
    }
    // merge names the missing shard and the command that reruns it.
    let out = run(d, &["merge", "out/shard-0-of-3", "out/shard-2-of-3", "--out", "merged"], &[]).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.ends_with(&format!(
            "\nrerun each missing shard where the shards ran (the same command with its --shard), then merge again:\n  \
             breakerlab sweep {sweep} --out out --quiet --shard 1/3\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.starts_with(
            "error: missing shard(s) 1 of 3 (no folder given with that index); cells never run: `"
        )
    );
    // The natural rerun, `sbatch --array=1`, is an array of one task: refused, saying how.
    let out = run(d, &args, &slurm(1, 1, 1)).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(
        stderr.lines().nth(1).unwrap(),
        "error: SLURM_ARRAY_TASK_ID=1, SLURM_ARRAY_TASK_COUNT=1, SLURM_ARRAY_TASK_MIN=1: this array task is shard \
         0/1, but out holds the shards of a 3-shard run (shard-0-of-3): an array of another size splits the sweep \
         differently. To rerun shard K of that run, give --shard K/3 (Slurm: sbatch --array=K scale/slurm.sbatch \
         --shard K/3); to start over with 1 shards, remove out first"
    );
    assert!(!d.join("out/shard-0-of-1").exists());
    // What it says works: the rerun, in a one-task array, with --shard 1/3; then merge.
    let mut rerun = args.to_vec();
    rerun.extend(["--shard", "1/3"]);
    run(d, &rerun, &slurm(1, 1, 1)).success();
    run(d, &["merge", "out/shard-0-of-3", "out/shard-1-of-3", "out/shard-2-of-3", "--out", "merged"], &[])
        .success();
    // A folder a killed shard left without its shard.toml is named as unfinished.
    std::fs::remove_file(d.join("out/shard-1-of-3/shard.toml")).unwrap();
    let out =
        run(d, &["merge", "out/shard-0-of-3", "out/shard-1-of-3", "out/shard-2-of-3", "--out", "m2"], &[])
            .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.starts_with(
            "error: no shard.toml in out/shard-1-of-3: its shard did not finish; missing shard(s) 1 of 3"
        ),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!("  breakerlab sweep {sweep} --out out --quiet --shard 1/3\n")),
        "{stderr}"
    );
    // --shard none: the whole sweep, even inside an array task.
    let mut whole = args.to_vec();
    whole[3] = "whole";
    whole.extend(["--shard", "none"]);
    let out = run(d, &whole, &slurm(1, 3, 0)).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.starts_with("sweep small: 2 scenario(s) x 7 configuration(s) x 2 replicate(s) = 28 cells\n")
    );
    assert!(out.get_output().stderr.is_empty());
}

#[test]
fn shards_in_the_sweep_file_make_task_ids_the_shard_indices() {
    let (dir, sweep) = small_sweep_with("replicates = 2\nshards = 3\n");
    let (d, sweep) = (dir.path(), sweep.as_str());
    let args = ["sweep", sweep, "--out", "out", "--quiet"];
    // `sbatch --array=0-2`, then task 1 alone (`sbatch --array=1`): shard 1 of 3 either way.
    run(d, &args, &slurm(0, 3, 0)).success();
    run(d, &args, &slurm(2, 3, 0)).success();
    let out = run(d, &args, &slurm(1, 1, 1)).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.starts_with(
            "shard 1/3 of sweep small (from SLURM_ARRAY_TASK_ID=1, shards = 3 in the sweep file)\n"
        ),
        "{stdout}"
    );
    run(d, &["merge", "out/shard-0-of-3", "out/shard-1-of-3", "out/shard-2-of-3", "--out", "merged"], &[])
        .success();
    // An id beyond the shards, or --shard with another count, is refused.
    let out = run(d, &args, &slurm(3, 4, 0)).code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains(
        "SLURM_ARRAY_TASK_ID=3, shards = 3 in the sweep file: shard index 3 is not below the number of shards 3 \
         (indices are 0-based) (the array's task ids are the shard indices: --array=0-2)"
    ));
    let mut other = args.to_vec();
    other.extend(["--shard", "0/2"]);
    let out = run(d, &other, &[]).code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(
        stderr.lines().nth(1).unwrap(),
        format!(
            "error: {sweep}:5:10: shards: the sweep runs as 3 shards but this is shard 0/2 (from --shard 0/2): give \
             --shard K/3, or submit the array as --array=0-2"
        )
    );
    // Outside an array job the whole sweep runs.
    let out = run(d, &["sweep", sweep, "--out", "whole", "--quiet"], &[]).success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).starts_with("sweep small: "));
}

#[test]
fn recommend_refuses_a_partial_sweep_and_says_what_it_cannot_see() {
    let (dir, _, s) = small_in_three_shards();
    let d = dir.path();
    let stderr_of = |args: &[&str]| {
        let out = run(d, args, &[]).code(2);
        String::from_utf8_lossy(&out.get_output().stderr).into_owned()
    };
    // One shard's folder.
    assert_eq!(
        stderr_of(&["recommend", &s[1]]),
        "error: out/shard-1-of-3/runs.csv: the rows of shard 1/3 of sweep `small` only (7 of its 28 cells, beside \
         out/shard-1-of-3/shard.toml): merge every shard with `breakerlab merge` and recommend on the merged folder\n"
    );
    // Two shards' rows concatenated: the cells of the third are named.
    let rows = |k: usize, header: bool| {
        let text = read(&d.join(&s[k]).join("runs.csv"));
        if header { text } else { text.split_once('\n').unwrap().1.to_string() }
    };
    write(d, "two.csv", &(rows(0, true) + &rows(1, false)));
    assert_eq!(
        stderr_of(&["recommend", "two.csv"]),
        "error: two.csv: holds 21 of the 28 cells its scenarios, configurations and replicates make; missing: \
         `hard-outage` replicate 1 configs 0-6. A partial sweep (not every shard's rows?) is not ranked: merge every \
         shard with `breakerlab merge` and recommend on the merged folder\n"
    );
    // All three: ranked, saying it used the default objective and which scenarios it saw.
    write(d, "all.csv", &(rows(0, true) + &rows(1, false) + &rows(2, false)));
    let out = run(d, &["recommend", "all.csv"], &[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.starts_with(
            "note: no objective.toml beside all.csv: ranked by the default objective and constraint \
             (missed_incidents == 0), not necessarily the sweep's own (recommend on the folder a sweep or a merge \
             wrote to rank as it did)\nnote: it holds 2 scenario(s): `blip`, `hard-outage`; a scenario of the sweep \
             whose rows it lacks cannot be seen here\n\nRecommended: "
        ),
        "{stdout}"
    );
    // The merged folder: no note, the sweep's own ranking.
    let mut args = vec!["merge"];
    args.extend(s.iter().map(String::as_str));
    args.extend(["--out", "merged", "--no-charts"]);
    run(d, &args, &[]).success();
    let out = run(d, &["recommend", "merged"], &[]).success();
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), read(&d.join("merged/recommendation.txt")));
}

#[test]
fn a_killed_shard_resumes_from_its_checked_rows_and_writes_the_same_bytes() {
    let (dir, sweep) = small_sweep_with("replicates = 10\n");
    let (d, sweep) = (dir.path(), sweep.as_str());
    let args = ["sweep", sweep, "--out", "out", "--quiet", "--shard", "0/2", "--threads", "2"];
    run(d, &args, &[]).success();
    let shard = d.join("out/shard-0-of-2");
    let whole = files(&shard);
    let runs = read(&shard.join("runs.csv"));
    let manifest = read(&shard.join("shard.toml"));
    let field = |key: &str| string_field(&manifest, key);
    assert!(!d.join("out/.shard-0-of-2.resume").exists(), "the journal is removed when the shard is done");
    // What a run killed after 80 rows leaves: the journal with its checkpoint at 64 rows, the
    // rows after it and half a row.
    let journal = d.join("out/.shard-0-of-2.resume");
    std::fs::create_dir(&journal).unwrap();
    let lines: Vec<&str> = runs.split_inclusive('\n').collect();
    let checked: String = lines[..65].concat();
    let killed = lines[..81].concat() + &lines[81][..30];
    let checkpoint = |rows: u64, text: &str| {
        format!(
            "run = \"sweep {} replicates 10 shard 0/2 build {}\"\nrows = {rows}\nbytes = {}\nsha256 = \"{}\"\n",
            field("hash"),
            field("version"),
            text.len(),
            sha256_hex(text)
        )
    };
    std::fs::write(journal.join("runs.csv"), &killed).unwrap();
    std::fs::write(journal.join("checkpoint.toml"), checkpoint(64, &checked)).unwrap();
    std::fs::remove_dir_all(&shard).unwrap();
    let out = run(d, &args, &[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(
        stdout.lines().nth(1).unwrap(),
        "resumed after 64 of its cells: a killed run's rows, checked against their SHA-256"
    );
    assert_eq!(files(&shard), whole, "the same bytes as the run never killed");
    assert!(!journal.exists());
    // A journal edited within its checked rows is discarded: the shard starts over.
    std::fs::create_dir(&journal).unwrap();
    std::fs::write(journal.join("runs.csv"), killed.replacen(",0,1,", ",0,2,", 1)).unwrap();
    std::fs::write(journal.join("checkpoint.toml"), checkpoint(64, &checked)).unwrap();
    let out = run(d, &args, &[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(
        stdout.lines().nth(1).unwrap(),
        "started over: a killed run's rows were discarded (its first 64 rows are not the bytes its checkpoint's \
         SHA-256 vouches for)"
    );
    assert_eq!(files(&shard), whole);
}

#[test]
fn an_automatic_sweeps_stage_shard_prints_the_next_stage_and_resumes_from_its_journal() {
    let (dir, sweep) = small_sweep_with("replicates = \"auto\"\n");
    let (d, sweep) = (dir.path(), sweep.as_str());
    for k in 0..2 {
        let shard = format!("{k}/2");
        run(d, &["sweep", sweep, "--out", "out", "--quiet", "--shard", &shard], &[]).success();
    }
    let out = run(
        d,
        &["merge", "out/stage-1/shard-0-of-2", "out/stage-1/shard-1-of-2", "--out", "merged", "--no-charts"],
        &[],
    )
    .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains(" --shard 1/2 --plan merged/stage-plan.toml\n"), "{stdout}");
    assert!(stdout.contains("breakerlab merge out/stage-*/shard-*-of-* --out merged\n"), "{stdout}");
    assert_eq!(files_in(&d.join("merged")), ["stage-plan.toml"]);
    // Stage 2's shard 0, then what a run of it killed after 4 rows leaves.
    let args =
        ["sweep", sweep, "--out", "out", "--quiet", "--shard", "0/2", "--plan", "merged/stage-plan.toml"];
    run(d, &args, &[]).success();
    let shard = d.join("out/stage-2/shard-0-of-2");
    let whole = files(&shard);
    let manifest = read(&shard.join("shard.toml"));
    let field = |key: &str| string_field(&manifest, key);
    let runs = read(&shard.join("runs.csv"));
    let lines: Vec<&str> = runs.split_inclusive('\n').collect();
    let checked: String = lines[..5].concat();
    let journal = d.join("out/stage-2/.shard-0-of-2.resume");
    std::fs::create_dir(&journal).unwrap();
    std::fs::write(journal.join("runs.csv"), lines[..6].concat() + &lines[6][..20]).unwrap();
    let checkpoint = format!(
        "run = \"sweep {} replicates 10 shard 0/2 build {} stage 2 plan {}\"\nrows = 4\nbytes = {}\nsha256 = \"{}\"\n",
        field("hash"),
        field("version"),
        field("plan"),
        checked.len(),
        sha256_hex(&checked)
    );
    std::fs::write(journal.join("checkpoint.toml"), checkpoint).unwrap();
    std::fs::remove_dir_all(&shard).unwrap();
    let out = run(d, &args, &[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(
        stdout.lines().nth(2).unwrap(),
        "resumed after 4 of its cells: a killed run's rows, checked against their SHA-256",
        "{stdout}"
    );
    assert_eq!(files(&shard), whole, "the same bytes as the run never killed");
    // --plan without --shard, and a plan given to a sweep of fixed replicates, are refused.
    let err = run(d, &["sweep", sweep, "--plan", "merged/stage-plan.toml"], &[]).code(2);
    assert!(String::from_utf8_lossy(&err.get_output().stderr).contains("give --shard K/N too"));
    let (fixed, fixed_sweep) = small_sweep_with("replicates = 2\n");
    std::fs::copy(d.join("merged/stage-plan.toml"), fixed.path().join("plan.toml")).unwrap();
    let err =
        run(fixed.path(), &["sweep", &fixed_sweep, "--shard", "0/2", "--plan", "plan.toml"], &[]).code(2);
    assert!(
        String::from_utf8_lossy(&err.get_output().stderr)
            .contains("--plan is for a stage of an automatic sweep")
    );
}
