#!/bin/bash
# tests/java/run_admin_test.sh: the unmodified Apache RocketMQ Java client
# (org.apache.rocketmq:rocketmq-client 4.9.x from Maven Central) asks our
# name server for a topic's route, the cluster info and the topic list over
# RocketMQ's remoting protocol, with an rmq broker registered. Fetches the
# client with `mvn dependency:go-offline`, builds tests/java offline, starts
# mqnamesrv and mqbroker on ephemeral loopback ports and checks what the
# client printed (AdminRoute.java). Prints TAP; SKIP when java or mvn is
# missing or Maven Central cannot be reached. Jars stay in ~/.m2 and in a
# temporary build directory, never in the tree.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${RMQ_BUILD_ROOT:-$src/build}
run=$(mktemp -d /tmp/rmq-test-java.XXXXXX)
pids=()

cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "1..5"
skip_all() {
  local i
  for i in 1 2 3 4 5; do echo "ok $i # SKIP $1"; done
  exit 0
}
command -v java >/dev/null && command -v mvn >/dev/null || skip_all "java or mvn not installed"

# the project is copied so that target/ (classes, jars) never lands in the tree
cp -r "$here/pom.xml" "$here/src" "$run/"
if ! (cd "$run" && mvn -q -B dependency:go-offline >"$run/mvn-fetch.log" 2>&1); then
  tail -20 "$run/mvn-fetch.log" >&2
  skip_all "cannot fetch rocketmq-client from Maven Central"
fi
if ! (cd "$run" && mvn -q -B -o package dependency:build-classpath -Dmdep.outputFile=cp.txt \
      >"$run/mvn-build.log" 2>&1); then
  tail -40 "$run/mvn-build.log" >&2
  echo "not ok 1 - AdminRoute builds offline"
  exit 1
fi

# waits for KEY=PORT in a ready file; prints the port
ready_port() {
  local file=$1 key=$2 i
  for i in $(seq 1 200); do
    if [ -f "$file" ] && grep -q "^$key=" "$file"; then
      sed -n "s/^$key=//p" "$file"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

printf 'listenPort=0\nbindAddress=127.0.0.1\n' >"$run/ns.properties"
"$bin/namesrv/mqnamesrv" -c "$run/ns.properties" --ready-file "$run/ns.ready" >"$run/ns.log" 2>&1 &
pids+=($!)
ns_port=$(ready_port "$run/ns.ready" listenPort) || { cat "$run/ns.log" >&2; exit 1; }
ns=127.0.0.1:$ns_port
cat >"$run/broker.properties" <<PROPS
brokerClusterName=JavaCluster
brokerName=broker-j
brokerId=0
brokerRole=ASYNC_MASTER
listenPort=0
haListenPort=0
brokerIP1=127.0.0.1
storePathRootDir=$run/store
mapedFileSizeCommitLog=16777216
namesrvAddr=$ns
registerNameServerPeriod=1000
PROPS
"$bin/broker/mqbroker" -c "$run/broker.properties" --ready-file "$run/broker.ready" >"$run/broker.log" 2>&1 &
pids+=($!)
bk_port=$(ready_port "$run/broker.ready" listenPort) || { cat "$run/broker.log" >&2; exit 1; }
"$bin/tools/mqadmin" updateTopic -n "$ns" -c JavaCluster -t JavaTopic -r 4 -w 4 >"$run/mqadmin.log" 2>&1 \
  || { cat "$run/mqadmin.log" >&2; exit 1; }
for i in $(seq 1 100); do
  "$bin/tools/mqadmin" topicRoute -n "$ns" -t JavaTopic >/dev/null 2>&1 && break
  sleep 0.2
done

cp=$(cat "$run/cp.txt"):$run/target/classes
out=$run/java.out
timeout 120 java -cp "$cp" rmqtest.AdminRoute "$ns" JavaTopic >"$out" 2>"$run/java.err"
rc=$?
echo "# java exited $rc; it printed:"
sed 's/^/# /' "$out"
if [ "$rc" -eq 0 ]; then echo "ok 1 - AdminRoute ran"; else
  echo "not ok 1 - AdminRoute ran"; tail -30 "$run/java.err" | sed 's/^/# /'; fi
check() {
  local n=$1 what=$2 pattern=$3
  if grep -qx -- "$pattern" "$out"; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}
check 2 "route lists broker-j with 4 queues, read/write perm, its master" \
  "ROUTE broker-j read=4 write=4 perm=6 master=127.0.0.1:$bk_port"
check 3 "cluster info lists broker-j in JavaCluster" "CLUSTER JavaCluster broker-j master=127.0.0.1:$bk_port"
check 4 "topic list holds JavaTopic" "TOPICLIST JavaTopic"
check 5 "an unknown topic is TOPIC_NOT_EXIST (17)" "NOTEXIST code=17"
