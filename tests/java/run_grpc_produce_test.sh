#!/bin/bash
# tests/java/run_grpc_produce_test.sh: the unmodified RocketMQ 5 gRPC Java
# client (rocketmq-client-java 5.0.8, Maven profile grpc5) as a producer
# against rmq (issue 30), once with the name server as its access point and
# once with the broker: normal (tags, keys), FIFO (message groups), delayed
# (delivery timestamp) and transactional (commit, rollback, and an open one
# the broker's check-back commits through the producer's checker on the
# Telemetry stream) sends, read back by id with the 4.9 remoting client
# (GrpcProduce.java).
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

checks=(start send-normal send-fifo send-delay send-tx tx-check stored-normal stored-fifo stored-delay stored-tx
  stored-tx-check)
plan=$((2 * ${#checks[@]} + 1))
echo "1..$plan"
java_build $plan "$here" grpc5
start_namesrv
# open transactions are checked back 3 s after their send, the checker runs every second
broker_extra=$'transactionCheckInterval=1000\ntransactionTimeOut=3000'
start_broker GrpcCluster broker-g
for t in GrpcNormal GrpcFifo GrpcDelay GrpcTx; do create_topic GrpcCluster $t; done

for access in namesrv broker; do
  if [ $access = namesrv ]; then endpoints=$ns; else endpoints=$test_ip:$bk_port; fi
  timeout 300 java -cp "$cp" rmqtest.GrpcProduce "$endpoints" "$ns" GrpcNormal GrpcFifo GrpcDelay GrpcTx \
    "grpc_$access" >"$run/out-$access" 2>"$run/err-$access"
  rc=$?
  [ "$rc" -eq 0 ] || { echo "# java ($access) exited $rc"; grep -v '^\s*at ' "$run/err-$access" | tail -15 | sed 's/^/# /'; }
  for c in "${checks[@]}"; do java_check "$c" "access point $access: $c" "$run/out-$access"; done
done

broker_log_clean
