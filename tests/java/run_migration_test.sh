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

mig_begin 7

in_cluster() { "$bin/tools/mqadmin" clusterList -n "$ns" 2>/dev/null | grep -q "$1"; }

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
mig_wait_for 60 in_cluster broker-j
mig_result $? "the RocketMQ broker registered with rmq's name server (compressed body)"

# MigTopic: seeded in the RocketMQ broker's topics.json, created on the rmq broker by rmq's mqadmin
"$bin/tools/mqadmin" updateTopic -n "$ns" -b "127.0.0.1:$bk_port" -t MigTopic -r 4 -w 4 >>"$run/update.out" 2>&1
awk '{ print "# " $0 }' "$run/update.out" | head -5
mig_wait_for 60 mig_route_both MigTopic
mig_result $? "MigTopic created on both brokers; the route from rmq's name server lists both"

mig_produce_consume MigTopic

sleep 20
in_cluster broker-j && mig_route_both MigTopic
mig_result $? "20 s later (past brokerChannelExpiredTime=15000) the RocketMQ broker is still routed: it heartbeats"

kill -TERM "$rq_broker_pid"
gone() { ! in_cluster broker-j && mig route "$ns" MigTopic >"$run/route2.out" && ! grep -q broker-j "$run/route2.out"; }
mig_wait_for 60 gone
mig_result $? "stopped, the RocketMQ broker left rmq's routes; broker-r still serves MigTopic ($(tr '\n' ' ' <"$run/route2.out"))"

errs=$(grep -c -E 'refused|ERROR' "$run/ns.log")
grep -E 'refused|ERROR' "$run/ns.log" | head -5 | sed 's/^/# ns: /'
[ "$errs" -eq 0 ]
mig_result $? "rmq's name server refused nothing and logged no error"
