#!/usr/bin/env python3
"""Writes the small bad-shape and alternative-shape fixtures the CLI tests (tests/cli/formats.rs)
replay: the same exports as scenarios/traces/formats/, in the other shapes tools write them.
Deterministic: python3 make_fixtures.py"""
import json, random, datetime
random.seed(5)
T0 = 1764590400  # 2025-12-01T12:00:00Z
N = 60
rows = [(4.0, 0.4) if 20 <= i < 30 else (round(0.1 + random.random() * 0.05, 4), round(random.random() * 0.004, 5)) for i in range(N)]

def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")

# Prometheus as `curl ... | jq .` writes it: pretty, float seconds, the metric name (so the unit)
# kept, NaN and +Inf samples (a scrape with no requests, a histogram's +Inf).
vals = [[T0 + 60 * i + 0.781, str(r[0])] for i, r in enumerate(rows)]
vals[7][1] = "NaN"
vals[8][1] = "+Inf"
doc = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"__name__": "http_request_duration_seconds", "job": "api", "quantile": "0.95"}, "values": vals}]}}
open("prometheus-pretty-nan.json", "w").write(json.dumps(doc, indent=2) + "\n")
doc = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"job": "api"}, "values": [[T0 + 60 * i + 0.781, str(r[1])] for i, r in enumerate(rows)]}]}}
open("prometheus-errors.json", "w").write(json.dumps(doc, indent=2) + "\n")

# Datadog v1 query with null points (no data in that interval).
pts = [[float((T0 + 60 * i) * 1000), r[0] * 1000] for i, r in enumerate(rows)]
pts[12][1] = None
doc = {"status": "ok", "res_type": "time_series", "series": [{"metric": "trace.web.request.duration.by.service.95p",
       "scope": "service:web", "pointlist": pts, "interval": 60, "length": N,
       "unit": [{"family": "time", "name": "millisecond", "short_name": "ms"}, None]}]}
open("datadog-nulls.json", "w").write(json.dumps(doc, indent=2) + "\n")

# CloudWatch as an SDK dumps it: compact, epoch-second numbers, two pages back to back, newest first.
def page(lo, hi, token):
    idx = list(range(hi - 1, lo - 1, -1))
    res = [{"Id": "p95", "Label": "TargetResponseTime", "Timestamps": [float(T0 + 60 * i) for i in idx],
            "Values": [rows[i][0] for i in idx], "StatusCode": "PartialData" if token else "Complete"},
           {"Id": "req", "Label": "RequestCount", "Timestamps": [float(T0 + 60 * i) for i in idx],
            "Values": [3000.0 for i in idx], "StatusCode": "PartialData" if token else "Complete"}]
    p = {"MetricDataResults": res, "Messages": []}
    if token:
        p["NextToken"] = token
    return json.dumps(p, separators=(",", ":"))
open("cloudwatch-sdk.json", "w").write(page(30, 60, "eyJ0IjoxfQ==") + page(0, 30, None) + "\n")

