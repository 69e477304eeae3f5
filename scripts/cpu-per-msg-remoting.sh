#!/bin/bash
# scripts/cpu-per-msg-remoting.sh: the broker's CPU per acknowledged message
# when the unmodified RocketMQ 4.9 Java producer sends over the remoting
# protocol (tests/java BenchSend: THREADS threads of sync sends), the
# counterpart of scripts/cpu-per-msg.sh's native figure (mqbench). Starts a
# name server and one ASYNC_MASTER broker from a build dir on ephemeral
# loopback ports, warms up with 2000 messages, then reads the broker's
# utime+stime (/proc/PID/stat) around N sends and prints CPU-us/msg.
#
#   scripts/cpu-per-msg-remoting.sh [--build DIR] [-n N] [-w THREADS] [-s SIZE] [--binary]
#
#   --binary   the client's headers in ROCKETMQ binary encoding
#              (-Drocketmq.serialize.type=ROCKETMQ) instead of its default JSON
# Needs java and mvn with rocketmq-client 4.9.7 in ~/.m2 (tests/java's pom).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$src/build N=100000 W=64 S=128 JOPTS=
while [ $# -gt 0 ]; do
  case $1 in
    --build) bin=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -w) W=$2; shift 2 ;;
    -s) S=$2; shift 2 ;;
    --binary) JOPTS=-Drocketmq.serialize.type=ROCKETMQ; shift ;;
    *) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
run=$(mktemp -d "${TMPDIR:-/tmp}/rmq-cpm-rem.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$run"
}
trap cleanup EXIT
cp -r "$src/tests/java/pom.xml" "$src/tests/java/src" "$run/"
(cd "$run" && mvn -q -B dependency:go-offline >"$run/mvn.log" 2>&1 &&
  mvn -q -B -o package dependency:build-classpath -Dmdep.outputFile=cp.txt >>"$run/mvn.log" 2>&1) ||
  { tail -20 "$run/mvn.log" >&2; exit 1; }
cp=$(cat "$run/cp.txt"):$run/target/classes
ready() {
  local _
  for _ in $(seq 1 200); do
    [ -f "$1" ] && grep -q "^listenPort=" "$1" && { sed -n 's/^listenPort=//p' "$1"; return 0; }
    sleep 0.1
  done
  return 1
}
printf 'listenPort=0\nbindAddress=127.0.0.1\n' >"$run/ns.properties"
"$bin/namesrv/mqnamesrv" -c "$run/ns.properties" --ready-file "$run/ns.ready" >"$run/ns.log" 2>&1 &
pids+=($!)
ns=127.0.0.1:$(ready "$run/ns.ready") || exit 1
cat >"$run/broker.properties" <<PROPS
brokerClusterName=BenchCluster
brokerName=broker-a
brokerId=0
brokerRole=ASYNC_MASTER
listenPort=0
haListenPort=0
brokerIP1=127.0.0.1
storePathRootDir=$run/store
namesrvAddr=$ns
registerNameServerPeriod=1000
PROPS
"$bin/broker/mqbroker" -c "$run/broker.properties" --ready-file "$run/broker.ready" >"$run/broker.log" 2>&1 &
bk=$!
pids+=("$bk")
ready "$run/broker.ready" >/dev/null || { cat "$run/broker.log" >&2; exit 1; }
"$bin/tools/mqadmin" updateTopic -n "$ns" -c BenchCluster -t CpuBench -r 8 -w 8 >/dev/null || exit 1
sleep 2
cpu() { awk '{ print $14 + $15 }' "/proc/$bk/stat"; }
# shellcheck disable=SC2086
java $JOPTS -cp "$cp" rmqtest.BenchSend "$ns" CpuBench "$W" 2000 "$S" >"$run/warm.out" 2>&1
c0=$(cpu)
# shellcheck disable=SC2086
java $JOPTS -cp "$cp" rmqtest.BenchSend "$ns" CpuBench "$W" "$N" "$S" >"$run/run.out" 2>&1
c1=$(cpu)
acked=$(sed -n 's/^ACKED //p' "$run/run.out")
if [ -z "$acked" ] || [ "$acked" -eq 0 ]; then cat "$run/run.out" >&2; exit 1; fi
tck=$(getconf CLK_TCK)
awk -v t=$((c1 - c0)) -v hz="$tck" -v n="$acked" -v f="$(sed -n 's/^FAILED //p' "$run/run.out")" \
  'BEGIN { printf "remoting: %.2f broker CPU-us per message (%d acknowledged, %d failed)\n", t * 1e6 / hz / n, n, f }'
