#!/bin/bash
# tests/java/run_mqadmin_acl_test.sh: the ACL changed without a restart.
# RocketMQ's own admin tool (rocketmq-tools 4.9.7, MQAdminStartup, signing
# as the admin account of its conf/tools.yml; AdminBatch.java runs the
# admin's commands in one JVM) against an rmq broker with aclEnable=true:
# updateAclConfig adds an account that the unmodified Java client
# (AclSend.java, AclClientRPCHook, one producer per account kept running)
# then sends with; getAclConfig and
# clusterAclConfigVersion show it; the file is rewritten without its
# comments; a plain account is refused the ACL codes; deleteAccessConfig
# removes the account and its next send is refused; updateGlobalWhiteAddr
# replaces the whitelist. Then the file itself: a bad one sent with SIGHUP
# is refused with its line logged and the policy kept, a good one takes
# effect on SIGHUP, and one edited without a signal takes effect once the
# broker sees the file change. The broker is never restarted. Prints TAP;
# SKIP when java or mvn is missing or Maven Central cannot be reached.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

echo "1..17"
java_build 17
start_namesrv
acl=$run/acl.properties
cat >"$acl" <<'ACL'
# the operators' comment, dropped when the broker writes the file back
account.ops_admin.secretKey=ops-admin-secret
account.ops_admin.admin=true
account.plain.secretKey=plain-secret
account.plain.topicPerms=AclTopic=PUB
account.plain.groupPerms=acl_pg=PUB
ACL
broker_extra="aclEnable=true
aclFile=$acl"
start_broker AclCluster broker-acl
bk=127.0.0.1:$bk_port

# home NAME AK SK: a ROCKETMQ_HOME for mqadmin signing as AK (conf/tools.yml), its log in the temp dir
home() {
  mkdir -p "$run/$1/conf"
  printf 'accessKey: %s\nsecretKey: %s\n' "$2" "$3" >"$run/$1/conf/tools.yml"
  cat >"$run/$1/conf/logback_tools.xml" <<XML
<configuration>
  <appender name="F" class="ch.qos.logback.core.FileAppender">
    <file>$run/tools-$1.log</file>
    <encoder><pattern>%d %p %c - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="F"/></root>
</configuration>
XML
}
home admin ops_admin ops-admin-secret
home plainhome plain plain-secret

# serve NAME CMD...: runs CMD in the background, its stdin and stdout FIFOs $run/NAME.in and $run/NAME.res
serve() {
  local name=$1
  shift
  mkfifo "$run/$name.in" "$run/$name.res"
  timeout 300 "$@" <"$run/$name.in" >"$run/$name.res" 2>"$run/$name.stderr" &
  pids+=("$!")
}
# one JVM runs mqadmin for the admin account (AdminBatch.java), one the sends (AclSend.java)
serve admin java -Drocketmq.home.dir="$run/admin" -cp "$cp" rmqtest.AdminBatch "$run"
exec {admin_w}>"$run/admin.in" {admin_r}<"$run/admin.res"
serve sender java -cp "$cp" rmqtest.AclSend "$ns" AclTopic acl_pg
exec {sender_w}>"$run/sender.in" {sender_r}<"$run/sender.res"
# adm HOME NAME CMD ARGS...: mqadmin CMD signed as HOME's account; output in $run/NAME.out (stderr .err)
adm() {
  local h=$1 name=$2 line=""
  shift 2
  if [ "$h" = admin ]; then
    echo "$name $* -n $ns" >&"$admin_w"
    while read -r -t 120 line <&"$admin_r"; do [ "$line" = "DONE $name" ] && break; done
  else
    timeout 120 java -Drocketmq.home.dir="$run/$h" -cp "$cp" org.apache.rocketmq.tools.command.MQAdminStartup \
      "$@" -n "$ns" >"$run/$name.out" 2>"$run/$name.err"
  fi
  echo "# mqadmin $* printed:"
  head -30 "$run/$name.out" | awk '{print "#   " $0}'
  grep -m3 -E 'Exception|CODE:' "$run/$name.err" | awk '{print "#   stderr: " $0}'
}
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
# logged ERE: the broker's log has a line matching ERE (waits up to 5 s)
# logged PATTERN [FROM]: waits up to 5 s for PATTERN in the broker's log
# (from its line FROM on, default 1).
logged() {
  local i
  for i in $(seq 1 50); do tail -n +"${2:-1}" "$run/broker.log" | grep -Eq -- "$1" && return 0; sleep 0.1; done
  return 1
}

printf 'accessKey=ops_admin\nsecretKey=ops-admin-secret\n' >"$run/admin.properties"
admin_config=$run/admin.properties create_topic AclCluster AclTopic

