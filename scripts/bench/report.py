#!/usr/bin/env python3
"""report.py RESULTS_DIR: turns the raw outputs scripts/bench.sh left in
RESULTS_DIR/stageN/ into RESULTS_DIR/report.md (markdown tables, targets, the
exact commands) and RESULTS_DIR/results.json (the same figures as data).

Inputs per run PREFIX: PREFIX.out (mqbench stdout, every line prefixed with
the wall-clock time), PREFIX.json (mqbench --json), PREFIX.rc. Standard
library only."""
import csv
import json
import os
import re
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "."

# ---- loading -------------------------------------------------------------------

LINE = re.compile(r"^(\d+(?:\.\d+)?) (.*)$")
NUM = r"([0-9.]+)"


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_run(prefix):
    """One mqbench run: final JSON, per-second series, [Complete] fields, rc."""
    run = {"json": load_json(prefix + ".json"), "series": [], "complete": {}, "rc": None}
    rc = read(prefix + ".rc").strip()
    run["rc"] = int(rc) if rc.lstrip("-").isdigit() else None
    last_t = None
    for raw in read(prefix + ".out").splitlines():
        m = LINE.match(raw)
        if not m:
            continue
        t, text = float(m.group(1)), m.group(2)
        prev_t, last_t = last_t, t
        if text.startswith("[Complete]"):
            for k, v in re.findall(r"([A-Za-z()0-9 ]+?): ([0-9.]+)", text[len("[Complete]"):]):
                run["complete"][k.strip()] = float(v)
            run["complete_t"] = t
            continue
        ms = re.match(r"Send TPS: (\d+) Max RT\(ms\): (\d+) Average RT\(ms\): +" + NUM +
                      r" Send Failed: (\d+) Response Failed: (\d+)", text)
        if ms:
            run["series"].append({"t": t, "pt": prev_t, "tps": int(ms.group(1)), "avg": float(ms.group(3)),
                                  "failed": int(ms.group(4)) + int(ms.group(5))})
            continue
        mc = re.match(r"TPS: (\d+) FAIL: (\d+) AVG\(B2C\) RT\(ms\): +" + NUM +
                      r" AVG\(S2C\) RT\(ms\): +" + NUM, text)
        if mc:
            run["series"].append({"t": t, "pt": prev_t, "tps": int(mc.group(1)), "failed": int(mc.group(2)),
                                  "b2c": float(mc.group(3)), "s2c": float(mc.group(4))})
    if run["json"] is None and not run["series"]:
        return None
    # messages in each line's window: TPS times the time since the previous
    # line (mqbench divides by the window's real length, a little over 1 s)
    for s in run["series"]:
        dt = (s["t"] - s["pt"]) if s["pt"] is not None else 1.0
        # 1 s when the previous stamp is no guide (a header flushed with this line)
        s["n"] = s["tps"] * (dt if 0.9 <= dt <= 3.0 else 1.0)
    return run


def jget(run, key, default=None):
    if not run or not run.get("json"):
        return default
    return run["json"].get(key, default)


def failures(run):
    if not run or not run.get("json"):
        return None
    return int(jget(run, "send_failed", 0)) + int(jget(run, "response_failed", 0))


def notes(stage):
    d = {}
    for line in read(os.path.join(OUT, stage, "notes.tsv")).splitlines():
        if "\t" in line:
            k, v = line.split("\t", 1)
            d[k] = v
    return d


def redis_csv(path):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                rows.append(r)
    except OSError:
        return None
    if not rows:
        return None
    r = rows[-1]
    out = {"test": r.get("test")}
    for k in ("rps", "avg_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms",
              "max_latency_ms"):
        try:
            out[k] = float(r[k])
        except (KeyError, TypeError, ValueError):
            out[k] = None
    return out

def clk_tck(d):
    """The unit of the stage's .cpu files (bk_stage_begin wrote getconf CLK_TCK)."""
    return float(read(os.path.join(d, "clk_tck")).strip() or 100)


def broker_cpu(prefix, tck):
    """{name: CPU seconds} of each broker over the run (PREFIX.cpu of bk_cpu_around)."""
    out = {}
    for line in read(prefix + ".cpu").splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit() and f[2].isdigit():
            out[f[0]] = (int(f[2]) - int(f[1])) / tck
    return out


def us_per_msg(cpu_s, acked):
    return cpu_s * 1e6 / acked if acked else None

# ---- formatting ----------------------------------------------------------------


