//! Hand-made output folders for the chart and report tests: a two-hour comparison of three
//! configurations (timeline, transitions, incidents, summary, latency), a sweep (summary with
//! parameters, pareto.csv, recommendation) and a week-long timeline. Values come from simple
//! formulas, so the files are small, plausible and identical on every run.

use std::fmt::Write as _;
use std::path::Path;

const SEC: u64 = 1_000_000;
const MIN: u64 = 60 * SEC;
const HOUR: u64 = 60 * MIN;
const DAY: u64 = 24 * HOUR;

/// A deterministic wobble in [-1, 1] for index `i` (no RNG needed).
fn wobble(i: u64) -> f64 {
    let x = i.wrapping_mul(2_654_435_761).wrapping_add(97) % 1000;
    x as f64 / 500.0 - 1.0
}

/// State schedule of one configuration: (time, state entered), starting closed at 0.
type Schedule = Vec<(u64, &'static str)>;

struct Incident {
    start: u64,
    end: u64,
    kind: &'static str,
    expect: &'static str,
}

/// Upstream health at time `t`: (p95 ms, error rate).
fn health(t: u64, incidents: &[Incident]) -> (f64, f64) {
    for inc in incidents {
        if t >= inc.start && t < inc.end {
            return match inc.kind {
                "outage" => (4.0, 1.0),
                "blip" => (90.0, 0.6),
                "slowdown" => (2600.0, 0.04),
                _ => (300.0, 0.5),
            };
        }
    }
    (80.0 + 15.0 * wobble(t / SEC), 0.01 + 0.005 * wobble(t / MIN))
}

fn share(schedule: &Schedule, start: u64, end: u64) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (i, (t, s)) in schedule.iter().enumerate() {
        let next = schedule.get(i + 1).map(|n| n.0).unwrap_or(u64::MAX);
        let (a, b) = ((*t).max(start), next.min(end));
        if b > a {
            let k = match *s {
                "closed" => 0,
                "half_open" => 1,
                _ => 2,
            };
            out[k] += (b - a) as f64 / (end - start) as f64;
        }
    }
    out
}

fn write_timeline(
    dir: &Path,
    policies: &[(&str, Schedule)],
    incidents: &[Incident],
    span: u64,
    bin: u64,
    rate: f64,
) {
    let mut tl = String::from("policy,bin_start_us,bin_end_us,offered,admitted,rejected,failures,successes,");
    tl.push_str("closed_frac,open_frac,half_open_frac,upstream_p95_ms,upstream_error_rate\n");
    let mut tr = String::from("policy,at_us,instance,from,to,reason\n");
    for (name, sched) in policies {
        for w in sched.windows(2) {
            let reason = match w[1].1 {
                "open" => "failure_threshold",
                "half_open" => "open_timeout",
                _ => "probe_success",
            };
            writeln!(tr, "{name},{},0,{},{},{reason}", w[1].0, w[0].1, w[1].1).unwrap();
        }
        let mut t = 0;
        while t < span {
            let [c, h, o] = share(sched, t, t + bin);
            let day = (t % DAY) as f64 / DAY as f64;
            let offered =
                (rate * (bin / SEC) as f64 * (1.0 + 0.3 * (day * std::f64::consts::TAU).sin())).round();
            let admitted = (offered * (c + h * 0.05)).round();
            let (p95, err) = health(t + bin / 2, incidents);
            let failures = (admitted * err).round();
            let (p95, err) = if admitted > 0.0 {
                (format!("{p95:.1}"), format!("{err:.4}"))
            } else {
                (String::new(), String::new())
            };
            writeln!(
                tl,
                "{name},{t},{},{offered},{admitted},{},{failures},{},{c:.4},{o:.4},{h:.4},{p95},{err}",
                t + bin,
                offered - admitted,
                admitted - failures
            )
            .unwrap();
            t += bin;
        }
    }
    std::fs::write(dir.join("timeline.csv"), tl).unwrap();
    std::fs::write(dir.join("transitions.csv"), tr).unwrap();
    let mut inc = String::from("start_us,end_us,kind,expect\n");
    for i in incidents {
        writeln!(inc, "{},{},{},{}", i.start, i.end, i.kind, i.expect).unwrap();
    }
    std::fs::write(dir.join("incidents.csv"), inc).unwrap();
}

