#!/bin/bash
# tests/java/run_consume_modes_test.sh: the unmodified Apache RocketMQ Java
# client (4.9.x, Maven Central) consuming from an rmq broker in its other
# modes, and querying it (ConsumeModes.java): an orderly push consumer
# through a rebalance (a second consumer of the group started mid-way, the
# queues moving under the broker's queue locks, LOCK/UNLOCK_BATCH_MQ), every
# message consumed and each sharding key's messages in send order; two
# broadcasting consumers each getting every message; the lite pull consumer
# in subscribe and assign modes; queryMessage by key (QUERY_MESSAGE) and
# viewMessage by offset msgId and by uniq id. Prints TAP; SKIP without java,
# mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=9
echo "1..$plan"
java_build $plan
start_namesrv
start_broker ModesCluster broker-m
for t in ModesOrderly ModesBcast ModesLite ModesQuery; do create_topic ModesCluster "$t"; done

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run"/out-*; }
# modes NAME ARGS...: one ConsumeModes run (rebalances every second, broadcast offsets in $run)
modes() {
  local name=$1
  shift
  timeout 300 java -Drocketmq.client.rebalance.waitInterval=1000 -Drocketmq.client.rebalance.lockInterval=2000 \
    -Drocketmq.client.localOffsetStoreDir="$run/offsets" -cp "$cp" rmqtest.ConsumeModes "$@" \
    >"$run/out-$name" 2>"$run/err-$name"
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "# java $name exited $rc"; tail -20 "$run/err-$name" | sed 's/^/# /'; }
}

modes orderly orderly "$ns" ModesOrderly rmq_modes_orderly 600
# an orderly consumer only takes a queue it has locked on the broker (LOCK_BATCH_MQ)
result orderly "orderly push consumers through a rebalance: every message, each key in order, both got queues"
modes broadcast broadcast "$ns" ModesBcast rmq_modes_bcast 200
result broadcast "two broadcasting consumers each receive every message"
modes litepull litepull "$ns" ModesLite rmq_modes_lite 200
result litepull-subscribe "lite pull consumer, subscribe mode, polls every message"
result litepull-assign "lite pull consumer, assign mode with seek, polls every message"
modes query query "$ns" ModesQuery 20
result query-key "queryMessage by key finds every message with the key"
result view-offset-id "viewMessage by offset msgId returns the message"
result view-uniq-id "viewMessage by topic and uniq id returns the message"
result query-none "queryMessage of a key nobody sent finds nothing"

broker_log_clean 'ERROR|refused remoting'
