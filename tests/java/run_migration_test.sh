#!/bin/bash
# tests/java/run_migration_test.sh: moving a RocketMQ cluster to rmq one
# process at a time. An Apache RocketMQ 4.9.7 broker (Maven Central jars,
# tests/java/rocketmq_lib.sh) registers with rmq's name server next to an
# rmq broker, with compressedRegister=true and forceRegister=false (so its
# periodic registrations are QUERY_DATA_VERSION) with a topic in its
# topics.json; rmq's mqadmin creates it on the rmq broker; the unmodified Java
# client (rocketmq-client 4.9.7, Migration.java) routes from rmq's name
# server, produces to both brokers and consumes every message from both;
# the RocketMQ broker stays in the route past brokerChannelExpiredTime
# (its heartbeats count); stopped, it unregisters and leaves the route.
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"
# shellcheck source=tests/java/rocketmq_lib.sh
. "$(dirname "$0")/rocketmq_lib.sh"

plan=7
echo "1..$plan"
java_build $plan
rq_jars $plan

n=0
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
mig() { timeout 300 java -cp "$cp" rmqtest.Migration "$@" 2>>"$run/java.err"; }
in_cluster() { "$bin/tools/mqadmin" clusterList -n "$ns" 2>/dev/null | grep -q "$1"; }
# wait_for SECONDS CMD...: until CMD succeeds
wait_for() {
  local t=$1 i
  shift
  for ((i = 0; i < t * 2; i++)); do "$@" && return 0; sleep 0.5; done
  return 1
}

# rmq's name server with a short expiry, so the heartbeat check is quick
printf 'listenPort=0\nbindAddress=127.0.0.1\nbrokerChannelExpiredTime=15000\nscanNotActiveBrokerInterval=1000\n' \
  >"$run/ns.properties"
"$bin/namesrv/mqnamesrv" -c "$run/ns.properties" --ready-file "$run/ns.ready" >"$run/ns.log" 2>&1 &
pids+=("$!")
ns=127.0.0.1:$(ready_port "$run/ns.ready" listenPort) || { cat "$run/ns.log" >&2; exit 1; }
start_broker MigCluster broker-r
rq_port=$(free_port_run)
rq_topic_seed rq-broker MigTopic 4
rq_broker rq-broker MigCluster broker-j "$rq_port" "$ns" \
  'compressedRegister=true\nforceRegister=false\nregisterNameServerPeriod=10000\n'
rq_broker_pid=$rq_pid
rq_wait_port rq-broker "$rq_port" "$rq_broker_pid"
wait_for 60 in_cluster broker-j
result $? "the RocketMQ broker registered with rmq's name server (compressed body)"

# MigTopic: seeded in the RocketMQ broker's topics.json, created on the rmq broker by rmq's mqadmin
"$bin/tools/mqadmin" updateTopic -n "$ns" -b "127.0.0.1:$bk_port" -t MigTopic -r 4 -w 4 >>"$run/update.out" 2>&1
awk '{ print "# " $0 }' "$run/update.out" | head -5
route_both() {
  mig route "$ns" MigTopic >"$run/route.out" && grep -q "ROUTE broker-j 127.0.0.1:$rq_port" "$run/route.out" &&
    grep -q "ROUTE broker-r 127.0.0.1:$bk_port" "$run/route.out"
}
wait_for 60 route_both
result $? "MigTopic created on both brokers; the route from rmq's name server lists both"

mig produce "$ns" MigTopic 200 >"$run/p.out"
ok=$(awk '$1 == "SENT" && $3 == "SEND_OK"' "$run/p.out" | wc -l)
on_j=$(awk '$1 == "SENT" && $4 == "broker-j"' "$run/p.out" | wc -l)
on_r=$(awk '$1 == "SENT" && $4 == "broker-r"' "$run/p.out" | wc -l)
echo "# $ok SEND_OK: $on_j to the RocketMQ broker, $on_r to the rmq broker"
[ "$ok" -eq 200 ] && [ "$on_j" -gt 0 ] && [ "$on_r" -gt 0 ]
result $? "200 sync sends SEND_OK, spread over the RocketMQ and the rmq broker"

mig consume "$ns" MigTopic rmq_migration_group 200 120 >"$run/c.out"
awk '$1 == "SENT" { print $2 }' "$run/p.out" | sort >"$run/sent"
awk '$1 == "RECV" { print $2 }' "$run/c.out" | sort -u >"$run/recv"
missing=$(comm -23 "$run/sent" "$run/recv" | wc -l)
from_j=$(awk '$1 == "RECV" && $3 == "broker-j"' "$run/c.out" | wc -l)
from_r=$(awk '$1 == "RECV" && $3 == "broker-r"' "$run/c.out" | wc -l)
echo "# received $(wc -l <"$run/recv") distinct, missing $missing; $from_j from broker-j, $from_r from broker-r"
[ "$missing" -eq 0 ] && [ "$from_j" -gt 0 ] && [ "$from_r" -gt 0 ]
result $? "the push consumer received every message, from both brokers"

sleep 20
in_cluster broker-j && route_both
result $? "20 s later (past brokerChannelExpiredTime=15000) the RocketMQ broker is still routed: it heartbeats"

kill -TERM "$rq_broker_pid"
gone() { ! in_cluster broker-j && mig route "$ns" MigTopic >"$run/route2.out" && ! grep -q broker-j "$run/route2.out"; }
wait_for 60 gone
result $? "stopped, the RocketMQ broker left rmq's routes; broker-r still serves MigTopic ($(tr '\n' ' ' <"$run/route2.out"))"

errs=$(grep -c -E 'refused|ERROR' "$run/ns.log")
grep -E 'refused|ERROR' "$run/ns.log" | head -5 | sed 's/^/# ns: /'
[ "$errs" -eq 0 ]
result $? "rmq's name server refused nothing and logged no error"
