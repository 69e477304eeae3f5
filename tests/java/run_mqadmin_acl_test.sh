#!/bin/bash
# tests/java/run_mqadmin_acl_test.sh [4|5]: the ACL changed without a
# restart, on the 2-master/2-slave SYNC cluster of deploy/cluster.sh up sync
# (issue 32; ports moved by cluster_port_offset) with aclEnable=true on
# every broker, each with its own aclFile, the slaves replicating and every
# broker registering signed as the admin account rmq_broker
# (aclAccessKey). RocketMQ's own admin tool, unmodified (rocketmq-tools
# 4.9.7; with "5", 5.3.1, the last 5.x whose tool has ACL 1.0's commands;
# AdminBatch.java runs each account's commands in one JVM, signing as the
# account of its conf/tools.yml): updateAclConfig -c adds an account on all
# four brokers that the unmodified Java client (AclSend.java, 4.9.7,
# AclClientRPCHook, one producer per account kept running) then sends
# with; getAclConfig (4.9.7 only: 5.x's tool has no such command) and
# clusterAclConfigVersion show it; every file is rewritten without its
# comments; a plain account is refused the ACL codes; deleteAccessConfig
# -c removes the account and its next send is refused; updateGlobalWhiteAddr
# -c replaces every broker's whitelist. Then the masters' files
# themselves: a bad one sent with SIGHUP is refused with its line logged
# and the policy kept, a good one takes effect on SIGHUP, and one edited
# without a signal takes effect once the broker sees the file change. No
# broker is restarted. Prints TAP; SKIP when java or mvn is missing or
# Maven Central cannot be reached.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

tool=${1:-4}
plan=$([ "$tool" = 4 ] && echo 21 || echo 20)   # 5.x's tool has no getAclConfig
echo "1..$plan"
java_build "$plan"
send_cp=$cp
[ "$tool" = 4 ] || java_build "$plan" "$here" mqadmin5acl
script=mqadmin_acl$([ "$tool" = 4 ] || echo "$tool")
masters=(broker-a broker-b)
pieces=(broker-a broker-b broker-a-s broker-b-s)

# every broker's file: the brokers' own account, the operators' and a plain one
for piece in "${pieces[@]}"; do
  cat >"$run/acl-$piece.properties" <<'ACL'
# the operators' comment, dropped when the broker writes the file back
account.rmq_broker.secretKey=rmq-broker-secret
account.rmq_broker.admin=true
account.ops_admin.secretKey=ops-admin-secret
account.ops_admin.admin=true
account.plain.secretKey=plain-secret
account.plain.topicPerms=AclTopic=PUB
account.plain.groupPerms=acl_pg=PUB
ACL
done
start_cluster_sync "$script" "aclEnable=true
aclFile=$run/acl-{piece}.properties
aclAccessKey=rmq_broker
aclSecretKey=rmq-broker-secret"
bka=$(cluster_addr broker-a) bkb=$(cluster_addr broker-b) bka_s=$(cluster_addr broker-a-s) bkb_s=$(cluster_addr broker-b-s)
declare -A pid_at_start
for piece in "${pieces[@]}"; do pid_at_start[$piece]=$(cat "$RMQ_RUN_DIR/pid/$piece.pid"); done

mqadmin_home admin ops_admin ops-admin-secret
mqadmin_home plainhome plain plain-secret
adm_as=admin

# one JVM runs the sends (AclSend.java) with the 4.9.7 client, fed through FIFOs
mkfifo "$run/sender.in" "$run/sender.res"
timeout 600 java -cp "$send_cp" rmqtest.AclSend "$ns" AclTopic acl_pg \
  <"$run/sender.in" >"$run/sender.res" 2>"$run/sender.stderr" &
