#!/bin/bash
# scripts/bench-topics.sh: a broker with many topics. For each way of
# creating them, a fresh name server and broker on loopback, then topics of
# 8 queues created up to 1,000, 10,000 and 100,000; at each step it reports
#   time of the step, failures (must be 0), time from the step's end until
#   every topic is in the name server's routes, broker and name-server RSS, route-lookup latency
#   (p50/p99 of one-at-a-time GET_ROUTEINFO_BY_TOPIC on 2,000 topics) and
#   the bytes the name server read during one idle registration period
#   (/proc/PID/io rchar: what the brokers' periodic registrations cost), and
#   the time a slave of the broker (brokerRole=SLAVE, same brokerName) takes
#   after the step to hold every topic (metadata streamed over HA and
#   synced every slaveSyncInterval), with its RSS.
# Ways: "batch" (UPDATE_AND_CREATE_TOPIC_LIST, 1,000 topics a request) and
# "single" (one UPDATE_AND_CREATE_TOPIC per topic, WINDOW requests in flight
# on one connection: the topicload driver, tests/cluster/topicload.c). Last,
# the broker of the last way is restarted over its store and timed until
# all its topics are back in the routes: after a clean stop (SIGTERM: the
# table is compacted) and after kill -9 (the change log is replayed).
#
#   scripts/bench-topics.sh [-n MAX_TOPICS] [-w WINDOW] [-p PERIOD_MS] [-m batch|single|both] [-b BUILD_DIR]
#
# Defaults: 100000 topics, window 128, registerNameServerPeriod 10000 ms,
# both ways, build dir build ($RMQ_BUILD_ROOT when set). Ports are
# ephemeral; everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX=100000 WINDOW=128 PERIOD=10000 MODES=both
BUILD=${RMQ_BUILD_ROOT:-build}
usage() {
  echo "usage: scripts/bench-topics.sh [-n MAX_TOPICS] [-w WINDOW] [-p PERIOD_MS] [-m batch|single|both] [-b BUILD_DIR]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    -n) MAX=$2; shift 2 ;;
    -w) WINDOW=$2; shift 2 ;;
    -p) PERIOD=$2; shift 2 ;;
    -m) MODES=$2; shift 2 ;;
    -b) BUILD=$2; shift 2 ;;
    *) usage ;;
  esac
done
case $MODES in batch|single) ;; both) MODES="batch single" ;; *) usage ;; esac
scripts/build.sh "$BUILD" -- namesrv/mqnamesrv broker/mqbroker tests/cluster/topicload
BUILD=$(cd "$BUILD" && pwd)
TL=$BUILD/tests/cluster/topicload
QUEUES=8
# shellcheck source=SCRIPTDIR/bench/lib-daemons.sh
. scripts/bench/lib-daemons.sh
bd_init bench-topics

rss_mib() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
rchar() { awk '/^rchar/ { print $2 }' "/proc/$1/io"; }
now_ms() { date +%s%3N; }
field() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# wait_slave SLAVE TO: polls until the slave has every topic of [0, TO); prints ms waited.
wait_slave() {
  local t0 out
  t0=$(now_ms)
  for _ in $(seq 1200); do
    if "$TL" stats "$1" T $(($2 - 1)) "$2" 1 >/dev/null && out=$("$TL" stats "$1" T 0 "$2" 64); then
      echo $(($(now_ms) - t0))
      return 0
    fi
    sleep 0.25
  done
  echo "bench-topics: the slave still lacks topics: $out" >&2
  return 1
}

# wait_routes NS FROM TO: polls the name server's topic list (one request)
# every 0.1 s until it names every topic of [FROM, TO), then checks that
# each of those routes has its queues (one lookup per topic, which takes
# seconds at 100k topics: so it is not the poll); prints the ms until the
# list was complete.
wait_routes() {
  local t0 ms out
  t0=$(now_ms)
  for _ in $(seq 3000); do
    if out=$("$TL" list "$1" T "$2" "$3"); then
      ms=$(($(now_ms) - t0))
      if out=$("$TL" routes "$1" T "$2" "$3" "$QUEUES" 64); then
        echo "$ms"
        return 0
      fi
    fi
    sleep 0.1
  done
  echo "bench-topics: routes still missing: $out" >&2
  return 1
}

