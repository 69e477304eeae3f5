#!/bin/bash
# tests/java/run_grpc_consume_test.sh: the unmodified RocketMQ 5 gRPC Java
# client (rocketmq-client-java 5.0.8, Maven profile grpc5) as a consumer
# against rmq (issue 30), the name server as its access point: a
# SimpleConsumer (receive and ack, change of invisible time, redelivery of
# an unacked message with delivery attempt 2) and a PushConsumer (every
# message once, a failed one again with delivery attempt 2; an orderly
# group's FIFO messages in order per message group), fed by the 5.x
# Producer (GrpcConsume.java). Prints TAP; SKIP without java, mvn or Maven
# Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

checks=(simple-start simple-receive-ack simple-change-invisible simple-redelivered push-start push-consume
  push-failure-redelivered push-fifo)
plan=$((${#checks[@]} + 1))
echo "1..$plan"
java_build $plan "$here" grpc5
start_namesrv
start_broker GrpcCluster broker-c
for t in GrpcSimple GrpcPush GrpcFifo; do create_topic GrpcCluster $t; done

timeout 400 java -cp "$cp" rmqtest.GrpcConsume "$ns" GrpcSimple GrpcPush grpc_c GrpcFifo "$ns" \
  "$test_ip:$bk_port" >"$run/out" 2>"$run/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "# java exited $rc"; grep -v '^\s*at ' "$run/err" | tail -15 | sed 's/^/# /'; }
grep -h '^FAIL run ' "$run/out" | sed 's/^/# /'
for c in "${checks[@]}"; do java_check "$c" "$c" "$run/out"; done

broker_log_clean
