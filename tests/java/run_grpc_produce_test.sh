#!/bin/bash
# tests/java/run_grpc_produce_test.sh [tls]: the unmodified RocketMQ 5 gRPC
# Java client as a producer against rmq (issue 30), once with the name
# server as its access point and once with the broker.
# Default (h2c): rocketmq-client-java 5.0.8 (Maven profile grpc5) sends
# normal (tags, keys), FIFO (message groups), delayed (delivery timestamp)
# and transactional (commit, rollback, and an open one the broker's
# check-back commits through the producer's checker on the Telemetry
# stream) messages, read back by id with the 4.9 remoting client
# (GrpcProduce.java).
# tls: rocketmq-client-java 5.0.7 (profiles grpc5,grpc507) with its default
# TLS (ALPN h2, any certificate) to a name server and broker with
# tlsMode=permissive (scripts/gen-test-certs.sh): a body of maxMessageSize
# (4 MiB) sent and received byte-exact, one over maxMessageSize refused, 200 sends
# in flight on one connection all acknowledged and received
# (GrpcTransport.java).
# Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

mode=${1:-h2c}
case $mode in
  h2c) checks=(start send-normal send-fifo send-delay send-tx tx-check stored-normal stored-fifo stored-delay stored-tx
         stored-tx-check)
       profile=grpc5 ;;
  tls) checks=(start send-big refuse-over send-burst receive-big receive-burst)
       profile=grpc5,grpc507 ;;
  *) echo "usage: $0 [tls]" >&2; exit 2 ;;
esac
plan=$((2 * ${#checks[@]} + 1))
echo "1..$plan"
java_build $plan "$here" $profile

# tls_on: the name server and the broker take TLS and plaintext on their one port
tls_on() {
  sh "$src/scripts/gen-test-certs.sh" "$run/pki" || { echo "not ok 1 - gen-test-certs.sh"; exit 1; }
  ns_extra="tlsMode=permissive
tlsCertPath=$run/pki/server.pem
tlsKeyPath=$run/pki/server.key"
  broker_extra=$ns_extra
}

# produce ACCESS ENDPOINTS: GrpcProduce's checks through one access point
produce() {
  timeout 300 java -cp "$cp" rmqtest.GrpcProduce "$2" "$ns" GrpcNormal GrpcFifo GrpcDelay GrpcTx \
    "grpc_$1" >"$run/out-$1" 2>"$run/err-$1"
  java_exit $? "$1"
  for c in "${checks[@]}"; do java_check "$c" "access point $1: $c" "$run/out-$1"; done
}

# java_exit RC WHAT: the end of the Java program's stderr when it failed
java_exit() {
  [ "$1" -eq 0 ] || { echo "# java ($2) exited $1"; grep -v '^\s*at ' "$run/err-$2" | tail -15 | sed 's/^/# /'; }
}

if [ "$mode" = tls ]; then
  tls_on
  start_namesrv
  start_broker GrpcCluster broker-t
  for access in namesrv broker; do create_topic GrpcCluster "GrpcTls_$access"; done
  timeout 300 java -cp "$cp" rmqtest.GrpcTransport tls GrpcTls "namesrv=$ns" "broker=$test_ip:$bk_port" \
    >"$run/out-tls" 2>"$run/err-tls"
  java_exit $? tls
  for access in namesrv broker; do
    for c in "${checks[@]}"; do java_check "$c-$access" "TLS, access point $access: $c" "$run/out-tls"; done
  done
else
  start_namesrv
  # open transactions are checked back 3 s after their send, the checker runs every second
  broker_extra=$'transactionCheckInterval=1000\ntransactionTimeOut=3000'
  start_broker GrpcCluster broker-g
  for t in GrpcNormal GrpcFifo GrpcDelay GrpcTx; do create_topic GrpcCluster $t; done
  produce namesrv "$ns"
  produce broker "$test_ip:$bk_port"
fi

broker_log_clean