send send_first plain plain-secret
ok "plain, an account of the file, sends" has send_first '^SENT '
adm admin update updateAclConfig -b "$bk" -a acl_user -s acl-user-secret -t AclTopic=PUB -g acl_pg=PUB
ok "updateAclConfig adds acl_user" eval "has update '^create or update plain access config to $bk success\.' && clean update"
send send_added acl_user acl-user-secret
ok "acl_user sends with the Java client right after, no restart" has send_added '^SENT '
adm admin get getAclConfig -b "$bk"
ok "getAclConfig lists acl_user with its topic permission" \
  eval "has get 'accessKey +: acl_user' && has get 'topicPerms +: \[AclTopic=PUB\]' && clean get"
adm admin version clusterAclConfigVersion -b "$bk"
ok "clusterAclConfigVersion prints the file and version 1" \
  eval "has version '^AclCluster +broker-acl +$bk +$acl +1 ' && clean version"
ok "the file is rewritten with acl_user, without the comment" \
  eval "grep -qx 'account.acl_user.secretKey=acl-user-secret' '$acl' && ! grep -q '^#' '$acl'"
adm plainhome refused updateAclConfig -b "$bk" -a sneaky -s sneaky-secret -m true
ok "a plain account is refused updateAclConfig (admin only)" \
  eval "grep -q 'UPDATE_AND_CREATE_ACL_CONFIG is an admin operation and account plain is not an admin' '$run/refused.err' '$run/refused.out' && ! grep -q sneaky '$acl'"
adm admin delete deleteAccessConfig -b "$bk" -a acl_user
ok "deleteAccessConfig removes acl_user" eval "has delete '^delete plain access config account from $bk success\.' && clean delete"
send send_deleted acl_user acl-user-secret
ok "acl_user's next send is refused" has send_deleted '^REFUSED 16 .*unknown accessKey acl_user'
adm admin white updateGlobalWhiteAddr -b "$bk" -g '10.9.9.*,192.168.7.1'
ok "updateGlobalWhiteAddr replaces the whitelist" \
  eval "has white '^update global white remote addresses to $bk success\.' && grep -qx 'globalWhiteRemoteAddresses=10.9.9.\*;192.168.7.1' '$acl'"

# the file itself: a bad one is refused on SIGHUP, the policy in force kept
good=$(cat "$acl")
{ echo "$good"; echo "account.hup_user.secretKey=hup-user-secret"; echo "account.hup_user.defaultTopicPerm=ALL"; } >"$acl"
line=$(grep -n 'defaultTopicPerm=ALL' "$acl" | cut -d: -f1)
kill -HUP "$bk_pid"
ok "a bad file on SIGHUP is refused, its line named in the log" \
  eval "logged 'SIGHUP: reloading the ACL' && logged \"ACL reload refused, the policy in force is kept: $acl:$line: account.hup_user.defaultTopicPerm=ALL\""
send send_kept plain plain-secret
ok "the old policy is kept: plain's running producer still sends" has send_kept '^SENT '
send send_bad hup_user hup-user-secret
ok "nothing of the bad file is in force" has send_bad '^REFUSED 16 '

{ echo "$good" | grep -v '^account\.plain\.'; printf 'account.hup_user.secretKey=hup-user-secret\naccount.hup_user.topicPerms=AclTopic=PUB\naccount.hup_user.groupPerms=acl_pg=PUB\n'; } >"$acl.new"
mv "$acl.new" "$acl"
kill -HUP "$bk_pid"
logged "ACL reloaded from $acl: 2 accounts"
send send_hup hup_user hup-user-secret
send send_gone plain plain-secret
ok "a good file takes effect on SIGHUP: hup_user sends, plain's running producer is refused" \
  eval "has send_hup '^SENT ' && has send_gone '^REFUSED 16 .*unknown accessKey plain'"

sleep 1.1   # a new modification time for the watch to see
# the watch may already have seen the mv above: only a reload logged from
# here on is this edit's
from=$(($(wc -l <"$run/broker.log") + 1))
printf 'account.watch_user.secretKey=watch-user-secret\naccount.watch_user.defaultTopicPerm=PUB\naccount.watch_user.groupPerms=acl_pg=PUB\n' >>"$acl"
ok "an edited file is picked up without a signal" \
  eval "logged 'aclFile $acl changed: reloading the ACL' $from && logged 'ACL reloaded from $acl: 3 accounts' $from"
send send_watch watch_user watch-user-secret
ok "watch_user sends" has send_watch '^SENT '
ok "the broker was never restarted" kill -0 "$bk_pid"
