#!/bin/bash
# tests/java/run_admin_test.sh: the unmodified Apache RocketMQ Java client
# (org.apache.rocketmq:rocketmq-client 4.9.x from Maven Central) asks our
# name server for a topic's route, the cluster info and the topic list over
# RocketMQ's remoting protocol, with an rmq broker registered. Builds
# tests/java (java_lib.sh), starts mqnamesrv and mqbroker on ephemeral
# loopback ports and checks what the client printed (AdminRoute.java).
# Prints TAP; SKIP when java or mvn is missing or Maven Central cannot be
# reached.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

echo "1..5"
java_build 5
start_namesrv
start_broker JavaCluster broker-j
create_topic JavaCluster JavaTopic

out=$run/java.out
timeout 120 java -cp "$cp" rmqtest.AdminRoute "$ns" JavaTopic >"$out" 2>"$run/java.err"
rc=$?
echo "# java exited $rc; it printed:"
sed 's/^/# /' "$out"
if [ "$rc" -eq 0 ]; then echo "ok 1 - AdminRoute ran"; else
  echo "not ok 1 - AdminRoute ran"; tail -30 "$run/java.err" | sed 's/^/# /'; fi
check() {
  local n=$1 what=$2 pattern=$3
  if grep -qx -- "$pattern" "$out"; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}
check 2 "route lists broker-j with 4 queues, read/write perm, its master" \
  "ROUTE broker-j read=4 write=4 perm=6 master=127.0.0.1:$bk_port"
check 3 "cluster info lists broker-j in JavaCluster" "CLUSTER JavaCluster broker-j master=127.0.0.1:$bk_port"
check 4 "topic list holds JavaTopic" "TOPICLIST JavaTopic"
check 5 "an unknown topic is TOPIC_NOT_EXIST (17)" "NOTEXIST code=17"
