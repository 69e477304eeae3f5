#!/bin/bash
# tests/java/run_recall_test.sh: RocketMQ 5.3's recall of a timer message
# with the unmodified 5.x Java client over remoting (DefaultMQProducer
# .recallMessage, RECALL_MESSAGE 370; Recall.java) against an rmq broker
# with recallMessageEnable=true: the handle of a delayed send, a recall
# (twice), the recalled message never polled while the other one is, a
# recall after the delivery refused (ILLEGAL_OPERATION). With the argument
# "rocketmq" the same runs against Apache RocketMQ 5.5.0's own name server
# and broker (rocketmq_lib.sh); with "cluster" on the 2-master/2-slave SYNC
# cluster of deploy/cluster.sh up sync. Prints TAP; SKIP without java, mvn or Maven
# Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=7
echo "1..$plan"
java_build $plan "$here" rocketmq5
if [ "${1:-}" = rocketmq ]; then
  # the same checks against Apache RocketMQ's own name server and broker, of
  # the client's version (5.5.0), with recall on (rocketmq_lib.sh)
  export RMQ_TEST_ROCKETMQ_VERSION=${RMQ_TEST_ROCKETMQ_VERSION:-5.5.0}
  # shellcheck source=tests/java/rocketmq_lib.sh
  . "$here/rocketmq_lib.sh"
  rq_jars $plan
  mig_rq_namesrv
  bk_port=$(free_port_run)
  rq_topic_seed broker RecallTopic 4
  rq_broker_ready broker RecallCluster broker-rc "$bk_port" "$ns" 'recallMessageEnable=true\ntimerWheelEnable=true\n'
  sleep 5   # its first registration with the name server
else
  # with "cluster" on deploy/cluster.sh up sync (2 masters, 2 slaves): the
  # handle names the broker that holds the message
  start_mode "${1:-}" recall RecallCluster broker-rc RecallTopic 'recallMessageEnable=true\n'
fi

run_killable timeout 120 java -cp "$cp" rmqtest.Recall "$ns" RecallTopic rmq_recall_group >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; grep -h -E 'Exception|CODE' "$run/err" | head -5 | sed 's/^/# /'; }
for c in normal-no-handle timer-handle recall-ok recall-twice-ok recalled-never-delivered recall-after-delivery-refused; do
  java_check "$c" "$c" "$run/out"
done
if [ "${1:-}" = rocketmq ]; then
  ok "RocketMQ's broker ran the checks (no broker log check)" true
else
  broker_log_clean 'ERROR|refused remoting'
fi
