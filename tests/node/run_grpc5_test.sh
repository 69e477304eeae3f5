#!/bin/bash
# tests/node/run_grpc5_test.sh [cluster|controller]: the unmodified
# RocketMQ 5 Node client (rocketmq-client-nodejs from npm, gRPC; issue 30)
# against rmq: grpc5.js's checks (normal, FIFO, delayed and transactional
# sends; three delayed messages recalled, which the name server forwards to
# the broker each handle names, and a broker endpoint to the other master
# when the handle names it; SimpleConsumer receive and ack, tag filter,
# redelivery with delivery attempt 2; PushConsumer with a failure
# redelivered; with ACL, every call signed and a wrong secret refused)
# with the name server and with a broker as the access point (the two runs
# side by side, on topics and groups of their own), then the application of
# deploy/examples/node5 that deploy/README.md shows. Where:
#   (none)      an mqnamesrv and an mqbroker with aclEnable=true;
#   cluster     the 2-master/2-slave SYNC cluster of deploy/cluster.sh up
#               sync, ACL on in the name server and every broker, the
#               brokers signing as the admin account, every topic on both
#               masters, broker-a's master the broker endpoint;
#   controller  deploy/cluster.sh up controller (automatic failover, ACL
#               off), every topic on the masters of its three groups,
#               broker-a's elected master the broker endpoint.
# Ephemeral loopback ports or java_lib.sh's cluster port offsets, a temp
# dir; node_modules there too (npm keeps its cache in ~/.npm). Prints TAP;
# SKIP when node or npm is missing or npm cannot fetch the client.
set -uo pipefail

# shellcheck source=tests/java/java_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/../java/java_lib.sh"
mode=${1:-one}
checks=(producer-start send-normal send-fifo send-tx simple-receive-ack simple-acked-gone simple-tag-filter
  simple-fifo simple-redelivered recall-signed simple-delay simple-tx push-consume push-failure-redelivered)
[ "$mode" = controller ] || checks+=(acl-wrong-secret-refused)
N=10
PLAN=$((1 + 2 * ${#checks[@]} + 3))
example=$src/deploy/examples/node5

echo "1..$PLAN"
command -v node >/dev/null && command -v npm >/dev/null || skip_all "$PLAN" "node or npm not installed"
cp "$example/package.json" "$example/"*.js "$here/grpc5.js" "$run/"
if ! (cd "$run" && timeout 600 npm install --no-audit --no-fund --prefer-offline >"$run/npm.log" 2>&1); then
  tail -20 "$run/npm.log" | sed 's/^/# /'
  skip_all "$PLAN" "npm cannot fetch rocketmq-client-nodejs"
fi

cat >"$run/acl.properties" <<ACL
account.admin.secretKey=admin-secret-1
account.admin.admin=true
account.nodeapp.secretKey=nodeapp-secret-1
account.nodeapp.defaultTopicPerm=PUB|SUB
account.nodeapp.defaultGroupPerm=SUB
ACL
printf 'accessKey=admin\nsecretKey=admin-secret-1\n' >"$run/admin.properties"
ns_extra="aclEnable=true
aclFile=$run/acl.properties"
broker_extra="$ns_extra
aclAccessKey=admin
aclSecretKey=admin-secret-1
recallMessageEnable=true"
credentials=(nodeapp nodeapp-secret-1)
# make_topic TOPIC: TOPIC on the broker, or on every master of the cluster
case $mode in
  cluster)
    admin_config=$run/admin.properties
    start_cluster_sync grpc5 "$broker_extra"
    broker_at=$(cluster_addr broker-a)
    make_topic() { create_topic_both "$1"; }
    what="deploy/cluster.sh up sync with aclEnable=true, topics created by the admin account"
    ;;
  controller)
    start_cluster_controller grpc5_controller 'recallMessageEnable=true'
    broker_at=$(cluster_addr "broker-a-$(ctl_master_of broker-a)")
    make_topic() { create_topic_both "$1" 3; }
    what="deploy/cluster.sh up controller, topics on the three masters"
    credentials=()
    ;;
  *)
    admin_config=$run/admin.properties
    start_namesrv
    start_broker Grpc5Cluster broker-n5
    broker_at=$test_ip:$bk_port
    make_topic() { create_topic Grpc5Cluster "$1"; }
    what="mqnamesrv and mqbroker with aclEnable=true, topics created by the admin account"
    ;;
esac
for prefix in Ns Bk; do
  for t in Normal Fifo Delay Tx Push; do make_topic "$prefix$t"; done
done
make_topic Example5
ok "$what" true

# run_grpc5 ENDPOINTS PREFIX: grpc5.js's checks into $run/PREFIX.out
run_grpc5() {
  (cd "$run" && timeout 300 node grpc5.js "$1" "$2" "${credentials[@]}") >"$run/$2.out" 2>"$run/$2.err"
}
# report_grpc5 PREFIX WHAT: its checks as TAP lines
report_grpc5() {
  local c
  grep -h '^FAIL run ' "$run/$1.out" | head -3 | sed 's/^/# /'
  for c in "${checks[@]}"; do java_check "$c" "$2: $c" "$run/$1.out"; done
}
run_grpc5 "$ns" Ns &
ns_run=$!
run_grpc5 "$broker_at" Bk
wait "$ns_run"
report_grpc5 Ns "name server endpoint"
report_grpc5 Bk "broker endpoint"

[ "$mode" = controller ] || export RMQ_ACCESS_KEY=nodeapp RMQ_SECRET_KEY=nodeapp-secret-1
(cd "$run" && timeout 120 node producer.js "$ns" Example5 "$N") >"$run/producer.out" 2>"$run/producer.err" ||
  tail -20 "$run/producer.err" | sed 's/^/# /'
sent=$(grep -c '^SENT ' "$run/producer.out")
ok "examples/node5 producer.js: $sent of $N sent" test "$sent" -eq "$N"
(cd "$run" && timeout 120 node consumer.js "$ns" Example5 example_node5_consumer "$N" 60) \
  >"$run/consumer.out" 2>"$run/consumer.err" || tail -20 "$run/consumer.err" | sed 's/^/# /'
ok "examples/node5 consumer.js got $N messages: $(tail -1 "$run/consumer.out")" has consumer "^DONE $N\$"
# "<msgId> hello <i>" on both sides; key "order-<i>" on the consumer's
awk '$1 == "SENT" {print $2, $3, $4}' "$run/producer.out" | sort >"$run/sent.txt"
awk '$1 == "RECV" && $3 == "order-" $5 {print $2, $4, $5}' "$run/consumer.out" | sort -u >"$run/recv.txt"
diff "$run/sent.txt" "$run/recv.txt" | head -20 | sed 's/^/# /'
ok "every acknowledged id was consumed with its key and body" \
  eval '[ "$(wc -l <"$run/sent.txt")" -eq "$N" ] && cmp -s "$run/sent.txt" "$run/recv.txt"'
