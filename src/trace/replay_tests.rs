//! The engine's request stream replaying what the importers read: a script from its file or
//! named by a scenario, a per-call log's arrivals and first answers, an interval trace's counts
//! and gaps.

use crate::outcome::{Answer, OutcomeClass};
use crate::scenario::Scenario;
use crate::sim::Workload;
use crate::time::{Dur, SimTime};
use std::path::Path;

/// The whole stream, read in chunks of 7 requests (so chunk boundaries are crossed).
fn whole(w: &Workload) -> (Vec<SimTime>, Vec<Answer>) {
    let chunks = w.stream_in_chunks_of(7).collect_chunks();
    for (k, c) in chunks.iter().enumerate() {
        assert_eq!(c.first, 7 * k as u64);
    }
    let arrivals = chunks.iter().flat_map(|c| c.arrivals.iter().copied()).collect();
    (arrivals, chunks.iter().flat_map(|c| c.first_answers.iter().copied()).collect())
}

fn scenario(dir: &Path, file: &str, data: &str, extra: &str) -> Scenario {
    std::fs::write(dir.join(file), data).unwrap();
    let text = format!("[trace]\nfile = \"{file}\"\n{extra}");
    crate::scenario::parse(&dir.join("s.toml"), &text).unwrap()
}

#[test]
fn a_script_streams_the_same_in_chunks_of_any_length_from_a_file_or_a_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("t_ms,latency_ms,ok\n");
    for i in 0..20_000u64 {
        text += &format!("{},{},{}\n", i * 7 + i % 7, 5 + i % 300, u8::from(i % 11 != 0));
    }
    let path = dir.path().join("calls.csv");
    std::fs::write(&path, &text).unwrap();
    let alone = crate::scenario::from_script(&path).unwrap();
    let named = crate::scenario::parse(&dir.path().join("s.toml"), "script = \"calls.csv\"\n").unwrap();
    let flat = |w: &Workload, len: usize| {
        let chunks = w.stream_in_chunks_of(len).collect_chunks();
        let mut first = 0;
        for c in &chunks {
            assert_eq!((c.first, c.arrivals.len()), (first, c.first_answers.len()));
            first += c.arrivals.len() as u64;
        }
        let arrivals: Vec<SimTime> = chunks.iter().flat_map(|c| c.arrivals.iter().copied()).collect();
        (arrivals, chunks.iter().flat_map(|c| c.first_answers.iter().copied()).collect::<Vec<_>>())
    };
    let w = Workload::build(&alone, 1, 0).unwrap();
    let in_place = flat(&w, 7);
    assert_eq!(in_place.0.len(), 20_000);
    assert_eq!(in_place, flat(&w, crate::sim::SCRIPT_CHUNK_REQUESTS), "a run's chunks");
    assert_eq!(in_place, flat(&w, 100_000), "in one chunk");
    assert_eq!(in_place, flat(&Workload::build(&named, 1, 0).unwrap(), 4_096), "from a scenario");
    for i in [0, 1, 4_095, 4_096, 19_999] {
        assert_eq!(w.answer(i as u64, 1, in_place.0[i]), in_place.1[i], "row {i} asked for alone");
    }
    assert_eq!((alone.duration, named.duration), (Dur::from_secs(141), Dur::from_secs(141)));
}

#[test]
fn per_call_logs_replay_arrivals_and_first_answers_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let data = "ts_ms,latency_ms,status\n1000,5,200\n1000,7,503\n1250,9,429\n4000,11,200\n";
    let s = scenario(dir.path(), "calls.csv", data, "");
    let w = Workload::build(&s, 3, 0).unwrap();
    let (arrivals, first_answers) = whole(&w);
    assert_eq!(arrivals, vec![SimTime(0), SimTime(0), SimTime(250_000), SimTime(3_000_000)]);
    assert!(first_answers.is_empty(), "first answers are read from the log, not copied");
    let classes = [OutcomeClass::Ok, OutcomeClass::Error, OutcomeClass::RateLimited, OutcomeClass::Ok];
    for (i, class) in classes.iter().enumerate() {
        let a = w.answer(i as u64, 1, arrivals[i]);
        assert_eq!((a.latency, a.class), (Dur::from_millis(5 + 2 * i as u64), *class));
    }
    // A retry at 3.9 s draws from the calls nearest in time: all four are candidates.
    let retry = w.answer(2, 2, SimTime(3_900_000));
    assert!([5_000, 7_000, 9_000, 11_000].contains(&retry.latency.0));
    assert_eq!(retry, w.answer(2, 2, SimTime(3_900_000)), "same draw for the same attempt");
    assert!(!w.truth_known);
    assert_eq!(w.horizon, SimTime(4_000_000));
}

#[test]
fn interval_traces_use_counts_or_traffic_and_skip_missing_gaps() {
    let dir = tempfile::tempdir().unwrap();
    // Minutes 0, 1, then a gap until minute 5.
    let data = "ts,requests,error_rate,p50_ms,p95_ms\n0,30,0,100,300\n60,20,1,100,300\n300,10,0,100,300\n";
    let extra = "gaps = \"missing\"\ninterval = \"1m\"\nslo = \"error_rate > 0.5\"\n";
    let s = scenario(dir.path(), "agg.csv", data, extra);
    let w = Workload::build(&s, 1, 0).unwrap();
    let (arrivals, first_answers) = whole(&w);
    assert_eq!(arrivals.len(), 60, "exactly the logged counts, nothing in the gap");
    assert_eq!(arrivals.iter().filter(|t| **t >= SimTime(60_000_000)).count(), 30);
    assert_eq!(first_answers.len(), 60);
    // Minute 1 logs 100 % errors: every answer there fails, retries included.
    for (i, at) in arrivals.iter().enumerate().filter(|(_, t)| (60..120).contains(&(t.0 / 1_000_000))) {
        assert_eq!(first_answers[i].class, OutcomeClass::Error);
        assert_eq!(first_answers[i], w.first_answer(i as u64, *at), "drawn ahead = drawn when sent");
        assert_eq!(w.answer(i as u64, 2, *at).class, OutcomeClass::Error);
    }
    assert!(w.truth_known);
    assert_eq!((w.truth[0].start, w.truth[0].end), (SimTime(60_000_000), SimTime(120_000_000)));
    // A traffic model replaces the counts; arrivals in the missing gap are dropped.
    let s = scenario(
        dir.path(),
        "agg.csv",
        data,
        "gaps = \"missing\"\ninterval = \"1m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n",
    );
    let w = Workload::build(&s, 1, 0).unwrap();
    assert_eq!(whole(&w).0.len(), 120 + 60, "0..120 s and 300..360 s, one a second");
    assert!(!w.truth_known);
}
