#!/bin/bash
# tests/java/run_migration_tls_test.sh: an rmq broker (namesrvProtocol=remoting)
# registering with an Apache RocketMQ 4.9.7 name server (Maven Central jars,
# tests/java/rocketmq_lib.sh) that takes TLS only (-Dtls.server.mode=enforcing,
# tls.test.mode.enable=false with the test PKI's server certificate,
# scripts/gen-test-certs.sh). The rmq broker's tlsMode=permissive makes it
# dial with TLS, verifying the name server against tlsCaPath; it registers,
# and stopped, unregisters. A plaintext request to that name server gets
# no answer. Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"
# shellcheck source=tests/java/rocketmq_lib.sh
. "$(dirname "$0")/rocketmq_lib.sh"

mig_begin 4 no-client
sh "$src/scripts/gen-test-certs.sh" "$run/pki" || { echo "not ok 1 - gen-test-certs.sh"; exit 1; }
ca=$run/pki/ca.pem

rq_jvm=(-Dtls.server.mode=enforcing -Dtls.test.mode.enable=false -Dtls.server.need.client.auth=none
  "-Dtls.server.certPath=$run/pki/server.pem" "-Dtls.server.keyPath=$run/pki/server.key")
mig_rq_namesrv
rq_jvm=()
rq_ca=$ca   # every cluster-info question below goes over TLS
mig_wait_for 60 rq_cluster_info "$ns" "$ca" >/dev/null
mig_result $? "the RocketMQ name server (tls.server.mode=enforcing) answers over TLS"
! rq_cluster_info "$ns" >/dev/null 2>&1
mig_result $? "... and gives a plaintext request no answer"

broker_extra="namesrvProtocol=remoting
tlsMode=permissive
tlsCertPath=$run/pki/server.pem
tlsKeyPath=$run/pki/server.key
tlsCaPath=$ca"
start_broker MigCluster broker-r
mig_wait_for 120 mig_rq_in_cluster broker-r
mig_result $? "the rmq broker (tlsMode=permissive) registered with it over TLS, verifying it against tlsCaPath"
sed 's/^/# /' "$run/cluster.out" | head -3

gone() { mig_rq_in_cluster && ! grep -q broker-r "$run/cluster.out"; }
mig_rmq_broker_unregisters gone
mig_result $? "stopped, the rmq broker unregistered over TLS and left the cluster"
