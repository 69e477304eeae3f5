#!/usr/bin/env python3
"""artemis_perf_json.py PREFIX: the measured window of one `artemis perf
producer --json` run for scripts/bench/peers.sh. Reads PREFIX.perf.json (a
list of per-interval rates, each "warmup" true or false, and a summary) and
PREFIX.ticks ("EPOCH_SECONDS NAME TICKS" lines: each server's utime+stime,
sampled while the tool ran). The window runs from the end of the last
warm-up interval to the end of the last measured one, so the tool's start,
warm-up and shutdown stay out of it. Writes PREFIX.json (mqbench's keys:
tps, total: the completed messages of the window) and PREFIX.cpu ("NAME
BEFORE AFTER", each server's ticks interpolated at the window's ends). No
P99: at --max-pending 1 its send times leave out the wait for the
acknowledgement (PEERS-NOTES.md). Standard library only."""
import json
import sys
from collections import defaultdict


def window(samples):
    """(start, end, completed messages) of the measured intervals, ms."""
    start = end = prev = None
    msgs = 0.0
    for s in samples:
        if s.get("sampleType") != "interval":
            continue
        if prev is not None and not s.get("warmup"):
            start = prev if start is None else start
            end = s["time"]
            msgs += s["completed"] * (s["time"] - prev) / 1000
        prev = s["time"]
    return start, end, msgs


def ticks_at(series, t):
    """A server's ticks at time t (ms), interpolated between its samples."""
    before = [p for p in series if p[0] <= t]
    after = [p for p in series if p[0] >= t]
    if not before or not after:
        return None
    (t0, v0), (t1, v1) = before[-1], after[0]
    return v0 if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def main() -> int:
    prefix = sys.argv[1]
    try:
        with open(prefix + ".perf.json", encoding="utf-8") as f:
            samples = json.load(f)
    except (OSError, ValueError) as e:
        print(f"artemis_perf_json.py: {prefix}.perf.json: {e}", file=sys.stderr)
        samples = []
    start, end, msgs = window(samples)
    series = defaultdict(list)
    try:
        with open(prefix + ".ticks", encoding="utf-8") as f:
            for line in f:
                t, name, v = line.split()
                series[name].append((float(t) * 1000, int(v)))
    except (OSError, ValueError) as e:
        print(f"artemis_perf_json.py: {prefix}.ticks: {e}", file=sys.stderr)
    span = (end - start) / 1000 if start is not None and end > start else 0
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        f.write(json.dumps({"tps": round(msgs / span, 1) if span else 0, "total": round(msgs)}) + "\n")
    with open(prefix + ".cpu", "w", encoding="utf-8") as f:
        for name, s in sorted(series.items()):
            a, b = (ticks_at(s, start), ticks_at(s, end)) if span else (None, None)
            if a is not None and b is not None:
                f.write(f"{name} {round(a)} {round(b)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
