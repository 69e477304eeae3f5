#!/bin/bash
# tests/node/run_ali_ons_test.sh: the unmodified ali-ons client (RocketMQ's
# Node client, from npm) against the 2-master/2-slave SYNC cluster that
# `deploy/cluster.sh up sync` starts: roundtrip.js's byte-for-byte round
# trips (every byte value, bodies around and over ali-ons' zlib threshold,
# tags, keys, user properties), then the application of deploy/examples/node
# that deploy/README.md shows. The cluster's ports are moved out of the way
# (RMQ_PORT_OFFSET) and its files, node_modules included, go to a temp dir
# (npm keeps its cache in ~/.npm). Prints TAP; SKIP when node or npm is
# missing or npm cannot fetch the packages. Always stops the cluster.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/cluster/deploy_lib.sh
. "$here/../cluster/deploy_lib.sh"
run=$(mktemp -d /tmp/rmq-test-node.XXXXXX)
PLAN=12
N=20

# ports 9876+OFF ... 10942+OFF, below the ephemeral range (32768-);
# the other cluster.sh tests use offsets 19000 to 21500
deploy_env "$run/cluster" "${RMQ_TEST_NODE_PORT_OFFSET:-17000}" 30
ns=127.0.0.1:$((9876 + RMQ_PORT_OFFSET))

cleanup() {
  [ ! -d "$RMQ_RUN_DIR" ] || "$cluster" down >/dev/null 2>&1
  rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# shellcheck source=tests/skip_lib.sh
. "$here/../skip_lib.sh"

echo "1..$PLAN"
command -v node >/dev/null && command -v npm >/dev/null || skip_all "$PLAN" "node or npm not installed"
# the example's package.json, installed once for both programs
cp "$src/deploy/examples/node/package.json" "$src/deploy/examples/node/"*.js "$here/roundtrip.js" "$run/"
if ! (cd "$run" && timeout 600 npm install --no-audit --no-fund --prefer-offline >"$run/npm.log" 2>&1); then
  tail -20 "$run/npm.log" | sed 's/^/# /'
  skip_all "$PLAN" "npm cannot fetch ali-ons"
fi

deploy_up_tap 1 sync
deploy_create_topic "$ns" NodeTopic
deploy_create_topic "$ns" ExampleTopic

# checks 2-8
(cd "$run" && timeout 240 node roundtrip.js "$ns" NodeTopic node_roundtrip 2) >"$run/roundtrip.out" 2>"$run/roundtrip.err"
rc=$?
cat "$run/roundtrip.out"
done=$(grep -cE '^(not )?ok ' "$run/roundtrip.out")
if [ "$rc" -ne 0 ] || [ "$done" -ne 7 ]; then
  tail -20 "$run/roundtrip.err" | sed 's/^/# /'
  for i in $(seq $((2 + done)) 8); do echo "not ok $i - roundtrip.js stopped (exit $rc)"; done
fi

(cd "$run" && timeout 120 node producer.js "$ns" ExampleTopic "$N") >"$run/producer.out" 2>"$run/producer.err"
rc=$?
sent=$(grep -c '^SENT .* SEND_OK ' "$run/producer.out")
if [ "$rc" -eq 0 ] && [ "$sent" -eq "$N" ]; then echo "ok 9 - examples/node producer.js: $N of $N SEND_OK"; else
  echo "not ok 9 - examples/node producer.js: $sent of $N SEND_OK (exit $rc)"; tail -20 "$run/producer.err" | sed 's/^/# /'; fi
brokers=$(awk '$1 == "SENT" {print $4}' "$run/producer.out" | sort -u | tr '\n' ' ')
if [ "$(awk '$1 == "SENT" {print $4}' "$run/producer.out" | sort -u | wc -l)" -eq 2 ]; then
  echo "ok 10 - the sends went to both masters ($brokers)"; else echo "not ok 10 - the sends went to: $brokers"; fi

(cd "$run" && timeout 120 node consumer.js "$ns" ExampleTopic example_node_consumer "$N" 60) \
  >"$run/consumer.out" 2>"$run/consumer.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -qx "DONE $N" "$run/consumer.out"; then echo "ok 11 - examples/node consumer.js got $N messages"; else
  echo "not ok 11 - examples/node consumer.js (exit $rc): $(tail -1 "$run/consumer.out")"; tail -20 "$run/consumer.err" | sed 's/^/# /'; fi
# "<msgId> hello <i>" on both sides; keys "order-<i>" on the consumer's
awk '$1 == "SENT" {print $2, $5, $6}' "$run/producer.out" | sort >"$run/sent.txt"
awk '$1 == "RECV" && $3 == "order-" $5 {print $2, $4, $5}' "$run/consumer.out" | sort -u >"$run/recv.txt"
if [ "$(wc -l <"$run/sent.txt")" -eq "$N" ] && cmp -s "$run/sent.txt" "$run/recv.txt"; then
  echo "ok 12 - every acknowledged id was consumed with its key and body"; else
  echo "not ok 12 - sent and consumed differ"; diff "$run/sent.txt" "$run/recv.txt" | head -20 | sed 's/^/# /'; fi
