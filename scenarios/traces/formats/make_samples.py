#!/usr/bin/env python3
"""Writes the sample exports in this folder, one per format breakerlab imports, each in the shape
the tool's own export has (documented API responses and file formats; see README "Trace
formats"). The data are synthetic: two hours of per-minute aggregates with one real incident
(minutes 40-51: p95 3.5 s, 35 % errors) and one blip (minute 80), and three minutes of calls with
an outage of the currency service (second 60-100). Run: python3 make_samples.py (deterministic)."""
import json, random

random.seed(12)
T0 = 1717243200  # 2024-06-01T12:00:00Z
MIN = 120

def minute(i):
    if 40 <= i < 52:
        return 3.5, 0.35, 48.0
    if i == 80:
        return 1.2, 0.08, 51.0
    return round(0.22 + random.random() * 0.06, 4), round(random.random() * 0.006, 5), round(45 + random.random() * 10, 2)

rows = [minute(i) for i in range(MIN)]

def iso(t):
    import datetime
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")

# Prometheus query_range: three queries, three files (as `curl .../api/v1/query_range` writes them).
def prom(result):
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}, separators=(",", ":"))

p95 = [[T0 + 60 * i, str(r[0])] for i, r in enumerate(rows) if i != 100]  # one scrape missing
open("prometheus-p95.json", "w").write(prom([{"metric": {}, "values": p95}]) + "\n")
open("prometheus-errors.json", "w").write(prom([{"metric": {}, "values": [[T0 + 60 * i, str(r[1])] for i, r in enumerate(rows)]}]) + "\n")
open("prometheus-rps.json", "w").write(prom([
    {"metric": {"job": "api"}, "values": [[T0 + 60 * i, str(r[2])] for i, r in enumerate(rows)]},
    {"metric": {"job": "web"}, "values": [[T0 + 60 * i, str(round(r[2] * 3, 2))] for i, r in enumerate(rows)]},
]) + "\n")

# Grafana "Series joined by time" CSV download (Formatted data off): epoch ms.
with open("grafana.csv", "w") as f:
    f.write('"Time","p95","error ratio","requests/s"\n')
    for i, r in enumerate(rows):
        f.write(f"{(T0 + 60 * i) * 1000},{r[0]},{r[1]},{r[2]}\n")

# CloudWatch GetMetricData, two pages concatenated (aws ... >> file), newest first.
def cw_page(lo, hi, token):
    idx = list(range(hi - 1, lo - 1, -1))
    res = [
        {"Id": "p95", "Label": "TargetResponseTime p95", "Timestamps": [iso(T0 + 60 * i) for i in idx], "Values": [rows[i][0] for i in idx], "StatusCode": "Complete" if token is None else "PartialData"},
        {"Id": "requests", "Label": "RequestCount", "Timestamps": [iso(T0 + 60 * i) for i in idx], "Values": [round(rows[i][2] * 60) for i in idx], "StatusCode": "Complete" if token is None else "PartialData"},
        {"Id": "errors", "Label": "HTTPCode_Target_5XX_Count", "Timestamps": [iso(T0 + 60 * i) for i in idx], "Values": [round(rows[i][2] * 60 * rows[i][1]) for i in idx], "StatusCode": "Complete" if token is None else "PartialData"},
    ]
    page = {"MetricDataResults": res, "Messages": []}
    if token:
        page["NextToken"] = token
    return json.dumps(page, indent=4)

open("cloudwatch.json", "w").write(cw_page(60, 120, "eyJ2IjoxfQ==") + "\n" + cw_page(0, 60, None) + "\n")

# Datadog v1 /api/v1/query: three queries in one response.
def dd(metric, expr, values, unit):
    return {"metric": metric, "display_name": metric, "scope": "service:checkout,env:prod", "expression": expr,
            "pointlist": [[float((T0 + 60 * i) * 1000), v] for i, v in enumerate(values)], "interval": 60,
            "start": T0 * 1000, "end": (T0 + 60 * MIN) * 1000 - 1, "length": MIN, "aggr": None, "attributes": {},
            "tag_set": [], "query_index": 0, "unit": [unit, None] if unit else None}
sec = {"family": "time", "scale_factor": 1.0, "name": "second", "short_name": "s", "plural": "seconds", "id": 11}
doc = {"status": "ok", "res_type": "time_series", "resp_version": 1, "query": "...", "message": "",
       "from_date": T0 * 1000, "to_date": (T0 + 60 * MIN) * 1000, "group_by": [],
       "series": [
           dd("trace.http.request.duration", "p95:trace.http.request.duration{service:checkout,env:prod}", [r[0] for r in rows], sec),
           dd("trace.http.request.hits", "sum:trace.http.request.hits{service:checkout,env:prod}.as_count()", [round(r[2] * 60) for r in rows], None),
           dd("trace.http.request.errors", "sum:trace.http.request.errors{service:checkout,env:prod}.as_count()", [round(r[2] * 60 * r[1]) for r in rows], None),
       ]}
open("datadog.json", "w").write(json.dumps(doc) + "\n")

# Calls: three minutes, the currency service down from second 60 to 100.
S0 = T0 * 1_000_000_000
calls = []
t = 0.0
while t < 180:
    t += random.expovariate(2.0)
    down = 60 <= t < 100
    lat = random.uniform(1.0, 2.0) if down else random.lognormvariate(-4.0, 0.4)
    calls.append((t, lat, down and random.random() < 0.9))

def hexid(n):
    return "".join(random.choice("0123456789abcdef") for _ in range(n))

