#!/bin/bash
# tests/node/run_recall5_test.sh [cluster]: the unmodified RocketMQ 5 Node
# client (rocketmq-client-nodejs from npm, gRPC) recalls timer messages on
# an rmq broker with recallMessageEnable=true (issue 31): recall5.js sends
# and recalls with the name server as its access point (the name server
# forwards RecallMessage to the master of the broker the handle names,
# issue 30), the broker restarts before the messages are due, and
# recall5.js then sees the kept message delivered and the recalled one
# never. With "cluster" the same on the 2-master/2-slave SYNC cluster of
# deploy/cluster.sh up sync (the topic on both masters; the whole cluster
# restarts; the consumer also comes in through the name server), else on
# one broker on ephemeral loopback ports (the consumer through the
# broker's endpoint). A temp dir; node_modules there too (npm keeps its
# cache in ~/.npm). Prints TAP; SKIP when node or npm is missing or npm
# cannot fetch the client.
set -uo pipefail

# shellcheck source=tests/java/java_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/../java/java_lib.sh"
send_checks=(normal-no-handle timer-handle recall-ok recall-twice-ok recall-bad-handle-refused
  recall-unknown-broker-refused)
consume_checks=(recalled-never-delivered recall-after-delivery-refused recall-unknown-broker-refused)
PLAN=$((2 + ${#send_checks[@]} + ${#consume_checks[@]} + 1))

echo "1..$PLAN"
command -v node >/dev/null && command -v npm >/dev/null || skip_all "$PLAN" "node or npm not installed"
cp "$src/deploy/examples/node5/package.json" "$here/recall5.js" "$run/"
if ! (cd "$run" && timeout 600 npm install --no-audit --no-fund --prefer-offline >"$run/npm.log" 2>&1); then
  tail -20 "$run/npm.log" | sed 's/^/# /'
  skip_all "$PLAN" "npm cannot fetch rocketmq-client-nodejs"
fi

start_mode "${1:-}" recall5 Recall5Cluster broker-r5 Recall5 "recallMessageEnable=true"
if [ "${1:-}" = cluster ]; then
  ok "deploy/cluster.sh up sync with recallMessageEnable=true, Recall5 on both masters" true
else
  ok "mqnamesrv and mqbroker with recallMessageEnable=true" true
fi

# the sends and recalls through the name server's endpoint (its RecallMessage
# forwarded to the broker the handle names), the rest through the broker's
(cd "$run" && timeout 120 node recall5.js "$ns" Recall5 send) >"$run/send.out" 2>"$run/send.err"
grep -h '^FAIL run ' "$run/send.out" | head -3 | sed 's/^/# /'
for c in "${send_checks[@]}"; do java_check "$c" "send: $c" "$run/send.out"; done
handle=$(awk '$1 == "HANDLE" {print $2}' "$run/send.out")

# the recall must outlast a restart: the timer state is rebuilt from the store
if [ "${1:-}" = cluster ]; then
  restart_cluster_sync ''
  wait_route_both Recall5
  ok "the cluster restarted before the messages were due" true
  consume_at=$ns
else
  kill "$bk_pid"
  wait "$bk_pid" 2>/dev/null
  start_broker Recall5Cluster broker-r5
  ok "the broker restarted before the messages were due" test -n "$bk_port"
  consume_at=$test_ip:$bk_port
fi

(cd "$run" && timeout 120 node recall5.js "$consume_at" Recall5 consume "$handle") \
  >"$run/consume.out" 2>"$run/consume.err"
grep -h '^FAIL run ' "$run/consume.out" | head -3 | sed 's/^/# /'
for c in "${consume_checks[@]}"; do java_check "$c" "after the restart: $c" "$run/consume.out"; done
broker_log_clean
