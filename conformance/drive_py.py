#!/usr/bin/env python3
"""Replays a trace through a real Python breaker library under a fake clock.

    drive_py.py pybreaker|circuitbreaker TRACE --calls OUT.csv --transitions OUT.csv [options]

Events run in breakerlab's order: at one millisecond, results first (in the order their calls
were admitted), then arrivals in trace order. Each admitted call returns at t + latency.
Writes `calls`: `t_ms,admitted,at_ms` (at_ms: when the call began to run, or when it was
refused; later than t_ms when it waited for pybreaker's lock) and `transitions`: `t_ms,from,to`, observed after every
library call and whenever the library itself reads its state.
"""
import argparse
import csv
import datetime as real_datetime
import heapq

CLOCK = [0]  # trace milliseconds


def normalise(state):
    return {"closed": "closed", "open": "open", "half-open": "half_open", "half_open": "half_open"}[state]


class Recorder:
    def __init__(self, read_state):
        self.read_state = read_state
        self.last = "closed"
        self.transitions = []

    def observe(self):
        now = normalise(self.read_state())
        if now != self.last:
            self.transitions.append((CLOCK[0], self.last, now))
            self.last = now


class Outcome(Exception):
    """The failure a guarded call raises."""


def load(path):
    with open(path) as f:
        return [(int(r["t_ms"]), int(r["latency_ms"]), r["ok"] == "1") for r in csv.DictReader(f)]


def run_events(rows, arrive, complete):
    """Arrivals in trace order, completions from a heap keyed (time, admission order)."""
    pending, seq = [], 0
    i = 0
    while i < len(rows) or pending:
        if pending and (i >= len(rows) or pending[0][0] <= rows[i][0]):
            at, _, handle, ok = heapq.heappop(pending)
            CLOCK[0] = at
            complete(handle, ok)
            continue
        t, lat, ok = rows[i]
        CLOCK[0] = t
        handle = arrive(i)
        if handle is not None:
            heapq.heappush(pending, (t + lat, seq, handle, ok))
            seq += 1
        i += 1


def drive_pybreaker(a, rows, calls):
    import pybreaker

    class FakeDatetime(real_datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            base = real_datetime.datetime(2024, 1, 1, tzinfo=real_datetime.timezone.utc)
            return base + real_datetime.timedelta(milliseconds=CLOCK[0])

    pybreaker.datetime = FakeDatetime
    if a.config:
        # A file `breakerlab export --as pybreaker` wrote (recommended.py): run as Python, so
        # pybreaker's own constructor reads it; it binds `breaker`.
        scope = {}
        with open(a.config) as f:
            exec(compile(f.read(), a.config, "exec"), scope)
        breaker = scope["breaker"]
    else:
        breaker = pybreaker.CircuitBreaker(
            fail_max=a.fail_max, reset_timeout=a.reset_timeout, success_threshold=a.success_threshold)
    rec = Recorder(lambda: breaker.current_state)

    if a.serialize:
        # breaker.call() holds the lock for the whole call: one call at a time, in arrival order.
        free_at = 0
        for i, (t, lat, ok) in enumerate(rows):
            CLOCK[0] = max(t, free_at)
            start = CLOCK[0]

            def guarded():
                rec.observe()  # open -> half-open happened inside call(), at the start
                calls[i] = (1, start)
                CLOCK[0] = start + lat
                if not ok:
                    raise Outcome()

            try:
                breaker.call(guarded)
            except pybreaker.CircuitBreakerError:
                # Refused, unless the call ran and its failure tripped the breaker (pybreaker
                # raises CircuitBreakerError from the call that opens it).
                if not calls[i][0]:
                    calls[i] = (0, CLOCK[0])
            except Outcome:
                pass
            rec.observe()
            free_at = CLOCK[0]
        return rec

    # `with breaker.calling():` runs the block outside the lock: calls overlap.
    def arrive(i):
        cm = breaker.calling()
        try:
            cm.__enter__()
        except pybreaker.CircuitBreakerError:
            rec.observe()
            return None
        rec.observe()
        calls[i] = (1, CLOCK[0])
        return cm

    def complete(cm, ok):
        try:
            if ok:
                cm.__exit__(None, None, None)
            else:
                e = Outcome()
                cm.__exit__(Outcome, e, None)
        except (Outcome, pybreaker.CircuitBreakerError):
            pass
        rec.observe()

    run_events(rows, arrive, complete)
    return rec


def drive_circuitbreaker(a, rows, calls):
    import circuitbreaker

    circuitbreaker.monotonic = lambda: CLOCK[0] / 1000.0
    breaker = circuitbreaker.CircuitBreaker(
        failure_threshold=a.failure_threshold, recovery_timeout=a.recovery_timeout, name="conformance")
    rec = Recorder(lambda: breaker.state)
    outcome = {}

    @breaker
    def guarded(key):
        yield  # the call is in flight until the driver resumes it
        if not outcome.pop(key):
            raise Outcome()

    def arrive(i):
        rec.observe()  # the decorator reads the (derived) state first
        it = guarded(i)
        try:
            next(it)
        except circuitbreaker.CircuitBreakerError:
            rec.observe()
            return None
        calls[i] = (1, CLOCK[0])
        rec.observe()
        return (i, it)

    def complete(handle, ok):
        key, it = handle
        outcome[key] = ok
        try:
            next(it)
        except (StopIteration, Outcome):
            pass
        rec.observe()

    run_events(rows, arrive, complete)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("impl", choices=["pybreaker", "circuitbreaker"])
    ap.add_argument("trace")
    ap.add_argument("--calls", required=True)
    ap.add_argument("--transitions", required=True)
    ap.add_argument("--fail-max", type=int, default=5)
    ap.add_argument("--reset-timeout", type=float, default=60)
    ap.add_argument("--success-threshold", type=int, default=1)
    ap.add_argument("--serialize", type=int, default=1, help="pybreaker: 1 = call() (lock), 0 = calling()")
    ap.add_argument("--config", help="pybreaker: a file `breakerlab export --as pybreaker` wrote, instead of the flags")
    ap.add_argument("--failure-threshold", type=int, default=5)
    ap.add_argument("--recovery-timeout", type=float, default=30)
    a = ap.parse_args()
    rows = load(a.trace)
    calls = [(0, t) for t, _, _ in rows]
    drive = drive_pybreaker if a.impl == "pybreaker" else drive_circuitbreaker
    rec = drive(a, rows, calls)
    with open(a.calls, "w") as f:
        f.write("t_ms,admitted,at_ms\n")
        for (t, _, _), (adm, at) in zip(rows, calls):
            f.write(f"{t},{adm},{at}\n")
    with open(a.transitions, "w") as f:
        f.write("t_ms,from,to\n")
        for t, fr, to in rec.transitions:
            f.write(f"{t},{fr},{to}\n")


if __name__ == "__main__":
    main()
