#!/usr/bin/env python3
"""artemis_perf_json.py PREFIX: mqbench's --json keys (tps, total) in
PREFIX.json from `artemis perf producer --json` (PREFIX.perf.json: a list of
per-interval rates, each "warmup" true or false, then a summary) and the
measured window of scripts/bench/peers.sh (PREFIX.window, "start end" in
epoch seconds). TPS is the mean completed rate of the measured intervals that
ended inside the window, total that rate times the window's length. No P99:
at --max-pending 1 its send times leave out the wait for the acknowledgement
(PEERS-NOTES.md). Standard library only."""
import json
import sys


def main() -> int:
    prefix = sys.argv[1]
    try:
        with open(prefix + ".perf.json", encoding="utf-8") as f:
            samples = json.load(f)
        with open(prefix + ".window", encoding="utf-8") as f:
            t0, t1 = (float(x) * 1000 for x in f.read().split())
    except (OSError, ValueError) as e:
        print(f"artemis_perf_json.py: {prefix}: {e}", file=sys.stderr)
        samples, t0, t1 = [], 0.0, 0.0
    msgs = span = 0.0
    prev = None
    for s in samples:
        if s.get("sampleType") != "interval":
            continue
        if prev is not None and not s.get("warmup") and t0 < s["time"] <= t1:
            msgs += s["completed"] * (s["time"] - prev) / 1000
            span += (s["time"] - prev) / 1000
        prev = s["time"]
    tps = msgs / span if span else 0.0
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        f.write(json.dumps({"tps": round(tps, 1), "total": round(tps * (t1 - t0) / 1000)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
