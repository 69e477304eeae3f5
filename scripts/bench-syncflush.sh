#!/bin/bash
# scripts/bench-syncflush.sh: what SYNC_FLUSH's group commit costs, in one
# run (issue 35 part 2; goal: SYNC_FLUSH >= 0.8x ASYNC_FLUSH at 64 senders).
# For each row a fresh name server + master on loopback (with --slave a
# SYNC_MASTER and its slave, so the flush and the slave waits both count),
# a 2 s warm-up, then mqbench producer. Rows: ASYNC_FLUSH, SYNC_FLUSH, and
# SYNC_FLUSH with transientStorePoolEnable (write + fdatasync instead of
# msync), repeated -r times in that order so a busy neighbour shows up as
# spread rather than as a ratio. Besides TPS and P99 it prints the figures
# that do not depend on how loaded the machine is: messages per commit-log
# sync (group-commit size), syncs per second and the mean sync time (from the
# broker's commitLogSyncTimes/commitLogSyncTimeTotalMicros), and the master's
# CPU time per message; last the SYNC/ASYNC TPS ratios of each round.
# --base DIR runs every row a second time with DIR's mqbroker (rows named
# base-*, ratios against base-async), for a before/after in the same run.
#
#   scripts/bench-syncflush.sh [-d SECONDS] [-w THREADS] [-s SIZE] [-r ROUNDS]
#                              [-b BUILD_DIR] [--base BUILD_DIR] [--slave] [--perf ROW]
#
# -d seconds per run (default 10), -w producer threads (64), -s message size
# (128), -r rounds (1), -b the meson build directory (default build;
# $RMQ_BUILD_ROOT when set). Ports: $RMQ_BENCH_SF_PORT (default 24400) and
# up; stores in a /tmp directory. --perf ROW (async, sync or sync-pool) also
# records `perf record -g` of the master during that row's runs and prints
# the top of `perf report` (self time by symbol) after the table.
# Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=10 THREADS=64 SIZE=128 ROUNDS=1 SLAVE=0 PERF_ROW= BASE_BUILD=
BUILD=${RMQ_BUILD_ROOT:-build}
usage() {
  echo "usage: scripts/bench-syncflush.sh [-d SECONDS] [-w THREADS] [-s SIZE] [-r ROUNDS] [-b BUILD_DIR] [--base BUILD_DIR] [--slave] [--perf ROW]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    -d) [ $# -ge 2 ] || usage; DUR=$2; shift 2 ;;
    -w) [ $# -ge 2 ] || usage; THREADS=$2; shift 2 ;;
    -s) [ $# -ge 2 ] || usage; SIZE=$2; shift 2 ;;
    -r) [ $# -ge 2 ] || usage; ROUNDS=$2; shift 2 ;;
    -b) [ $# -ge 2 ] || usage; BUILD=$2; shift 2 ;;
    --base) [ $# -ge 2 ] || usage; BASE_BUILD=$(cd "$2" && pwd); shift 2 ;;
    --slave) SLAVE=1; shift ;;
    --perf) [ $# -ge 2 ] || usage; PERF_ROW=$2; shift 2 ;;
    *) usage ;;
  esac
done
BUILD=$(cd "$BUILD" && pwd)
BASE=${RMQ_BENCH_SF_PORT:-24400}
ADMIN=$BUILD/tools/mqadmin
# shellcheck source=SCRIPTDIR/bench/lib-daemons.sh
. scripts/bench/lib-daemons.sh
bd_init bench-syncflush

json_num() {
  sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1"
}

# status ADDR: "puts syncs sync_us" from the master's brokerStatus.
status() {
  "$ADMIN" brokerStatus -n "127.0.0.1:$BASE" -b "$1" 2>/dev/null | awk '
    $1 == "putMessageTimesTotal" { p = $2 } $1 == "commitLogSyncTimes" { s = $2 }
    $1 == "commitLogSyncTimeTotalMicros" { u = $2 } END { print p + 0, s + 0, u + 0 }'
}

