#!/usr/bin/env python3
"""Seeded call traces for the conformance suite: `t_ms,latency_ms,ok`, one row per call.

sequential: one caller, back-to-back: a call starts when the previous one returned, or after a
    pause; about half the calls start at exactly the previous row's t_ms + latency_ms (the
    same-instant case every library must order the same way).
concurrent: open-loop Poisson arrivals that do not wait for each other, so calls overlap, hang
    past the libraries' call timeouts and return late. No two completions share a millisecond
    (timeouts included, for the call timeouts given), so their order is never a tie; an arrival
    may share its millisecond with a completion (results come first).

Every incident kind of breakerlab's scenarios is laid out at least once (outage, hang, blip,
brownout, slowdown, flapping, ramp, rate_limit), then more at random. Same arguments, same bytes.
"""
import argparse
import math
import random

KINDS = ["outage", "hang", "blip", "brownout", "slowdown", "flapping", "ramp", "rate_limit"]
DURATION_S = {
    "outage": (120, 900), "hang": (60, 300), "blip": (5, 30), "brownout": (300, 900),
    "slowdown": (120, 600), "flapping": (180, 600), "ramp": (300, 900), "rate_limit": (60, 300),
}


def incidents(rng, span_ms):
    """(start_ms, end_ms, kind): each kind once in the first half, then random ones."""
    out, t = [], 600_000
    order = KINDS[:]
    rng.shuffle(order)
    while t < span_ms:
        kind = order.pop() if order else rng.choice(KINDS)
        lo, hi = DURATION_S[kind]
        dur = rng.randint(lo, hi) * 1000
        out.append((t, min(t + dur, span_ms), kind))
        t += dur + rng.randint(600, 3600) * 1000
    return out


def answer(rng, t, active):
    """(latency_ms, ok) for a call starting at t_ms."""
    lat = max(1, int(rng.lognormvariate(math.log(80), 0.5)))
    ok = rng.random() >= 0.01
    for start, end, kind in active:
        if not start <= t < end:
            continue
        phase = (t - start) / (end - start)
        if kind == "outage":
            return (rng.randint(20, 80), False) if rng.random() < 0.8 else (rng.randint(10_000, 30_000), False)
        if kind == "hang":
            return rng.randint(8_000, 40_000), False
        if kind == "blip":
            return (rng.randint(5, 50), rng.random() >= 0.9)
        if kind == "brownout":
            return lat, rng.random() >= 0.3
        if kind == "slowdown":
            return lat * rng.randint(5, 60), ok
        if kind == "flapping":
            bad = ((t - start) // 20_000) % 2 == 1
            return (rng.randint(5, 50), rng.random() >= 0.9) if bad else (lat, ok)
        if kind == "ramp":
            return lat, rng.random() >= phase
        if kind == "rate_limit":
            return (rng.randint(2, 20), False) if rng.random() < 0.6 else (lat, ok)
    return lat, ok


def sequential(rng, span_ms, active):
    rows, t = [], 0
    while t < span_ms:
        lat, ok = answer(rng, t, active)
        rows.append((t, lat, ok))
        t += lat
        if rng.random() >= 0.5:
            t += int(rng.expovariate(1 / 1500.0))
    return rows


def concurrent(rng, span_ms, active, rate, timeouts):
    rows, used, t = [], set(), 0
    while True:
        t += int(rng.expovariate(rate / 1000.0))
        if t >= span_ms:
            return rows
        lat, ok = answer(rng, t, active)
        while True:
            ends = {t + lat} | {t + x for x in timeouts if lat >= x}
            if not ends & used:
                break
            # A longer latency cannot move a timeout's instant (t + timeout), so a clash there
            # moves the arrival; a clash of the result alone lengthens the call.
            if any(t + x in used for x in timeouts if lat >= x):
                t += 1
            else:
                lat += 1
        used |= ends
        rows.append((t, lat, ok))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["sequential", "concurrent"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--rate", type=float, default=1.0, help="concurrent arrivals per second")
    ap.add_argument("--timeouts-ms", default="3000,5000,10000",
                    help="call timeouts whose instants must not meet another completion")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    span = int(a.hours * 3_600_000)
    active = incidents(rng, span)
    if a.mode == "sequential":
        rows = sequential(rng, span, active)
    else:
        rows = concurrent(rng, span, active, a.rate, [int(x) for x in a.timeouts_ms.split(",") if x])
    with open(a.out, "w") as f:
        f.write("t_ms,latency_ms,ok\n")
        for t, lat, ok in rows:
            f.write(f"{t},{lat},{int(ok)}\n")


if __name__ == "__main__":
    main()
