#!/bin/bash
# tests/java/run_grpc_failover_test.sh: kill -9 of broker-a's master under
# the unmodified RocketMQ 5 gRPC Java client (rocketmq-client-java 5.0.8,
# Maven profile grpc5; GrpcFailover.java), the access point the name
# server's gRPC endpoint, on the 2-master/2-slave SYNC cluster of
# `deploy/cluster.sh up sync` (issue 30). A Producer sends every 10 ms and a
# PushConsumer (pop) receives; broker-b takes the writes after the kill; the
# master is restarted (a slave refuses pops) and the messages it had
# delivered but not seen acked come again from its committed offset, the
# durable part of pop state. Every id acknowledged SEND_OK must be consumed,
# compared one by one; duplicates are allowed, counted and reported.
# Prints TAP; SKIP without java, mvn or Maven Central. Always stops the cluster.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

topic=GrpcFailover
bg=()
stop_bg() {
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  cleanup
}
trap stop_bg EXIT

n=0
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
# sent_to FILE BROKER: how many SEND_OK sends went to BROKER
sent_to() { awk -v b="$2" '$1 == "SENT" && $3 == "SEND_OK" && $4 == b' "$1" | wc -l; }
# sent FILE: how many sends were acknowledged
sent() { grep -c '^SENT' "$1"; }
# wait_for SECONDS CMD...: runs CMD every 0.1 s until it succeeds, SECONDS
# pass or the producer has ended
wait_for() {
  local i
  for i in $(seq 1 $(($1 * 10))); do
    "${@:2}" && return 0
    kill -0 "$producer" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
at_least() { [ "$("$1" "${@:3}")" -ge "$2" ]; }

echo "1..5"
java_build 5 "$here" grpc5
# ports 21876 ... 22942: below the ephemeral range, used by no other test
start_cluster_sync "${RMQ_TEST_GRPC_FAILOVER_PORT_OFFSET:-12000}" ''
create_topic_both "$topic"

timeout 300 java -cp "$cp" rmqtest.GrpcFailover consume "$ns" "$topic" grpc_failover "$run/acked" 120 \
  >"$run/consumer.out" 2>"$run/consumer.err" &
consumer=$!
bg+=("$consumer")
timeout 300 java -cp "$cp" rmqtest.GrpcFailover produce "$ns" "$topic" 120 "$run/stop" \
  >"$run/producer.out" 2>"$run/producer.err" &
producer=$!
bg+=("$producer")

# the kill once broker-a has acknowledged 100 sends and the consumer has some
wait_for 60 at_least sent_to 100 "$run/producer.out" broker-a
wait_for 20 grep -q '^RECV' "$run/consumer.out"
pid=$(cat "$RMQ_RUN_DIR/pid/broker-a.pid")
kill -9 "$pid"
before=$(sent "$run/producer.out")
before_a=$(sent_to "$run/producer.out" broker-a)
echo "# broker-a's master (pid $pid) killed after $before acknowledged sends, $before_a on broker-a;" \
  "$(grep -c '^RECV' "$run/consumer.out") deliveries so far"
[ "$before_a" -ge 100 ]
result $? "kill -9 of broker-a's master under a 5.x Producer and PushConsumer (broker-a had acknowledged $before_a sends)"

wait_for 60 at_least sent $((before + 200)) "$run/producer.out"
tail -n +$((before + 1)) "$run/producer.out" | grep '^SENT' >"$run/after.out"
after_b=$(sent_to "$run/after.out" broker-b)
echo "# after the kill: $(wc -l <"$run/after.out") SEND_OK ($after_b on broker-b)," \
  "$(grep -c '^FAIL' "$run/producer.out") failed sends in all"
grep '^FAIL' "$run/producer.out" | head -3 | sed 's/^/# /'
[ "$after_b" -ge 190 ]
result $? "broker-b takes the writes after the kill"

"$src/deploy/mqbroker.sh" -c "$RMQ_CONF_DIR/broker-a.properties" start >"$run/restart.log" 2>&1
result $? "broker-a's master restarted"
sed 's/^/# /' "$run/restart.log"
# a few sends on the restarted master, then the producer stops
wait_for 60 at_least sent_to $((before_a + 20)) "$run/producer.out" broker-a
touch "$run/stop"
wait "$producer"
grep -v '^\s*at ' "$run/producer.err" | grep -v SLF4J | head -5 | sed 's/^/# producer: /'
awk '$1 == "SENT" && $3 == "SEND_OK" { print $2 }' "$run/producer.out" | sort -u >"$run/acked.tmp"
mv "$run/acked.tmp" "$run/acked"
echo "# $(wc -l <"$run/acked") acknowledged ids, $(sent_to "$run/producer.out" broker-a) on broker-a"
[ "$(awk '$1 == "SENT" && $3 != "SEND_OK"' "$run/producer.out" | wc -l)" -eq 0 ] && [ -s "$run/acked" ]
result $? "every send the client answered was SEND_OK"

wait "$consumer"
grep -q '^DONE' "$run/consumer.out" || grep -v '^\s*at ' "$run/consumer.err" | grep -v SLF4J | head -5 | sed 's/^/# consumer: /'
echo "# $(tail -1 "$run/consumer.out")"
missing=$(comm -23 "$run/acked" <(awk '$1 == "RECV" { print $2 }' "$run/consumer.out" | sort -u))
[ -z "$missing" ] || sed 's/^/# missing: /' <<<"$missing" | head -5
[ -z "$missing" ]
result $? "the PushConsumer received every acknowledged id, compared one by one (duplicates allowed)"
redelivered=$(awk '$1 == "RECV" && $3 > 1' "$run/consumer.out" | wc -l)
echo "# $redelivered deliveries with a delivery attempt above 1"