# cpu_ticks PID: utime + stime of every thread (clock ticks).
cpu_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# up FLUSH EXTRA: name server, master (and slave) for one row.
up() {
  local role=ASYNC_MASTER common
  [ $SLAVE = 0 ] || role=SYNC_MASTER
  rm -rf "$work/store-"*
  bd_start ns "$BUILD/namesrv/mqnamesrv" "listenPort=$BASE
bindAddress=127.0.0.1"
  common="brokerClusterName=BenchSf
brokerName=broker-a
brokerIP1=127.0.0.1
namesrvAddr=127.0.0.1:$BASE
mapedFileSizeCommitLog=1073741824"
  bd_start master "$BROKER" "$common
brokerId=0
brokerRole=$role
flushDiskType=$1
listenPort=$((BASE + 11))
haListenPort=$((BASE + 12))
storePathRootDir=$work/store-master
$2"
  master_pid=$LAST_PID
  if [ $SLAVE = 1 ]; then
    bd_start_slave "$BROKER" "$ADMIN" "$common" $((BASE + 21))
  fi
  "$ADMIN" updateTopic -n "127.0.0.1:$BASE" -b "127.0.0.1:$((BASE + 11))" -t SyncFlushBench -r 8 -w 8 >/dev/null
  sleep 1
}

# row NAME FLUSH EXTRA: one measured run; prints its line of the table.
row() {
  local name=$1 ns=127.0.0.1:$BASE addr=127.0.0.1:$((BASE + 11)) s0 s1 c0 c1 j=$work/$1.json
  up "$2" "$3"
  "$BUILD/tools/mqbench" producer -n "$ns" -t SyncFlushBench -w "$THREADS" -s "$SIZE" -d 2 >/dev/null
  s0=$(status "$addr")
  c0=$(cpu_ticks "$master_pid")
  perf_pid=''
  if [ "$PERF_ROW" = "$name" ]; then
    perf record -g -o "$work/perf.data" -p "$master_pid" -- sleep "$DUR" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  "$BUILD/tools/mqbench" producer -n "$ns" -t SyncFlushBench -w "$THREADS" -s "$SIZE" -d "$DUR" --json "$j" >/dev/null
  c1=$(cpu_ticks "$master_pid")
  if [ -n "$perf_pid" ]; then
    wait "$perf_pid" || true
    perf report -i "$work/perf.data" --no-children -g none --sort dso,symbol --stdio --percent-limit 1 \
      2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 30 >>"$work/perf.txt" || true
  fi
  s1=$(status "$addr")
  bd_stop_all
  awk -v n="$name" -v tps="$(json_num "$j" tps)" -v p99="$(json_num "$j" p99_ms)" -v s0="$s0" -v s1="$s1" \
    -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" -v dur="$DUR" 'BEGIN {
      split(s0, a, " "); split(s1, b, " ")
      msgs = b[1] - a[1]; syncs = b[2] - a[2]; us = b[3] - a[3]
      printf "%-16s %9.0f %8.2f %10s %9.0f %9s %10s\n", n, tps, p99,
        (syncs > 0 ? sprintf("%.1f", msgs / syncs) : "-"), syncs / dur,
        (syncs > 0 ? sprintf("%.0f", us / syncs) : "-"),
        (msgs > 0 ? sprintf("%.1f", (c1 - c0) * 1e6 / hz / msgs) : "-") }'
}

echo "$THREADS senders, $SIZE B, ${DUR} s per run, $([ $SLAVE = 1 ] && echo 'SYNC_MASTER + slave' || echo 'one master')"
printf '%-16s %9s %8s %10s %9s %9s %10s\n' ROW TPS P99ms msgs/sync syncs/s sync_us cpu_us/msg
# round PREFIX: the three rows with $BROKER, then their ratios.
round() {
  local a s p
  a=$(row "${1}async" ASYNC_FLUSH "")
  echo "$a"
  s=$(row "${1}sync" SYNC_FLUSH "")
  echo "$s"
  p=$(row "${1}sync-pool" SYNC_FLUSH "transientStorePoolEnable=true")
  echo "$p"
  awk -v r="$r" -v n="${1:+base build}" -v a="$a" -v s="$s" -v p="$p" 'BEGIN {
    split(a, x, " "); split(s, y, " "); split(p, z, " ")
    if (x[2] > 0) printf "round %d%s%s: SYNC/ASYNC %.2f, SYNC+pool/ASYNC %.2f (goal >= 0.8)\n", r, n ? ", " : "", n, y[2] / x[2], z[2] / x[2] }'
}

for r in $(seq "$ROUNDS"); do
  BROKER=$BUILD/broker/mqbroker
  round ""
  if [ -n "$BASE_BUILD" ]; then
    BROKER=$BASE_BUILD/broker/mqbroker
    round base-
  fi
done
if [ -s "$work/perf.txt" ]; then
  echo
  echo "perf: the master during the $PERF_ROW runs (self time by symbol)"
  cat "$work/perf.txt"
fi
