#!/usr/bin/env python3
"""Writes pods.csv: a synthetic per-call log of one client calling a service of three pods
(pod-a, pod-b, pod-c) behind round robin, 20 calls a second for 10 minutes from
2024-06-01T12:00:00Z. Latency is lognormal (median 40 ms, p95 about 90 ms); 0.2 % of calls fail
at random on every pod. pod-b fails every call it gets (503 after 5 ms) from minute 4 to
minute 6 (t = 240 s to 360 s): the pod an outlier detector should eject. Columns: timestamp
(epoch milliseconds), pod, latency_ms, status. Run: python3 make_pods.py (deterministic)."""
import math, random

random.seed(34)
T0_MS = 1717243200000
PODS = ["pod-a", "pod-b", "pod-c"]
CALLS = 20 * 600
with open("pods.csv", "w") as f:
    f.write("timestamp,pod,latency_ms,status\n")
    for i in range(CALLS):
        t_ms = T0_MS + i * 50 + random.randint(0, 9)
        pod = PODS[i % 3]
        s = (t_ms - T0_MS) / 1000
        if pod == "pod-b" and 240 <= s < 360:
            latency, status = 5, 503
        else:
            latency = max(1, round(40 * math.exp(0.5 * random.gauss(0, 1))))
            status = 500 if random.random() < 0.002 else 200
        f.write(f"{t_ms},{pod},{latency},{status}\n")
