//! A targeted sweep's deployable outputs: the recommendation, the runner-up, the baseline and
//! its alternatives written in the target library's own syntax (the section appended to
//! recommendation.txt and shown on the page and the terminal), and `recommended.<ext>`.

use crate::policy::PolicySpec;
use crate::policy::export::{Library, export};
use crate::report::folder::DEPLOY_SECTION;
use crate::sweep::grid::Configuration;
use crate::sweep::recommend::Recommendation;
use crate::sweep::review::BaselineReview;
use crate::sweep::table::ResultTable;
use crate::sweep::target::{Deployment, TargetMode};
use std::fmt::Write as _;

/// The breaker instance name the exports use (as `export` does without `--name`).
const NAME: &str = "backend";

/// The file extension of `lib`'s configuration syntax.
pub fn extension(lib: Library) -> &'static str {
    match lib {
        Library::Resilience4j | Library::Envoy | Library::Istio => "yaml",
        Library::Polly => "cs",
        Library::Opossum => "js",
        Library::Cockatiel => "ts",
        Library::Pybreaker => "py",
        Library::Gobreaker | Library::FailsafeGo => "go",
        Library::Grpc => "json",
    }
}

/// The file the recommended configuration is written to: `recommended.<ext>`.
pub fn recommended_file(lib: Library) -> String {
    format!("recommended.{}", extension(lib))
}

/// `c` in `lib`'s syntax, or why it cannot be written.
pub fn export_of(c: &Configuration, lib: Library) -> Result<String, String> {
    let mut spec = PolicySpec::new(&c.preset);
    for (k, v) in &c.overrides {
        spec.overrides.insert(k.clone(), v.clone());
    }
    let cfg = spec.resolve().map_err(|e| e.to_string())?;
    export(&cfg, lib, NAME).map_err(|e| e.to_string())
}

/// What a targeted sweep writes besides its other outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Deployed {
    /// The section appended to recommendation.txt.
    pub section: String,
    /// `recommended.<ext>` and its text, when a configuration is recommended.
    pub file: Option<(String, String)>,
}

fn indented(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "    {line}");
    }
}

/// The export section of a targeted sweep and its `recommended.<ext>`.
pub fn deployed(
    deployment: &Deployment,
    table: &ResultTable,
    recommendation: &Recommendation,
    baseline: Option<&BaselineReview>,
) -> Deployed {
    let lib = deployment.target.library;
    let mut s = String::new();
    let how = match deployment.target.mode {
        TargetMode::Exact => "every configuration was checked to export exactly".to_string(),
        TargetMode::Nearest => format!(
            "{} of the {} configuration(s) ran as the nearest configuration {} expresses",
            deployment.replaced.len(),
            deployment.checked,
            lib.name()
        ),
    };
    // Starts as `report` finds it again (after the recommendation's closing newline).
    let _ = writeln!(
        s,
        "{}{} (target_mode = \"{}\": {how}):",
        &DEPLOY_SECTION[1..],
        lib.name(),
        deployment.target.mode.name()
    );
    let mut file = None;
    let shown = |s: &mut String, title: &str, c: &Configuration| {
        match export_of(c, lib) {
            Ok(text) => {
                let _ = writeln!(s, "{title}, as {} reads it:", lib.name());
                indented(s, &text);
            }
            Err(reason) => {
                let _ = writeln!(s, "{title}: not exported: {reason}");
            }
        }
        if let Some(r) = deployment.replacement(c.id) {
            let _ = writeln!(
                s,
                "  It runs in place of {} (configuration {}), which {} cannot express; what differs:",
                r.original,
                r.id,
                lib.name()
            );
            for d in &r.differences {
                let _ = writeln!(s, "    {d}");
            }
        }
    };
    match recommendation.chosen() {
        Some(chosen) => {
            let name = recommended_file(lib);
            if let Ok(text) = export_of(&chosen.config, lib) {
                file = Some((name.clone(), text));
            }
            shown(
                &mut s,
                &format!("Recommended: {} (configuration {}; in {name})", chosen.label, chosen.config.id),
                &chosen.config,
            );
        }
        None => {
            let _ = writeln!(s, "Nothing is recommended, so nothing is exported.");
        }
    }
    if let Some(second) = recommendation.runner_up() {
        shown(
            &mut s,
            &format!("Runner-up: {} (configuration {})", second.label, second.config.id),
            &second.config,
        );
    }
    if let Some(b) = baseline {
        if let Some(c) = find(table, &b.label) {
            shown(&mut s, &format!("Baseline (in use today): {}: {}", b.label, b.verdict), &c);
        }
        for (i, alt) in b.alternatives.iter().enumerate() {
            if let Some(c) = find(table, &alt.label) {
                shown(&mut s, &format!("Alternative {} to the baseline: {}", i + 1, alt.label), &c);
            }
        }
    }
    Deployed { section: s, file }
}