pids+=("$!")
exec {sender_w}>"$run/sender.in" {sender_r}<"$run/sender.res"
# send NAME AK SK: one send to AclTopic signed as AK; its result line in $run/NAME.out
send() {
  local line=""
  echo "$2 $3" >&"$sender_w"
  while read -r -t 60 line <&"$sender_r"; do   # the client's own log lines go to stdout too
    [[ $line =~ ^(SENT|REFUSED)\  ]] && break
    line=""
  done
  echo "$line" >"$run/$1.out"
  echo "# send as $2: $line"
}
# logged PIECE ERE [FROM]: waits up to 5 s for ERE in PIECE's log (from
# its line FROM on, default 1).
logged() {
  local i
  for i in $(seq 1 50); do tail -n +"${3:-1}" "$RMQ_RUN_DIR/logs/$1.log" | grep -Eq -- "$2" && return 0; sleep 0.1; done
  return 1
}
# on_every NAME ERE: NAME's output has a line matching ERE with @ replaced by each broker's address
on_every() {
  local addr
  for addr in "$bka" "$bkb" "$bka_s" "$bkb_s"; do has "$1" "${2//@/$addr}" || return 1; done
}
# in_every_file ERE: every broker's aclFile has a line matching ERE
in_every_file() {
  local piece
  for piece in "${pieces[@]}"; do grep -Eq -- "$1" "$run/acl-$piece.properties" || return 1; done
}
# hup_masters: SIGHUP to both masters
hup_masters() {
  local m
  for m in "${masters[@]}"; do kill -HUP "${pid_at_start[$m]}"; done
}
# masters_logged ERE [FROM...]: both masters' logs have ERE (from line FROM of each)
masters_logged() {
  logged broker-a "$1" "${2:-1}" && logged broker-b "$1" "${3:-1}"
}

adm clusterList clusterList
ok "the slaves replicate and every broker registered, signing as rmq_broker: clusterList shows 4 brokers" \
  eval "[ \$(count clusterList '^DefaultCluster +broker-[ab] +[01] ') -eq 4 ] && clean clusterList"
adm updateTopic updateTopic -c DefaultCluster -t AclTopic -r 4 -w 4
wait_route_both AclTopic
ok "updateTopic signed as ops_admin creates AclTopic on both masters" \
  eval "has updateTopic '^create topic to $bka success\.$' && has updateTopic '^create topic to $bkb success\.$'"

send send_first plain plain-secret
ok "plain, an account of the files, sends" has send_first '^SENT '
adm update updateAclConfig -c DefaultCluster -a acl_user -s acl-user-secret -t AclTopic=PUB -g acl_pg=PUB
ok "updateAclConfig -c adds acl_user on all four brokers, masters and slaves" \
  eval "on_every update '^create or update plain access config to @ success\.' && clean update"
send send_added acl_user acl-user-secret
ok "acl_user sends with the Java client right after, no restart" has send_added '^SENT '
if [ "$tool" = 4 ]; then
  adm get getAclConfig -c DefaultCluster
  ok "getAclConfig -c lists acl_user with its topic permission on both masters (plain's too)" \
    eval "[ \$(count get 'accessKey +: acl_user') -eq 2 ] && [ \$(count get 'topicPerms +: \[AclTopic=PUB\]') -eq 4 ] && clean get"
fi
adm version clusterAclConfigVersion -c DefaultCluster
ok "clusterAclConfigVersion -c prints each master's file and version 1" \
  eval "has version '^DefaultCluster +broker-a +$bka +$run/acl-broker-a.properties +1 ' && \
        has version '^DefaultCluster +broker-b +$bkb +$run/acl-broker-b.properties +1 ' && clean version"
ok "every broker's file is rewritten with acl_user, without the comment" \
  eval "in_every_file '^account\.acl_user\.secretKey=acl-user-secret$' && ! grep -q '^#' $run/acl-broker-*.properties"
adm_as=plainhome adm refused updateAclConfig -b "$bka" -a sneaky -s sneaky-secret -m true
ok "a plain account is refused updateAclConfig (admin only)" \
  eval "grep -q 'UPDATE_AND_CREATE_ACL_CONFIG is an admin operation and account plain is not an admin' '$run/refused.err' '$run/refused.out' && ! grep -q sneaky $run/acl-broker-*.properties"
adm delete deleteAccessConfig -c DefaultCluster -a acl_user
ok "deleteAccessConfig -c removes acl_user from all four brokers" \
  eval "on_every delete '^delete plain access config account from @ success\.' && clean delete && ! grep -q acl_user $run/acl-broker-*.properties"
