#!/bin/bash
# tests/java/run_failover_test.sh: kill -9 of broker-a's master while the
# unmodified Apache RocketMQ Java client (4.9.x, Maven Central) produces and
# consumes (Failover.java), against the 2-master/2-slave SYNC cluster of
# `deploy/cluster.sh up sync` (ports moved by RMQ_PORT_OFFSET, files in a
# temp dir). Every send acknowledged SEND_OK, before and after the kill,
# must reach the consumer that ran through the kill and a consumer of a new
# group started after it (broker-a's messages then come from its slave),
# ids compared one by one; broker-b takes the writes after the kill.
# Prints TAP; SKIP without java, mvn or Maven Central. Always stops the cluster.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

export RMQ_BIN=$bin RMQ_RUN_DIR=$run/cluster
# ports 9876+OFF ... 10942+OFF, below the ephemeral range (32768-);
# run_examples_test.sh uses 19000, test_deploy.sh 21000
export RMQ_PORT_OFFSET=${RMQ_TEST_FAILOVER_PORT_OFFSET:-20000}
export RMQ_START_TIMEOUT=30 RMQ_STOP_TIMEOUT=30
unset RMQ_PORT_BASE RMQ_SSH RMQ_CONF_DIR
cluster=$src/deploy/cluster.sh
ns=127.0.0.1:$((9876 + RMQ_PORT_OFFSET))
topic=FailoverTopic
bg=()

stop_all() {
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  "$cluster" down >/dev/null 2>&1
  cleanup
}
trap stop_all EXIT

n=0
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
# acked FILE: the uniqIds acknowledged SEND_OK in a producer's output, sorted
acked() { awk '$1 == "SENT" && $3 == "SEND_OK" { print $2 }' "$1" | sort -u; }
# received FILE: the distinct uniqIds a consumer printed, sorted
received() { awk '$1 == "RECV" { print $2 }' "$1" | sort -u; }
# sent_to FILE BROKER: how many SEND_OK sends went to BROKER
sent_to() { awk -v b="$2" '$1 == "SENT" && $3 == "SEND_OK" && $4 == b' "$1" | wc -l; }
# consumer GROUP OUT: a consumer in the background until $run/acked is met
consumer() {
  timeout 400 java -cp "$cp" rmqtest.Failover consume "$ns" "$topic" "$1" "$run/acked" 300 >"$2" 2>"$2.err" &
  bg+=("$!")
}
# compare NAME OUT: every acknowledged id in OUT, one by one
compare() {
  local missing
  missing=$(comm -23 "$run/acked.sorted" <(received "$2") | wc -l)
  echo "# $1: $(received "$2" | wc -l) distinct ids received, $missing acknowledged ones missing; $(tail -1 "$2")"
  comm -23 "$run/acked.sorted" <(received "$2") | head -5 | sed 's/^/# missing: /'
  [ "$missing" -eq 0 ] && [ -s "$run/acked.sorted" ]
}

echo "1..7"
java_build 7
mkdir -p "$RMQ_RUN_DIR"
"$cluster" up sync >"$run/up.log" 2>&1
rc=$?
result $rc "deploy/cluster.sh up sync"
[ "$rc" -eq 0 ] || { sed 's/^/# /' "$run/up.log"; exit 1; }
"$bin/tools/mqadmin" updateTopic -n "$ns" -c DefaultCluster -t "$topic" -r 4 -w 4 >"$run/topic.log" 2>&1 \
  || sed 's/^/# /' "$run/topic.log"
for _ in $(seq 1 100); do
  [ "$("$bin/tools/mqadmin" topicRoute -n "$ns" -t "$topic" 2>/dev/null | grep -c broker-)" -ge 2 ] && break
  sleep 0.2
done

consumer failover_live "$run/live.out"
timeout 400 java -cp "$cp" rmqtest.Failover produce "$ns" "$topic" 300 "$run/stop" \
  >"$run/producer.out" 2>"$run/producer.err" &
producer=$!
bg+=("$producer")
# the kill once broker-a has acknowledged 100 sends (and the consumer runs)
for _ in $(seq 1 1200); do
  [ "$(sent_to "$run/producer.out" broker-a)" -ge 100 ] && break
  kill -0 "$producer" 2>/dev/null || break
  sleep 0.1
done
pid=$(cat "$RMQ_RUN_DIR/pid/broker-a.pid")
before=$(grep -c '^SENT' "$run/producer.out")
kill -9 "$pid"
before_a=$(sent_to "$run/producer.out" broker-a)
echo "# broker-a's master (pid $pid) killed after $before acknowledged sends, $before_a on broker-a"
[ "$before_a" -ge 100 ]
result $? "kill -9 of broker-a's master while producing (broker-a had acknowledged $before_a sends)"
# 200 more acknowledged sends after the kill, then the producers stop
for _ in $(seq 1 1200); do
  [ "$(grep -c '^SENT' "$run/producer.out")" -ge $((before + 200)) ] && break
  kill -0 "$producer" 2>/dev/null || break
  sleep 0.1
done
touch "$run/stop"
wait "$producer"
tail -n +$((before + 1)) "$run/producer.out" >"$run/after.out"
after_b=$(sent_to "$run/after.out" broker-b)
echo "# after the kill: $(grep -c '^SENT' "$run/after.out") SEND_OK ($after_b on broker-b), $(grep -c '^FAIL' "$run/producer.out") failed sends in all"
grep '^FAIL' "$run/producer.out" | head -3 | sed 's/^/# /'
[ "$after_b" -ge 190 ]
result $? "broker-b takes the writes after the kill"
acked "$run/producer.out" >"$run/acked.sorted"
cp "$run/acked.sorted" "$run/acked.tmp" && mv "$run/acked.tmp" "$run/acked"
echo "# $(wc -l <"$run/acked.sorted") acknowledged ids"
[ "$(awk '$1 == "SENT" && $3 != "SEND_OK"' "$run/producer.out" | wc -l)" -eq 0 ]
result $? "every send the client answered was SEND_OK"

consumer failover_after "$run/after-group.out"
wait "${bg[0]}"
compare "the consumer that ran through the kill" "$run/live.out"
result $? "the consumer that ran through the kill received every acknowledged id"
wait "${bg[2]}"
compare "a new group after the kill" "$run/after-group.out"
result $? "a new group's consumer after the kill received every acknowledged id (broker-a's from its slave)"
"$cluster" status >"$run/status.log" 2>&1
[ "$(awk '$1 == "broker-a-s" { print $6 }' "$run/status.log")" = running ]
result $? "broker-a's slave still runs ($(grep '^broker-a-s' "$run/status.log" | tr -s ' '))"
