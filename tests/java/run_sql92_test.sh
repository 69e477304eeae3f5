#!/bin/bash
# tests/java/run_sql92_test.sh: SQL92 message filters with the unmodified
# Apache RocketMQ Java client (4.9.x, Maven Central) against an rmq broker
# with enablePropertyFilter=true (SqlFilter.java): push consumers and lite
# pull consumers subscribed with MessageSelector.bySql receive exactly the
# messages of a table that RocketMQ's semantics match, from the expected
# brokers, and a malformed expression makes the consumer's start() fail
# with the broker's error naming its column. With the argument "cluster"
# the same runs on the 2-master/2-slave SYNC cluster of deploy/cluster.sh
# up sync, the topic on both masters: the consumers must receive from
# broker-a and broker-b. Prints TAP; SKIP without java, mvn or Maven
# Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=11
echo "1..$plan"
java_build $plan
start_mode "${1:-}" sql92 SqlCluster broker-q SqlTopic 'enablePropertyFilter=true\n'

run_killable timeout 300 java -Drocketmq.client.rebalance.waitInterval=1000 -cp "$cp" rmqtest.SqlFilter "$ns" SqlTopic \
  "$brokers" >"$run/out" 2>"$run/err" || { echo "# java exited $?"; tail -20 "$run/err" | sed 's/^/# /'; }

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run/out"; }
for i in 0 1 2 3; do
  result "sql92-push-$i" "a push consumer with MessageSelector.bySql receives exactly the matching messages ($i)"
  result "sql92-lite-$i" "a lite pull consumer with MessageSelector.bySql receives exactly the matching messages ($i)"
done
result sql92-brokers "the consumers received from exactly the brokers holding the topic ($brokers)"
result sql92-malformed "a malformed expression fails the consumer's start with the error's column"

broker_log_clean
