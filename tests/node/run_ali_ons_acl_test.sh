#!/bin/bash
# tests/node/run_ali_ons_acl_test.sh: the unmodified ali-ons client (npm)
# with accessKeyId / accessKeySecret (RocketMQ ACL 1.0 signatures) against
# an mqnamesrv and an mqbroker that share one aclFile with aclEnable=true
# (acl.js): an account with PUB|SUB on the topic round-trips messages; one
# with SUB only cannot send (the broker logs why); a wrong secret is refused
# with the reason reaching the client. Ephemeral loopback ports, a temp
# dir; node_modules there too (npm keeps its cache in ~/.npm). Prints TAP;
# SKIP when node or npm is missing or npm cannot fetch ali-ons.
set -uo pipefail

# shellcheck source=tests/java/java_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/../java/java_lib.sh"
PLAN=8
TOPIC=NodeAcl

echo "1..$PLAN"
command -v node >/dev/null && command -v npm >/dev/null || skip_all "$PLAN" "node or npm not installed"
cp "$src/deploy/examples/node/package.json" "$here/acl.js" "$run/"
if ! (cd "$run" && timeout 600 npm install --no-audit --no-fund --prefer-offline >"$run/npm.log" 2>&1); then
  tail -20 "$run/npm.log" | sed 's/^/# /'
  skip_all "$PLAN" "npm cannot fetch ali-ons"
fi

# nodeapp may produce and consume the topic, each in its own group;
# reader may only consume it (PUB on its producer group lets its heartbeat
# in, so the refusal is the send's)
cat >"$run/acl.properties" <<ACL
account.admin.secretKey=admin-secret-1
account.admin.admin=true
account.nodeapp.secretKey=nodeapp-secret-1
account.nodeapp.topicPerms=$TOPIC=PUB|SUB
account.nodeapp.groupPerms=app_producer=PUB;node_acl_consumer=SUB
account.reader.secretKey=reader-secret-1
account.reader.topicPerms=$TOPIC=SUB
account.reader.groupPerms=reader_producer=PUB
ACL
printf 'accessKey=admin\nsecretKey=admin-secret-1\n' >"$run/admin.properties"
admin_config=$run/admin.properties
ns_extra="aclEnable=true
aclFile=$run/acl.properties"
broker_extra="$ns_extra
aclAccessKey=admin
aclSecretKey=admin-secret-1"
start_namesrv
start_broker NodeAclCluster broker-acl
create_topic NodeAclCluster "$TOPIC"
echo "ok 1 - mqnamesrv and mqbroker with aclEnable=true, $TOPIC created by the admin account"

# checks 2-7
(cd "$run" && timeout 300 node acl.js "$ns" "$TOPIC" 2) >"$run/acl.out" 2>"$run/acl.err"
rc=$?
cat "$run/acl.out"
done=$(grep -cE '^(not )?ok ' "$run/acl.out")
if [ "$rc" -ne 0 ] || [ "$done" -ne 6 ]; then
  tail -20 "$run/acl.err" | sed 's/^/# /'
  for i in $(seq $((2 + done)) 7); do echo "not ok $i - acl.js stopped (exit $rc)"; done
fi

want="no permission: account reader has SUB on topic $TOPIC"
if grep -q "$want" "$run/broker.log"; then echo "ok 8 - the broker logged the refused send: $want ..."; else
  echo "not ok 8 - the broker did not log '$want'"; grep -i "refused" "$run/broker.log" | tail -5 | sed 's/^/# /'; fi
