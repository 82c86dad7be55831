//! CloudWatch `GetMetricData` JSON (`aws cloudwatch get-metric-data ... > page.json`):
//! `{"MetricDataResults":[{"Id","Label","Timestamps":[...],"Values":[...],"StatusCode"}],"NextToken"}`.
//! Pages may be concatenated in one file (`>>`), or given as a JSON array of pages; results with
//! one `Id` are joined. CloudWatch lists timestamps newest first (`ScanBy` defaults to
//! `TimestampDescending`): they are sorted here. Timestamps are ISO 8601 strings (the CLI) or
//! epoch seconds (SDK dumps). Selectors name an `Id` or a `Label`.

use super::TraceError;
use super::json::{NumOrText, bad_value, each_document};
use super::series::{Locator, Series};
use super::timestamp::{parse_datetime, parse_epoch};
use serde::Deserialize;
use std::borrow::Cow;

const SHAPE: &str = r#"CloudWatch GetMetricData JSON: {"MetricDataResults":[{"Id":"m1","Label":"...","Timestamps":["2024-01-01T00:05:00+00:00",...],"Values":[1.5,...],"StatusCode":"Complete"}],"NextToken":null}"#;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Page<'a> {
    #[serde(borrow)]
    metric_data_results: Vec<Result_<'a>>,
    #[serde(default, borrow)]
    next_token: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Result_<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    label: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamps: Vec<NumOrText<'a>>,
    values: Vec<f64>,
    #[serde(default, borrow)]
    status_code: Option<Cow<'a, str>>,
}

/// Every `Id` of the pages as one series, oldest sample first.
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out: Vec<Series> = Vec::new();
    let mut points: Vec<Vec<(i64, f64)>> = Vec::new();
    let mut page_no = 0usize;
    let mut last_token = None;
    let mut status: Vec<Option<String>> = Vec::new();
    let mut each_page = |page: Page| {
        {
            for (i, r) in page.metric_data_results.into_iter().enumerate() {
                let at = format!("page {} MetricDataResults[{i}]", page_no + 1);
                if r.timestamps.len() != r.values.len() {
                    return Err(TraceError::Format {
                        file: file.into(),
                        message: format!(
                            "{at} (Id {:?}): {} Timestamps but {} Values; they must pair up",
                            r.id,
                            r.timestamps.len(),
                            r.values.len()
                        ),
                    });
                }
                let k = match out.iter().position(|s| s.label("Id") == Some(&*r.id)) {
                    Some(k) => k,
                    None => {
                        let label = r.label.as_deref().unwrap_or("").to_string();
                        out.push(Series {
                            name: format!("Id {:?} (Label {label:?})", r.id),
                            labels: vec![("Id".into(), r.id.to_string()), ("Label".into(), label.clone())],
                            unit: super::columns::split_header(&label).unit,
                            locate: Locator::Stamped,
                            ..Series::default()
                        });
                        points.push(Vec::new());
                        status.push(None);
                        out.len() - 1
                    }
                };
                // The last page's status is the series' status (earlier pages say PartialData).
                status[k] = r.status_code.as_deref().filter(|c| *c != "Complete").map(str::to_string);
                for (j, (t, v)) in r.timestamps.iter().zip(&r.values).enumerate() {
                    let us = stamp(t).ok_or_else(|| {
                        bad_value(
                            file,
                            &format!("{at}.Timestamps[{j}]"),
                            &t.show(),
                            "an ISO 8601 time or epoch seconds",
                        )
                    })?;
                    points[k].push((us, *v));
                }
            }
            last_token = page.next_token.map(|t| t.to_string());
            page_no += 1;
        }
        Ok(())
    };
    if text.trim_start().starts_with('[') {
        each_document(file, text, SHAPE, |_, pages: Vec<Page>| {
            pages.into_iter().try_for_each(&mut each_page)
        })?;
    } else {
        each_document(file, text, SHAPE, |_, page: Page| each_page(page))?;
    }
    for ((s, mut p), code) in out.iter_mut().zip(points).zip(status) {
        p.sort_by_key(|(t, _)| *t);
        if let Some(w) = p.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "{} has two samples at {} (a page given twice?)",
                    s.name,
                    super::timestamp::format_utc(w[0].0)
                ),
            });
        }
        s.times = p.iter().map(|(t, _)| *t).collect();
        s.values = p.iter().map(|(_, v)| *v).collect();
        let more = last_token.as_deref().is_some_and(|t| !t.is_empty());
        s.note = match (code, more) {
            (Some(c), true) => {
                Some(format!("StatusCode {c} and the last page has a NextToken: later pages are missing"))
            }
            (Some(c), false) => Some(format!("CloudWatch reported StatusCode {c} for this series")),
            (None, true) => Some("the last page has a NextToken: later pages are missing".into()),
            (None, false) => None,
        };
    }
    Ok(out)
}

