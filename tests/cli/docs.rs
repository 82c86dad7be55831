//! Every command the README and docs/*.md show runs as shown. Each page is run in document order
//! in a fresh folder that sees the repository's `scenarios/`, `tests/` and `benches/`, as a
//! clean clone's root would:
//!
//! - a ```` ```sh ```` block's commands, and a ```` ```text ```` block's `$ ` lines, whose program
//!   is `breakerlab` (the binary under test, first on `PATH`) or one of the small shell helpers
//!   the pages use to make an input (`printf`, `sed`, `cp`, `cat`, a `for` loop of `breakerlab`);
//!   a block that also runs another program (cargo, kubectl, sbatch, aws, parallel) is a recipe
//!   for that environment and is not run here;
//! - a block whose info string says `file=NAME` (```` ```toml file=my-sweep.toml ````) is saved as
//!   NAME first, as the page asks the reader to;
//! - a `$ ` command whose shown output starts with `error:` must exit 2, any other command 0;
//! - a `$ ` command's shown output must match what it printed (stdout, then stderr), line by
//!   line: a line `...` stands for any number of lines, and `...` inside a line for any text.
//!
//! The commands that take more than a few seconds on the unoptimised test build (the sweeps, and
//! the commands that read their output) are listed in [`SLOW`]; they run in a release build or
//! with `BREAKERLAB_DOCS_ALL=1`: `BREAKERLAB_DOCS_ALL=1 cargo test --test cli docs`.

