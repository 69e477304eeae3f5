#!/bin/bash
# The README's first command: installs what is missing, builds, starts a
# local cluster on loopback (a name server and a broker master), runs the
# main job (mqadmin against the cluster, mqbench producer and consumer),
# prints a summary and stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/bootstrap.sh
./scripts/build.sh build

NS_PORT=${RMQ_NAMESRV_PORT:-9876}
BROKER_PORT=${RMQ_BROKER_PORT:-10911}
BENCH_SECONDS=${RMQ_BENCH_SECONDS:-10}
work=$(mktemp -d /tmp/rmq-quickstart.XXXXXX)
pids=()

cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# wait_ready FILE NAME LOG: waits up to 15 s for a daemon's ready file.
wait_ready() {
  local _
  for _ in $(seq 150); do
    [ -f "$1" ] && return 0
    sleep 0.1
  done
  echo "quickstart: $2 did not start; last lines of $3:" >&2
  tail -20 "$3" >&2
  exit 1
}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "name server on 127.0.0.1:$NS_PORT"
cat >"$work/namesrv.properties" <<PROPS
listenPort=$NS_PORT
bindAddress=127.0.0.1
PROPS
build/namesrv/mqnamesrv -c "$work/namesrv.properties" --ready-file "$work/ns.ready" \
  >"$work/namesrv.log" 2>&1 &
pids+=($!)
wait_ready "$work/ns.ready" mqnamesrv "$work/namesrv.log"
NS="127.0.0.1:$NS_PORT"

step "broker master broker-a on 127.0.0.1:$BROKER_PORT"
cat >"$work/broker-a.properties" <<PROPS
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
listenPort=$BROKER_PORT
brokerIP1=127.0.0.1
storePathRootDir=$work/store-a
mapedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
PROPS
build/broker/mqbroker -c "$work/broker-a.properties" -n "$NS" --ready-file "$work/broker-a.ready" \
  >"$work/broker-a.log" 2>&1 &
pids+=($!)
wait_ready "$work/broker-a.ready" mqbroker "$work/broker-a.log"
sleep 1

step "mqadmin clusterList -n $NS"
build/tools/mqadmin clusterList -n "$NS"

step "mqadmin updateTopic -t QuickStart -c DefaultCluster"
build/tools/mqadmin updateTopic -n "$NS" -t QuickStart -c DefaultCluster -r 4 -w 4

step "mqadmin topicRoute -t QuickStart"
build/tools/mqadmin topicRoute -n "$NS" -t QuickStart

step "mqbench producer: 16 threads, 128 B, ${BENCH_SECONDS}s"
build/tools/mqbench producer -n "$NS" -t QuickStart -w 16 -s 128 -d "$BENCH_SECONDS" \
  --json "$work/producer.json" | tee "$work/producer.out"

step "mqbench consumer: drain QuickStart from the first offset"
build/tools/mqbench consumer -n "$NS" -t QuickStart -g QuickStartGroup -f first \
  -d "$BENCH_SECONDS" --json "$work/consumer.json" | tee "$work/consumer.out"

step "mqadmin topicStatus -t QuickStart"
build/tools/mqadmin topicStatus -n "$NS" -t QuickStart

sent=$(grep -o 'Send Total: [0-9]*' "$work/producer.out" | tail -1 | awk '{print $3}')
got=$(grep -o 'Consume Total: [0-9]*' "$work/consumer.out" | tail -1 | awk '{print $3}')
step "summary"
printf '%-28s %s\n' "name server" "$NS" "broker-a (master)" "127.0.0.1:$BROKER_PORT" \
  "messages acknowledged" "${sent:-?}" "messages consumed" "${got:-?}"
if [ -n "${sent:-}" ] && [ -n "${got:-}" ] && [ "$got" -ge "$sent" ]; then
  echo "every acknowledged message was consumed"
else
  echo "quickstart: consumed fewer messages than were acknowledged" >&2
  exit 1
fi
