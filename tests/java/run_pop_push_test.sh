#!/bin/bash
# tests/java/run_pop_push_test.sh: the server-side rebalance of pop
# consumers (issue 30) with the unmodified 5.x Java client (5.5.0, Maven
# profile rocketmq5) over remoting (PopPush.java): SET_MESSAGE_REQUEST_MODE
# (401) POP accepted (PULL and retry topics refused), QUERY_ASSIGNMENT (400)
# answering one POP queue -1 of the broker (none for the retry topic, an
# unknown topic refused), and a DefaultMQPushConsumer with setClientRebalance(false)
# consuming every message once through pops, a failed one once more.
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=10
echo "1..$plan"
java_build $plan "$here" rocketmq5
start_namesrv
start_broker PushPopCluster broker-pp
create_topic PushPopCluster PushPopTopic

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run/out"; }

timeout 300 java -cp "$cp" rmqtest.PopPush "$ns" PushPopTopic rmq_push_pop_group 32 >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; tail -20 "$run/err" | sed 's/^/# /'; }
result mode-set "SET_MESSAGE_REQUEST_MODE POP accepted"
result mode-refused "SET_MESSAGE_REQUEST_MODE PULL and a retry topic's mode refused"
result assign-retry "QUERY_ASSIGNMENT: no assignment of the group's retry topic"
result assign-unknown "QUERY_ASSIGNMENT: an unknown topic refused with TOPIC_NOT_EXIST"
result assign "QUERY_ASSIGNMENT: one POP assignment of queue -1 of the broker"
result push-all "the pop-mode push consumer consumed every message"
result push-popped "every delivery came from a pop"
result push-once "no message but the failed one consumed twice"
result push-retry "the failed message consumed once more, with reconsumeTimes 1"

broker_log_clean 'ERROR|refused remoting'
