#!/bin/bash
# tests/java/run_request_reply_test.sh: request-reply with the unmodified
# Apache RocketMQ Java client (4.9.x, Maven Central; RequestReply.java, one
# JVM per role) against an rmq broker: 2 responders answer the requests of
# 3 requesters with MessageUtil.createReplyMessage (it needs the CLUSTER
# the broker stamps on the request), their replies go to <cluster>_REPLY_TOPIC
# as SEND_REPLY_MESSAGE and the broker pushes each to its own requester
# (PUSH_REPLY_MESSAGE_TO_CLIENT), sync and with a RequestCallback; with the
# responders down a request times out cleanly, and a reply to a requester
# that is not connected gets SYSTEM_ERROR naming it. With the argument
# "rocketmq" the same runs against Apache RocketMQ 4.9.7's own name server
# and broker (rocketmq_lib.sh), which shows what the checks expect is
# RocketMQ's behaviour; with "cluster" on the 2-master/2-slave SYNC cluster
# of deploy/cluster.sh up sync. Prints TAP; SKIP without java, mvn or Maven
# Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=10
cluster=ReplyCluster
topic=RequestTopic
requesters=3
echo "1..$plan"
java_build $plan
if [ "${1:-}" = rocketmq ]; then
  # shellcheck source=tests/java/rocketmq_lib.sh
  . "$here/rocketmq_lib.sh"
  rq_jars $plan
  mig_rq_namesrv
  bk_port=$(free_port_run)
  rq_topic_seed broker "$topic" 4
  rq_broker_ready broker "$cluster" broker-q "$bk_port" "$ns"
elif [ "${1:-}" = cluster ]; then
  # deploy/cluster.sh up sync (2 masters, 2 slaves): requests and replies
  # spread over both masters
  start_cluster_sync request_reply ''
  cluster=DefaultCluster
  create_topic_both "$topic"
else
  start_namesrv
  start_broker "$cluster" broker-q
  create_topic "$cluster" "$topic"
fi

jrun=(timeout 120 java -Drocketmq.client.rebalance.waitInterval=1000 -cp "$cp" rmqtest.RequestReply)

"${jrun[@]}" responders "$ns" "$topic" "$cluster" 2 >"$run/resp.out" 2>"$run/resp.err" &
resp_pid=$!
pids+=("$resp_pid")
for _ in $(seq 1 600); do
  grep -q READY "$run/resp.out" && break
  sleep 0.1
done
sleep 3                                   # both responders hold queues

req_pids=()
for i in $(seq 1 $requesters); do
  "${jrun[@]}" requester "$ns" "$topic" "$i" 10 >"$run/req$i.out" 2>"$run/req$i.err" &
  req_pids+=("$!")
done
for p in "${req_pids[@]}"; do wait "$p"; done
kill "$resp_pid" 2>/dev/null
wait "$resp_pid" 2>/dev/null
run_killable "${jrun[@]}" down "$ns" "$topic" "$cluster" >"$run/down.out" 2>"$run/down.err"

# result CHECK WHAT: the Java output's verdict on CHECK (java_check)
result() { java_check "$1" "$2" "$run"/req*.out "$run/down.out"; }
for i in $(seq 1 $requesters); do
  result "rr-sync-$i" "requester $i: request() gets the reply to each of its requests"
  result "rr-async-$i" "requester $i: request(msg, RequestCallback) gets the reply to each of its requests"
done

n=$((n + 1))
fails=$(grep -c '^FAIL' "$run/resp.out")
grep '^FAIL' "$run/resp.out" | head -3 | sed 's/^/# /'
r0=$(grep -c '^REPLIED responder-0 ' "$run/resp.out")
r1=$(grep -c '^REPLIED responder-1 ' "$run/resp.out")
late=$(grep -c '^LATE' "$run/resp.out")
grep '^LATE' "$run/resp.out" | head -3 | sed 's/^/# /'
echo "# replies sent: responder-0 $r0, responder-1 $r1; failed $fails; refused late $late" \
  "(a request delivered again after its requester had its reply and left: at least once)"
if [ "$fails" -eq 0 ] && [ "$r0" -gt 0 ] && [ "$r1" -gt 0 ]; then
  echo "ok $n - both responders built and sent their replies (createReplyMessage found CLUSTER)"
else
  echo "not ok $n - both responders built and sent their replies (createReplyMessage found CLUSTER)"
  tail -5 "$run/resp.err" | sed 's/^/# responders: /'
fi
result rr-timeout "with the responders down a request times out with RequestTimeoutException"
result rr-gone "a reply to a requester that is not connected gets SYSTEM_ERROR naming it"

if [ "${1:-}" = rocketmq ]; then
  echo "ok $((n + 1)) # SKIP RocketMQ's broker logs ERROR for the pulls of the responders this test kills"
  exit 0
fi
broker_log_clean
