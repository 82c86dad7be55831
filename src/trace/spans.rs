//! What the span importers (OTLP, Jaeger, Envoy, HAR) share: the call each span becomes,
//! `--where key=glob` filters, status mapping (HTTP, gRPC) and the step from spans to a
//! [`CallTrace`].
//!
//! Keys mean the same in every format: `service` (OTLP `service.name`, Jaeger `serviceName`,
//! Envoy `authority`, HAR the URL's host) and `operation` (OTLP span `name`, Jaeger
//! `operationName`, Envoy and HAR the path); each format adds its own (see its module). Spans are
//! sorted by start time: a trace export lists them by trace, an access log by completion, so file
//! order means nothing there (CSV logs, where it does, are refused when unsorted).

use super::{CallTrace, ImportReport, TraceError, TraceFormat, TraceOptions};
use crate::outcome::OutcomeClass;
use breakerlab_model::trace::hosts::HostIds;
use std::borrow::Cow;
use std::path::Path;

/// One logged call.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Span {
    /// Start, absolute microseconds since the epoch.
    pub t_us: i64,
    /// Duration in microseconds.
    pub latency_us: f64,
    /// What the dependency answered; `None` when the call never reached it (Envoy's `UO`: its
    /// own circuit breaker refused it), so its answer is taken from the nearest call that did.
    pub class: Option<OutcomeClass>,
}

/// `--where key=glob` clauses; a span is kept when every clause matches.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    clauses: Vec<(String, String)>,
}

