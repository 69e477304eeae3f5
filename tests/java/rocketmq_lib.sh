# tests/java/rocketmq_lib.sh: Apache RocketMQ's own name server and broker
# run from the Maven Central jars with java -cp, for the migration tests
# (sourced after java_lib.sh, which provides $run, $pids, skip_all). The jars
# are fetched as scripts/bench/rocketmq.sh fetches them: the same pom
# (scripts/bench/rocketmq/pom.xml, mvn dependency:copy-dependencies) into the
# same cache (RMQ_BENCH_ROCKETMQ_CACHE, default ~/.cache/rmq-bench), so a
# machine downloads them once for the bench and the tests, never into the tree.
# shellcheck shell=bash

rq_version=${RMQ_TEST_ROCKETMQ_VERSION:-4.9.7}
rq_lib=${RMQ_BENCH_ROCKETMQ_CACHE:-$HOME/.cache/rmq-bench}/rocketmq-$rq_version/lib
# Java 17: RocketMQ 4.9's store unmaps with jdk.internal.ref.Cleaner and its
# remoting reflects into java.nio / sun.nio.ch (as scripts/bench/rocketmq.sh).
rq_opens=(--add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED)

# rq_jars PLAN: the RocketMQ jars in $rq_lib (fetched once); SKIPs every
# check when Maven Central cannot serve them.
rq_jars() {
  [ -f "$rq_lib/rocketmq-broker-$rq_version.jar" ] && return 0
  mkdir -p "$rq_lib"
  if ! mvn -q -B -f "$src/scripts/bench/rocketmq/pom.xml" -Drocketmq.version="$rq_version" \
       dependency:copy-dependencies -DoutputDirectory="$rq_lib" >"$run/rq-mvn.log" 2>&1; then
    tail -20 "$run/rq-mvn.log" >&2
    skip_all "$1" "cannot fetch rocketmq-broker $rq_version from Maven Central"
  fi
}

# free_port_run: a port P with P-2, P and P+1 free on loopback (a RocketMQ
# broker listens on all three).
free_port_run() {
  python3 - <<'PY'
import random, socket
for _ in range(200):
    p = random.randint(20000, 60000)
    socks = []
    try:
        for q in (p - 2, p, p + 1):
            s = socket.socket()
            s.bind(("127.0.0.1", q))
            socks.append(s)
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(p)
    break
PY
}

# port_open PORT
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# rq_java NAME CLASS ARGS...: a RocketMQ JVM in the background (log
# $run/NAME.log, user.home $run/NAME-home), with the JVM options in the
# array rq_jvm (e.g. RocketMQ's -Dtls.* settings) when set; sets $rq_pid.
rq_jvm=()
rq_java() {
  local name=$1 cls=$2
  shift 2
  mkdir -p "$run/$name-home/conf"
  for c in namesrv broker tools; do
    cp "$src/scripts/bench/rocketmq/logback.xml" "$run/$name-home/conf/logback_$c.xml"
  done
  ROCKETMQ_HOME=$run/$name-home java -Xms256m -Xmx256m -XX:MaxDirectMemorySize=256m "${rq_opens[@]}" "${rq_jvm[@]}" \
    "-Duser.home=$run/$name-home" -cp "$rq_lib/*" "$cls" "$@" >>"$run/$name.log" 2>&1 &
  rq_pid=$!
  pids+=("$rq_pid")
}

# rq_wait_port NAME PORT PID: waits up to 180 s (JVMs start slowly on a
# loaded machine); 1 with the log tail when it never opens.
rq_wait_port() {
  local i
  for ((i = 0; i < 360; i++)); do
    port_open "$2" && return 0
    kill -0 "$3" 2>/dev/null || break
    sleep 0.5
  done
  tail -20 "$run/$1.log" | sed 's/^/# /'
  return 1
}

# rq_broker NAME CLUSTER BROKERNAME PORT NAMESRV [EXTRA-PROPERTIES]: a
# RocketMQ master; sets $rq_pid.
rq_broker() {
  mkdir -p "$run/$1-store"
  {
    echo "brokerClusterName=$2"
    echo "brokerName=$3"
    echo "brokerId=0"
    echo "brokerRole=ASYNC_MASTER"
    echo "flushDiskType=ASYNC_FLUSH"
    echo "listenPort=$4"
    echo "haListenPort=$(($4 + 1))"
    echo "brokerIP1=127.0.0.1"
    echo "namesrvAddr=$5"
    echo "storePathRootDir=$run/$1-store"
    echo "storePathCommitLog=$run/$1-store/commitlog"
    echo "mapedFileSizeCommitLog=16777216"
    echo "autoCreateTopicEnable=true"
    printf '%b' "${6:-}"
  } >"$run/$1.properties"
  rq_java "$1" org.apache.rocketmq.broker.BrokerStartup -c "$run/$1.properties"
}

