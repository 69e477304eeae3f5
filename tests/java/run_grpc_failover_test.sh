#!/bin/bash
# tests/java/run_grpc_failover_test.sh [sync|controller]: kill -9 of
# broker-a's master under the unmodified RocketMQ 5 gRPC Java client
# (rocketmq-client-java 5.0.8, Maven profile grpc5; GrpcFailover.java), the
# access point the name server's gRPC endpoint (issue 30), on the cluster of
# `deploy/cluster.sh up sync` (2 masters, 2 slaves; default) or of
# `deploy/cluster.sh up controller`. A Producer sends every 10 ms, a
# PushConsumer (pop) receives, and a SimpleConsumer of a second group holds
# 20 of broker-a's messages unacked. After the kill the other masters take
# the writes; broker-a comes back: sync, its master restarted (a slave
# refuses pops); controller, its in-sync slave promoted. The held messages
# are delivered again (popped but not acked: the committed offset, the
# durable part of pop state, survived on disk or on the slave through HA),
# and every id acknowledged SEND_OK is consumed, compared one by one;
# duplicates are allowed, counted and reported. Prints TAP; SKIP without
# java, mvn or Maven Central. Always stops the cluster.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

mode=${1:-sync}
topic=GrpcFailover
bg=()
stop_bg() {
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  cleanup
}
trap stop_bg EXIT

# sent_to FILE BROKER: how many SEND_OK sends went to BROKER
sent_to() { awk -v b="$2" '$1 == "SENT" && $3 == "SEND_OK" && $4 == b' "$1" | wc -l; }
# sent FILE: how many sends were acknowledged
sent() { grep -c '^SENT' "$1"; }
# lines FILE WORD: how many lines of FILE start with WORD
lines() { grep -c "^$2 " "$1"; }
# poll SECONDS CMD...: runs CMD every 0.1 s until it succeeds or SECONDS pass
poll() {
  local i
  for i in $(seq 1 $(($1 * 10))); do
    "${@:2}" && return 0
    sleep 0.1
  done
  return 1
}
# done_or_ended PID CMD...: CMD succeeds or PID has ended
done_or_ended() { "${@:2}" || ! kill -0 "$1" 2>/dev/null; }
# wait_for SECONDS CMD...: polls CMD until it succeeds, SECONDS pass or the
# producer has ended; succeeds only if CMD did
wait_for() { poll "$1" done_or_ended "$producer" "${@:2}" && "${@:2}"; }
# wait_printed SECONDS PID FILE PATTERN: waits for a role's last line (or
# its end), not for its JVM's exit: a 5.x client's close can wait two
# minutes on a Telemetry stream it reopened on the restarted broker-a
# (GrpcFailover.java)
wait_printed() { poll "$1" done_or_ended "$2" grep -qE "$4" "$3"; }
at_least() { [ "$("$1" "${@:3}")" -ge "$2" ]; }
# broker-a's replicas in mqadmin getSyncStateSet (controller mode): column 2
# the master's replica id, 6 the row's replica, 8 its role
sss_a() { "$bin/tools/mqadmin" getSyncStateSet -n "$ns" -b broker-a 2>/dev/null; }
promoted() { [ "$(ctl_master_of broker-a)" = "$1" ] && sss_a | awk -v r="$1" '$6 == r && $8 ~ /MASTER/ { f = 1 } END { exit !f }'; }
# both of broker-a's replicas in its in-sync set (column 9): only an in-sync
# slave may be promoted, and a loaded machine can leave one behind a while
both_in_sync() { [ "$(sss_a | awk '$1 == "broker-a" && $9 == "yes"' | wc -l)" -ge 2 ]; }

echo "1..6"
java_build 6 "$here" grpc5
# ports from java_lib.sh's cluster_port_offset, one set per mode
if [ "$mode" = controller ]; then
  start_cluster_controller grpc_failover_controller
  create_topic_both "$topic" 3
  old=$(ctl_master_of broker-a)
  pid_file=$RMQ_RUN_DIR/pid/broker-a-$old.pid
else
  start_cluster_sync grpc_failover ''
  create_topic_both "$topic"
  pid_file=$RMQ_RUN_DIR/pid/broker-a.pid
fi

timeout 300 java -cp "$cp" rmqtest.GrpcFailover consume "$ns" "$topic" grpc_failover "$run/acked" 240 \
  grpc_failover_hold "$run/resumed" >"$run/consumer.out" 2>"$run/consumer.err" &
