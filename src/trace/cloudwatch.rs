//! CloudWatch `GetMetricData` JSON (`aws cloudwatch get-metric-data ... > page.json`):
//! `{"MetricDataResults":[{"Id","Label","Timestamps":[...],"Values":[...],"StatusCode"}],"NextToken"}`.
//! Pages may be concatenated in one file (`>>`), or given as a JSON array of pages; results with
//! one `Id` and one `Label` are joined: a SEARCH or Metrics Insights query returns several
//! `Label`s under one `Id`, each its own series. CloudWatch lists timestamps newest first (`ScanBy` defaults to
//! `TimestampDescending`): they are sorted here. Timestamps are ISO 8601 strings (the CLI) or
//! epoch seconds (SDK dumps). Selectors name an `Id` or a `Label` (`{Id="m1",Label="..."}` for
//! both).

use super::TraceError;
use super::json::{Number, Scalar, bad_value, documents};
use super::series::{Locator, Series};
use super::timestamp::parse_datetime;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

const SHAPE: &str = r#"CloudWatch GetMetricData JSON: {"MetricDataResults":[{"Id":"m1","Label":"...","Timestamps":["2024-01-01T00:05:00+00:00",...],"Values":[1.5,...],"StatusCode":"Complete"}],"NextToken":null}"#;

/// One page.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "PascalCase")]
struct Page<'a> {
    #[serde(borrow)]
    metric_data_results: Vec<MetricData<'a>>,
    /// A string when later pages follow.
    #[serde(default)]
    next_token: Option<Value>,
}

/// One document: a page, or an array of pages.
struct Pages<'a>(Vec<Page<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Pages<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pages<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a page (an object) or an array of pages")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pages<'de>, A::Error> {
                Page::deserialize(MapAccessDeserializer::new(map)).map(|p| Pages(vec![p]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pages<'de>, A::Error> {
                let mut pages = Vec::new();
                while let Some(p) = seq.next_element()? {
                    pages.push(p);
                }
                Ok(Pages(pages))
            }
        }
        d.deserialize_any(V)
    }
}

/// One entry of `MetricDataResults`, as read.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "PascalCase")]
struct MetricData<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    label: Cow<'a, str>,
    #[serde(default, borrow)]
    timestamps: Vec<Scalar<'a>>,
    #[serde(default)]
    values: Vec<Number>,
    #[serde(default, borrow)]
    status_code: Option<Cow<'a, str>>,
}

/// The series being joined from the pages, by `Id` and `Label`.
#[derive(Default)]
struct Joined {
    out: Vec<Series>,
    points: Vec<Vec<(i64, f64)>>,
    status: Vec<Option<String>>,
    pages: usize,
    last_token: Option<String>,
}

/// Every (`Id`, `Label`) of the pages as one series, oldest sample first.
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut j = Joined::default();
    documents(file, text, SHAPE, |pages: Pages, _| {
        pages.0.into_iter().try_for_each(|p| page(p, file, &mut j))
    })?;
    let Joined { mut out, points, status, last_token, .. } = j;
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

/// One page: its results joined into `j` by `Id` and `Label`.
fn page(p: Page, file: &str, j: &mut Joined) -> Result<(), TraceError> {
    let page_no = j.pages + 1;
    for (i, r) in p.metric_data_results.into_iter().enumerate() {
        join(j, r, file, &format!("page {page_no} MetricDataResults[{i}]"))?;
    }
    j.last_token = p.next_token.as_ref().and_then(Value::as_str).map(str::to_string);
    j.pages += 1;
    Ok(())
}

/// A timestamp in microseconds: an ISO 8601 string, or epoch seconds (as the SDKs dump them),
/// exactly for whole and millisecond values; else what to show for it.
fn timestamp(t: &Scalar) -> Result<i64, String> {
    if let Scalar::Text(s) = t {
        return parse_datetime(s.as_bytes(), 0).map_err(|_| s.to_string());
    }
    let v = t.number().ok_or_else(|| t.show())?;
    let us = (v * 1e6).round();
    (us.is_finite() && us.abs() < 9.0e18).then_some(us as i64).ok_or_else(|| v.to_string())
}

/// Adds one result's points to its (`Id`, `Label`)'s series (created on first sight).
fn join(j: &mut Joined, r: MetricData, file: &str, at: &str) -> Result<(), TraceError> {
    let times = r
        .timestamps
        .iter()
        .enumerate()
        .map(|(k, t)| {
            timestamp(t).map_err(|shown| {
                bad_value(
                    file,
                    &format!("{at}.Timestamps[{k}]"),
                    &format!("{shown:?}"),
                    "an ISO 8601 time or epoch seconds",
                )
            })
        })
        .collect::<Result<Vec<i64>, _>>()?;
    if times.len() != r.values.len() {
        return Err(TraceError::Format {
            file: file.into(),
            message: format!(
                "{at} (Id {:?}): {} Timestamps but {} Values; they must pair up",
                r.id,
                times.len(),
                r.values.len()
            ),
        });
    }
    let k =
        match j.out.iter().position(|s| s.label("Id") == Some(&*r.id) && s.label("Label") == Some(&*r.label))
        {
            Some(k) => k,
            None => {
                j.out.push(Series {
                    name: format!("Id {:?} (Label {:?})", r.id, r.label),
                    labels: vec![("Id".into(), r.id.to_string()), ("Label".into(), r.label.to_string())],
                    unit: super::columns::split_header(&r.label).unit,
                    locate: Locator::Stamped,
                    ..Series::default()
                });
                j.points.push(Vec::new());
                j.status.push(None);
                j.out.len() - 1
            }
        };
    // The last page's status is the series' status (earlier pages say PartialData).
    j.status[k] = r.status_code.as_deref().filter(|c| *c != "Complete").map(str::to_string);
    j.points[k].extend(times.into_iter().zip(r.values.into_iter().map(|n| n.0)));
    Ok(())
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
    fn one_id_with_several_labels_is_several_series() {
        // A SEARCH expression: one Id, one result per metric found, each with its own Label.
        let page = r#"{"MetricDataResults":[
          {"Id":"q1","Label":"api-a Latency","Timestamps":["2024-01-01T00:01:00+00:00","2024-01-01T00:00:00+00:00"],"Values":[0.2,0.1],"StatusCode":"Complete"},
          {"Id":"q1","Label":"api-b Latency","Timestamps":["2024-01-01T00:01:00+00:00","2024-01-01T00:00:00+00:00"],"Values":[0.4,0.3],"StatusCode":"Complete"}],"Messages":[]}"#;
        let s = parse("cw.json", page).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].values.clone(), s[1].values.clone()), (vec![0.1, 0.2], vec![0.3, 0.4]));
        let picked =
            crate::trace::series::pick("cw.json", &s, Some("api-b Latency"), "p95=cw.json@api-b Latency");
        assert_eq!(picked.unwrap().values, vec![0.3, 0.4]);
        let e =
            crate::trace::series::pick("cw.json", &s, Some("q1"), "p95=cw.json@q1").unwrap_err().to_string();
        assert!(e.contains("`q1` matches 2 series") && e.contains("api-a Latency"), "{e}");
        let both =
            crate::trace::series::pick("cw.json", &s, Some("{Id=\"q1\",Label=\"api-a Latency\"}"), "x");
        assert_eq!(both.unwrap().values, vec![0.1, 0.2]);
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