use super::util::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Commands skipped by a debug build unless `BREAKERLAB_DOCS_ALL=1`: (page, the command as the
/// page writes it). Each entry must be a command of its page, so the list cannot go stale.
const SLOW: &[(&str, &str)] = &[
    // The default sweep (648 cells) and the baseline sweep (342 cells), with charts; what reads
    // their output, and the baseline sweep's shards.
    ("README.md", "breakerlab sweep"),
    ("README.md", "breakerlab sweep scenarios/sweeps/baseline.toml"),
    ("README.md", r#"breakerlab recommend output/baseline --constraint "false_opens <= 0.5""#),
    (
        "README.md",
        "for k in 0 1 2; do breakerlab sweep scenarios/sweeps/baseline.toml --shard $k/3 --quiet; done",
    ),
    ("README.md", "breakerlab merge output/baseline-shards/shard-*-of-3"),
    ("docs/guide.md", "breakerlab sweep scenarios/sweeps/baseline.toml"),
    (
        "docs/guide.md",
        r#"breakerlab recommend output/baseline --constraint "false_opens <= 0.5" --objective flaps=2"#,
    ),
    ("docs/sweeps.md", "breakerlab sweep scenarios/sweeps/baseline.toml"),
    (
        "docs/sweeps.md",
        r#"breakerlab recommend output/baseline --constraint "false_opens <= 0.5" --objective flaps=2"#,
    ),
    (
        "docs/sweeps.md",
        "for k in 0 1 2 3; do breakerlab sweep scenarios/sweeps/baseline.toml --shard $k/4 --quiet; done",
    ),
    ("docs/sweeps.md", "breakerlab merge output/baseline-shards/shard-*-of-4"),
    (
        "docs/sweeps.md",
        "breakerlab merge output/baseline-shards/shard-0-of-4 output/baseline-shards/shard-2-of-4 \
         output/baseline-shards/shard-3-of-4",
    ),
    ("docs/sweeps.md", "cp -r output/baseline-shards other"),
    ("docs/sweeps.md", "breakerlab merge output/baseline-shards/shard-* other/shard-2-of-4"),
];

/// Programs run besides `breakerlab`: the shell helpers the pages use to make their inputs.
const HELPERS: &[&str] = &["printf", "sed", "cp", "cat"];

/// One command of a page, with what the page says it prints (empty: not shown).
#[derive(Debug)]
struct Step {
    /// The page's line of the command.
    line: usize,
    /// The command, continuation lines joined.
    command: String,
    /// The output the page shows, one pattern a line.
    shown: Vec<String>,
}

/// What a page asks for, in document order.
#[derive(Debug)]
enum Item {
    /// Save `text` as the file `name`.
    File { name: String, text: String },
    /// Run a command.
    Run(Step),
}

/// The items of a Markdown page.
fn items(page: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = page.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let mut body = Vec::new();
        for (n, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push((n + 1, l));
        }
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("");
        if let Some(name) = words.find_map(|w| w.strip_prefix("file=")) {
            let text = body.iter().map(|(_, l)| format!("{l}\n")).collect();
            items.push(Item::File { name: name.to_string(), text });
            continue;
        }
        let steps = match lang {
            "sh" => commands(&body, ""),
            "text" => commands(&body, "$ "),
            _ => continue,
        };
        if steps.iter().all(|s| runs_here(&s.command)) {
            items.extend(steps.into_iter().map(Item::Run));
        }
    }
    items
}

/// The commands of a block: lines starting with `prompt` (every line that is not blank or a
/// comment when `prompt` is empty), `\` continuations joined; after a prompted command, the
/// lines up to the next prompt are its shown output.
fn commands(body: &[(usize, &str)], prompt: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continuing = false;
    for &(n, l) in body {
        if continuing {
            let step = steps.last_mut().expect("a command being continued");
            step.command.push(' ');
            step.command.push_str(l.trim().trim_end_matches('\\').trim_end());
            continuing = l.ends_with('\\');
        } else if let Some(command) =
            l.strip_prefix(prompt).filter(|c| !prompt.is_empty() || !c.trim().is_empty())
        {
            if prompt.is_empty() && command.trim_start().starts_with('#') {
                continue;
            }
            steps.push(Step {
                line: n,
                command: command.trim_end_matches('\\').trim_end().to_string(),
                shown: Vec::new(),
            });
            continuing = l.ends_with('\\');
        } else if let Some(step) = steps.last_mut().filter(|_| !prompt.is_empty()) {
            step.shown.push(l.to_string());
        }
    }
    steps
}

/// Whether a command is run here: `breakerlab`, a helper, or a `for` loop of `breakerlab`. A
/// `$ ` prompt inside a ```` ```sh ```` block counts too, so that [`check`] reports it.
fn runs_here(command: &str) -> bool {
    match command.split_whitespace().next() {
        Some("breakerlab" | "$") => true,
        Some("for") => command.contains("do breakerlab "),
        Some(program) => HELPERS.contains(&program),
        None => false,
    }
}

/// Whether `text` matches `pattern`, where `...` stands for any text.
fn line_matches(pattern: &str, text: &str) -> bool {
    let pieces: Vec<&str> = pattern.split("...").collect();
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return pattern == text;
    }
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the lines of `output` match the shown `patterns`, where a line `...` stands for any
/// number of lines (wildcard matching over lines).
fn output_matches(patterns: &[String], output: &[&str]) -> bool {
    // matched[j]: the first i patterns match the first j lines.
    let mut matched = vec![false; output.len() + 1];
    matched[0] = true;
    for pattern in patterns {
        let mut next = vec![false; output.len() + 1];
        if pattern.trim() == "..." {
            let mut any = false;
            for j in 0..=output.len() {
                any |= matched[j];
                next[j] = any;
            }
        } else {
            for j in 1..=output.len() {
                next[j] = matched[j - 1] && line_matches(pattern, output[j - 1]);
            }
        }
        matched = next;
    }
    matched[output.len()]
}

/// A fresh working folder that sees the repository's inputs, as a clean clone's root does.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for name in ["scenarios", "tests", "benches"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name))
            .expect("link the repository's inputs");
    }
    dir
}

/// Runs one command in `dir` with the binary under test first on `PATH`; what went wrong, if
/// anything.
fn check(page: &str, dir: &Path, step: &Step) -> Option<String> {
    if step.command.starts_with("$ ") {
        return Some(format!(
            "{page}:{}: a `$ ` prompt in a sh block: show a command with its output in a text block",
            step.line
        ));
    }
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_breakerlab"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().expect("the binary's folder").to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("a PATH");
    let out = Command::new("sh").arg("-c").arg(&step.command).current_dir(dir).env("PATH", path).output();
    let out = match out {
        Ok(out) => out,
        Err(e) => return Some(format!("{page}:{}: `{}` did not start: {e}", step.line, step.command)),
    };
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let error_shown = step.shown.iter().find(|l| l.trim() != "...").is_some_and(|l| l.starts_with("error:"));
    let expected = if error_shown { 2 } else { 0 };
    if out.status.code() != Some(expected) {
        return Some(format!(
            "{page}:{}: `{}` exited {:?}, the page expects {expected}; it printed:\n{printed}",
            step.line,
            step.command,
            out.status.code()
        ));
    }
    let lines: Vec<&str> = printed.lines().collect();
    if !step.shown.is_empty() && !output_matches(&step.shown, &lines) {
        return Some(format!(
            "{page}:{}: `{}` printed what the page does not show.\npage:\n{}\nprinted:\n{printed}",
            step.line,
            step.command,
            step.shown.join("\n")
        ));
    }
    None
}