/// A two-hour comparison of three configurations: timeline, transitions, incidents, summary
/// with CIs on two scenarios, and latency histograms.
pub fn compare_dir(dir: &Path) {
    let incidents = [
        Incident { start: 20 * MIN, end: 35 * MIN, kind: "outage", expect: "open" },
        Incident { start: 60 * MIN, end: 61 * MIN, kind: "blip", expect: "stay_closed" },
        Incident { start: 80 * MIN, end: 95 * MIN, kind: "slowdown", expect: "either" },
    ];
    let c5: Schedule = vec![
        (0, "closed"),
        (20 * MIN + 8 * SEC, "open"),
        (20 * MIN + 38 * SEC, "half_open"),
        (20 * MIN + 39 * SEC, "open"),
        (35 * MIN + 10 * SEC, "half_open"),
        (35 * MIN + 12 * SEC, "closed"),
        (60 * MIN + 20 * SEC, "open"),
        (60 * MIN + 50 * SEC, "half_open"),
        (61 * MIN + 20 * SEC, "closed"),
    ];
    let win: Schedule = vec![
        (0, "closed"),
        (21 * MIN, "open"),
        (26 * MIN, "half_open"),
        (26 * MIN + 5 * SEC, "open"),
        (36 * MIN, "half_open"),
        (37 * MIN, "closed"),
        (82 * MIN, "open"),
        (92 * MIN, "half_open"),
        (96 * MIN, "closed"),
    ];
    let r4j: Schedule = vec![
        (0, "closed"),
        (20 * MIN + 40 * SEC, "open"),
        (35 * MIN + 40 * SEC, "half_open"),
        (36 * MIN, "closed"),
    ];
    let policies = [("consecutive-5", c5), ("window-50pct-60s", win), ("resilience4j-default", r4j)];
    write_timeline(dir, &policies, &incidents, 2 * HOUR, 30 * SEC, 50.0);
    let mut s = String::from("scenario,policy,preset,seed,replicates,param.failure_threshold,");
    s.push_str(
        "false_opens,false_opens_sd,false_opens_ci95,incidents,missed_incidents,detection_delay_mean_s,",
    );
    s.push_str(
        "detection_delay_mean_s_ci95,detection_delay_p95_s,detection_delay_max_s,recovery_lag_mean_s,flaps,",
    );
    s.push_str(
        "open_episodes,probe_failures,requests,attempts,amplification,wasted_quota,wasted_quota_ci95,shed,",
    );
    s.push_str("shed_healthy,availability,availability_ci95,fallback_rate,latency_p50_ms,latency_p95_ms,");
    s.push_str("latency_p99_ms,cost\n");
    for (si, scen) in ["outage-blip-slowdown", "nightly-batch"].iter().enumerate() {
        for (pi, p) in ["consecutive-5", "window-50pct-60s", "resilience4j-default"].iter().enumerate() {
            let k = (si * 3 + pi) as f64;
            let fo = [1.0, 0.0, 0.0][pi] + si as f64 * 0.5;
            let delay = [8.4, 60.0, 40.0][pi] * (1.0 + 0.2 * si as f64);
            let wasted = [420.0, 9100.0, 2100.0][pi] + 100.0 * k;
            let av = [0.981, 0.962, 0.975][pi] - 0.004 * si as f64;
            writeln!(
                s,
                "{scen},{p},,42,5,{},{fo},{:.2},{:.2},3,{},{delay:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{:.3},{wasted},{:.0},{},{},{av},{:.4},{:.3},{},{},{},{:.1}",
                ["5", "", ""][pi],
                0.3 + 0.1 * k,
                0.4 + 0.1 * k,
                [0, 0, 1][pi],
                delay * 0.3,
                delay * 1.2,
                delay * 1.5,
                12.0 + 3.0 * k,
                [2, 0, 0][pi],
                [3, 2, 1][pi],
                [1, 1, 0][pi],
                360_000,
                380_000 + 5000 * pi,
                (380_000 + 5000 * pi) as f64 / 360_000.0,
                wasted * 0.08,
                [40_000, 52_000, 44_000][pi],
                [120, 0, 0][pi],
                0.003 + 0.001 * k,
                1.0 - av,
                [85, 86, 85][pi],
                [420, 900, 640][pi],
                [2100, 5200, 3900][pi],
                10.0 * fo + delay + wasted / 100.0
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("summary.csv"), s).unwrap();
    let mut l = String::from("policy,le_ms,count\n");
    let edges =
        [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 30000.0];
    for (pi, p) in ["consecutive-5", "window-50pct-60s", "resilience4j-default"].iter().enumerate() {
        for (i, e) in edges.iter().enumerate() {
            let base =
                [0, 40, 900, 4000, 26000, 120000, 180000, 20000, 2600, 900, 600, 400, 200, 50][i] as f64;
            let tail = if i >= 8 { [1.0, 4.0, 2.5][pi] } else { 1.0 };
            writeln!(l, "{p},{e},{}", (base * tail).round()).unwrap();
        }
    }
    std::fs::write(dir.join("latency.csv"), l).unwrap();
}

/// A sweep: two families (consecutive: threshold × open duration; window: rate × window ×
/// min calls) on one scenario, with feasibility, a Pareto front and a recommendation.
pub fn sweep_dir(dir: &Path) {
    let mut s =
        String::from("scenario,policy,preset,seed,replicates,config_id,family,param.failure_threshold,");
    s.push_str(
        "param.open_for,param.failure_rate,param.window,param.min_calls,false_opens,false_opens_ci95,",
    );
    s.push_str(
        "missed_incidents,detection_delay_mean_s,detection_delay_mean_s_ci95,wasted_quota,availability,",
    );
    s.push_str("shed_healthy,latency_p95_ms,cost,feasible\n");
    let mut rows: Vec<(String, f64, f64, f64, f64)> = Vec::new();
    let mut n = 0;
    for th in [3, 5, 8, 12] {
        for (oi, open) in ["10s", "30s", "1m", "5m"].iter().enumerate() {
            n += 1;
            let fo = (6.0 / th as f64 * 2.0).floor() + if oi == 0 { 1.0 } else { 0.0 };
            let delay = th as f64 * 1.7;
            let missed = if th == 12 && oi == 3 { 1 } else { 0 };
            let wasted = th as f64 * 120.0 + [900.0, 400.0, 250.0, 120.0][oi];
            let av = 0.99 - 0.002 * th as f64 - [0.0, 0.001, 0.003, 0.012][oi];
            let cost = 10.0 * fo + delay + wasted / 100.0 + 50.0 * missed as f64;
            let feasible = fo <= 1.0 && missed == 0;
            let label = format!("consecutive(th={th},open={open})");
            writeln!(
                s,
                "steady-outage,\"{label}\",,7,5,c{n:02},consecutive,{th},{open},,,,{fo},{:.2},{missed},{delay:.1},{:.2},{wasted},{av:.4},{},{},{cost:.1},{feasible}",
                0.3 + 0.05 * n as f64,
                0.2 * th as f64,
                [600, 200, 100, 40][oi],
                400 + 20 * th,
            )
            .unwrap();
            rows.push((label, fo, delay, wasted, av));
        }
    }
    for rate in ["0.2", "0.5", "0.8"] {
        for win in ["10s", "60s"] {
            for mc in [10, 50] {
                n += 1;
                let r: f64 = rate.parse().unwrap();
                let fo = if r < 0.3 {
                    3.0
                } else if r < 0.6 && win == "10s" {
                    1.0
                } else {
                    0.0
                };
                let delay = 5.0 + if win == "60s" { 25.0 } else { 6.0 } * r + mc as f64 * 0.05;
                let wasted = 300.0 + 900.0 * r + if win == "60s" { 500.0 } else { 0.0 };
                let av = 0.985 - 0.01 * r;
                let cost = 10.0 * fo + delay + wasted / 100.0;
                let label = format!("window(rate={rate},win={win},min={mc})");
                writeln!(
                    s,
                    "steady-outage,\"{label}\",,7,5,w{n:02},window,,,{rate},{win},{mc},{fo},{:.2},0,{delay:.1},{:.2},{wasted},{av:.4},{},{},{cost:.1},{}",
                    0.2 + 0.03 * n as f64,
                    0.4 * r,
                    if fo > 0.0 { 150 } else { 0 },
                    380 + mc,
                    fo <= 1.0
                )
                .unwrap();
                rows.push((label, fo, delay, wasted, av));
            }
        }
    }
    std::fs::write(dir.join("summary.csv"), &s).unwrap();
    // pareto.csv: the summary rows that are not dominated on (false opens, delay, wasted, -availability).
    let mut lines = s.lines();
    let mut p = String::from(lines.next().unwrap());
    p.push('\n');
    for (i, line) in lines.enumerate() {
        let a = &rows[i];
        let dominated = rows.iter().any(|b| {
            b.1 <= a.1
                && b.2 <= a.2
                && b.3 <= a.3
                && b.4 >= a.4
                && (b.1 < a.1 || b.2 < a.2 || b.3 < a.3 || b.4 > a.4)
        });
        if !dominated {
            p.push_str(line);
            p.push('\n');
        }
    }
    std::fs::write(dir.join("pareto.csv"), p).unwrap();
    std::fs::write(dir.join("recommended.txt"), "window(rate=0.8,win=10s,min=10)\n").unwrap();
    std::fs::write(
        dir.join("recommendation.txt"),
        "Recommended: window(rate=0.8,win=10s,min=10).\nIt meets every constraint (false_opens <= 1, \
         missed_incidents == 0) and has the lowest cost among the configurations that do.\n",
    )
    .unwrap();
}

/// A week at one-minute bins with a nightly 90-minute incident at 02:00 and two configurations.
pub fn week_dir(dir: &Path) {
    let incidents: Vec<Incident> = (0..7)
        .map(|d| Incident {
            start: d * DAY + 2 * HOUR,
            end: d * DAY + 3 * HOUR + 30 * MIN,
            kind: if d % 3 == 2 { "brownout" } else { "outage" },
            expect: "open",
        })
        .collect();
    let mut fast: Schedule = vec![(0, "closed")];
    let mut slow: Schedule = vec![(0, "closed")];
    for d in 0..7u64 {
        let s = d * DAY + 2 * HOUR;
        fast.extend([
            (s + 20 * SEC, "open"),
            (s + 90 * MIN + MIN, "half_open"),
            (s + 90 * MIN + MIN + SEC, "closed"),
        ]);
        if d != 4 {
            slow.extend([(s + 6 * MIN, "open"), (s + 95 * MIN, "half_open"), (s + 97 * MIN, "closed")]);
        }
        if d == 3 {
            fast.extend([
                (d * DAY + 14 * HOUR, "open"),
                (d * DAY + 14 * HOUR + MIN, "half_open"),
                (d * DAY + 14 * HOUR + MIN + SEC, "closed"),
            ]);
        }
    }
    write_timeline(
        dir,
        &[("consecutive-5", fast), ("window-50pct-5m", slow)],
        &incidents,
        7 * DAY,
        MIN,
        20.0,
    );
}
