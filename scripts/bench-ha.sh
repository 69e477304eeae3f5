#!/bin/bash
# scripts/bench-ha.sh: SYNC_MASTER vs ASYNC_MASTER in one run. For each role
# a fresh name server + master + slave on loopback (both ASYNC_FLUSH, so only
# replication differs), then mqbench producer, 64 threads, at 128 B and 1 KiB;
# prints TPS and P99 of each and the SYNC/ASYNC ratio (goal >= 0.8).
#
#   scripts/bench-ha.sh [-d SECONDS] [-w THREADS] [-b BUILD_DIR] [--perf]
#
# -d seconds per run (default 15), -w producer threads (64), -b the meson
# build directory (default build; $RMQ_BUILD_ROOT when set). --perf also
# records `perf record -g` of the SYNC master during its 128 B run and prints
# the top of `perf report`. Ports: $RMQ_BENCH_HA_PORT (default 24000) and
# up. Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=15 THREADS=64 PERF=0
BUILD=${RMQ_BUILD_ROOT:-build}
while [ $# -gt 0 ]; do
  case $1 in
    -d) DUR=$2; shift 2 ;;
    -w) THREADS=$2; shift 2 ;;
    -b) BUILD=$2; shift 2 ;;
    --perf) PERF=1; shift ;;
    *) echo "usage: scripts/bench-ha.sh [-d SECONDS] [-w THREADS] [-b BUILD_DIR] [--perf]" >&2; exit 2 ;;
  esac
done
BUILD=$(cd "$BUILD" && pwd)
BASE=${RMQ_BENCH_HA_PORT:-24000}
# shellcheck source=SCRIPTDIR/bench/lib-daemons.sh
. scripts/bench/lib-daemons.sh
bd_init bench-ha

# json_num FILE KEY
json_num() {
  sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1"
}

declare -A TPS P99
for role in ASYNC_MASTER SYNC_MASTER; do
  rm -rf "$work/store-"*
  ns=127.0.0.1:$BASE
  bd_start ns "$BUILD/namesrv/mqnamesrv" "listenPort=$BASE
bindAddress=127.0.0.1"
  common="brokerClusterName=BenchHa
brokerName=broker-a
brokerIP1=127.0.0.1
namesrvAddr=$ns
flushDiskType=ASYNC_FLUSH
mapedFileSizeCommitLog=1073741824"
  bd_start master "$BUILD/broker/mqbroker" "$common
brokerId=0
brokerRole=$role
listenPort=$((BASE + 11))
haListenPort=$((BASE + 12))
storePathRootDir=$work/store-master"
  master_pid=$LAST_PID
  bd_start_slave "$BUILD/broker/mqbroker" "$BUILD/tools/mqadmin" "$common" $((BASE + 21))
  "$BUILD/tools/mqadmin" updateTopic -n "$ns" -b "127.0.0.1:$((BASE + 11))" -t HaBench -r 8 -w 8 >/dev/null
  sleep 1
  for size in 128 1024; do
    # a short warm-up (connections, route, page cache), then the measured run
    "$BUILD/tools/mqbench" producer -n "$ns" -t HaBench -w "$THREADS" -s "$size" -d 2 >/dev/null
    perf_pid=''
    if [ $PERF = 1 ] && [ $role = SYNC_MASTER ] && [ "$size" = 128 ]; then
      perf record -g -o "$work/perf.data" -p "$master_pid" -- sleep "$DUR" >/dev/null 2>&1 &
      perf_pid=$!
    fi
    echo "== $role, $THREADS threads, $size B, ${DUR}s" >&2
    "$BUILD/tools/mqbench" producer -n "$ns" -t HaBench -w "$THREADS" -s "$size" -d "$DUR" \
      --json "$work/$role-$size.json" | grep -E '^(Latency|\[Complete\])' >&2
    TPS[$role-$size]=$(json_num "$work/$role-$size.json" tps)
    P99[$role-$size]=$(json_num "$work/$role-$size.json" p99_ms)
    if [ -n "$perf_pid" ]; then
      wait "$perf_pid" || true
      perf report -i "$work/perf.data" --no-children -g none --sort "${RMQ_BENCH_HA_PERF_SORT:-dso,symbol}" --stdio \
        --percent-limit 1 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 30 >"$work/perf.txt" || true
    fi
  done
  bd_stop_all
done

printf '\n%-6s  %-14s %10s %9s   %-14s %10s %9s   %s\n' SIZE ROLE TPS "P99(ms)" ROLE TPS "P99(ms)" "SYNC/ASYNC"
for size in 128 1024; do
  a=${TPS[ASYNC_MASTER-$size]} s=${TPS[SYNC_MASTER-$size]}
  ratio=$(awk -v a="$a" -v s="$s" 'BEGIN { if (a > 0) printf "%.2f", s / a; else print "-" }')
  printf '%-6s  %-14s %10s %9s   %-14s %10s %9s   %s\n' "${size}B" ASYNC_MASTER "$a" \
    "${P99[ASYNC_MASTER-$size]}" SYNC_MASTER "$s" "${P99[SYNC_MASTER-$size]}" "$ratio"
done
if [ -s "$work/perf.txt" ]; then
  echo
  echo "perf: SYNC_MASTER broker, 128 B run (self time by symbol)"
  cat "$work/perf.txt"
fi