# rq_admin ARGS...: RocketMQ's own mqadmin (MQAdminStartup).
rq_admin() {
  mkdir -p "$run/admin-home/conf"
  cp "$src/scripts/bench/rocketmq/logback.xml" "$run/admin-home/conf/logback_tools.xml"
  ROCKETMQ_HOME=$run/admin-home timeout 120 java -Xmx256m "${rq_opens[@]}" "-Duser.home=$run/admin-home" \
    -cp "$rq_lib/*" org.apache.rocketmq.tools.command.MQAdminStartup "$@"
}

# rq_namesrv NAME PORT: a RocketMQ name server on 127.0.0.1:PORT; sets $rq_pid.
rq_namesrv() {
  printf 'listenPort=%s\n' "$2" >"$run/$1.properties"
  rq_java "$1" org.apache.rocketmq.namesrv.NamesrvStartup -c "$run/$1.properties"
}

# rq_cluster_info NS [CA]: the raw body of GET_BROKER_CLUSTER_INFO (106)
# from the name server at NS (host:port), asked over remoting by a short
# Python client waiting up to 60 s: RocketMQ's own mqadmin, a JVM per call,
# misses its 5 s timeout on a loaded machine. With CA (a PEM file) over TLS,
# verifying the server against it. 1 when there is no answer.
rq_cluster_info() {
  python3 - "$1" "${2:-}" <<'PY'
import json, socket, ssl, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
hdr = json.dumps({"code": 106, "flag": 0, "language": "JAVA", "opaque": 1,
                  "serializeTypeCurrentRPC": "JSON", "version": 395}).encode()
try:
    s = socket.create_connection((host, int(port)), timeout=60)
    if sys.argv[2]:
        s = ssl.create_default_context(cafile=sys.argv[2]).wrap_socket(s, server_hostname=host)
except (OSError, ssl.SSLError):
    sys.exit(1)
s.sendall(struct.pack(">II", 4 + len(hdr), len(hdr)) + hdr)
def read(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit(1)
        b += c
    return b
total, word = struct.unpack(">II", read(8))
rest = read(total - 4)
print(rest[word & 0xFFFFFF:].decode("utf-8", "replace"))
PY
}

# rq_topic_seed NAME TOPIC QUEUES: TOPIC in the topics.json of the RocketMQ
# broker NAME's store, before it starts (it loads it as its own table, and
# registers it): no admin JVM racing a 5 s timeout on a loaded machine.
rq_topic_seed() {
  mkdir -p "$run/$1-store/config"
  printf '{"dataVersion":{"counter":1,"timestamp":1700000000000},"topicConfigTable":{"%s":{"order":false,"perm":6,"readQueueNums":%s,"topicFilterType":"SINGLE_TAG","topicName":"%s","topicSysFlag":0,"writeQueueNums":%s}}}\n' \
    "$2" "$3" "$2" "$3" >"$run/$1-store/config/topics.json"
}

# rq_update_topic ARGS...: RocketMQ's mqadmin updateTopic ARGS, tried up to
# three times until it reports success (it exits 0 on a timeout too).
rq_update_topic() {
  local i
  for i in 1 2 3; do
    rq_admin updateTopic "$@" >"$run/rq-update.out" 2>&1
    cat "$run/rq-update.out"
    grep -q success "$run/rq-update.out" && return 0
  done
  return 1
}

# ---- the migration tests (run_migration_test.sh, run_migration_reverse_test.sh,
# run_migration_tls_test.sh): the RocketMQ broker broker-j on $rq_port and
# the rmq broker broker-r on $bk_port serve one topic, seen from the name
# server $ns by the Java client's rmqtest.Migration ($cp, from java_build).

# mig_begin PLAN [no-client]: the TAP plan, then what a migration test
# needs: the Java client built (java_build; with no-client only java and
# mvn present) and the RocketMQ jars. SKIPs every check without them.
mig_begin() {
  echo "1..$1"
  if [ "${2:-}" = no-client ]; then
    command -v java >/dev/null && command -v mvn >/dev/null || skip_all "$1" "java or mvn not installed"
  else
    java_build "$1"
  fi
  rq_jars "$1"
}

# mig_rq_namesrv: a RocketMQ name server (JVM options from rq_jvm) on a free
# loopback port; sets $ns. "not ok 1" and exit when it never listens.
mig_rq_namesrv() {
  local port
  port=$(free_port_run)
  rq_namesrv rq-ns "$port"
  rq_wait_port rq-ns "$port" "$rq_pid" || { echo "not ok 1 - the RocketMQ name server starts"; exit 1; }
  ns=127.0.0.1:$port
}

# rq_broker_ready NAME CLUSTER BROKERNAME PORT NAMESRV [EXTRA-PROPERTIES]:
# rq_broker, then its port open; "not ok 1" and exit when it never listens.
rq_broker_ready() {
  rq_broker "$@"
  rq_wait_port "$1" "$4" "$rq_pid" || { echo "not ok 1 - the RocketMQ broker starts"; exit 1; }
}

# mig_rq_in_cluster NAME...: the cluster info of the RocketMQ name server
# $ns ($run/cluster.out; over TLS, verified against $rq_ca, when that is
# set) names every NAME.
mig_rq_in_cluster() {
  local b
  rq_cluster_info "$ns" "${rq_ca:-}" >"$run/cluster.out" 2>&1 || return 1
  for b in "$@"; do grep -q "$b" "$run/cluster.out" || return 1; done
}

# mig_rmq_broker_unregisters GONE: stops the rmq broker (SIGTERM, waited
# for); 0 when GONE (a function: the name server no longer lists it) holds
# within 60 s and its log says it unregistered.
mig_rmq_broker_unregisters() {
  kill -TERM "$bk_pid"
  wait "$bk_pid" 2>/dev/null
  mig_wait_for 60 "$1" && grep -q 'unregistered from RocketMQ name server' "$run/broker.log"
}

mig_n=0
# mig_result RC DESC: the next TAP line, ok when RC is 0.
mig_result() {
  mig_n=$((mig_n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $mig_n - $2"; else echo "not ok $mig_n - $2"; fi
}

# mig ARGS...: rmqtest.Migration ARGS, for up to 300 s (stderr to $run/java.err).
mig() { timeout 300 java -cp "$cp" rmqtest.Migration "$@" 2>>"$run/java.err"; }

# mig_wait_for SECONDS CMD...: until CMD succeeds; 1 when it never does.
mig_wait_for() {
  local t=$1 i
  shift
  for ((i = 0; i < t * 2; i++)); do "$@" && return 0; sleep 0.5; done
  return 1
}

# mig_route_both TOPIC: the client's route of TOPIC ($run/route.out) names
# both brokers at their ports.
mig_route_both() {
  mig route "$ns" "$1" >"$run/route.out" && grep -q "ROUTE broker-j 127.0.0.1:$rq_port" "$run/route.out" &&
    grep -q "ROUTE broker-r 127.0.0.1:$bk_port" "$run/route.out"
}

# mig_produce_consume TOPIC: two results: 200 sync sends SEND_OK spread
# over both brokers, then a push consumer receiving every one from both.
mig_produce_consume() {
  local ok on_j on_r missing from_j from_r
  mig produce "$ns" "$1" 200 >"$run/p.out"
  ok=$(awk '$1 == "SENT" && $3 == "SEND_OK"' "$run/p.out" | wc -l)
  on_j=$(awk '$1 == "SENT" && $4 == "broker-j"' "$run/p.out" | wc -l)
  on_r=$(awk '$1 == "SENT" && $4 == "broker-r"' "$run/p.out" | wc -l)
  echo "# $ok SEND_OK: $on_j to the RocketMQ broker, $on_r to the rmq broker"
  [ "$ok" -eq 200 ] && [ "$on_j" -gt 0 ] && [ "$on_r" -gt 0 ]
  mig_result $? "200 sync sends SEND_OK, spread over the RocketMQ and the rmq broker"

  mig consume "$ns" "$1" rmq_migration_group 200 120 >"$run/c.out"
  awk '$1 == "SENT" { print $2 }' "$run/p.out" | sort >"$run/sent"
  awk '$1 == "RECV" { print $2 }' "$run/c.out" | sort -u >"$run/recv"
  missing=$(comm -23 "$run/sent" "$run/recv" | wc -l)
  from_j=$(awk '$1 == "RECV" && $3 == "broker-j"' "$run/c.out" | wc -l)
  from_r=$(awk '$1 == "RECV" && $3 == "broker-r"' "$run/c.out" | wc -l)
  echo "# received $(wc -l <"$run/recv") distinct, missing $missing; $from_j from broker-j, $from_r from broker-r"
  [ "$missing" -eq 0 ] && [ "$from_j" -gt 0 ] && [ "$from_r" -gt 0 ]
  mig_result $? "the push consumer received every message, from both brokers"
}
