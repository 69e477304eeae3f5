#!/bin/bash
# tests/java/run_recall_test.sh: RocketMQ 5.3's recall of a timer message
# with the unmodified 5.x Java client over remoting (DefaultMQProducer
# .recallMessage, RECALL_MESSAGE 370; Recall.java) against an rmq broker
# with recallMessageEnable=true: the handle of a delayed send, a recall
# (twice), the recalled message never polled while the other one is, a
# recall after the delivery refused (ILLEGAL_OPERATION). Prints TAP; SKIP
# without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=7
echo "1..$plan"
java_build $plan "$here" rocketmq5
broker_extra="recallMessageEnable=true"
start_namesrv
start_broker RecallCluster broker-rc
create_topic RecallCluster RecallTopic

timeout 120 java -cp "$cp" rmqtest.Recall "$ns" RecallTopic rmq_recall_group >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; grep -h -E 'Exception|CODE' "$run/err" | head -5 | sed 's/^/# /'; }
for c in normal-no-handle timer-handle recall-ok recall-twice-ok recalled-never-delivered recall-after-delivery-refused; do
  java_check "$c" "$c" "$run/out"
done
broker_log_clean 'ERROR|refused remoting'