/// The README and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root().join("README.md"));
    pages
}

/// Runs one page's commands in a fresh folder; what went wrong, and which [`SLOW`] entries the
/// page used.
fn run_page(page_path: &Path, all: bool) -> (Vec<String>, Vec<usize>, usize) {
    let page = page_path.strip_prefix(root()).expect("a page in the repository").display().to_string();
    let text = std::fs::read_to_string(page_path).expect("read the page");
    let dir = workdir();
    let (mut failures, mut slow_used, mut ran) = (Vec::new(), Vec::new(), 0);
    for item in items(&text) {
        match item {
            Item::File { name, text } => {
                std::fs::write(dir.path().join(&name), text).expect("save the page's file")
            }
            Item::Run(step) => {
                if let Some(i) = SLOW.iter().position(|&(p, command)| p == page && step.command == command) {
                    slow_used.push(i);
                    if !all {
                        continue;
                    }
                }
                ran += 1;
                failures.extend(check(&page, dir.path(), &step));
            }
        }
    }
    (failures, slow_used, ran)
}

#[test]
fn every_breakerlab_command_in_the_readme_and_docs_runs_as_shown() {
    let all = !cfg!(debug_assertions) || std::env::var("BREAKERLAB_DOCS_ALL").is_ok_and(|v| v == "1");
    let pages = pages();
    let results: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = pages.iter().map(|p| s.spawn(move || run_page(p, all))).collect();
        runs.into_iter().map(|r| r.join().expect("a page's run")).collect()
    });
    let mut failures: Vec<String> = results.iter().flat_map(|r| r.0.iter().cloned()).collect();
    for (i, (page, command)) in SLOW.iter().enumerate() {
        if !results.iter().any(|r| r.1.contains(&i)) {
            failures.push(format!("SLOW lists `{command}` on {page}, which no longer shows it"));
        }
    }
    let ran: usize = results.iter().map(|r| r.2).sum();
    assert!(ran > 30, "only {ran} commands found in the README and docs/");
    assert!(failures.is_empty(), "{} failure(s):\n\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn shown_output_matches_with_elisions() {
    let printed = ["a", "b 1 c", "d", "e"];
    let shown = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(output_matches(&shown(&["a", "b ... c", "..."]), &printed));
    assert!(output_matches(&shown(&["...", "e"]), &printed));
    assert!(!output_matches(&shown(&["a", "b ... c"]), &printed), "a shown ending must be the end");
    assert!(!output_matches(&shown(&["a", "d", "..."]), &printed), "lines are not skipped without `...`");
    assert!(!output_matches(&shown(&["a", "b 2 ...", "..."]), &printed));
}

#[test]
fn commands_are_read_from_sh_and_text_blocks_with_their_shown_output() {
    let page = "```sh\nbreakerlab run a.toml \\\n    --seed 2   # a comment\n# only a comment\n```\n\
                ```sh\nbreakerlab run b.toml\ncargo test\n```\n\
                ```text\n$ breakerlab run bad.toml\nerror: bad.toml:1:1: ...\n```\n\
                ```toml file=x.toml\nname = \"x\"\n```\n";
    let items = items(page);
    assert_eq!(items.len(), 3, "a block that also runs cargo is not run: {items:?}");
    let first = "breakerlab run a.toml --seed 2   # a comment";
    assert!(matches!(&items[0], Item::Run(s) if s.line == 2 && s.command == first));
    let shown = ["error: bad.toml:1:1: ..."];
    assert!(matches!(&items[1], Item::Run(s) if s.command == "breakerlab run bad.toml" && s.shown == shown));
    assert!(matches!(&items[2], Item::File { name, text } if name == "x.toml" && text == "name = \"x\"\n"));
}
