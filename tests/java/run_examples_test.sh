#!/bin/bash
# tests/java/run_examples_test.sh: the Java application of deploy/examples/java
# (the unmodified Apache RocketMQ client from Maven Central, code as any
# RocketMQ user writes it) against the 2-master/2-slave SYNC cluster that
# `deploy/cluster.sh up sync` starts, so that what deploy/README.md shows
# stays true. The cluster's ports are moved out of the way (RMQ_PORT_OFFSET)
# and its files go to a temp dir. Prints TAP; SKIP when java or mvn is
# missing or Maven Central cannot be reached. Always stops the cluster.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

# shellcheck source=tests/cluster/deploy_lib.sh
. "$src/tests/cluster/deploy_lib.sh"
# ports 9876+OFF ... 10942+OFF, below the ephemeral range (32768-);
# test_deploy.sh uses 21000
deploy_env "$run/cluster" "${RMQ_TEST_EXAMPLES_PORT_OFFSET:-19000}" 30
ns=127.0.0.1:$((9876 + RMQ_PORT_OFFSET))
N=40

stop_cluster() {
  "$cluster" down >/dev/null 2>&1
  cleanup
}
trap stop_cluster EXIT

echo "1..5"
java_build 5 "$src/deploy/examples/java"
deploy_up_tap 1 sync
deploy_create_topic "$ns" ExampleTopic

timeout 120 java -cp "$cp" example.Producer "$ns" ExampleTopic "$N" >"$run/producer.out" 2>"$run/producer.err"
rc=$?
sent=$(grep -c '^SENT .* SEND_OK ' "$run/producer.out")
if [ "$rc" -eq 0 ] && [ "$sent" -eq "$N" ]; then echo "ok 2 - example.Producer: $N of $N SEND_OK"; else
  echo "not ok 2 - example.Producer: $sent of $N SEND_OK (exit $rc)"; tail -20 "$run/producer.err" | sed 's/^/# /'; fi
brokers=$(awk '$1 == "SENT" {print $4}' "$run/producer.out" | sort -u | tr '\n' ' ')
if [ "$(awk '$1 == "SENT" {print $4}' "$run/producer.out" | sort -u | wc -l)" -eq 2 ]; then
  echo "ok 3 - the sends went to both masters ($brokers)"; else echo "not ok 3 - the sends went to: $brokers"; fi

timeout 120 java -cp "$cp" example.Consumer "$ns" ExampleTopic example_consumer "$N" 60 \
  >"$run/consumer.out" 2>"$run/consumer.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -qx "DONE $N" "$run/consumer.out"; then echo "ok 4 - example.Consumer got $N messages"; else
  echo "not ok 4 - example.Consumer (exit $rc): $(tail -1 "$run/consumer.out")"; tail -20 "$run/consumer.err" | sed 's/^/# /'; fi
# "<msgId> hello <i>" on both sides
awk '$1 == "SENT" {print $2, $5, $6}' "$run/producer.out" | sort >"$run/sent.txt"
awk '$1 == "RECV" {print $2, $4, $5}' "$run/consumer.out" | sort -u >"$run/recv.txt"
if [ "$(wc -l <"$run/sent.txt")" -eq "$N" ] && cmp -s "$run/sent.txt" "$run/recv.txt"; then echo "ok 5 - every acknowledged id was consumed with its body"; else
  echo "not ok 5 - sent and consumed differ"; diff "$run/sent.txt" "$run/recv.txt" | head -20 | sed 's/^/# /'; fi
