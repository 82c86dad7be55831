//! TOML nested past the parser's recursion limit (issue 35, point 3): 10,000 `[` or `{` in a
//! scenario, a sweep file, a checks file, or an output folder's inputs.toml or review.toml is
//! refused with exit 2 at its file, line and column, never a stack overflow, nothing written.

use crate::util::*;
use std::path::Path;

/// `key = ` then `open` repeated 10,000 times, after `lines` lines of comment.
fn nested(lines: usize, open: &str) -> String {
    format!("{}x = {}\n", "# padding\n".repeat(lines), open.repeat(10_000))
}

/// Runs `breakerlab ARGS` in `dir` and checks exit 2 with `located` (FILE:LINE:COL) and the
/// parser's reason on stderr.
fn refused_at(dir: &Path, args: &[&str], located: &str) {
    let output = breakerlab(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let command = args.join(" ");
    assert_eq!(output.status.code(), Some(2), "{command}:\n{stderr}");
    assert!(
        stderr.contains(located) && stderr.contains("recurs"),
        "{command}: expected {located}:\n{stderr}"
    );
    assert!(!stderr.contains("overflow") && !stderr.contains("panicked"), "{command}:\n{stderr}");
}

#[test]
fn input_files_nested_too_deep_are_refused_at_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `x = ` is 4 characters: the parser gives up inside the brackets, on the file's 3rd line.
    for (open, col) in [("[", "85"), ("{a=", "245")] {
        let text = nested(2, open);
        for (command, file) in
            [("run", "deep.toml"), ("sweep", "deep-sweep.toml"), ("check", "deep-checks.toml")]
        {
            write(d, file, &text);
            refused_at(d, &[command, file], &format!("{file}:3:{col}: "));
        }
    }
    assert_eq!(files_in(d), vec!["deep-checks.toml", "deep-sweep.toml", "deep.toml"]);
}

#[test]
fn an_output_folders_toml_nested_too_deep_is_refused_at_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = small_sweep(d);
    let folder = d.join("made");
    breakerlab(d).arg("sweep").arg(&sweep).arg("--out").arg(&folder).arg("--quiet").assert().success();
    let f = folder.display().to_string();
    for name in ["inputs.toml", "review.toml"] {
        let path = folder.join(name);
        let kept = std::fs::read(&path).unwrap();
        std::fs::write(&path, nested(4, "[")).unwrap();
        let before = files_in(&folder);
        refused_at(d, &["report", &f], &format!("{name}:5:85: "));
        assert_eq!(files_in(&folder), before, "report wrote into the folder it refused");
        std::fs::write(&path, kept).unwrap();
    }
}
