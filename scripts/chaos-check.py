#!/usr/bin/env python3
"""scripts/chaos-check.py: the checker of scripts/chaos.sh --controller.

    chaos-check.py --acked FILE --consumed FILE [--consumed FILE...]
                   --final FILE --logs DIR [--slack-ms N]

Reads mqbench --ids-file --ids-detail logs: --acked, the producer's
("ID BROKER EPOCH QUEUE_ID QUEUE_OFFSET OFFSET_MSG_ID WALL_MS", one per
SEND_OK, EPOCH stamped by the broker); each --consumed, a consumer group's
during the run, and --final, a fresh group's read of the whole topic after
healing and draining ("ID BROKER QUEUE_ID QUEUE_OFFSET COMMITLOG_OFFSET
STORE_MS WALL_MS"); and the controllers' election log lines in DIR's
namesrv-*.log ("controller: KEY master ID (ADDR) epoch E, ...", each written
just after the state transaction in etcd succeeded).

Asserts:
  missing        every acknowledged id is in the final log and was consumed
                 by every --consumed group
  no epoch       every acknowledgement carries a master epoch (>= 1)
  double master  per group and epoch, every acknowledgement came from one
                 broker (the store host of its offset msgId), and from the
                 broker the controller committed as that epoch's master
  late ack       no acknowledgement at epoch E arrived more than --slack-ms
                 (default 1000: the client's receive delay) after the
                 controller committed an epoch above E for the group
  truncated seen every id a consumer saw is, in the final log, at the same
                 broker, queue and queue offset
Prints the figures, then each violation (at most 10 per kind); exit 0 when
there is none, 1 otherwise, 2 on usage or unreadable input.
"""
import argparse
import glob
import re
import sys
import time

CTL_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) .*controller: (\S+) master (\d+) "
                      r"\(([^)]*)\) epoch (\d+),")


def read_rows(path, ncols=7):
    """Yields the file's lines split in fields; exits 2 on a line of another width."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if not w:
                continue
            if len(w) != ncols:
                sys.exit("chaos-check: %s:%d: %d fields, want %d (mqbench --ids-detail)" % (path, n, len(w), ncols))
            yield w


def store_host(offset_msg_id):
    """'ip:port' of an offset msgId (8 hex ip, 8 hex port, 16 hex offset)."""
    ip = int(offset_msg_id[0:8], 16)
    port = int(offset_msg_id[8:16], 16)
    return "%d.%d.%d.%d:%d" % (ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, port)


def read_elections(logdir):
    """group -> {epoch: (first commit wall ms, master addr)} from the controllers' logs."""
    out = {}
    files = glob.glob(logdir + "/namesrv-*.log")
    if not files:
        sys.exit("chaos-check: no namesrv-*.log in %s" % logdir)
    for path in files:
        with open(path, errors="replace") as f:
            for line in f:
                m = CTL_LINE.match(line)
                if not m:
                    continue
                ms = int(time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))) * 1000 + int(m.group(2))
                group = m.group(3).rsplit("/", 1)[-1]
                epoch = int(m.group(6))
                ep = out.setdefault(group, {})
                if epoch not in ep or ms < ep[epoch][0]:
                    ep[epoch] = (ms, m.group(5))
    return out


def main():
    ap = argparse.ArgumentParser(description="checks a controller chaos run's logs")
    ap.add_argument("--acked", required=True)
    ap.add_argument("--consumed", action="append", required=True)
    ap.add_argument("--final", required=True)
    ap.add_argument("--logs", required=True)
    ap.add_argument("--slack-ms", type=int, default=1000)
    a = ap.parse_args()
    try:
        return check(a)
    except OSError as e:
        sys.exit("chaos-check: %s" % e)