impl Filter {
    /// Parses `key=glob` clauses (`*` any run of characters, `?` any one).
    pub fn parse(texts: &[String]) -> Result<Filter, TraceError> {
        let clauses = texts
            .iter()
            .map(|t| match t.split_once('=') {
                Some((k, g)) if !k.trim().is_empty() => Ok((k.trim().to_string(), g.trim().to_string())),
                _ => Err(TraceError::Option {
                    option: "where",
                    message: format!("{t:?}: expected KEY=GLOB, e.g. service=frontend*"),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(Filter { clauses })
    }

    /// The clauses, `(key, glob)`, in the order given.
    pub fn clauses(&self) -> &[(String, String)] {
        &self.clauses
    }

    /// True when there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// The first clause `field` fails, as `key "value"` (`None` = kept). A missing field is "".
    pub fn reject<'a>(&self, field: impl Fn(&str) -> Option<Cow<'a, str>>) -> Option<String> {
        for (key, glob) in &self.clauses {
            let value = field(key).unwrap_or(Cow::Borrowed(""));
            if !glob_match(glob.as_bytes(), value.as_bytes()) {
                return Some(mismatch(key, &value, glob));
            }
        }
        None
    }
}

/// How a filter names the value it left out: `service "cart" does not match "front*"`.
pub fn mismatch(key: &str, value: &str, glob: &str) -> String {
    format!("{key} {value:?} does not match {glob:?}")
}

/// Shell-style glob match over bytes, iteratively (backtracking to the last `*` only).
pub fn glob_match(glob: &[u8], text: &[u8]) -> bool {
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if g < glob.len() && (glob[g] == b'?' || glob[g] == text[t]) {
            g += 1;
            t += 1;
        } else if g < glob.len() && glob[g] == b'*' {
            star = Some((g, t));
            g += 1;
        } else if let Some((sg, st)) = star {
            g = sg + 1;
            t = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    glob[g..].iter().all(|b| *b == b'*')
}

/// An HTTP status code's class: 1xx-3xx ok, 429 rate limited, 408 and 5xx errors, other 4xx the
/// caller's fault, 0 (no response: a browser's blocked or aborted request) an error.
pub fn http_class(code: u32) -> Option<OutcomeClass> {
    match code {
        0 => Some(OutcomeClass::Error),
        100..=399 => Some(OutcomeClass::Ok),
        429 => Some(OutcomeClass::RateLimited),
        408 => Some(OutcomeClass::Error),
        400..=499 => Some(OutcomeClass::ClientError),
        500..=599 => Some(OutcomeClass::Error),
        _ => None,
    }
}

/// A gRPC status code's class (grpc/doc/statuscodes.md): OK ok; RESOURCE_EXHAUSTED rate
/// limited; the caller's mistakes (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
/// PERMISSION_DENIED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED, UNAUTHENTICATED) client
/// errors; everything else (DEADLINE_EXCEEDED, UNAVAILABLE, INTERNAL, ...) errors.
pub fn grpc_class(code: i64) -> OutcomeClass {
    match code {
        0 => OutcomeClass::Ok,
        8 => OutcomeClass::RateLimited,
        3 | 5 | 6 | 7 | 9 | 11 | 12 | 16 => OutcomeClass::ClientError,
        _ => OutcomeClass::Error,
    }
}

/// Collects spans as an importer reads them: filters, counts, and the first span left out.
pub struct Collector {
    filter: Filter,
    skip_bad: bool,
    spans: Vec<Span>,
    /// The host of each span in `spans` ([`NO_HOST`] when it names none), while hosts are
    /// collected: from `host_column`, or from the format's own host field.
    hosts: Option<HostIds>,
    span_hosts: Vec<u16>,
    host_key: HostKey,
    /// The first host that cannot be used, under a named `host_column` (reported by `finish`).
    host_error: Option<TraceError>,
    read: u64,
    filtered: u64,
    first_filtered: Option<String>,
    bad: u64,
    first_bad: Option<String>,
    notes: Vec<String>,
}

impl Collector {
    /// A collector for `opts`' filters.
    pub fn new(opts: &TraceOptions) -> Result<Collector, TraceError> {
        Ok(Collector {
            filter: Filter::parse(&opts.filters)?,
            skip_bad: opts.skip_bad_rows,
            spans: Vec::new(),
            hosts: None,
            span_hosts: Vec::new(),
            host_key: HostKey::None,
            host_error: None,
            read: 0,
            filtered: 0,
            first_filtered: None,
            bad: 0,
            first_bad: None,
            notes: Vec::new(),
        })
    }

    /// Whether any filter is set.
    pub fn filters(&self) -> bool {
        !self.filter.is_empty()
    }

    /// Whether a span's fields are asked for: a filter is set or hosts are collected
    /// (importers skip field lookups otherwise).
    pub fn wants_fields(&self) -> bool {
        self.filters() || self.hosts.is_some()
    }

    /// Collects the host of each span: from the field `host_column` names, else from
    /// `format`'s own host field (Envoy's `upstream_host`; a span's `server.address` or
    /// `net.peer.name`, with its port when one is given).
    pub fn collect_hosts(&mut self, format: TraceFormat, opts: &TraceOptions) {
        self.host_key = match (&opts.host_column, format) {
            (Some(name), _) => HostKey::Named(name.clone()),
            (None, TraceFormat::Envoy) => HostKey::Fields(&[("upstream_host", None)]),
            (None, TraceFormat::Otlp | TraceFormat::Jaeger) => HostKey::Fields(&[
                ("server.address", Some("server.port")),
                ("net.peer.name", Some("net.peer.port")),
            ]),
            (None, _) => HostKey::None,
        };
        if self.host_key != HostKey::None {
            self.hosts = Some(HostIds::new());
        }
    }

    /// Notes the host of a span just kept; under a named column a span without one (or one
    /// too many) is an error, else hosts are not used.
    fn note_host<'a>(
        &mut self,
        refused: bool,
        at: &impl Fn() -> String,
        field: &impl Fn(&str) -> Option<Cow<'a, str>>,
    ) {
        let Some(ids) = &mut self.hosts else { return };
        let value = self.host_key.value(field).filter(|v| !v.is_empty() && v != "-");
        let id = match value {
            Some(v) => ids.id(&v).map_err(|m| format!("{}: {m}", at())),
            // A call the proxy refused takes the host of the call whose answer it takes.
            None if refused => Ok(NO_HOST),
            None => Err(format!(
                "{}: no host ({}): every call needs one to replay onto a pool of hosts",
                at(),
                self.host_key.describe()
            )),
        };
        match id {
            Ok(id) => self.span_hosts.push(id),
            Err(message) => {
                if let HostKey::Named(_) = self.host_key {
                    self.host_error.get_or_insert(TraceError::Format { file: String::new(), message });
                }
                self.hosts = None;
                self.span_hosts = Vec::new();
            }
        }
    }

    /// Offers one span; `at` names it, `field` answers the filter's keys.
    pub fn offer<'a>(
        &mut self,
        span: Span,
        at: impl Fn() -> String,
        field: impl Fn(&str) -> Option<Cow<'a, str>>,
    ) {
        self.read += 1;
        if !self.filter.is_empty()
            && let Some(why) = self.filter.reject(&field)
        {
            self.filtered += 1;
            self.first_filtered.get_or_insert_with(|| format!("{}: {why}", at()));
            return;
        }
        self.note_host(span.class.is_none(), &at, &field);
        self.spans.push(span);
    }

    /// A span that cannot be read: refused, or skipped and counted under `skip_bad_rows`.
    pub fn bad(&mut self, e: TraceError) -> Result<(), TraceError> {
        if !self.skip_bad {
            return Err(e);
        }
        self.read += 1;
        self.bad += 1;
        self.first_bad.get_or_insert_with(|| e.to_string());
        Ok(())
    }

    /// Adds a line to the import report (what an importer noticed, such as spans it could not
    /// fully place).
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// Sorts the spans by start, answers calls that never reached the dependency from the
    /// nearest call that did, and builds the call trace.
    pub fn finish(
        mut self,
        file: &str,
        format: TraceFormat,
        opts: &TraceOptions,
    ) -> Result<CallTrace, TraceError> {
        if let Some(TraceError::Format { message, .. }) = self.host_error.take() {
            return Err(TraceError::Format { file: file.into(), message });
        }
        let mut report = ImportReport { file: file.to_string(), rows: self.read, ..ImportReport::default() };
        report.bad_rows_skipped = self.bad;
        report.first_bad_row = self.first_bad.take();
        report.notes.append(&mut self.notes);
        if self.filtered > 0 {
            report.notes.push(format!(
                "--where left out {} of {} spans; the first: {}",
                self.filtered,
                self.read,
                self.first_filtered.as_deref().unwrap_or("")
            ));
        }
        if self.spans.is_empty() {
            let message = match self.first_filtered {
                Some(first) => {
                    format!("no span matches --where ({} read; the first left out: {first})", self.read)
                }
                None if self.bad > 0 => format!("all {} spans were bad and skipped", self.bad),
                None => format!("no spans found (expected {})", format.describe()),
            };
            return Err(TraceError::Format { file: file.into(), message });
        }
        if !self.spans.is_sorted_by_key(|s| s.t_us) {
            if self.hosts.is_some() {
                let mut both: Vec<(Span, u16)> =
                    self.spans.iter().copied().zip(self.span_hosts.iter().copied()).collect();
                both.sort_by_key(|(s, _)| s.t_us);
                (self.spans, self.span_hosts) = both.into_iter().unzip();
            } else {
                self.spans.sort_by_key(|s| s.t_us);
            }
            report
                .notes
                .push("spans sorted by start time (the file lists them by trace or by completion)".into());
        }
        let hosts = if self.hosts.is_some() { Some(self.span_hosts.as_mut_slice()) } else { None };
        let refused = answer_refused(&mut self.spans, hosts);
        if refused > 0 {
            report.notes.push(format!(
                "{refused} calls were refused by the proxy's own circuit breaker (UO): they arrive as logged and \
                 are answered like the nearest call that reached the dependency"
            ));
        }
        let mut trace = CallTrace::from_calls(
            report,
            self.spans.iter().map(|s| (s.t_us, s.latency_us, s.class.unwrap_or(OutcomeClass::Error))),
            opts,
        )?;
        // Refused calls when no call reached a host: their hosts stay unknown, hosts unused.
        if let Some(mut ids) = self.hosts.take().filter(|_| !self.span_hosts.contains(&NO_HOST)) {
            ids.of_call = std::mem::take(&mut self.span_hosts);
            let explicit = matches!(self.host_key, HostKey::Named(_));
            trace.set_hosts(ids, explicit)?;
            if explicit {
                let names = trace.hosts().map(|h| h.names.clone()).unwrap_or_default();
                trace.report.notes.push(super::hosts_note(&names));
            }
        }
        Ok(trace)
    }
}

/// The host of a span that names none (a call its proxy refused), until it takes the host of
/// the call it is answered like.
const NO_HOST: u16 = u16::MAX;

/// Where a span's host is read.
#[derive(Clone, Debug, PartialEq, Eq)]
enum HostKey {
    /// Not collected.
    None,
    /// The field `host_column` names.
    Named(String),
    /// The first of these fields a span has, each with its port field.
    Fields(&'static [(&'static str, Option<&'static str>)]),
}

impl HostKey {
    /// The host a span's `field`s give, with its port when the format has a port field.
    fn value<'a>(&self, field: &impl Fn(&str) -> Option<Cow<'a, str>>) -> Option<String> {
        match self {
            HostKey::None => None,
            HostKey::Named(name) => field(name).map(Cow::into_owned),
            HostKey::Fields(keys) => keys.iter().find_map(|(key, port)| {
                let host = field(key).filter(|h| !h.is_empty())?;
                Some(match port.and_then(field) {
                    Some(port) => format!("{host}:{port}"),
                    None => host.into_owned(),
                })
            }),
        }
    }

    /// The field(s) read, for messages.
    fn describe(&self) -> String {
        match self {
            HostKey::None => String::new(),
            HostKey::Named(name) => format!("field `{name}`"),
            HostKey::Fields(keys) => {
                keys.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(" or ")
            }
        }
    }
}

/// Gives each span without a class the answer of the nearest span with one (earlier on a tie),
/// and its host when `hosts` are given; returns how many there were. Spans are sorted by start.
fn answer_refused(spans: &mut [Span], mut hosts: Option<&mut [u16]>) -> usize {
    let refused = spans.iter().filter(|s| s.class.is_none()).count();
    if refused == 0 || refused == spans.len() {
        return refused;
    }
    let answered: Vec<usize> = (0..spans.len()).filter(|i| spans[*i].class.is_some()).collect();
    for i in 0..spans.len() {
        if spans[i].class.is_some() {
            continue;
        }
        let t = spans[i].t_us;
        let right = answered.partition_point(|j| spans[*j].t_us < t);
        let pick = match (right.checked_sub(1).map(|l| answered[l]), answered.get(right)) {
            (Some(l), Some(&r)) => {
                if t - spans[l].t_us <= spans[r].t_us - t {
                    l
                } else {
                    r
                }
            }
            (Some(l), None) => l,
            (None, Some(&r)) => r,
            (None, None) => continue,
        };
        spans[i].latency_us = spans[pick].latency_us;
        spans[i].class = spans[pick].class;
        if let Some(hosts) = hosts.as_deref_mut()
            && hosts[i] == NO_HOST
        {
            hosts[i] = hosts[pick];
        }
    }
    refused
}

/// Imports a span log of `format` from `path`.
pub fn load(path: &Path, format: TraceFormat, opts: &TraceOptions) -> Result<CallTrace, TraceError> {
    let file = path.display().to_string();
    let mut spans = Collector::new(opts)?;
    spans.collect_hosts(format, opts);
    match format {
        TraceFormat::Otlp => super::otlp::read(&file, &super::json::read(path)?, &mut spans)?,
        TraceFormat::Jaeger => super::jaeger::read(&file, &super::json::read(path)?, &mut spans)?,
        TraceFormat::Har => super::har::read(&file, &super::json::read(path)?, &mut spans)?,
        TraceFormat::Envoy => super::envoy::read(&file, super::columns::open(path)?, &mut spans)?,
        other => {
            return Err(TraceError::Option {
                option: "format",
                message: format!("{} is not a span format", other.describe()),
            });
        }
    }
    let mut trace = spans.finish(&file, format, opts)?;
    let (time, latency, status) = match format {
        TraceFormat::Otlp => (
            "startTimeUnixNano",
            "endTimeUnixNano - startTimeUnixNano (ns)",
            "status.code, else HTTP or gRPC status attribute",
        ),
        TraceFormat::Jaeger => (
            "startTime (us)",
            "duration (us)",
            "tag error / otel.status_code, else http.status_code, else rpc.grpc.status_code",
        ),
        TraceFormat::Envoy => (
            "START_TIME",
            "DURATION (ms)",
            "RESPONSE_FLAGS (UO refused by Envoy, UF/UH/UT/UC/URX failed), else RESPONSE_CODE",
        ),
        _ => ("startedDateTime", "time (ms)", "response.status"),
    };
    trace.report.columns = vec![
        ("time".into(), time.into()),
        ("latency".into(), latency.into()),
        ("status".into(), status.into()),
    ];
    Ok(trace)
}

/// Test helper for the span importers: reads `text` with `read` under `filters` and builds the
/// trace.
#[cfg(test)]
pub(crate) fn read_for_test(
    format: TraceFormat,
    filters: &[&str],
    read: impl FnOnce(&mut Collector) -> Result<(), TraceError>,
) -> Result<CallTrace, TraceError> {
    let opts =
        TraceOptions { filters: filters.iter().map(|s| s.to_string()).collect(), ..TraceOptions::default() };
    let mut c = Collector::new(&opts)?;
    read(&mut c)?;
    c.finish("test", format, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(b"frontend*", b"frontend-7f9"));
        assert!(glob_match(b"*Convert", b"hipstershop.CurrencyService/Convert"));
        assert!(glob_match(b"a?c", b"abc"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"a*b*c", b"aXXbYYc"));
        assert!(!glob_match(b"a*b*c", b"aXXbYY"));
        assert!(!glob_match(b"frontend", b"frontend2"));
    }

    #[test]
    fn filters_name_the_first_mismatch() {
        let f = Filter::parse(&["service=front*".into(), "operation=*Convert".into()]).unwrap();
        let field = |svc: &'static str, op: &'static str| {
            move |k: &str| match k {
                "service" => Some(Cow::Borrowed(svc)),
                "operation" => Some(Cow::Borrowed(op)),
                _ => None,
            }
        };
        assert_eq!(f.reject(field("frontend", "x.Convert")), None);
        assert_eq!(
            f.reject(field("cart", "x.Convert")).unwrap(),
            "service \"cart\" does not match \"front*\""
        );
        assert!(Filter::parse(&["service".into()]).is_err());
    }

    #[test]
    fn refused_calls_take_the_nearest_answer() {
        let s = |t: i64, c: Option<OutcomeClass>| Span { t_us: t, latency_us: t as f64, class: c };
        let mut spans =
            vec![s(0, Some(OutcomeClass::Ok)), s(4, None), s(10, Some(OutcomeClass::Error)), s(12, None)];
        assert_eq!(answer_refused(&mut spans, None), 2);
        assert_eq!((spans[1].class, spans[1].latency_us), (Some(OutcomeClass::Ok), 0.0));
        assert_eq!((spans[3].class, spans[3].latency_us), (Some(OutcomeClass::Error), 10.0));
    }

    #[test]
    fn status_codes() {
        assert_eq!(http_class(503), Some(OutcomeClass::Error));
        assert_eq!(http_class(404), Some(OutcomeClass::ClientError));
        assert_eq!(http_class(0), Some(OutcomeClass::Error));
        assert_eq!(http_class(700), None);
        assert_eq!(grpc_class(14), OutcomeClass::Error);
        assert_eq!(grpc_class(8), OutcomeClass::RateLimited);
        assert_eq!(grpc_class(5), OutcomeClass::ClientError);
    }
}
