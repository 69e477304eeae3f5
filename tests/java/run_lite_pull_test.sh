#!/bin/bash
# tests/java/run_lite_pull_test.sh: lite pull (issue 31) with the unmodified
# 5.x Java client (5.5.0, Maven profile rocketmq5) over remoting
# (LitePull.java): DefaultLitePullConsumer's LITE_PULL_MESSAGE (361) in
# subscribe mode and in assign mode with seekToBegin and seek to an offset,
# and the producer's earliestMsgStoreTime (GET_EARLIEST_MSG_STORETIME, 32).
# With the argument "cluster" the same runs on the 2-master/2-slave SYNC
# cluster of deploy/cluster.sh up sync, the topic on both masters: both
# modes must poll from broker-a and broker-b. Prints TAP; SKIP without
# java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=5
echo "1..$plan"
java_build $plan "$here" rocketmq5
start_mode "${1:-}" lite_pull LiteCluster broker-l LiteTopic ''

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run"/out*; }

run_killable timeout 400 java -cp "$cp" rmqtest.LitePull "$ns" LiteTopic rmq_lite_group 40 "$brokers" \
  >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; grep -h -E 'Exception|CODE' "$run/err" | head -5 | sed 's/^/# /'; }
result lite-subscribe "subscribe mode: every sent message polled, from each broker holding the topic ($brokers)"
result lite-assign-begin "assign mode after seekToBegin: every sent message polled, from each broker ($brokers)"
result lite-assign-seek "assign mode after seek to offset 2: exactly that queue's messages from offset 2"
result earliest-store-time "earliestMsgStoreTime of each queue between the first and the last send"

broker_log_clean 'ERROR|refused remoting'
