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
