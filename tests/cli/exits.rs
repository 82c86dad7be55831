//! Exit codes and locations as the docs promise (issue 35, point 3): exit 2 with the file and
//! line (or the flag) for text that is not UTF-8, a dangling `--out` link, a folder with no
//! results, a name no folder can have, and bad policy values given to export, compare and
//! recommend; nothing written on any of them.

use crate::util::*;
use std::path::Path;

/// Runs `breakerlab ARGS` in `dir`, checks exit 2 and that stderr holds every piece.
fn refused(dir: &Path, args: &[&str], pieces: &[&str]) -> String {
    let output = breakerlab(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let command = args.join(" ");
    assert_eq!(output.status.code(), Some(2), "{command}:\n{stderr}");
    for piece in pieces {
        assert!(stderr.contains(piece), "{command}: stderr lacks {piece:?}:\n{stderr}");
    }
    stderr
}

fn hostile(name: &str) -> String {
    root().join("tests/hostile").join(name).display().to_string()
}

#[test]
fn text_that_is_not_utf8_is_refused_at_its_line_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let folder = d.join("made");
    let base = hostile("base.toml");
    breakerlab(d).args(["run", &base, "--out"]).arg(&folder).assert().success();
    let inputs = folder.join("inputs.toml");
    let mut bytes = std::fs::read(&inputs).unwrap();
    let at = bytes.iter().position(|b| *b == b'\n').unwrap() + 3;
    bytes[at] = 0xff;
    std::fs::write(&inputs, &bytes).unwrap();
    let before = files_in(&folder);
    let f = folder.display().to_string();
    for command in ["report", "explain"] {
        refused(d, &[command, &f], &["inputs.toml", "not UTF-8 text: byte 0xff at byte offset", "(line 2)"]);
    }
    assert_eq!(files_in(&folder), before);
    // A scenario file too.
    let text = std::fs::read(&base).unwrap();
    let mut bad = text.clone();
    bad.splice(0..0, b"# caf\xe9\n".iter().copied());
    std::fs::write(d.join("latin1.toml"), bad).unwrap();
    refused(
        d,
        &["run", "latin1.toml"],
        &["latin1.toml:1:6: not UTF-8 text: byte 0xe9 at byte offset 5 (line 1)"],
    );
}

#[test]
fn a_dangling_out_link_and_an_empty_folder_are_refused_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::os::unix::fs::symlink(d.join("nowhere/else"), d.join("link")).unwrap();
    refused(
        d,
        &["run", &hostile("base.toml"), "--no-charts", "--out", "link"],
        &["link: is a symbolic link to"],
    );
    assert_eq!(files_in(d), vec!["link"]);
    std::fs::create_dir(d.join("empty")).unwrap();
    refused(d, &["report", "empty"], &["empty: not an output folder: it holds none of summary.csv"]);
    assert!(files_in(&d.join("empty")).is_empty());
}

#[test]
fn a_name_no_folder_can_have_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(hostile("base.toml")).unwrap();
    let long = "x".repeat(250);
    for (file, name, piece) in
        [("long.toml", format!("{long:?}"), "(250 bytes)"), ("nul.toml", "\"a\\u0000b\"".to_string(), "NUL")]
    {
        write(d, file, &text.replace("name = \"hard-outage\"", &format!("name = {name}")));
        refused(
            d,
            &["run", file, "--no-charts"],
            &[&format!("{file}:4:8: name: must be a plain folder name"), piece],
        );
        assert!(!d.join("output").exists(), "{file}: output/ was made");
    }
    let out = format!("out/{long}");
    refused(d, &["run", &hostile("base.toml"), "--no-charts", "--out", &out], &["250 bytes long"]);
    assert!(!d.join("out").exists(), "the output folder's parent was made");
}

#[test]
fn bad_policy_values_name_the_flag_that_gave_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(d, &["export", "--as", "pybreaker", "--set", "fail_max=x"], &["--set fail_max=x: "]);
    refused(
        d,
        &["export", "--as", "pybreaker", "--policy", "nosuch"],
        &["--policy nosuch: unknown policy preset"],
    );
    let base = hostile("base.toml");
    refused(
        d,
        &["compare", &base, "--policy", "consecutive[failure_threshold=-1]", "--policy", "windowed"],
        &[
            "--policy consecutive[failure_threshold=-1]: policy `consecutive`: invalid value for `failure_threshold`",
        ],
    );
    refused(
        d,
        &["compare", &base, "--policy", "consecutive", "--set", "failure_threshold=abc"],
        &["--set failure_threshold=abc: policy `consecutive`"],
    );
    refused(d, &["recommend", "nowhere.toml", "--objective", "bogus=1"], &["--objective bogus=1: "]);
    assert!(files_in(d).is_empty());
}

#[test]
fn a_missing_key_is_refused_at_its_tables_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "s.toml", "name = \"x\"\nduration = \"1h\"\n[traffic]\nrate = 5.0\n");
    refused(dir.path(), &["run", "s.toml"], &["s.toml:3:1: missing field `kind`"]);
}