consumer=$!
bg+=("$consumer")
timeout 300 java -cp "$cp" rmqtest.GrpcFailover produce "$ns" "$topic" 120 "$run/stop" \
  >"$run/producer.out" 2>"$run/producer.err" &
producer=$!
bg+=("$producer")

# the kill once broker-a has acknowledged 50 sends and 20 of them are held
wait_for 60 at_least sent_to 50 "$run/producer.out" broker-a
wait_for 30 at_least lines 20 "$run/consumer.out" HELD
[ "$mode" != controller ] || wait_for 60 both_in_sync || { echo "# broker-a's replicas not both in sync:"; sss_a | sed 's/^/# /'; }
pid=$(cat "$pid_file")
kill -9 "$pid"
before=$(sent "$run/producer.out")
before_a=$(sent_to "$run/producer.out" broker-a)
held=$(lines "$run/consumer.out" HELD)
echo "# broker-a's master (pid $pid) killed after $before acknowledged sends, $before_a on broker-a;" \
  "$(lines "$run/consumer.out" RECV) deliveries so far, $held of broker-a's messages held unacked"
ok "kill -9 of broker-a's master under a 5.x Producer, PushConsumer and SimpleConsumer holding $held messages" \
  test "$before_a" -ge 50 -a "$held" -eq 20

wait_for 60 at_least sent $((before + 100)) "$run/producer.out"
tail -n +$((before + 1)) "$run/producer.out" | grep '^SENT' >"$run/after.out"
after_a=$(sent_to "$run/after.out" broker-a)
after=$(wc -l <"$run/after.out")
echo "# after the kill: $after SEND_OK ($after_a on broker-a)," \
  "$(grep -c '^FAIL' "$run/producer.out") failed sends in all"
grep '^FAIL' "$run/producer.out" | head -3 | sed 's/^/# /'
ok "the other masters take the writes after the kill" test "$after" -ge 100 -a $((after - after_a)) -ge 95

if [ "$mode" = controller ]; then
  new=$((3 - old))
  ok "broker-a's replica $new promoted (replica $old killed)" wait_for 60 promoted "$new"
  sss_a | sed 's/^/# /'
else
  restart_a() { "$src/deploy/mqbroker.sh" -c "$RMQ_CONF_DIR/broker-a.properties" start >"$run/restart.log" 2>&1; }
  ok "broker-a's master restarted" restart_a
  sed 's/^/# /' "$run/restart.log"
fi
touch "$run/stop" "$run/resumed"
wait_printed 60 "$producer" "$run/producer.out" '^STOPPED$'
grep -v '^\s*at ' "$run/producer.err" | grep -v SLF4J | head -5 | sed 's/^/# producer: /'
awk '$1 == "SENT" && $3 == "SEND_OK" { print $2 }' "$run/producer.out" | sort -u >"$run/acked.tmp"
mv "$run/acked.tmp" "$run/acked"
echo "# $(wc -l <"$run/acked") acknowledged ids, $(sent_to "$run/producer.out" broker-a) on broker-a"
ok "every send the client answered was SEND_OK" \
  test "$(awk '$1 == "SENT" && $3 != "SEND_OK"' "$run/producer.out" | wc -l)" -eq 0 -a -s "$run/acked"

wait_printed 300 "$consumer" "$run/consumer.out" '^DONE ' &&
  wait_printed 120 "$consumer" "$run/consumer.out" '^(HOLD-DONE|HOLD-ERROR)'
grep -q '^DONE' "$run/consumer.out" || grep -v '^\s*at ' "$run/consumer.err" | grep -v SLF4J | head -5 | sed 's/^/# consumer: /'
grep -E '^(HOLD-ERROR|ACK-FAIL)' "$run/consumer.out" | head -3 | sed 's/^/# /'
echo "# $(grep "^DONE" "$run/consumer.out")"
missing=$(comm -23 "$run/acked" <(awk '$1 == "RECV" { print $2 }' "$run/consumer.out" | sort -u))
[ -z "$missing" ] || sed 's/^/# missing: /' <<<"$missing" | head -5
ok "the PushConsumer received every acknowledged id, compared one by one (duplicates allowed)" test -z "$missing"
again=$(lines "$run/consumer.out" AGAIN)
echo "# $again of $held held messages delivered again, the last $(awk '$1 == "AGAIN" { ms = $4 } END { print ms + 0 }' \
  "$run/consumer.out") ms after broker-a came back (invisible time 300 s)"
ok "the messages popped but not acked at the kill are delivered again" test "$again" -eq "$held"
