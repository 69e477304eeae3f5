# tests/java/java_lib.sh: what the Java-client test scripts share (sourced,
# not run): a temp dir with cleanup, the Maven build of tests/java (SKIP when
# java or mvn is missing or Maven Central cannot be reached; jars stay in
# ~/.m2 and the temp dir, never in the tree), and an rmq name server and
# broker on ephemeral loopback ports.
# shellcheck shell=bash

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

# skip_all PLAN REASON: every check SKIPs
skip_all() {
  local i
  for i in $(seq 1 "$1"); do echo "ok $i # SKIP $2"; done
  exit 0
}

# java_build PLAN [PROJECT [PROFILE]]: builds the Maven project PROJECT
# (default tests/java; with Maven profile PROFILE, e.g. rocketmq5 for the
# 5.x client) offline after fetching its dependencies; sets $cp (the
# classpath). Prints "not ok 1" and exits when it fails to build.
java_build() {
  local project=${2:-$here} profile=()
  [ -z "${3:-}" ] || profile=("-P$3")
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then skip_all "$1" "java or mvn not installed"; fi
  # the project is copied so that target/ (classes, jars) never lands in the tree
  cp -r "$project/pom.xml" "$project/src" "$run/"
  if ! (cd "$run" && mvn -q -B "${profile[@]}" dependency:go-offline >"$run/mvn-fetch.log" 2>&1); then
    tail -20 "$run/mvn-fetch.log" >&2
    skip_all "$1" "cannot fetch rocketmq-client from Maven Central"
  fi
  if ! (cd "$run" && mvn -q -B -o "${profile[@]}" package dependency:build-classpath -Dmdep.outputFile=cp.txt \
        >"$run/mvn-build.log" 2>&1); then
    tail -40 "$run/mvn-build.log" >&2
    echo "not ok 1 - tests/java builds offline"
    exit 1
  fi
  cp=$(cat "$run/cp.txt"):$run/target/classes
}

# ready_port FILE KEY: waits for KEY=PORT in a ready file; prints the port
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

# start_namesrv: sets $ns (host:port)
start_namesrv() {
  printf 'listenPort=0\nbindAddress=127.0.0.1\n' >"$run/ns.properties"
  "$bin/namesrv/mqnamesrv" -c "$run/ns.properties" --ready-file "$run/ns.ready" >"$run/ns.log" 2>&1 &
  pids+=("$!")
  local port
  port=$(ready_port "$run/ns.ready" listenPort) || { cat "$run/ns.log" >&2; exit 1; }
  ns=127.0.0.1:$port
}

# start_broker CLUSTER NAME: a master registered with $ns; sets $bk_port and
# $bk_pid. $broker_extra (property lines), when set, ends the properties.
start_broker() {
  cat >"$run/broker.properties" <<PROPS
brokerClusterName=$1
brokerName=$2
brokerId=0
brokerRole=ASYNC_MASTER
listenPort=${bk_port:-0}
haListenPort=0
brokerIP1=127.0.0.1
storePathRootDir=$run/store
mapedFileSizeCommitLog=16777216
namesrvAddr=$ns
registerNameServerPeriod=1000
${broker_extra:-}
PROPS
  rm -f "$run/broker.ready"
  "$bin/broker/mqbroker" -c "$run/broker.properties" --ready-file "$run/broker.ready" >>"$run/broker.log" 2>&1 &
  bk_pid=$!
  pids+=("$bk_pid")
  bk_port=$(ready_port "$run/broker.ready" listenPort) || { cat "$run/broker.log" >&2; exit 1; }
}

# create_topic CLUSTER TOPIC: 4 queues, waits until the name server routes it
create_topic() {
  local i
  "$bin/tools/mqadmin" updateTopic -n "$ns" -c "$1" -t "$2" -r 4 -w 4 >"$run/mqadmin.log" 2>&1 \
    || { cat "$run/mqadmin.log" >&2; exit 1; }
  for i in $(seq 1 100); do
    "$bin/tools/mqadmin" topicRoute -n "$ns" -t "$2" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
}
