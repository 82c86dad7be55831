#!/usr/bin/env python3
"""Seeded call traces for the conformance suite: `t_ms,latency_ms,ok`, one row per call.

sequential: one caller, back-to-back: a call starts when the previous one returned, or after a
    pause; about half the calls start at exactly the previous row's t_ms + latency_ms (the
    same-instant case every library must order the same way).
concurrent: open-loop Poisson arrivals that do not wait for each other, so calls overlap, hang
    past the libraries' call timeouts and return late. No two completions share a millisecond
    (timeouts included, for the call timeouts given), so their order is never a tie; an arrival
    may share its millisecond with a completion (results come first).
edge: the edges of time, in segments laid one after another (each kind once, in a seeded order,
    then at random): storms (30-60 calls a second for 2-7 minutes with failure phases from 2 % to
    100 %, enough volume for cockatiel's SamplingBreaker at its defaults), bursts (2-31 calls in
    one millisecond, often with one latency, so their results share a millisecond too, and a
    second burst arriving at that very millisecond), trips (5-8 failures back to back) followed
    by calls at exactly each cooldown after each failure's completion, one millisecond before and
    one after (and again after some of the probes that failed), latencies at, one off and within
    40 ms of every timeout and slow-call threshold, silences from 2 seconds to 3 hours (some
    exactly a cooldown long, at least one of an hour or more), each ended by a lone call, and
    quiet traffic. Ties everywhere: arrivals with arrivals, results with results, arrivals with
    results and with timeout instants.

sequential and concurrent lay out every incident kind of breakerlab's scenarios at least once
(outage, hang, blip, brownout, slowdown, flapping, ramp, rate_limit), then more at random. Same
arguments, same bytes.
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


def healthy(rng):
    """A healthy latency (ms): log-normal, median 80 ms."""
    return max(1, int(rng.lognormvariate(math.log(80), 0.5)))


def storm(rng, t, rows, _):
    """30-60 calls a second for 2-7 minutes; the failure share changes every 15-45 s."""
    end = t + rng.randint(120, 420) * 1000
    rate = rng.uniform(30, 60)
    phase_end, p = t, 0.0
    while t < end:
        if t >= phase_end:
            phase_end = t + rng.randint(15, 45) * 1000
            p = rng.choice([0.02, 0.1, 0.3, 0.5, 0.9, 1.0])
        for _ in range(rng.randint(2, 31) if rng.random() < 0.01 else 1):
            rows.append((t, max(1, int(rng.lognormvariate(math.log(8), 0.6))), rng.random() >= p))
        t += int(rng.expovariate(rate / 1000.0))
    return t


def burst(rng, t, rows, _):
    """2-31 calls in one millisecond; with one latency their results share a millisecond, and a
    second burst may arrive exactly then."""
    lat = rng.randint(1, 200)
    for _ in range(2):
        n, kind = rng.randint(2, 31), rng.choice(["fail", "ok", "mixed", "spread"])
        for _ in range(n):
            ok = kind == "ok" or (kind != "fail" and rng.random() < 0.5)
            rows.append((t, healthy(rng) if kind == "spread" else lat, ok))
        if rng.random() < 0.5:
            break
        t += lat
    return t + lat + rng.randint(0, 3000)


def trip(rng, t, rows, a):
    """5-8 failures back to back, then calls at each failure's completion + every cooldown, one
    ms before and one after; about a third of the failed calls there get calls of their own at
    their completion + every cooldown."""
    ends = []
    for _ in range(rng.randint(5, 8)):
        lat = rng.randint(1, 60)
        rows.append((t, lat, False))
        t += lat
        ends.append(t)
    probes = sorted({e + c + d for e in ends for c in a.cooldowns for d in (-1, 0, 1)})
    last = t
    for p in probes:
        lat, ok = rng.randint(1, 40), rng.random() < 0.6
        rows.append((p, lat, ok))
        if not ok and rng.random() < 0.3:
            for c in a.cooldowns:
                rows.append((p + lat + c, rng.randint(1, 40), rng.random() < 0.6))
                last = max(last, p + lat + c)
        last = max(last, p + lat)
    return last + rng.randint(0, 5000)


def near_timeouts(rng, t, rows, a):
    """Latencies at, one off and within 40 ms of every timeout and slow-call threshold; the next
    call starts at the previous one's result, at its timeout instant, or while it is running.
    Some calls come with a twin (same start, over the limit: two timeouts in one millisecond) or
    a partner started later whose result lands exactly at the limit (a result meeting a timeout)."""
    for _ in range(rng.randint(8, 20)):
        limit = rng.choice(a.limits)
        lat = limit + rng.choice([-1, 0, 1, rng.randint(-40, 40)])
        rows.append((t, lat, rng.random() < 0.7))
        pick = rng.random()
        if pick < 0.2:
            rows.append((t, limit + rng.randint(0, 40), rng.random() < 0.5))
        elif pick < 0.4:
            start = rng.randint(1, limit - 1)
            rows.append((t + start, limit - start, rng.random() < 0.5))
        t += rng.choice([lat, limit, rng.randint(1, 2000)])
    return t + max(a.limits)


def silence(rng, t, rows, a):
    """Nothing for 2 s to 3 h (sometimes exactly a cooldown, or one ms off it), then a lone call
    (half the time a failure)."""
    pick = rng.random()
    if pick < 0.2:
        gap = rng.choice(a.cooldowns) + rng.choice([-1, 0, 1])
    elif pick < 0.5:
        gap = rng.randint(1_800, 3 * 3_600) * 1000
    else:
        gap = int(math.exp(rng.uniform(math.log(2_000), math.log(3 * 3_600_000))))
    t += gap
    rows.append((t, rng.randint(1, 100), rng.random() < 0.5))
    return t + rng.randint(100, 5000)


def quiet(rng, t, rows, _):
    """1-5 minutes of one caller at about 1 call a second, 2 % failures, often back to back."""
    end = t + rng.randint(60, 300) * 1000
    while t < end:
        lat = healthy(rng)
        rows.append((t, lat, rng.random() >= 0.02))
        t += lat + (0 if rng.random() < 0.5 else int(rng.expovariate(1 / 1000.0)))
    return t


SEGMENTS = {"storm": storm, "burst": burst, "trip": trip, "near_timeouts": near_timeouts,
            "silence": silence, "quiet": quiet}
WEIGHTS = {"storm": 2, "burst": 3, "trip": 3, "near_timeouts": 2, "silence": 3, "quiet": 2}


def edge(rng, span_ms, a):
    """Segments until span_ms: each kind once (a silence of an hour or more among them), then at
    random by WEIGHTS. Rows sorted by t_ms, ties kept in the order they were made."""
    rows, t = [], 0
    order = list(SEGMENTS)
    rng.shuffle(order)
    rows.append((0, 1, True))
    t = rng.randint(3_600, 2 * 3_600) * 1000  # the long silence
    while t < span_ms:
        kind = order.pop() if order else rng.choices(list(WEIGHTS), list(WEIGHTS.values()))[0]
        t = SEGMENTS[kind](rng, t, rows, a)
    rows.sort(key=lambda r: r[0])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["sequential", "concurrent", "edge"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--cooldowns-ms", default="4000,5000,10000,12500,15000,20000,30000,60000",
                    help="edge: open durations whose boundaries the trips aim at")
    ap.add_argument("--limits-ms", default="1000,3000,5000,8000,10000,60000",
                    help="edge: timeouts and slow-call thresholds the latencies crowd around")
    ap.add_argument("--rate", type=float, default=1.0, help="concurrent arrivals per second")
    ap.add_argument("--timeouts-ms", default="3000,5000,10000",
                    help="call timeouts whose instants must not meet another completion")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    span = int(a.hours * 3_600_000)
    if a.mode == "edge":
        a.cooldowns = [int(x) for x in a.cooldowns_ms.split(",") if x]
        a.limits = [int(x) for x in a.limits_ms.split(",") if x]
        rows = edge(rng, span, a)
    elif a.mode == "sequential":
        rows = sequential(rng, span, incidents(rng, span))
    else:
        timeouts = [int(x) for x in a.timeouts_ms.split(",") if x]
        rows = concurrent(rng, span, incidents(rng, span), a.rate, timeouts)
    with open(a.out, "w") as f:
        f.write("t_ms,latency_ms,ok\n")
        for t, lat, ok in rows:
            f.write(f"{t},{lat},{int(ok)}\n")


if __name__ == "__main__":
    main()