printf 'machine: %s cores, load average %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %7s %8s %6s %9s %8s %8s %10s %10s %12s %9s %8s\n' WAY TOPICS STEP_S FAILED ROUTED_MS BK_MiB NS_MiB \
  LOOKUP_P50 LOOKUP_P99 NS_B/PERIOD SLAVE_MS SL_MiB
for way in $MODES; do
  bd_start "ns-$way" "$BUILD/namesrv/mqnamesrv" "listenPort=0
bindAddress=127.0.0.1"
  ns_pid=$LAST_PID ns="127.0.0.1:$LAST_PORT"
  bk_props="brokerName=broker-$way
listenPort=0
haListenPort=0
storePathRootDir=$work/store-$way
namesrvAddr=$ns
autoCreateTopicEnable=false
registerNameServerPeriod=$PERIOD
mapedFileSizeCommitLog=67108864"
  bd_start "bk-$way" "$BUILD/broker/mqbroker" "$bk_props"
  bk_pid=$LAST_PID bk="127.0.0.1:$LAST_PORT"
  bd_start "sl-$way" "$BUILD/broker/mqbroker" "brokerName=broker-$way
brokerId=1
brokerRole=SLAVE
listenPort=0
storePathRootDir=$work/store-$way-slave
namesrvAddr=$ns
registerNameServerPeriod=$PERIOD
mapedFileSizeCommitLog=67108864"
  sl_pid=$LAST_PID sl="127.0.0.1:$LAST_PORT"
  batch=1
  [ "$way" = batch ] && batch=1000
  from=0
  for step in 1000 10000 100000; do
    [ "$step" -le "$MAX" ] || break
    out=$("$TL" create "$bk" T "$from" "$step" "$QUEUES" "$batch" "$WINDOW") || true
    routed=$(wait_routes "$ns" 0 "$step")
    slave=$(wait_slave "$sl" "$step")
    lat=$("$TL" routes "$ns" T 0 $((step < 2000 ? step : 2000)) "$QUEUES" 1) || true
    sleep 1
    r0=$(rchar "$ns_pid")
    sleep $(((PERIOD + 999) / 1000))
    r1=$(rchar "$ns_pid")
    printf '%-6s %7d %8s %6s %9s %8s %8s %8sus %8sus %12d %9s %8s\n' "$way" "$step" "$(field secs "$out")" \
      "$(field failed "$out")" "$routed" "$(rss_mib "$bk_pid")" "$(rss_mib "$ns_pid")" \
      "$(field p50_us "$lat")" "$(field p99_us "$lat")" $((r1 - r0)) "$slave" "$(rss_mib "$sl_pid")"
    from=$step
  done
  last_way=$way last_ns=$ns last_top=$from
  if [ "$way" != "${MODES##* }" ]; then
    kill "$sl_pid" "$bk_pid" "$ns_pid"
    wait "$sl_pid" "$bk_pid" "$ns_pid" 2>/dev/null || true
  fi
done

# restart SIGNAL: stops the broker with SIGNAL (TERM: it unregisters and its
# routes go; KILL: the name server drops them when the connection closes),
# waits for its routes to go, then times the start until every topic is
# routed again.
restart() {
  kill -"$1" "$bk_pid"
  wait "$bk_pid" 2>/dev/null || true
  for _ in $(seq 600); do
    "$TL" routes "$last_ns" T 0 1 "$QUEUES" 1 >/dev/null || break
    sleep 0.1
  done
  local t0 ready routed
  t0=$(now_ms)
  bd_start "bk-$last_way" "$BUILD/broker/mqbroker" "$bk_props"
  bk_pid=$LAST_PID
  ready=$(($(now_ms) - t0))
  routed=$(wait_routes "$last_ns" 0 "$last_top")
  printf 'restart of the %s broker with %d topics after SIG%s: ready in %d ms, every topic routed %d ms after start\n' \
    "$last_way" "$last_top" "$1" "$ready" $((ready + routed))
}
kill "$sl_pid"                 # the slave keeps the broker name's routes alive
wait "$sl_pid" 2>/dev/null || true
restart TERM
restart KILL
