#!/bin/bash
# tests/java/run_migration_reverse_test.sh: the other half of moving a
# RocketMQ cluster to rmq one process at a time: an rmq broker
# (namesrvProtocol=remoting, compressedRegister=true) registers with an
# Apache RocketMQ 4.9.7 name server (Maven Central jars,
# tests/java/rocketmq_lib.sh) next to a RocketMQ broker holding a topic;
# RocketMQ's own mqadmin creates it on the rmq broker; the unmodified Java client
# (Migration.java) routes from the RocketMQ name server, produces to both
# brokers and consumes every message from both; the rmq broker stays routed
# by its QUERY_DATA_VERSION heartbeats; stopped, it unregisters and leaves the route at once.
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"
# shellcheck source=tests/java/rocketmq_lib.sh
. "$(dirname "$0")/rocketmq_lib.sh"

mig_begin 6

mig_rq_namesrv
broker_extra=$'namesrvProtocol=remoting\ncompressedRegister=true'
start_broker MigCluster broker-r
rq_port=$(free_port_run)
rq_topic_seed rq-broker MigTopic 4
rq_broker rq-broker MigCluster broker-j "$rq_port" "$ns"
rq_broker_pid=$rq_pid
rq_wait_port rq-broker "$rq_port" "$rq_broker_pid"
mig_wait_for 120 mig_rq_in_cluster broker-j broker-r
mig_result $? "the rmq broker (remoting, compressed body) and the RocketMQ broker registered with the RocketMQ name server"
sed 's/^/# /' "$run/cluster.out"

# MigTopic: seeded in the RocketMQ broker's topics.json, created on the rmq broker by RocketMQ's mqadmin
rq_update_topic -n "$ns" -b "127.0.0.1:$bk_port" -t MigTopic -r 4 -w 4 >"$run/update.out" 2>&1
awk '{ print "# " $0 }' "$run/update.out" | head -5
mig_wait_for 60 mig_route_both MigTopic
mig_result $? "MigTopic created on both brokers; the route from the RocketMQ name server lists both"

mig_produce_consume MigTopic

# every registerNameServerPeriod (1 s) the rmq broker asks QUERY_DATA_VERSION;
# its last answer was a success (a timeout under load is logged, then
# recovered), and the name server still lists it
sleep 3
last=$(grep -E 'RocketMQ name server' "$run/broker.log" | tail -1)
echo "# last: ${last#*bk_register_remoting.c}"
[[ $last == *"registered with RocketMQ name server"* ]] && mig_rq_in_cluster broker-r
mig_result $? "the rmq broker's periodic version queries succeed; it stays registered"

gone() { mig_rq_in_cluster broker-j && ! grep -q broker-r "$run/cluster.out" && mig route "$ns" MigTopic >"$run/route2.out" && ! grep -q broker-r "$run/route2.out"; }
mig_rmq_broker_unregisters gone
mig_result $? "stopped, the rmq broker unregistered and left the routes; broker-j still serves MigTopic ($(tr '\n' ' ' <"$run/route2.out"))"