# OTLP pretty-printed (a collector's debug output saved by hand), one resource, client spans of
# two operations; the currency calls fail from second 20 to 40.
def kv(k, v):
    return {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
spans = []
for j in range(60):
    st = T0 * 10**9 + j * 10**9
    down = 20 <= j < 40
    spans.append({"traceId": "%032x" % j, "spanId": "%016x" % j, "name": "hipstershop.CurrencyService/Convert",
                  "kind": "SPAN_KIND_CLIENT", "startTimeUnixNano": str(st), "endTimeUnixNano": str(st + 12_000_000),
                  "attributes": [kv("rpc.grpc.status_code", 14 if down else 0)], "status": {"code": "STATUS_CODE_ERROR"} if down else {}})
    spans.append({"traceId": "%032x" % j, "spanId": "%016x" % (j + 100), "name": "hipstershop.CartService/GetCart",
                  "kind": 3, "startTimeUnixNano": str(st + 5), "endTimeUnixNano": str(st + 3_000_000), "status": {}})
doc = {"resourceSpans": [{"resource": {"attributes": [kv("service.name", "frontend")]},
                          "scopeSpans": [{"scope": {"name": "otelgrpc"}, "spans": spans}]}]}
open("otlp-pretty.json", "w").write(json.dumps(doc, indent=2) + "\n")

# Per-call CSV: 19-digit StartTimeUnixNano, an `http_code` column and Envoy's response flags.
with open("calls-http-flags.csv", "w") as f:
    f.write("StartTimeUnixNano,latency_ms,http_code,response_flags\n")
    for j in range(60):
        down = 20 <= j < 40
        f.write(f"{T0 * 10**9 + j * 10**9},{12 if not down else 1},{503 if down else 200},{'UF' if down else '-'}\n")

# Request counts alone (a load balancer's per-minute volume).
with open("volume.csv", "w") as f:
    f.write("timestamp,requests\n")
    for i in range(N):
        f.write(f"{iso(T0 + 60 * i)},{3000 + 10 * i}\n")

# ---- Exports as users save them (issue 34): each in the exact shape its tool writes. ----
rnd = random.Random(34)
M = 30  # 30 minutes from T0; the dependency is down (p95 4 s, 40 % errors) for minutes 10-14.
down = lambda i: 10 <= i < 15
p95s = [4.0 if down(i) else round(0.1 + rnd.random() * 0.05, 3) for i in range(M)]
errs = [0.4 if down(i) else round(rnd.random() * 0.004, 4) for i in range(M)]

def local(t, fmt):
    # Grafana formats times in the browser's zone: here UTC+02:00.
    return datetime.datetime.fromtimestamp(t, datetime.timezone(datetime.timedelta(hours=2))).strftime(fmt)

# Grafana 6-7 panel "Export CSV" with "Excel" ticked (file_export.ts convertSeriesListToCsv):
# BOM (the browser download), `sep=;`, \r\n rows, strings quoted, numbers bare, null as `null`,
# no line end after the last row, times as YYYY-MM-DDTHH:mm:ssZ in the browser's zone.
rows_ = ['sep=;', '"Series";"Time";"Value"']
for name, vals in (("p95 latency", p95s), ("error ratio", errs), ("requests/s", [50.0] * M)):
    for i, v in enumerate(vals):
        shown = "null" if (name == "p95 latency" and i == 22) else repr(v)
        rows_.append(f'"{name}";"{local(T0 + 60 * i, "%Y-%m-%dT%H:%M:%S+02:00")}";{shown}')
open("grafana-excel-long.csv", "w", newline="").write("\ufeff" + "\r\n".join(rows_))

# The same panel as "Series joined by time" (convertSeriesListToCsvColumns, Excel): one column per
# series; times without a zone (Grafana 7 "Formatted data"), read as UTC unless told otherwise.
rows_ = ['sep=;', '"Time";"p95 (s)";"requests"']
for i in range(M):
    p = "null" if i == 22 else repr(p95s[i])
    n = "" if i == 23 else str(3000)
    rows_.append(f'"{local(T0 + 60 * i, "%Y-%m-%d %H:%M:%S")}";{p};{n}')
open("grafana-excel-wide.csv", "w", newline="").write("\ufeff" + "\r\n".join(rows_))

# CloudWatch get-metric-data with a SEARCH expression: one Id, one result per metric found, each
# with its own Label (the CLI's output: ISO times, newest first, indented by 4).
def result(label, vals):
    idx = list(range(M - 1, -1, -1))
    return {"Id": "q1", "Label": label, "Timestamps": [iso(T0 + 60 * i) for i in idx],
            "Values": [vals[i] for i in idx], "StatusCode": "Complete"}
doc = {"MetricDataResults": [result("api-a TargetResponseTime", p95s),
                             result("api-b TargetResponseTime", [0.05] * M),
                             result("api-a RequestCount", [3000.0] * M)], "Messages": []}
open("cloudwatch-search.json", "w").write(json.dumps(doc, indent=4) + "\n")

# prometheus-api-client-python: json.dump(prom.custom_query_range(...), f): the bare result
# array, float seconds with scrape jitter (.805 for .804 on two samples), NaN and +Inf as the API
# writes them, the unit inside the metric name.
def samples(vals, bad):
    out = []
    for i, v in enumerate(vals):
        t = T0 + 60 * i + 0.804 + (0.001 if i in (5, 17) else 0)
        out.append([round(t, 3), bad.get(i, str(v))])
    return out
doc = [{"metric": {"__name__": "http_request_duration_seconds_p95", "job": "api"},
        "values": samples(p95s, {3: "NaN", 24: "+Inf"})},
       {"metric": {"__name__": "http_requests_error_ratio", "job": "api"}, "values": samples(errs, {})}]
open("prometheus-result.json", "w").write(json.dumps(doc) + "\n")

# Datadog v1 query of a success rate in percent (unit family percentage), null where no data.
pts = [[float((T0 + 60 * i) * 1000), round((1 - errs[i]) * 100, 2)] for i in range(M)]
pts[6][1] = None
doc = {"status": "ok", "res_type": "time_series", "series": [{"metric": "trace.web.request.success_rate",
       "scope": "service:web", "pointlist": pts, "interval": 60, "length": M,
       "unit": [{"family": "percentage", "name": "percent", "short_name": "%", "plural": "percent",
                 "scale_factor": 1.0}, None]}]}
open("datadog-percent.json", "w").write(json.dumps(doc) + "\n")

# Istio's default proxy access log (kubectl logs ... -c istio-proxy): one call a second to
# httpbin, failing (503 UF, then resets with no upstream answer: DURATION -) from second 20 to 39.
def stamp(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
with open("istio-access.log", "w") as f:
    for j in range(60):
        st = stamp(T0 + j + 0.25)
        if 20 <= j < 30:
            code, flags, detail, dur, ust, up = 503, "UF", "upstream_reset_before_response_started{connection_failure}", "30", "-", '"10.44.1.27:80"'
        elif 30 <= j < 40:
            code, flags, detail, dur, ust, up = 0, "DC", "downstream_remote_disconnect", "-", "-", '"10.44.1.27:80"'
        else:
            code, flags, detail, dur, ust, up = 200, "-", "via_upstream", str(12 + j % 5), str(10 + j % 5), '"10.44.1.27:80"'
        f.write(f'[{st}] "GET /status/200 HTTP/1.1" {code} {flags} {detail} - "-" 0 135 {dur} {ust} "-" "curl/8.5.0" '
                f'"{j:08x}-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" {up} outbound|8000||httpbin.foo.svc.cluster.local '
                f'10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46520 - default\n')

# Emissary-ingress (Ambassador) default access log: `ACCESS ` then Envoy's default format.
with open("ambassador-access.log", "w") as f:
    for j in range(60):
        down = 20 <= j < 40
        f.write(f'ACCESS [{stamp(T0 + j + 0.5)}] "GET /backend/ HTTP/1.1" {503 if down else 200} {"UF" if down else "-"} '
                f'0 {91 if down else 129} {25 if down else 3 + j % 4} {"-" if down else 2} "10.244.0.1" "curl/7.54.0" '
                f'"{j:08x}-cf6b-4d6f-9d5b-1a3f8c0e7b21" "localhost:8080" "10.244.0.22:8080"\n')

# Span CSV as Nezha writes it (rca_data/*/trace/*.csv): grouped by trace (not sorted), 19-digit
# nanosecond start and end, Duration in microseconds; a frontend span and two children per trace.
with open("nezha-spans.csv", "w") as f:
    f.write("TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration\n")
    for j in range(60):
        st = (T0 + j) * 10**9 + 123_456
        slow = 20 <= j < 40
        kids = [("productcatalogservice-668d5f85fb-jhwx9", "hipstershop.ProductCatalogService/GetProduct", 1_000_000 + 40_000, 3_688_231 if not slow else 2_400_000_777),
                ("currencyservice-cf787dd48-vpjrd", "hipstershop.CurrencyService/Convert", 900_000, 1_101_056)]
        root_end = st + 5_000_000 + max(off + d for _, _, off, d in kids)
        f.write(f"{j:032x},{j:016x},root,frontend-579b9bff58-t2dbm,hipstershop.Frontend/Recv.,{st},{root_end},{(root_end - st) // 1000}\n")
        for k, (pod, op, off, d) in enumerate(kids):
            f.write(f"{j:032x},{j:014x}{k:02x},{j:016x},{pod},{op},{st + off},{st + off + d},{d // 1000}\n")