send send_deleted acl_user acl-user-secret
ok "acl_user's next send is refused" has send_deleted '^REFUSED 16 .*unknown accessKey acl_user'
adm white updateGlobalWhiteAddr -c DefaultCluster -g '10.9.9.*,192.168.7.1'
ok "updateGlobalWhiteAddr -c replaces every broker's whitelist" \
  eval "on_every white '^update global white remote addresses to @ success\.' && in_every_file '^globalWhiteRemoteAddresses=10\.9\.9\.\*;192\.168\.7\.1$'"

# the masters' files themselves: a bad one is refused on SIGHUP, the policy in force kept
declare -A good
for m in "${masters[@]}"; do
  good[$m]=$(cat "$run/acl-$m.properties")
  { echo "${good[$m]}"; echo "account.hup_user.secretKey=hup-user-secret"; echo "account.hup_user.defaultTopicPerm=ALL"; } >"$run/acl-$m.properties"
done
line=$(grep -n 'defaultTopicPerm=ALL' "$run/acl-broker-a.properties" | cut -d: -f1)
hup_masters
ok "a bad file on SIGHUP is refused, its line named in the log" \
  eval "masters_logged 'SIGHUP: reloading the ACL' && logged broker-a \"ACL reload refused, the policy in force is kept: $run/acl-broker-a.properties:$line: account.hup_user.defaultTopicPerm=ALL\""
send send_kept plain plain-secret
ok "the old policy is kept: plain's running producer still sends" has send_kept '^SENT '
send send_bad hup_user hup-user-secret
ok "nothing of the bad file is in force" has send_bad '^REFUSED 16 '

for m in "${masters[@]}"; do
  { echo "${good[$m]}" | grep -v '^account\.plain\.'
    printf 'account.hup_user.secretKey=hup-user-secret\naccount.hup_user.topicPerms=AclTopic=PUB\naccount.hup_user.groupPerms=acl_pg=PUB\n'
  } >"$run/acl-$m.new"
  mv "$run/acl-$m.new" "$run/acl-$m.properties"
done
hup_masters
masters_logged "ACL reloaded from $run/acl-broker-[ab].properties: 3 accounts"
send send_hup hup_user hup-user-secret
send send_gone plain plain-secret
ok "a good file takes effect on SIGHUP: hup_user sends, plain's running producer is refused" \
  eval "has send_hup '^SENT ' && has send_gone '^REFUSED 16 .*unknown accessKey plain'"

sleep 1.1   # a new modification time for the watch to see
# the watch may already have seen the mv above: only a reload logged from
# here on is this edit's
from_a=$(($(wc -l <"$RMQ_RUN_DIR/logs/broker-a.log") + 1))
from_b=$(($(wc -l <"$RMQ_RUN_DIR/logs/broker-b.log") + 1))
for m in "${masters[@]}"; do
  printf 'account.watch_user.secretKey=watch-user-secret\naccount.watch_user.defaultTopicPerm=PUB\naccount.watch_user.groupPerms=acl_pg=PUB\n' \
    >>"$run/acl-$m.properties"
done
ok "an edited file is picked up without a signal" \
  eval "masters_logged 'aclFile $run/acl-broker-[ab].properties changed: reloading the ACL' $from_a $from_b && \
        masters_logged 'ACL reloaded from $run/acl-broker-[ab].properties: 4 accounts' $from_a $from_b"
send send_watch watch_user watch-user-secret
ok "watch_user sends" has send_watch '^SENT '

# alive_unrestarted: every broker still runs with the pid it started with
alive_unrestarted() {
  local piece
  for piece in "${pieces[@]}"; do
    [ "$(cat "$RMQ_RUN_DIR/pid/$piece.pid")" = "${pid_at_start[$piece]}" ] && kill -0 "${pid_at_start[$piece]}" || return 1
  done
}
ok "no broker was restarted" alive_unrestarted
adm clusterList2 clusterList
ok "the slaves still replicate, signing as rmq_broker: clusterList shows 4 brokers" \
  eval "[ \$(count clusterList2 '^DefaultCluster +broker-[ab] +[01] ') -eq 4 ] && clean clusterList2"
broker_log_clean ERROR 'ACL reload refused, the policy in force is kept: .*hup_user\.defaultTopicPerm=ALL'
