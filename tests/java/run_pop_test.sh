#!/bin/bash
# tests/java/run_pop_test.sh: pop consumption (issue 30) with the unmodified
# 5.x Java client (5.5.0, Maven profile rocketmq5) over remoting
# (PopConsume.java: its own POP_MESSAGE, ACK_MESSAGE and
# CHANGE_MESSAGE_INVISIBLETIME calls): every sent message popped, acked ones
# not redelivered, unacked ones redelivered after the invisible time with
# reconsumeTimes 1, a changed invisible time honoured, BATCH_ACK_MESSAGE, a
# second ack refused;
# FIFO pops of one queue: blocked while the batch is in flight, the same
# attempt replayed, the batch again after the invisible time with
# reconsumeTimes 1, the next batch once it is acked.
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=14
echo "1..$plan"
java_build $plan "$here" rocketmq5
start_namesrv
start_broker PopCluster broker-p
create_topic PopCluster PopTopic
create_topic PopCluster PopFifo

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run"/out*; }

timeout 300 java -cp "$cp" rmqtest.PopConsume "$ns" PopTopic rmq_pop_group 64 >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; tail -20 "$run/err" | sed 's/^/# /'; }
result pop-all "every sent message popped"
result pop-ack "the even messages acked"
result pop-change-invisible "the invisible time of one odd message changed to 60 s"
result pop-redeliver "exactly the unacked messages redelivered after the invisible time"
result pop-attempt "redelivered messages carry reconsumeTimes 1 (delivery attempt 2)"
result pop-ack-retry "the redelivered messages acked in one BATCH_ACK_MESSAGE, the delayed one acked"
result pop-quiet "nothing popped once everything was acked"
result pop-stale-ack "a second ack of an acked message refused"

timeout 120 java -cp "$cp" rmqtest.PopConsume "$ns" PopFifo rmq_pop_fifo 8 fifo >"$run/out-fifo" 2>"$run/err-fifo"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java fifo exited $rc"; tail -20 "$run/err-fifo" | sed 's/^/# /'; }
result fifo-first "FIFO pop: the first batch of queue 0 in order"
result fifo-same-attempt "FIFO pop: the same attempt id gets the same batch"
result fifo-blocked "FIFO pop: another attempt gets nothing while the batch is in flight"
result fifo-again "FIFO pop: the batch again after the invisible time with reconsumeTimes 1"
result fifo-next "FIFO pop: the next batch once the first is acked"

broker_log_clean 'ERROR|refused remoting'