def check(a):
    """Runs every assertion over the files a names; the exit status."""
    elections = read_elections(a.logs)

    bad = {}

    def violation(kind, text):
        bad.setdefault(kind, []).append(text)

    # the final log: which id each (broker, queue, offset) holds
    final_at = {}
    n_final = 0
    for r in read_rows(a.final):
        n_final += 1
        at = (r[1], int(r[2]), int(r[3]))
        if final_at.setdefault(at, r[0]) != r[0]:
            violation("final reread", "%s queue %s offset %s read as %s and as %s" % (r[1], r[2], r[3], final_at[at], r[0]))
    final_ids = set(final_at.values())

    # epochs: one broker per (group, epoch), the committed one; no late ack
    hosts = {}
    acked_ids = set()
    n_acked = 0
    for r in read_rows(a.acked):
        n_acked += 1
        acked_ids.add(r[0])
        mid, group, epoch, wall = r[0], r[1], int(r[2]), int(r[6])
        if epoch < 1:
            violation("no epoch", "%s acknowledged by %s without a master epoch" % (mid, group))
            continue
        if r[5] == "-":
            violation("no epoch", "%s acknowledged by %s without an offset msgId" % (mid, group))
            continue
        host = store_host(r[5])
        hosts.setdefault((group, epoch), {}).setdefault(host, 0)
        hosts[(group, epoch)][host] += 1
        later = [ms for e, (ms, _) in elections.get(group, {}).items() if e > epoch]
        if later and wall > min(later) + a.slack_ms:
            violation("late ack", "%s acknowledged at %s epoch %d by %s at %d ms, %d ms after epoch %d was committed"
                      % (mid, group, epoch, host, wall, wall - min(later),
                         min(e for e, (ms, _) in elections[group].items() if e > epoch)))
    for (group, epoch), hs in sorted(hosts.items()):
        committed = elections.get(group, {}).get(epoch)
        if len(hs) > 1:
            violation("double master", "%s epoch %d acknowledged by %s" % (group, epoch, hs))
        elif committed and committed[1] not in hs:
            violation("double master", "%s epoch %d acknowledged by %s, the controller committed %s"
                      % (group, epoch, list(hs)[0], committed[1]))

    # missing
    for i in sorted(acked_ids - final_ids):
        violation("missing", "%s acknowledged, not in the final log" % i)

    # nothing consumed that the final log lost or moved; every ack consumed
    n_cons = []
    for path in a.consumed:
        seen = set()
        n = 0
        for r in read_rows(path):
            n += 1
            seen.add(r[0])
            at = final_at.get((r[1], int(r[2]), int(r[3])))
            if at != r[0]:
                violation("truncated seen", "%s consumed by %s at %s queue %s offset %s; the final log holds %s there"
                          % (r[0], path, r[1], r[2], r[3], at or "nothing"))
        for i in sorted(acked_ids - seen):
            violation("missing", "%s acknowledged, never consumed by %s" % (i, path))
        n_cons.append("%d (%d)" % (n, len(seen)))
        del seen
    n_cons = " / ".join(n_cons)
    epochs = ", ".join("%s %s" % (g, ",".join(str(e) for e in sorted(ep))) for g, ep in sorted(elections.items()))
    print("%-34s %d (%d distinct)" % ("acknowledged", n_acked, len(acked_ids)))
    print("%-34s %s" % ("consumed per group (distinct)", n_cons))
    print("%-34s %d (%d positions, %d distinct ids)" % ("final log read", n_final, len(final_at), len(final_ids)))
    print("%-34s %s" % ("committed epochs", epochs))
    print("%-34s %d" % ("group epochs acknowledged in", len(hosts)))
    for kind in ("missing", "no epoch", "double master", "late ack", "truncated seen", "final reread"):
        print("%-34s %d" % (kind, len(bad.get(kind, []))))
    for kind, texts in bad.items():
        for t in texts[:10]:
            print("chaos-check: %s: %s" % (kind, t), file=sys.stderr)
    if bad:
        print("chaos-check: FAIL: %s" % ", ".join("%d %s" % (len(v), k) for k, v in bad.items()), file=sys.stderr)
        return 1
    print("chaos-check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