/// The table's configuration labelled `label`.
fn find(table: &ResultTable, label: &str) -> Option<Configuration> {
    table.configs().find(|c| c.label == label).map(|c| (*c.config).clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::sweep::{SweepRequest, sweep};
    use std::path::{Path, PathBuf};

    /// A sweep over two bundled scenarios with `target` lines and `entries`, written to `dir`.
    fn targeted(dir: &Path, target: &str, entries: &str) -> PathBuf {
        let scenario = |n: &str| super::super::bundled(n).display().to_string();
        let text = format!(
            "name = \"t\"\nscenarios = [{:?}, {:?}]\nreplicates = 2\n{target}\n{entries}",
            scenario("blip.toml"),
            scenario("hard-outage.toml")
        );
        let path = dir.join("t.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn run(file: &Path, threads: usize, out: &Path) -> crate::Result<crate::app::sweep::SweepReport> {
        sweep(&SweepRequest {
            file: Some(file.to_path_buf()),
            threads: Some(threads),
            out: Some(out.to_path_buf()),
            quiet: true,
            // The page once: it shows the deploy section.
            charts: threads == 1,
            ..SweepRequest::default()
        })
    }

    const GRID: &str = "[[policies]]\npreset = \"windowed\"\ntime_window = [\"30s\", \"2m\"]\n\
                        [[policies]]\npreset = \"resilience4j-count\"\nsliding_window_size = [20, 50]\n\
                        [[policies]]\npreset = \"connector-breaker\"\n[[policies]]\npreset = \"none\"\n";

    #[test]
    fn exact_refuses_every_inexpressible_configuration_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let file = targeted(dir.path(), "target = \"resilience4j\"", GRID);
        let out = dir.path().join("out");
        let e = run(&file, 1, &out).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let f = file.display();
        assert_eq!(
            e.to_string(),
            format!(
                "{f}:4:10: target resilience4j (target_mode = \"exact\") cannot express 3 of the 5 configuration(s), each \
                 below with where it is written, the field and what the library lacks; target_mode = \"nearest\" (or \
                 --target-mode nearest) runs the nearest expressible configuration instead:\n  \
                 {f}:6:10: configuration 0 `windowed[time_window=30s]` (field `buckets`): resilience4j cannot express it: \
                 its time window is whole seconds in one-second epoch buckets: set buckets = 30 with a whole-second \
                 time_window (exact windows are not expressible)\n  \
                 {f}:6:10: configuration 1 `windowed[time_window=2m]` (field `buckets`): resilience4j cannot express it: \
                 its time window is whole seconds in one-second epoch buckets: set buckets = 120 with a whole-second \
                 time_window (exact windows are not expressible)\n  \
                 {f}:12:10: configuration 4 `connector-breaker` (field `preset`): resilience4j cannot express it: the \
                 connector (seed 000) family is not resilience4j's state machine; start from the `resilience4j-count` preset"
            )
        );
        assert!(!out.exists(), "nothing is written when the target refuses");
        let file = targeted(dir.path(), "target = \"linkerd\"", GRID);
        let e = run(&file, 1, &out).unwrap_err().to_string();
        assert!(e.ends_with("t.toml:4:10: `target`: unknown library `linkerd` for --as; known libraries: resilience4j, polly, opossum, cockatiel, pybreaker, gobreaker, failsafe-go, envoy, istio, grpc"), "{e}");
        let file = targeted(dir.path(), "target_mode = \"nearest\"", GRID);
        let e = run(&file, 1, &out).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "t.toml:4:15: `target_mode` applies with `target = \"<library>\"` only: name the library"
            ),
            "{e}"
        );
    }

    #[test]
    fn nearest_lists_replacements_and_writes_the_same_export_on_any_thread_count() {
        let dir = tempfile::tempdir().unwrap();
        let file = targeted(dir.path(), "target = \"resilience4j\"\ntarget_mode = \"nearest\"", GRID);
        let mut seen: Vec<(String, String)> = Vec::new();
        for threads in [1, 2] {
            let out = dir.path().join(format!("out{threads}"));
            let report = run(&file, threads, &out).unwrap();
            let text = report.render();
            assert!(
                text.contains(
                    "target resilience4j (target_mode = \"nearest\"): 3 of the 5 configuration(s) replaced by the nearest \
                     configuration resilience4j expresses:\n  configuration 0: windowed[time_window=30s] -> \
                     resilience4j-count[sliding_window_type=time_based,sliding_window_size=30,minimum_number_of_calls=10,"
                ),
                "{text}"
            );
            assert!(text.contains("  configuration 4: connector-breaker -> resilience4j-count[sliding_window_type=time_based,sliding_window_size=900,minimum_number_of_calls=8,failure_rate_threshold=50.0,permitted_number_of_calls_in_half_open_state=3,wait_duration_in_open_state=5m]\n      family: connector (connector-breaker) -> resilience4j (resilience4j-count)\n      drops: the p95 latency rule (opens at p95 >= 8s)"), "{text}");
            let yaml = std::fs::read_to_string(out.join("recommended.yaml")).unwrap();
            assert!(
                yaml.contains("resilience4j:\n  circuitbreaker:\n    instances:\n      backend:\n"),
                "{yaml}"
            );
            let txt = std::fs::read_to_string(out.join("recommendation.txt")).unwrap();
            assert!(txt.contains("\nDeploy to resilience4j (target_mode = \"nearest\": 3 of the 5 configuration(s) ran as the nearest configuration resilience4j expresses):\nRecommended: "), "{txt}");
            let indented: String = yaml.lines().map(|l| format!("    {l}\n")).collect();
            assert!(txt.contains(&indented), "the export in recommendation.txt is recommended.yaml's");
            if threads == 1 {
                let page = std::fs::read_to_string(out.join(crate::report::page::REPORT_HTML)).unwrap();
                assert!(
                    page.contains("<h2 id=\"deploy\">Deploy</h2>\n<div class=\"rec\">Deploy to resilience4j"),
                    "the page shows the deploy section"
                );
                let regenerated = crate::report::folder::load(&out).unwrap();
                assert_eq!(
                    regenerated.deploy.as_deref().map(str::trim),
                    Some(
                        txt.split_once("\n\nDeploy to ")
                            .map(|(_, d)| format!("Deploy to {d}"))
                            .unwrap()
                            .trim()
                    )
                );
            }
            seen.push((yaml, txt));
        }
        assert_eq!(
            seen[0], seen[1],
            "recommended.yaml and recommendation.txt are byte-identical on 1 and 2 threads"
        );
    }

    #[test]
    fn a_sweep_targeting_each_library_recommends_and_exports_a_config() {
        let dir = tempfile::tempdir().unwrap();
        let grid = "[[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, 10]\n\
                    [[policies]]\npreset = \"ai-service-breaker\"\n";
        for lib in Library::ALL.into_iter().filter(|l| *l != Library::Grpc) {
            let file =
                targeted(dir.path(), &format!("target = {:?}\ntarget_mode = \"nearest\"", lib.name()), grid);
            let out = dir.path().join(lib.name());
            let report = run(&file, 2, &out).unwrap();
            let (name, text) = report.deployed.as_ref().and_then(|d| d.file.clone()).unwrap();
            assert_eq!(name, recommended_file(lib));
            assert_eq!(std::fs::read_to_string(out.join(&name)).unwrap(), text);
            assert!(text.contains(&format!("breakerlab export --as {} of policy", lib.name())), "{text}");
        }
        let file = targeted(dir.path(), "target = \"grpc\"\ntarget_mode = \"nearest\"", grid);
        let e = run(&file, 1, &dir.path().join("grpc")).unwrap_err().to_string();
        assert!(e.contains("it has no nearest configuration: gRPC's outlier detection ejects"), "{e}");
    }

    #[test]
    fn shards_apply_the_target_and_merge_writes_the_unsharded_deploy_outputs() {
        use crate::app::merge::{MergeRequest, merge};
        use crate::app::shard::{ShardRequest, run_shard};
        let dir = tempfile::tempdir().unwrap();
        let file = targeted(dir.path(), "target = \"cockatiel\"\ntarget_mode = \"nearest\"", GRID);
        let whole = dir.path().join("whole");
        run(&file, 2, &whole).unwrap();
        let shards = dir.path().join("shards");
        for k in 0..2 {
            run_shard(&ShardRequest {
                file: Some(file.clone()),
                shard: crate::app::ShardId::parse(&format!("{k}/2")).unwrap(),
                source: String::new(),
                threads: Some(1),
                out: Some(shards.clone()),
                quiet: true,
                command_line: String::new(),
                limits: crate::limits::Limits::default(),
                replicates: None,
                max_replicates: None,
                plan: None,
                from_scheduler: false,
            })
            .unwrap();
        }
        let merged = dir.path().join("merged");
        let dirs = (0..2).map(|k| shards.join(format!("shard-{k}-of-2"))).collect();
        merge(&MergeRequest { dirs, out: Some(merged.clone()), charts: false }).unwrap();
        for name in ["recommended.ts", "recommendation.txt", "runs.csv"] {
            let read = |d: &Path| std::fs::read(d.join(name)).unwrap();
            assert_eq!(read(&whole), read(&merged), "{name}");
        }
    }

    #[test]
    fn compare_refuses_or_replaces_policies_the_target_cannot_express() {
        use crate::app::compare::{CompareRequest, compare};
        use crate::app::sweep::TargetMode;
        let dir = tempfile::tempdir().unwrap();
        let req = CompareRequest {
            scenarios: vec![super::super::bundled("blip.toml")],
            policies: vec!["gobreaker".into(), "node-breaker".into()],
            replicates: 1,
            threads: Some(1),
            out: Some(dir.path().join("c")),
            target: Some(Library::Gobreaker),
            ..CompareRequest::default()
        };
        let e = compare(&req).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.to_string(),
            "--target gobreaker: 1 of the policies cannot be expressed (--target-mode nearest runs the nearest \
             expressible configuration instead):\n  --policy 2 gobreaker cannot express policy `node-breaker`: the node \
             (seed 003) family is not gobreaker's state machine; start from the `gobreaker` preset"
        );
        let out = compare(&CompareRequest { target_mode: Some(TargetMode::Nearest), ..req }).unwrap();
        assert_eq!(
            out.replaced[0],
            "--policy 2 node-breaker -> gobreaker[max_requests=1,timeout=30s,ready_to_trip_consecutive_failures=4] \
             (the nearest gobreaker expresses):"
        );
        assert_eq!(
            out.report.policies[1],
            "gobreaker[max_requests=1,timeout=30s,ready_to_trip_consecutive_failures=4]"
        );
    }
}
