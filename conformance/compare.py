#!/usr/bin/env python3
"""Compares a library's replay (drive_py.py / drive.mjs output) with breakerlab's scripted run.

    compare.py LIB_CALLS LIB_TRANSITIONS BREAKERLAB_OUT_DIR

Prints one JSON object: transitions matched/total (a transition matches when the other side made
the same change at the same millisecond; total is the larger side), calls matched/total (per
script row: both admitted at the same millisecond, or both refused at the same millisecond, which
for a call that waited is when its wait ended), how often the library entered each state
(`entered`: open, half_open, closed) and the first differences.
"""
import csv
import json
import sys
from collections import Counter


def ms(us):
    us = int(us)
    return us // 1000 if us % 1000 == 0 else us / 1000


def main():
    lib_calls, lib_tr, out = sys.argv[1:4]
    with open(lib_calls) as f:
        lib = [(int(r["admitted"]), int(r["at_ms"])) for r in csv.DictReader(f)]
    with open(f"{out}/calls.csv") as f:
        ours = [(int(r["admitted"]), ms(r["start_us"] if r["admitted"] == "1" else r["end_us"]))
                for r in csv.DictReader(f)]
    with open(lib_tr) as f:
        lib_t = [(int(r["t_ms"]), r["from"], r["to"]) for r in csv.DictReader(f)]
    with open(f"{out}/transitions.csv") as f:
        our_t = [(ms(r["at_us"]), r["from"], r["to"]) for r in csv.DictReader(f)]
    common = Counter(lib_t) & Counter(our_t)
    t_matched = sum(common.values())
    t_total = max(len(lib_t), len(our_t))
    rows = min(len(lib), len(ours))
    a_matched = sum(1 for i in range(rows) if lib[i] == ours[i])
    diffs = [f"row {i}: library {lib[i]}, breakerlab {ours[i]}" for i in range(rows) if lib[i] != ours[i]][:3]
    only_lib = sorted((Counter(lib_t) - common).elements())[:3]
    only_ours = sorted((Counter(our_t) - common).elements())[:3]
    print(json.dumps({
        "transitions": [t_matched, t_total],
        "calls": [a_matched, max(len(lib), len(ours))],
        "calls_differ": diffs,
        "transitions_only_library": only_lib,
        "transitions_only_breakerlab": only_ours,
        "entered": {state: sum(1 for _, _, to in lib_t if to == state) for state in ("open", "half_open", "closed")},
    }))


if __name__ == "__main__":
    main()