def fnum(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def fpct(v):
    return "–" if v is None else f"{v * 100:.3f}%"


def ratio(a, b):
    if a is None or not b:
        return None
    return a / b


def fratio(r):
    return "–" if r is None else f"{r:.2f}x"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def active_rate(run):
    """Total / seconds in which something happened (first to last busy line)."""
    if not run or not run["series"]:
        return None
    busy = [i for i, s in enumerate(run["series"]) if s["tps"] > 0]
    if not busy:
        return 0.0
    secs = run["series"][busy[-1]]["t"] - run["series"][busy[0]]["t"] + 1.0
    total = sum(s["n"] for s in run["series"][busy[0]:busy[-1] + 1])
    return total / secs if secs > 0 else None


R = {"meta": load_json(os.path.join(OUT, "meta.json")) or {}}
md = []
meta = R["meta"]
md.append(f"# rmq benchmark report {meta.get('timestamp', '')}\n")
md.append(table(["", ""], [
    ["command", f"`{meta.get('command', '')}`"],
    ["mode", meta.get("mode", "")],
    ["stages", meta.get("stages", "")],
    ["git", meta.get("git", "")],
    ["host", f"{meta.get('host', '')}, {meta.get('cpus', '?')} CPUs ({meta.get('cpu_model', '')}), "
             f"{int(meta.get('mem_kb', 0)) // 1048576} GiB"],
    ["build", f"`{meta.get('build', '')}`"],
]))
md.append("All processes run on this one machine on 127.0.0.1: brokers, name server, "
          "benchmark clients and Redis share its CPUs, so every figure is a same-machine "
          "figure. TPS is messages acknowledged per second; RT is the send's round trip.\n")


def stage_dir(n):
    return os.path.join(OUT, f"stage{n}")


def has_stage(n):
    return os.path.isdir(stage_dir(n))


def stage_head(n):
    title = read(os.path.join(stage_dir(n), "title.txt")).strip()
    t0, t1 = read(os.path.join(stage_dir(n), "started")).strip(), read(
        os.path.join(stage_dir(n), "finished")).strip()
    took = f" ({int(t1) - int(t0)} s)" if t0.isdigit() and t1.isdigit() else ""
    md.append(f"\n## Stage {n}: {title}{took}\n")
    load = read(os.path.join(stage_dir(n), "loadavg")).strip()
    if load:
        md.append(f"Load average when the stage started: {load} (other work on the machine "
                  "skews every figure).\n")


def send_row(name, run, cpu_us):
    return [name, fnum(jget(run, "threads")), fnum(jget(run, "size")),
            fnum(jget(run, "batch")), "yes" if jget(run, "async") else "no",
            fnum(jget(run, "tps")), fnum(jget(run, "max_ms"), 1), fnum(jget(run, "avg_ms"), 3),
            fnum(jget(run, "p99_ms"), 3), fnum(failures(run)), fnum(cpu_us, 2)]


SEND_HDR = ["run", "threads", "size B", "batch", "async", "Send TPS", "Max RT ms",
            "Avg RT ms", "P99 ms", "failures", "broker CPU us/msg"]

# ---- stage 1 ---------------------------------------------------------------------

if has_stage(1):
    stage_head(1)
    d = stage_dir(1)
    s1 = {}
    rows = []
    tck = clk_tck(d)
    for key, name in (("base", "base: sync send"), ("async", "async send"),
                      ("async-w4", "async send, 4 threads"),
                      ("autobatch", "async send, auto-batch 32"),
                      ("batch", "batched send (-b 32)"), ("syncflush", "SYNC_FLUSH master"),
                      ("syncflush-pool", "SYNC_FLUSH master, transientStorePoolEnable")):
        run = load_run(os.path.join(d, key))
        if run:
            cpu = broker_cpu(os.path.join(d, key), tck)
            s1[key] = dict(run["json"] or {})
            if cpu:
                s1[key]["cpu_us_per_msg"] = us_per_msg(sum(cpu.values()), jget(run, "total"))
            rows.append(send_row(name, run, s1[key].get("cpu_us_per_msg")))
    md.append(table(SEND_HDR, rows))
    md.append("Broker CPU is broker-a's utime+stime (/proc/PID/stat) over the run divided by the "
              "messages acknowledged (base and -b 32 runs; – where not measured).\n")
    drain = load_run(os.path.join(d, "drain"))
    acked = jget(load_run(os.path.join(d, "base")), "total")
    if drain:
        consumed = jget(drain, "total")
        s1["drain"] = {"acknowledged": acked, "consumed": consumed,
                       "drain_tps": active_rate(drain), "json": drain["json"]}
        md.append("Consumer draining what the base test sent (a new group from the first offset; "
                  "TPS over the seconds it was consuming):\n")
        md.append(table(["acknowledged", "consumed", "Consume TPS (drain)", "failures"],
                        [[fnum(acked), fnum(consumed), fnum(active_rate(drain)),
                          fnum(jget(drain, "response_failed"))]]))
    fio = load_json(os.path.join(d, "fdatasync.fio.json"))
    py = load_json(os.path.join(d, "fdatasync.json"))
    rate = None
    if fio and fio.get("jobs"):
        rate = fio["jobs"][0]["write"].get("iops")
        s1["fdatasync"] = {"tool": "fio", "per_s": rate}
    elif py:
        rate = py.get("fdatasync_per_s")
        s1["fdatasync"] = {"tool": "python3", "per_s": rate}
    if rate is not None:
        md.append(f"Single-writer fdatasync rate of this disk (4 KiB write + fdatasync, "
                  f"{s1['fdatasync']['tool']}): **{fnum(rate)} /s**.\n")
    R["stage1"] = s1

# ---- stage 2 ---------------------------------------------------------------------

if has_stage(2):
    stage_head(2)
    d = stage_dir(2)
    s2 = {}
    threads = meta.get("threads", "").split() + meta.get("extra_threads", "").split()
    for v in ("sync", "async"):
        label = (f"SYNC (SYNC_MASTER + {meta.get('sync_flush') or 'SYNC_FLUSH'})" if v == "sync"
                 else "ASYNC (ASYNC_MASTER + ASYNC_FLUSH)")
        for size in (128, 1024):
            cols, tps, err, p99, avg = [], [], [], [], []
            for w in threads:
                if size != 128 and w in meta.get("extra_threads", "").split():
                    continue
                run = load_run(os.path.join(d, f"{v}-s{size}-w{w}"))
                if not run:
                    continue
                ok = jget(run, "total", 0)
                fl = failures(run) or 0
                e = fl / (ok + fl) if ok + fl else None
                s2[f"{v}-s{size}-w{w}"] = dict(run["json"] or {}, error_rate=e)
                cols.append(w)
                tps.append(fnum(jget(run, "tps")))
                err.append(fpct(e))
                p99.append(fnum(jget(run, "p99_ms"), 3))
                avg.append(fnum(jget(run, "avg_ms"), 3))
            if cols:
                md.append(f"**{label}, {size} B** (threads across):\n")
                md.append(table(["threads"] + cols, [["Send TPS"] + tps, ["error rate"] + err,
                                                      ["P99 ms"] + p99, ["Avg RT ms"] + avg]))
    rows = []
    for v in ("sync", "async"):
        run = load_run(os.path.join(d, f"{v}-s524288-w5"))
        if run:
            ok = jget(run, "total", 0)
            fl = failures(run) or 0
            e = fl / (ok + fl) if ok + fl else None
            s2[f"{v}-s524288-w5"] = dict(run["json"] or {}, error_rate=e)
            rows.append([v.upper(), "5", fnum(jget(run, "tps")),
                         fnum((jget(run, "tps") or 0) * 524288 / 1048576, 1), fpct(e),
                         fnum(jget(run, "p99_ms"), 3), fnum(jget(run, "avg_ms"), 3)])
    if rows:
        md.append("**512 KiB at 5 threads:**\n")
        md.append(table(["cluster", "threads", "Send TPS", "MiB/s", "error rate", "P99 ms",
                         "Avg RT ms"], rows))
    n2 = notes("stage2")
    if n2:
        md.append("Replication at the end of each variant (brokerStatus): a slave whose "
                  "commitLogMaxOffset stays 0 while its master's grows, or a master with "
                  "haSlaveCount 0, is not replicating.\n")
        md.append(table(["what", "value"], [[k, v] for k, v in n2.items()]))
        s2["replication"] = n2
    R["stage2"] = s2

# ---- stage 3 ---------------------------------------------------------------------


def window_sum(run, t0, t1):
    return sum(s["n"] for s in run["series"] if t0 < s["t"] <= t1 + 0.5)


if has_stage(3):
    stage_head(3)
    d = stage_dir(3)
    prod = load_run(os.path.join(d, "producer"))
    cons = load_run(os.path.join(d, "consumer"))
    s3 = {}
    if prod and cons and prod["series"]:
        t_start = prod["series"][0]["t"] - 1.0
        t_end = prod.get("complete_t", prod["series"][-1]["t"])
        secs = max(t_end - t_start, 1e-9)
        send_tps = jget(prod, "tps")
        cons_in_window = window_sum(cons, t_start, t_end)
        cons_tps_window = cons_in_window / secs
        cc = cons["complete"]
        s3 = {"send_tps": send_tps, "consume_tps_during_send": cons_tps_window,
              "acknowledged": jget(prod, "total"), "consumed": jget(cons, "total"),
              "send_failures": failures(prod), "b2c_avg_ms": jget(cons, "avg_ms"),
              "b2c_p99_ms": jget(cons, "p99_ms"), "b2c_max_ms": jget(cons, "max_ms"),
              "s2c_avg_ms": jget(cons, "avg_s2c_ms"), "s2c_p99_ms": jget(cons, "p99_s2c_ms"),
              "s2c_max_ms": cc.get("MAX(S2C) RT(ms)")}
        md.append(table(["Send TPS", "Consume TPS (same window)", "acknowledged", "consumed",
                         "send failures", "B2C avg ms", "B2C P99 ms", "B2C max ms",
                         "S2C avg ms", "S2C P99 ms", "S2C max ms"],
                        [[fnum(send_tps), fnum(cons_tps_window), fnum(s3["acknowledged"]),
                          fnum(s3["consumed"]), fnum(s3["send_failures"]),
                          fnum(s3["b2c_avg_ms"], 3), fnum(s3["b2c_p99_ms"], 3),
                          fnum(s3["b2c_max_ms"], 1), fnum(s3["s2c_avg_ms"], 3),
                          fnum(s3["s2c_p99_ms"], 3), fnum(s3["s2c_max_ms"], 1)]]))
        md.append("B2C runs from the producer's born timestamp, S2C from the broker's store "
                  "timestamp, both to the consume callback; the timestamps have 1 ms resolution.\n")
        # backlog over time: acknowledged so far minus consumed so far
        bl = []
        sent = consd = 0
        ci = 0
        cser = cons["series"]
        for s in prod["series"]:
            sent += s["n"]
            while ci < len(cser) and cser[ci]["t"] <= s["t"] + 0.5:
                consd += cser[ci]["n"]
                ci += 1
            bl.append({"t": round(s["t"] - t_start), "sent": round(sent), "consumed": round(consd),
                       "backlog": max(round(sent - consd), 0), "send_tps": s["tps"]})
        diffs = []
        for line in read(os.path.join(d, "backlog.tsv")).splitlines():
            parts = line.split("\t")
            if len(parts) == 2 and parts[1].strip().lstrip("-").isdigit():
                diffs.append((float(parts[0]) - t_start, int(parts[1])))
        s3["backlog"] = bl
        s3["consumer_progress_diff"] = diffs
        step = max(1, len(bl) // 12)
        pick = bl[::step]
        if pick and pick[-1] is not bl[-1]:
            pick.append(bl[-1])

        def diff_at(t):
            near = [v for (tt, v) in diffs if abs(tt - t) <= 1.0]
            return fnum(near[-1]) if near else "–"
        md.append("Backlog over time: acknowledged so far minus consumed so far, from the two "
                  "per-second series (the producer's lines and the consumer's, aligned by their "
                  "time stamps). `consumerProgress` Diff Total is shown too, but it counts from "
                  "the group's committed offsets, which the consumer commits only every few "
                  "seconds, so it saw-tooths:\n")
        md.append(table(["second"] + [str(b["t"]) for b in pick],
                        [["Send TPS"] + [fnum(b["send_tps"]) for b in pick],
                         ["backlog"] + [fnum(b["backlog"]) for b in pick],
                         ["Diff Total (committed)"] + [diff_at(b["t"]) for b in pick]]))
        first, second = bl[:len(bl) // 2], bl[len(bl) // 2:]
        if first and second:
            m1 = max(b["backlog"] for b in first)
            m2 = max(b["backlog"] for b in second)
            s3["backlog_first_half_max"], s3["backlog_second_half_max"] = m1, m2
            s3["backlog_end"] = bl[-1]["backlog"]
            # flat: the second half's peak within 2x the first half's, or under a second of sends
            s3["backlog_flat"] = m2 <= max(2 * m1, send_tps or 0)
            md.append(f"Backlog peak: first half {fnum(m1)}, second half {fnum(m2)} "
                      f"({'flat' if s3['backlog_flat'] else 'GROWING'}).\n")
    # paced runs (scripts/bench/rate.sh): 50% and 80% of the saturated send TPS
    rated = []
    for name, label in (("", "100% (saturated)"), ("rate50-", "50%"), ("rate80-", "80%")):
        rp = load_run(os.path.join(d, f"{name}producer"))
        rc = load_run(os.path.join(d, f"{name}consumer"))
        if not rp or (name and not jget(rp, "rate")):
            continue
        r = {"rate": jget(rp, "rate") or None, "send_tps": jget(rp, "tps"),
             "send_p50_ms": jget(rp, "p50_ms"), "send_p99_ms": jget(rp, "p99_ms"),
             "send_p99_due_ms": jget(rp, "p99_due_ms") if name else None,
             "skipped": jget(rp, "skipped") if name else None,
             "s2c_p50_ms": jget(rc, "p50_s2c_ms"), "s2c_p99_ms": jget(rc, "p99_s2c_ms"),
             "s2c_p999_ms": jget(rc, "p999_s2c_ms"), "failures": failures(rp)}
        if name:
            s3[name.rstrip("-")] = r
        rated.append([label, fnum(r["rate"]) if r["rate"] else "unpaced", fnum(r["send_tps"]),
                      fnum(r["send_p50_ms"], 3), fnum(r["send_p99_ms"], 3),
                      fnum(r["send_p99_due_ms"], 3) if name else "–",
                      fnum(r["skipped"]) if name else "–", fnum(r["s2c_p50_ms"], 3),
                      fnum(r["s2c_p99_ms"], 3), fnum(r["s2c_p999_ms"], 3), fnum(r["failures"])])
    if len(rated) > 1:
        md.append("Paced (`mqbench --rate`: each producer thread its share of the rate on absolute "
                  "deadlines, slots more than 20 ms behind skipped) at 50% and 80% of the saturated "
                  "send TPS, each with a fresh consumer group reading from the end. Send P50/P99 "
                  "run from the send call; \"P99 from due\" from each message's scheduled time, "
                  "skipped slots counted at their lateness (coordinated omission corrected). S2C "
                  "is the broker's store timestamp to the consume callback (1 ms resolution):\n")
        md.append(table(["of saturated", "--rate", "Send TPS", "send P50 ms", "send P99 ms",
                         "send P99 from due ms", "skipped", "S2C P50 ms", "S2C P99 ms",
                         "S2C P999 ms", "failures"], rated))
    R["stage3"] = s3

# ---- stage 4 ---------------------------------------------------------------------

if has_stage(4):
    stage_head(4)
    d = stage_dir(4)
    s4, rows = {}, []
    for w in (64, 256):
        run = load_run(os.path.join(d, f"w{w}"))
        if run:
            s4[f"w{w}"] = run["json"]
            rows.append([str(w), fnum(jget(run, "tps")), fnum(jget(run, "p50_ms"), 3),
                         fnum(jget(run, "p90_ms"), 3), fnum(jget(run, "p99_ms"), 3),
                         fnum(jget(run, "p999_ms"), 3), fnum(jget(run, "max_ms"), 3),
                         fnum(failures(run))])
    md.append(table(["threads", "Send TPS", "P50 ms", "P90 ms", "P99 ms", "P999 ms", "Max ms",
                     "failures"], rows))
    R["stage4"] = s4

# ---- stage 5 ---------------------------------------------------------------------

if has_stage(5):
    stage_head(5)
    d = stage_dir(5)
    prod = load_run(os.path.join(d, "producer"))
    cons = load_run(os.path.join(d, "consumer"))
    every = int(meta.get("durations", {}).get("stability_every", 60))
    rss = {}
    names = []
    for line in read(os.path.join(d, "rss.tsv")).splitlines():
        p = line.split("\t")
        if len(p) != 6:
            continue
        e, n = int(p[0]), p[1]
        if n not in names:
            names.append(n)
        rss.setdefault(e, {})[n] = (int(p[3] or 0), int(p[4] or 0), int(p[5] or 0))
    s5 = {"rss_kb": {str(k): v for k, v in rss.items()}}
    if prod and prod["series"]:
        t0 = prod["series"][0]["t"] - 1.0
        rows = []
        brokers = sorted(n for n in names if n != "namesrv") + (["namesrv"] if "namesrv" in names else [])
        for e in sorted(rss):
            lo, hi = e - every, e
            ps = [s for s in prod["series"] if lo < s["t"] - t0 <= hi]
            cs = [s for s in (cons["series"] if cons else []) if lo < s["t"] - t0 <= hi]
            stps = sum(s["tps"] for s in ps) / len(ps) if ps else None
            ctps = sum(s["tps"] for s in cs) / len(cs) if cs else None
            fails = ps[-1]["failed"] if ps else None
            row = [str(e), fnum(stps), fnum(ctps), fnum(fails)]
            for n in brokers:
                v = rss[e].get(n)
                row.append(f"{v[0] / 1024:.0f} / {v[1] / 1024:.0f}" if v else "–")
            rows.append(row)
        md.append(f"Once every {every} s (TPS averaged over the preceding interval; RSS as "
                  "VmRSS / RssAnon in MiB from /proc/PID/status: VmRSS includes the touched "
                  "pages of the mapped commit log, RssAnon is the heap):\n")
        md.append(table(["second", "Send TPS", "Consume TPS", "send failures"] + brokers, rows))
        s5.update({"send_tps": jget(prod, "tps"), "failures": failures(prod),
                   "acknowledged": jget(prod, "total"), "consumed": jget(cons, "total")})
        md.append(table(["Send TPS (run)", "acknowledged", "consumed", "send failures",
                         "consume failures"],
                        [[fnum(jget(prod, "tps")), fnum(jget(prod, "total")),
                          fnum(jget(cons, "total")), fnum(failures(prod)),
                          fnum(jget(cons, "response_failed"))]]))
        anon = {}
        for n in brokers:
            vals = [rss[e][n][1] for e in sorted(rss) if n in rss[e]]
            if len(vals) >= 2:
                anon[n] = {"first_kb": vals[0], "last_kb": vals[-1], "max_kb": max(vals)}
        s5["rss_anon"] = anon
    R["stage5"] = s5

# ---- stage 6 ---------------------------------------------------------------------

if has_stage(6):
    stage_head(6)
    d = stage_dir(6)
    n6 = notes("stage6")
    prod = load_run(os.path.join(d, "producer"))
    cons = load_run(os.path.join(d, "consumer"))
    s6 = {"notes": n6}
    kill_t = float(n6["kill time"]) if n6.get("kill time") else None
    WINDOW = 10.0
    if prod and prod["series"] and kill_t:
        ser = prod["series"]
        t0 = ser[0]["t"] - 1.0
        # a line at time t covers (t - 1, t]
        before = [s["tps"] for s in ser if s["t"] <= kill_t and s["t"] - t0 > 1.5]
        after = [s for s in ser if s["t"] > kill_t]
        full_after = [s for s in after if s["t"] - 1.0 >= kill_t]
        base = sum(before) / len(before) if before else None
        # the kill's effect is looked for in the WINDOW s after it: a stall second
        # is one below half the mean before the kill; TPS is back at the end of
        # the last stall second of the window
        win_after = [s for s in after if s["t"] - kill_t <= WINDOW]
        dip = min((s["tps"] for s in win_after), default=None)
        tail = sorted(s["tps"] for s in full_after[len(full_after) // 2:])
        steady = tail[len(tail) // 2] if tail else None
        stall = [s for s in win_after if base and s["tps"] < 0.5 * base]
        back = (stall[-1]["t"] - kill_t) if stall else 0.0
        acked = jget(prod, "total")
        consumed = jget(cons, "total")
        stored = 0
        for line in read(os.path.join(d, "topicStatus.txt")).splitlines():
            p = line.split()
            if len(p) >= 5 and p[2].isdigit() and p[4].isdigit():
                stored += int(p[4]) - int(p[3])
        s6.update({"tps_before": base, "tps_dip": dip, "seconds_until_back": back,
                   "tps_after_steady": steady, "stall_seconds": len(stall),
                   "acknowledged": acked, "consumed": consumed, "stored_after": stored,
                   "send_failures": failures(prod)})
        md.append("The kill's effect is looked for in the 10 s after it: a stall second is one "
                  "below half the mean TPS before the kill, TPS is back at the end of the last "
                  "stall second. TPS after (steady) is the median of the last half of the "
                  "seconds after the kill (one master left).\n")
        md.append(table(["TPS before kill", "lowest TPS (10 s after)", "TPS after (steady)",
                         "stall seconds", "s until back", "send failures", "acknowledged",
                         "consumed (incl. redeliveries)",
                         "messages in the reachable queues (topicStatus)"],
                        [[fnum(base), fnum(dip), fnum(steady), str(len(stall)), fnum(back, 1),
                          fnum(failures(prod)), fnum(acked), fnum(consumed), fnum(stored)]]))
        k = next((i for i, s in enumerate(ser) if s["t"] > kill_t), len(ser))
        win = ser[max(0, k - 4):k + 8]
        md.append("Send TPS per second around the kill (second 0 is the first after it):\n")
        md.append(table(["second"] + [str(i - k) for i in range(max(0, k - 4), max(0, k - 4) + len(win))],
                        [["Send TPS"] + [fnum(s["tps"]) for s in win]]))
        lost = n6.get("acknowledged ids not consumed")
        if lost is not None:
            verdict = f"**{lost}** acknowledged ids were not consumed (ids compared one by one)."
        else:
            ok = consumed is not None and acked is not None and consumed >= acked
            verdict = (f"mqbench has no --ids-file, so ids cannot be compared: fallback check "
                       f"consumed >= acknowledged: **{'holds' if ok else 'FAILS'}** "
                       f"({fnum(consumed)} vs {fnum(acked)}); it cannot tell a lost message "
                       f"hidden by a redelivered one.")
        md.append(verdict + "\n")
        md.append(table(["what", "value"], [[k2, v] for k2, v in n6.items() if k2 != "kill time"]))
    R["stage6"] = s6

# ---- stage 7 ---------------------------------------------------------------------

if has_stage(7):
    stage_head(7)
    d = stage_dir(7)
    s7 = {"ping": redis_csv(os.path.join(d, "ping.csv"))}
    rows = []
    if s7["ping"]:
        p = s7["ping"]
        rows.append(["PING_INLINE", "–", fnum(p["rps"]), fnum(p["avg_latency_ms"], 3),
                     fnum(p["p99_latency_ms"], 3)])
    for size in (128, 1024, 524288):
        x = redis_csv(os.path.join(d, f"xadd-s{size}.csv"))
        s7[f"xadd-s{size}"] = x
        if x:
            rows.append([f"XADD (AOF everysec, 1 replica)", str(size), fnum(x["rps"]),
                         fnum(x["avg_latency_ms"], 3), fnum(x["p99_latency_ms"], 3)])
    md.append("64 clients (`-c 64`), redis-benchmark on the same machine:\n")
    md.append(table(["peer", "size B", "ops/s", "avg ms", "P99 ms"], rows))
    n7 = notes("stage7")
    if n7:
        md.append(table(["what", "value"], [[k, v] for k, v in n7.items()]))
    R["stage7"] = s7

# ---- stage 8 ---------------------------------------------------------------------


def broker_rss_mb(prefix):
    out = {}
    for line in read(prefix + ".rss").splitlines():
        f = line.split("\t")
        if len(f) >= 4 and "broker" in f[1] and f[3].isdigit():
            out[f[1]] = int(f[3]) / 1024
    return out


def version_key(v):
    return [int(x) if x.isdigit() else x for x in re.split(r"[.-]", v)]


def stage8_entry(d, name, tck):
    """One row's figures: TPS, percentiles, broker CPU per message, RSS."""
    run = load_run(os.path.join(d, name))
    cpu = broker_cpu(os.path.join(d, name), tck)
    acked = jget(run, "total") or 0
    return {"tps": jget(run, "tps"), "p50_ms": jget(run, "p50_ms"), "p99_ms": jget(run, "p99_ms"),
            "p999_ms": jget(run, "p999_ms"), "failures": failures(run), "acked": acked,
            "cpu_us_per_msg_masters": us_per_msg(sum(v for k, v in cpu.items() if not k.endswith("-s")), acked),
            "cpu_us_per_msg_all": us_per_msg(sum(cpu.values()), acked),
            "rss_mb": broker_rss_mb(os.path.join(d, name)), "cpu_s": cpu}


def stage8_ratio(layout, peer, clients, ours, theirs):
    return [layout.upper(), peer, clients, fratio(ratio(ours["tps"], theirs["tps"])),
            fratio(ratio(ours["p99_ms"], theirs["p99_ms"])),
            fratio(ratio(ours["cpu_us_per_msg_all"], theirs["cpu_us_per_msg_all"])),
            fratio(ratio(sum(ours["rss_mb"].values()), sum(theirs["rss_mb"].values())))]


if has_stage(8):
    stage_head(8)
    d = stage_dir(8)
    s8 = {}
    tck = clk_tck(d)
    n8 = notes("stage8")
    if n8:
        md.append(table(["what", "value"], [[k, v] for k, v in n8.items()]))
    names = {f[:-len(".json")] for f in os.listdir(d) if f.endswith(".json") and "warmup" not in f}
    versions = sorted({re.sub(r"^\w+-(rocketmq|rmq-java)-", "", n) for n in names
                       if re.match(r"^\w+-(rocketmq|rmq-java)-", n)}, key=version_key)
    rows, ratio_rows = [], []
    for layout in ("sync", "async"):
        # rmq on mqbench, then per version rmq and RocketMQ on that version's Bench.java
        order = [(f"{layout}-rmq", "rmq", "mqbench (native)")]
        for v in versions:
            order += [(f"{layout}-rmq-java-{v}", "rmq", f"Bench.java, rocketmq-client {v} (remoting)"),
                      (f"{layout}-rocketmq-{v}", f"RocketMQ {v}", f"Bench.java, rocketmq-client {v}")]
        for name, broker, client in order:
            if name not in names:
                continue
            e = s8[name] = dict(stage8_entry(d, name, tck), broker=broker, client=client)
            rows.append([layout.upper(), broker, client, fnum(e["tps"]), fnum(e["p50_ms"], 3),
                         fnum(e["p99_ms"], 3), fnum(e["p999_ms"], 3), fnum(e["failures"]),
                         fnum(e["cpu_us_per_msg_masters"], 1), fnum(e["cpu_us_per_msg_all"], 1),
                         " / ".join(f"{v:.0f}" for _, v in sorted(e["rss_mb"].items())) or "–"])
        native = s8.get(f"{layout}-rmq")
        for v in versions:
            theirs, same = s8.get(f"{layout}-rocketmq-{v}"), s8.get(f"{layout}-rmq-java-{v}")
            if not theirs:
                continue
            if same:
                ratio_rows.append(stage8_ratio(layout, f"RocketMQ {v}", f"Bench.java {v} on both", same, theirs))
            if native:
                ratio_rows.append(stage8_ratio(layout, f"RocketMQ {v}",
                                               f"extra line: rmq on mqbench, RocketMQ on Bench.java {v}",
                                               native, theirs))
    if rows:
        md.append("Each row: a 2m-2s cluster of its own, 64 threads of sync sends, 128 B, after a "
                  "warm-up run (JIT). Bench.java on a version's rocketmq-client drives RocketMQ of "
                  "that version and rmq (whose name server and brokers speak RocketMQ's remoting "
                  "protocol on their ports); mqbench drives rmq once more over its native protocol. "
                  "Broker CPU is utime+stime (/proc/PID/stat) over the measured run divided by the "
                  "messages acknowledged; RSS is each broker's VmRSS after it (a, a-s, b, b-s):\n")
        md.append(table(["layout", "broker", "client", "Send TPS", "P50 ms", "P99 ms", "P999 ms",
                         "failures", "CPU us/msg masters", "CPU us/msg all 4", "RSS MB a/a-s/b/b-s"],
                        rows))
    if ratio_rows:
        md.append("rmq / RocketMQ (TPS above 1x: rmq faster; P99, CPU and RSS below 1x: rmq "
                  "cheaper). \"Bench.java V on both\" compares like with like: the same client, "
                  "rocketmq-client V, drives both clusters. The extra line sets rmq driven by "
                  "mqbench against RocketMQ driven by Bench.java (different clients). mqbench "
                  "speaks only rmq's native protocol, so it cannot drive RocketMQ:\n")
        md.append(table(["layout", "peer", "clients", "TPS", "P99", "CPU per msg", "RSS (4 brokers)"],
                        ratio_rows))
    R["stage8"] = s8

# ---- stage 9 ---------------------------------------------------------------------

PEER_CLASSES = {"replica": "replica ack, no fsync", "replica-fsync": "replica ack after an fsync",
                "leader": "leader ack only"}


def num_or_none(v):
    try:
        return float(v)
    except ValueError:
        return None


def stage9_rows(d):
    """rows.tsv of scripts/bench/peers.sh: one dict per measured row."""
    keys = ("system", "class", "setting", "size", "shape", "tps", "p99_ms", "cpu_us_per_msg", "rss_anon_mb")
    rows = []
    for line in read(os.path.join(d, "rows.tsv")).splitlines():
        f = line.split("\t")
        if len(f) == len(keys):
            r = dict(zip(keys, f))
            for k in keys[5:]:
                r[k] = num_or_none(r[k])
            rows.append(r)
    return rows


if has_stage(9):
    stage_head(9)
    d = stage_dir(9)
    n9 = notes("stage9")
    if n9:
        md.append(table(["what", "value"], [[k, v] for k, v in n9.items()]))
    rows9 = stage9_rows(d)
    order = {c: i for i, c in enumerate(PEER_CLASSES)}
    shapes = {"sync": 0, "async": 1}
    rows9.sort(key=lambda r: (order.get(r["class"], 9), int(r["size"]), shapes.get(r["shape"], 2),
                              r["system"] != "rmq"))
    if rows9:
        md.append("One system at a time, each replicated to a second broker. TPS is messages "
                  "acknowledged per second over the measured window; server CPU is utime+stime "
                  "(/proc/PID/stat) of every server process (rmq: name server and 4 brokers; Kafka: "
                  "controller and 2 brokers; Artemis: primary and backup) over the window divided by "
                  "the messages acknowledged in it; RssAnon is their sum after it:\n")
        md.append(table(["class", "system", "durability setting", "size B", "shape", "TPS", "P99 ms",
                         "server CPU us/msg", "RssAnon MB"],
                        [[PEER_CLASSES.get(r["class"], r["class"]), r["system"], r["setting"], r["size"],
                          r["shape"], fnum(r["tps"]), fnum(r["p99_ms"], 2), fnum(r["cpu_us_per_msg"], 1),
                          fnum(r["rss_anon_mb"])] for r in rows9]))
        ours = {(r["class"], r["size"], r["shape"]): r for r in rows9 if r["system"] == "rmq"}
        ratio_rows = []
        for r in rows9:
            mine = ours.get((r["class"], r["size"], r["shape"]))
            if r["system"] == "rmq" or not mine:
                continue
            ratio_rows.append([PEER_CLASSES.get(r["class"], r["class"]), r["size"], r["shape"], r["system"],
                               fratio(ratio(mine["tps"], r["tps"])),
                               fratio(ratio(mine["cpu_us_per_msg"], r["cpu_us_per_msg"])),
                               fratio(ratio(mine["rss_anon_mb"], r["rss_anon_mb"]))])
        if ratio_rows:
            md.append("rmq / peer in this run (TPS above 1x: rmq faster; CPU per message and "
                      "RssAnon below 1x: rmq cheaper):\n")
            md.append(table(["class", "size B", "shape", "peer", "TPS", "server CPU per msg", "RssAnon"],
                            ratio_rows))
    R["stage9"] = rows9

# ---- profiles (RMQ_BENCH_PERF=1) ------------------------------------------------

profiles = []
for n in range(1, 10):
    d = stage_dir(n)
    if not os.path.isdir(d):
        continue
    for name in sorted(os.listdir(d)):
        if name.endswith(".perf.txt"):
            body = read(os.path.join(d, name)).rstrip()
            if body:
                profiles.append((f"stage {n}, {name[:-len('.perf.txt')]}", body))
if profiles:
    md.append("\n## Profiles of broker-a (perf record -g, top symbols, self time)\n")
    for title, body in profiles:
        md.append(f"{title}:\n\n```\n{body}\n```\n")

# ---- ratios and targets ----------------------------------------------------------

s1, s2, s3, s7 = R.get("stage1", {}), R.get("stage2", {}), R.get("stage3", {}), R.get("stage7", {})
ping = (s7.get("ping") or {}).get("rps")


def tps_of(d):
    return (d or {}).get("tps")


ratios = []
if ping:
    for key, name in (("base", "base sync send, 64 threads"), ("async", "async send, 64 threads"),
                      ("async-w4", "async send, 4 threads"), ("batch", "batched send -b 32, 64 threads")):
        if s1.get(key):
            ratios.append([name, "PING_INLINE", fnum(tps_of(s1[key])), fnum(ping),
                           fratio(ratio(tps_of(s1[key]), ping))])
for size in (128, 1024, 524288):
    x = (s7.get(f"xadd-s{size}") or {}).get("rps")
    if not x:
        continue
    cands = [k for k in s2 if k.startswith(f"sync-s{size}-w") or k.startswith(f"async-s{size}-w")]
    for k in sorted(cands, key=lambda k: (k.split("-")[0], int(k.rsplit("w", 1)[1]))):
        w = int(k.rsplit("w", 1)[1])
        if size == 128 and w != 64 and f"{k.split('-')[0]}-s128-w64" in s2:
            continue
        if size == 1024 and w != max(int(c.rsplit("w", 1)[1]) for c in cands if c.startswith(k.split("-")[0])):
            continue
        ratios.append([f"2m-2s {k.split('-')[0].upper()}, {size} B, {w} threads",
                       f"XADD {size} B, 64 clients", fnum(tps_of(s2[k])), fnum(x),
                       fratio(ratio(tps_of(s2[k]), x))])
if ratios:
    md.append("\n## Ratios to the peers\n")
    md.append(table(["ours", "peer", "our TPS", "peer ops/s", "ratio"], ratios))
R["ratios"] = ratios

targets = []


def target(issue, name, value, goal, ok):
    targets.append([issue, name, value, goal, "–" if ok is None else ("met" if ok else "**missed**")])


def target_at_most(issue, name, value, digits, unit, goal):
    """A figure that must not exceed GOAL ("not measured" when VALUE is None)."""
    if value is None:
        target(issue, name, "not measured", f"<= {goal} {unit}", None)
    else:
        target(issue, name, f"{fnum(value, digits)} {unit}", f"<= {goal} {unit}", value <= goal)


if ping and s1.get("base"):
    r = ratio(tps_of(s1["base"]), ping)
    target("7", "base sync sends vs PING_INLINE", fratio(r), ">= 0.8x", r >= 0.8)
else:
    target("7", "base sync sends vs PING_INLINE", "not measured", ">= 0.8x", None)
best = max((tps_of(s1.get(k)) or 0 for k in ("async", "batch")), default=0)
if ping and best:
    r = best / ping
    target("7", "async/batched sends vs PING_INLINE", fratio(r), ">= 5x", r >= 5)
else:
    target("7", "async/batched sends vs PING_INLINE", "not measured", ">= 5x", None)
a4 = tps_of(s1.get("async-w4"))
if ping and a4:
    target("19", "async sends from 4 threads vs PING_INLINE", fratio(a4 / ping), ">= 5x", a4 / ping >= 5)
else:
    target("19", "async sends from 4 threads vs PING_INLINE", "not measured", ">= 5x", None)
target_at_most("19", "broker CPU per message, 64 sync senders, 128 B, one ASYNC_FLUSH master (base)",
               (s1.get("base") or {}).get("cpu_us_per_msg"), 2, "us", 5)
target_at_most("19", "broker CPU per message, the same with -b 32",
               (s1.get("batch") or {}).get("cpu_us_per_msg"), 2, "us", 1.5)
sy, asy = tps_of(s2.get("sync-s128-w64")), tps_of(s2.get("async-s128-w64"))
if sy and asy:
    target("7", f"SYNC_MASTER vs ASYNC_MASTER, 64 threads (2m-2s, 128 B; SYNC masters "
           f"{meta.get('sync_flush') or 'SYNC_FLUSH'})",
           fratio(sy / asy), ">= 0.8x", sy / asy >= 0.8)
else:
    target("7", "SYNC_MASTER vs ASYNC_MASTER, 64 threads", "not measured", ">= 0.8x", None)
fd = (s1.get("fdatasync") or {}).get("per_s")
sf = tps_of(s1.get("syncflush"))
if fd and sf:
    target("7", "SYNC_FLUSH 64 threads vs single-writer fdatasync rate", fratio(sf / fd), ">= 10x",
           sf / fd >= 10)
else:
    target("7", "SYNC_FLUSH 64 threads vs single-writer fdatasync rate", "not measured", ">= 10x", None)
sfp = tps_of(s1.get("syncflush-pool"))
if fd and sfp:
    target("19", "SYNC_FLUSH + transientStorePoolEnable 64 threads vs single-writer fdatasync rate",
           fratio(sfp / fd), ">= 15x", sfp / fd >= 15)
else:
    target("19", "SYNC_FLUSH + transientStorePoolEnable 64 threads vs single-writer fdatasync rate",
           "not measured", ">= 15x", None)
x128 = (s7.get("xadd-s128") or {}).get("rps")
if sy and x128:
    target("7", "2m-2s SYNC 64 threads 128 B vs Redis XADD with replica", fratio(sy / x128), ">= 1x",
           sy / x128 >= 1)
else:
    target("7", "2m-2s SYNC 64 threads 128 B vs Redis XADD with replica", "not measured", ">= 1x", None)
if s3.get("send_tps"):
    c, s = s3["consume_tps_during_send"], s3["send_tps"]
    target("7", "consume TPS vs send TPS over the send window, backlog flat (consumer path)",
           f"{fnum(c)} vs {fnum(s)} ({c / s:.3f}), backlog "
           f"{'flat' if s3.get('backlog_flat') else 'growing'}",
           ">= 0.98 (the backlog in flight), flat", c >= 0.98 * s and bool(s3.get("backlog_flat")))
    p99 = s3.get("s2c_p99_ms")
    target("7", "S2C P99 (consumer path)", "not measured" if p99 is None else f"{fnum(p99, 3)} ms",
           "< 10 ms", None if p99 is None else p99 < 10)
r50 = s3.get("rate50") or {}
p = r50.get("s2c_p99_ms")
target("19", "S2C P99 under 10 ms at 50% of the saturated rate (mqbench --rate)",
       "not measured" if p is None else
       f"{fnum(p, 3)} ms at {fnum(r50.get('rate'))} msg/s (send P99 "
       f"{fnum(r50.get('send_p99_ms'), 3)} ms, from due {fnum(r50.get('send_p99_due_ms'), 3)} ms)",
       "< 10 ms", None if p is None else p < 10)
if R.get("stage5", {}).get("failures") is not None:
    target("7", "stability: zero send failures", fnum(R["stage5"]["failures"]), "0",
           R["stage5"]["failures"] == 0)
if R.get("stage6", {}).get("acknowledged") is not None:
    s6 = R["stage6"]
    lost = s6["notes"].get("acknowledged ids not consumed")
    if lost is not None:
        target("7", "exception: acknowledged messages lost", lost, "0", lost == "0")
    else:
        target("7", "exception: consumed >= acknowledged (fallback, no ids)",
               f"{fnum(s6['consumed'])} vs {fnum(s6['acknowledged'])}", ">=",
               (s6["consumed"] or 0) >= (s6["acknowledged"] or 0))
md.append("\n## Targets (issues 7 and 19)\n")
md.append(table(["issue", "target", "measured", "goal", "status"], targets))
R["targets"] = targets

# ---- commands --------------------------------------------------------------------

md.append("\n## Commands\n")
md.append("`$RMQ_BUILD` is the build directory, `$TMP` the run's temporary directory. "
          "The properties files the run generated are in `stageN/conf/` next to this "
          "report (the last cluster of the stage), the daemons' logs in `stageN/logs/`.\n")
for n in range(1, 10):
    c = read(os.path.join(stage_dir(n), "commands.txt")).strip()
    if c:
        md.append(f"\nStage {n}:\n\n```\n{c}\n```\n")

with open(os.path.join(OUT, "report.md"), "w", encoding="utf-8") as f:
    f.write("\n".join(md))
with open(os.path.join(OUT, "results.json"), "w", encoding="utf-8") as f:
    json.dump(R, f, indent=1, default=str)
