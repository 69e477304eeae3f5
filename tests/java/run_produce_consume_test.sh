#!/bin/bash
# tests/java/run_produce_consume_test.sh: the unmodified Apache RocketMQ
# Java client (4.9.x, Maven Central) produces to and consumes from an rmq
# broker over RocketMQ's remoting protocol, on the broker's own port next
# to the native protocol (ProduceConsume.java): 1,000 sync sends, a batch
# and a message with tags, keys and user properties, every one received by
# a push consumer with the same id and body; the first message read back
# by its offset msgId; then a second round consumed by a restarted
# consumer of the same group, which gets the new messages and nothing
# committed before; that round with vipChannelEnabled=true, so the client
# calls the broker on listenPort - 2, and with one message delayed by
# RocketMQ 5's TIMER_DELAY_MS. Prints TAP; SKIP without java, mvn or Maven Central.
# An argument names a Maven profile of tests/java/pom.xml: rocketmq5 runs
# the same scenario with the 5.x client (5.5.0) in remoting mode (meson
# test java5_produce_consume). With RMQ_TEST_IP=::1 (meson test
# java_produce_consume_ipv6) everything runs over IPv6: the name server on
# ::1, the broker advertising ::1, offset msgIds of 56 digits; SKIP where the
# host has no ::1.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=10
echo "1..$plan"
case $test_ip in
  # a host without ::1 lacks no install: a skip even in CI, as test_ipv6's
  *:*) grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null || CI=false skip_all $plan "no IPv6 loopback (::1)"
       id_digits=56 ;;
  *) id_digits=32 ;;
esac
java_build $plan "$here" "${1:-}"
start_namesrv
pick_vip_port
start_broker JavaCluster broker-j
vip_port=$(sed -n 's/^vipListenPort=//p' "$run/broker.ready")
create_topic JavaCluster JavaPC

n=0
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
# java_run OUT ARGS...: one phase of ProduceConsume
java_run() {
  local out=$1
  shift
  timeout 300 java ${java_opts:-} -cp "$cp" rmqtest.ProduceConsume "$@" >"$out" 2>"$out.err"
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "# java $1 exited $rc"; tail -30 "$out.err" | sed 's/^/# /'; }
  return "$rc"
}
# sent/recv FILE: sorted "id body" pairs
sent() { awk '$1 == "SENT" { print $2, $4 }' "$1" | sort; }
recv() { awk '$1 == "RECV" { print $2, $3 }' "$1" | sort -u; }

java_run "$run/p1" produce "$ns" JavaPC 1000 first
sent "$run/p1" >"$run/p1.sent"
ok=$(awk '$1 == "SENT" && $3 == "SEND_OK"' "$run/p1" | wc -l)
echo "# first round: $ok SEND_OK of $(wc -l <"$run/p1.sent") sent"
[ "$ok" -eq 1011 ] && [ "$(wc -l <"$run/p1.sent")" -eq 1011 ]
result $? "1,000 sync sends, a batch of 10 and one with properties: all SEND_OK"
offset_id=$(sed -n 's/^OFFSETID //p' "$run/p1")
grep -qx "VIEW first-0" "$run/p1" && [ ${#offset_id} -eq $id_digits ]
result $? "the first message read back by its offset msgId ($offset_id, $id_digits hex digits)"

java_run "$run/c1" consume "$ns" JavaPC rmq_java_group 1011 120
recv "$run/c1" >"$run/c1.recv"
echo "# first consumer: $(wc -l <"$run/c1.recv") distinct of $(grep -c '^RECV' "$run/c1") deliveries"
missing=$(comm -23 "$run/p1.sent" "$run/c1.recv" | wc -l)
extra=$(comm -13 "$run/p1.sent" "$run/c1.recv" | wc -l)
echo "# missing $missing, unknown $extra"
comm -23 "$run/p1.sent" "$run/c1.recv" | head -5 | sed 's/^/# missing: /'
[ "$missing" -eq 0 ] && [ "$extra" -eq 0 ]
result $? "the push consumer received every message, ids and bodies equal"
[ "$(grep -c ' first-batch-' "$run/c1.recv")" -eq 10 ]
result $? "all 10 messages of the batch received"
grep -qx "PROPS tags=TagZ keys=k1 k2 color=blue n=42" "$run/c1"
result $? "tags, keys and user properties round-trip"

# the second round on the VIP channel (listenPort - 2), as clients up to 4.4
# and rocketmq-dashboard do by default
java_opts=-Dcom.rocketmq.sendMessageWithVIPChannel=true
java_run "$run/p2" produce "$ns" JavaPC 200 second
sent "$run/p2" >"$run/p2.sent"
[ "$(awk '$1 == "SENT" && $3 == "SEND_OK"' "$run/p2" | wc -l)" -eq 211 ] && [ "$vip_port" -eq $((bk_port - 2)) ]
result $? "second round, vipChannelEnabled (port $vip_port): 211 more sends SEND_OK"

java_run "$run/c2" consume "$ns" JavaPC rmq_java_group 211 120
recv "$run/c2" >"$run/c2.recv"
echo "# restarted consumer: $(wc -l <"$run/c2.recv") distinct"
[ "$(comm -23 "$run/p2.sent" "$run/c2.recv" | wc -l)" -eq 0 ]
result $? "the restarted consumer received every new message"
delayed=$(sed -n 's/^TIMER delayed=//p' "$run/c2" | head -1)
echo "# the timer message was stored for delivery ${delayed:-?} ms after it was born"
[ -n "$delayed" ] && [ "$delayed" -ge 3000 ]
result $? "a message with TIMER_DELAY_MS=3000 (RocketMQ 5's setDelayTimeMs) is delivered 3 s later"
again=$(comm -12 "$run/p1.sent" "$run/c2.recv" | wc -l)
echo "# redelivered from the first round: $again"
[ "$again" -eq 0 ]
result $? "nothing committed before the restart is delivered again"
errs=$(grep -c -E 'ERROR|refused remoting' "$run/broker.log")
grep -E 'ERROR|refused remoting' "$run/broker.log" | head -5 | sed 's/^/# broker: /'
[ "$errs" -eq 0 ]
result $? "the broker logged no error"