fn stamp(t: &NumOrText) -> Option<i64> {
    match t {
        NumOrText::Text(s) => parse_datetime(s.as_bytes(), 0).ok(),
        NumOrText::Int(v) => v.checked_mul(1_000_000),
        NumOrText::Float(v) => parse_epoch(v.to_string().as_bytes(), 1_000_000).ok(),
        NumOrText::Bool(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE1: &str = r#"{"MetricDataResults":[{"Id":"p95","Label":"Latency p95","Timestamps":["2024-01-01T00:02:00+00:00","2024-01-01T00:01:00+00:00"],"Values":[0.3,0.2],"StatusCode":"PartialData"}],"NextToken":"abc","Messages":[]}"#;
    const PAGE2: &str = r#"{"MetricDataResults":[{"Id":"p95","Label":"Latency p95","Timestamps":["2024-01-01T00:00:00+00:00"],"Values":[0.1],"StatusCode":"Complete"}],"Messages":[]}"#;

    #[test]
    fn concatenated_pages_join_and_sort_oldest_first() {
        let s = parse("cw.json", &format!("{PAGE1}\n{PAGE2}\n")).unwrap();
        assert_eq!(s.len(), 1);
        let t0 = 1_704_067_200_000_000;
        assert_eq!(s[0].times, vec![t0, t0 + 60_000_000, t0 + 120_000_000]);
        assert_eq!(s[0].values, vec![0.1, 0.2, 0.3]);
        assert_eq!(s[0].note, None);
        assert_eq!(s[0].at(1), "Id \"p95\" (Label \"Latency p95\") at 2024-01-01 00:01:00Z");
        let arr = parse("cw.json", &format!("[{PAGE1},{PAGE2}]")).unwrap();
        assert_eq!(arr[0].values, s[0].values);
        let only1 = parse("cw.json", PAGE1).unwrap();
        assert_eq!(
            only1[0].note.as_deref(),
            Some("StatusCode PartialData and the last page has a NextToken: later pages are missing")
        );
    }

    #[test]
    fn bad_pages_are_located() {
        let e = parse("cw.json", &PAGE1[..90]).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("ends early"), "{e}");
        let e = parse("cw.json", &format!("{PAGE1}{PAGE1}")).unwrap_err().to_string();
        assert!(e.contains("two samples at 2024-01-01 00:01:00Z"), "{e}");
        let bad = PAGE2.replace("\"Values\":[0.1]", "\"Values\":[0.1,0.2]");
        let e = parse("cw.json", &bad).unwrap_err().to_string();
        assert!(e.contains("page 1 MetricDataResults[0]") && e.contains("1 Timestamps but 2 Values"), "{e}");
        let bad = PAGE2.replace("2024-01-01T00:00:00+00:00", "yesterday");
        let e = parse("cw.json", &bad).unwrap_err().to_string();
        assert!(e.contains("MetricDataResults[0].Timestamps[0]: expected an ISO 8601 time"), "{e}");
        let bad = PAGE2.replace("[0.1]", "[null]");
        let e = parse("cw.json", &bad).unwrap_err().to_string();
        assert!(e.contains("expected CloudWatch GetMetricData JSON"), "{e}");
    }
}