# OTLP JSON (an ExportTraceServiceRequest, as the collector's file exporter writes one per line).
front, currency, cart = [], [], []
for (t, lat, err) in calls:
    tid = hexid(32)
    st = S0 + int(t * 1e9)
    en = st + int(lat * 1e9)
    front.append({"traceId": tid, "spanId": hexid(16), "parentSpanId": hexid(16), "name": "hipstershop.CurrencyService/Convert", "kind": 3,
                  "startTimeUnixNano": str(st), "endTimeUnixNano": str(en),
                  "attributes": [{"key": "rpc.system", "value": {"stringValue": "grpc"}}, {"key": "rpc.grpc.status_code", "value": {"intValue": "14" if err else "0"}}],
                  "status": {"code": 2, "message": "upstream connect error"} if err else {}})
    if not err:
        currency.append({"traceId": tid, "spanId": hexid(16), "name": "hipstershop.CurrencyService/Convert", "kind": 2,
                         "startTimeUnixNano": str(st + 200_000), "endTimeUnixNano": str(en - 200_000), "status": {}})
    if random.random() < 0.3:
        cst = st + int(0.002e9)
        front.append({"traceId": tid, "spanId": hexid(16), "name": "hipstershop.CartService/GetCart", "kind": 3,
                      "startTimeUnixNano": str(cst), "endTimeUnixNano": str(cst + int(random.lognormvariate(-5, 0.3) * 1e9)), "status": {}})
def rs(service, spans):
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
            "scopeSpans": [{"scope": {"name": "go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc", "version": "0.46.0"}, "spans": spans}]}
open("otlp.json", "w").write(json.dumps({"resourceSpans": [rs("frontend", front), rs("currencyservice", currency)]}, separators=(",", ":")) + "\n")

# Jaeger JSON (UI "Download JSON"): one trace per call, frontend -> redis.
data = []
for (t, lat, err) in calls[:200]:
    tid = hexid(32)
    st = T0 * 1_000_000 + int(t * 1e6)
    spans = [{"traceID": tid, "spanID": hexid(16), "operationName": "GetDriver", "references": [], "startTime": st + 100, "duration": int(lat * 1e6),
              "tags": [{"key": "span.kind", "type": "string", "value": "client"}, {"key": "error", "type": "bool", "value": err}],
              "logs": [], "processID": "p2", "warnings": None},
             {"traceID": tid, "spanID": hexid(16), "operationName": "HTTP GET /dispatch", "references": [], "startTime": st, "duration": int(lat * 1e6) + 300,
              "tags": [{"key": "span.kind", "type": "string", "value": "server"}, {"key": "http.status_code", "type": "int64", "value": 503 if err else 200}],
              "logs": [], "processID": "p1", "warnings": None}]
    data.append({"traceID": tid, "spans": spans, "processes": {"p1": {"serviceName": "frontend", "tags": [{"key": "hostname", "type": "string", "value": "frontend-1"}]},
                                                                  "p2": {"serviceName": "redis", "tags": [{"key": "hostname", "type": "string", "value": "redis-1"}]}}, "warnings": None})
open("jaeger.json", "w").write(json.dumps({"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}) + "\n")

# Envoy access log, default format, lines written at completion (so not sorted by start).
lines = []
for (t, lat, err) in calls:
    ms = int(lat * 1000)
    start = T0 + t
    import datetime
    st = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(start * 1000) % 1000:03d}Z"
    if err and random.random() < 0.3:
        code, flags, ms, up = 503, "UO", 0, "-"   # Envoy's own breaker: max pending requests
    elif err:
        code, flags, up = 503, random.choice(["UF,URX", "UH", "UT"]), "-"
    else:
        code, flags, up = 200, "-", str(max(ms - 1, 0))
    lines.append((start + lat, f'[{st}] "POST /hipstershop.CurrencyService/Convert HTTP/2" {code} {flags} 52 {0 if err else 31} {ms} {up} "10.4.0.12" "grpc-go/1.59.0" "{hexid(8)}-{hexid(4)}-{hexid(4)}-{hexid(4)}-{hexid(12)}" "currencyservice:7000" "{"10.4.1.7:7000" if not err else "-"}"'))
lines.sort()
open("envoy-access.log", "w").write("".join(l + "\n" for _, l in lines))

# HAR 1.2 (browser "Save all as HAR"): a page polling an API, which fails for a while.
entries = []
for k in range(120):
    t = k * 1.5
    down = 60 <= t < 100
    ms = round(random.uniform(900, 1500), 3) if down else round(random.lognormvariate(3.5, 0.3), 3)
    st = T0 + t
    stamp = datetime.datetime.fromtimestamp(st, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(round(st * 1000)) % 1000:03d}Z"
    url = "https://api.shop.example/v1/cart" if k % 4 else "https://cdn.shop.example/app.js"
    status = (502 if down and k % 4 else 200)
    entries.append({"pageref": "page_1", "startedDateTime": stamp, "time": ms,
                    "request": {"method": "GET", "url": url, "httpVersion": "HTTP/2", "cookies": [], "headers": [], "queryString": [], "headersSize": -1, "bodySize": 0},
                    "response": {"status": status, "statusText": "", "httpVersion": "HTTP/2", "cookies": [], "headers": [], "content": {"size": 0, "mimeType": "application/json"}, "redirectURL": "", "headersSize": -1, "bodySize": -1},
                    "cache": {}, "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": ms, "receive": 0}})
har = {"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "126.0"}, "browser": {"name": "Firefox", "version": "126.0"},
               "pages": [{"startedDateTime": entries[0]["startedDateTime"], "id": "page_1", "title": "Cart", "pageTimings": {}}], "entries": entries}}
open("shop.har", "w").write(json.dumps(har, indent=2) + "\n")
