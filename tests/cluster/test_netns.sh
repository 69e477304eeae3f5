#!/bin/bash
# tests/cluster/test_netns.sh: the 2-master/2-slave cluster across five
# "hosts" on this machine: one network namespace per piece (name server,
# broker-a, broker-a-s, broker-b, broker-b-s), made by scripts/netns-lib.sh
# (veths on a bridge, addresses 10.213.K.1-5/24 inside the namespaces only).
# deploy/cluster.sh -H runs each piece with RMQ_SSH="ip netns exec", and the
# clients (mqadmin, mqbench) run in the name server's namespace.
#
# Checks routes (clusterList: four brokers at their namespace addresses),
# replication (after sends the slaves' lag is 0), failover (kill -9 of
# broker-a's master: topicStatus reads broker-a from its slave, a consumer
# reads broker-a's queues from it, the producer goes on through broker-b),
# and a clean cluster.sh down. TAP; SKIP when not root or when network
# namespaces cannot be made. Always removes its namespaces, veths and bridge.
# functions run through check() look unreachable to shellcheck
# shellcheck disable=SC2317
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/deploy_lib.sh
. "$here/deploy_lib.sh"
# shellcheck source=../../scripts/netns-lib.sh
. "$here/../../scripts/netns-lib.sh"
export RMQ_START_TIMEOUT=30 RMQ_STOP_TIMEOUT=30
unset RMQ_PORT_BASE RMQ_PORT_OFFSET RMQ_CONF_DIR
ADMIN=$RMQ_BIN/tools/mqadmin
BENCH=$RMQ_BIN/tools/mqbench

skip() {
  echo "1..0 # SKIP $*"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"

id=$(($$ % 10000))
netns_init "$id" "10.213.$((id % 250))"
HOSTS=(ns a as b bs)
declare -A IPOF
RMQ_RUN_DIR=$(mktemp -d /tmp/rmq-test-netns.XXXXXX)
export RMQ_RUN_DIR
hosts_file=$RMQ_RUN_DIR/hosts
out=$RMQ_RUN_DIR/out.txt
export RMQ_SSH="ip netns exec"

cleanup() {
  if [ -f "$hosts_file" ]; then
    "$cluster" -H "$hosts_file" down >/dev/null 2>&1
  fi
  deploy_kill_rest
  netns_cleanup
  rm -rf "$RMQ_RUN_DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- network --------------------------------------------------------------------------

if ! netns_add ns 1 >"$out"; then
  skip "cannot make a network namespace: $(head -n 1 "$out")"
fi
k=2
for h in a as b bs; do
  netns_add "$h" $k >"$out" || { echo "Bail out! $(head -n 1 "$out")"; exit 1; }
  k=$((k + 1))
done
for h in "${HOSTS[@]}"; do IPOF[$h]=$(netns_ip "$h"); done
NS=${IPOF[ns]}:9876

cat >"$hosts_file" <<EOF
# five namespaces on one bridge ($NETNS_BR), made by tests/cluster/test_netns.sh
namesrv     $(netns_name ns)  ${IPOF[ns]}
broker-a    $(netns_name a)   ${IPOF[a]}
broker-a-s  $(netns_name as)  ${IPOF[as]}
broker-b    $(netns_name b)   ${IPOF[b]}
broker-b-s  $(netns_name bs)  ${IPOF[bs]}
EOF

on() { netns_on "$@"; }

# ---- TAP ---------------------------------------------------------------------------------

echo "1..14"
. "$here/../tap.sh"
# retry SECONDS CMD...: CMD every half second until it succeeds (output in $out)
retry() {
  local i=$(($1 * 2))
  shift
  while :; do
    "$@" >"$out" 2>&1 && return 0
    i=$((i - 1))
    [ $i -gt 0 ] || return 1
    sleep 0.5
  done
}

check "cluster.sh -H up sync starts the pieces in their namespaces" \
  "$cluster" -H "$hosts_file" up sync

# net_ok: from the name server's namespace, every broker's port over the bridge.
net_ok() {
  local hp
  for hp in "${IPOF[a]}:10911" "${IPOF[as]}:10921" "${IPOF[b]}:10931" "${IPOF[bs]}:10941"; do
    # shellcheck disable=SC2016 # expands in the inner bash
    on ns timeout 3 bash -c 'exec 3<>"/dev/tcp/${1%:*}/${1#*:}"' _ "$hp" || { echo "cannot reach $hp"; return 1; }
  done
}
check "the name server's namespace reaches the four brokers over the bridge" net_ok

check "cluster.sh -H status: every piece running" "$cluster" -H "$hosts_file" status

# cluster_has LINE_PATTERNS...: every pattern matches a line of clusterList (run in ns).
cluster_has() {
  local list p
  list=$(on ns "$ADMIN" clusterList -n "$NS") || return 1
  echo "$list"
  for p in "$@"; do
    grep -Eq "$p" <<<"$list" || { echo "no line matches: $p"; return 1; }
  done
}
routes() {
  cluster_has "broker-a +0 +${IPOF[a]}:10911 +MASTER" "broker-a +1 +${IPOF[as]}:10921 +SLAVE" \
    "broker-b +0 +${IPOF[b]}:10931 +MASTER" "broker-b +1 +${IPOF[bs]}:10941 +SLAVE"
}
if retry 30 routes; then ok "clusterList: 4 brokers at their namespace addresses"; else not_ok "clusterList: 4 brokers at their namespace addresses"; fi

topic_on_both() {
  on ns "$ADMIN" updateTopic -n "$NS" -t NetnsTopic -c DefaultCluster -r 4 -w 4 &&
    on ns "$ADMIN" topicRoute -n "$NS" -t NetnsTopic | grep broker-b >/dev/null &&
    on ns "$ADMIN" topicRoute -n "$NS" -t NetnsTopic | grep broker-a >/dev/null
}
# sync_count ADDR: the slave's completed metadata sync rounds.
sync_count() {
  on ns "$ADMIN" brokerStatus -n "$NS" -b "$1" | awk '$1 == "slaveSyncCount" { print $2 }'
}
as_sync0=$(sync_count "${IPOF[as]}:10921")
bs_sync0=$(sync_count "${IPOF[bs]}:10941")
check "updateTopic NetnsTopic on both masters" retry 20 topic_on_both

sends() {
  local o
  o=$(on ns "$BENCH" producer -n "$NS" -t NetnsTopic -w 8 -s 256 -q 4000 2>&1) || { echo "$o"; return 1; }
  echo "$o" | tail -n 3
  grep -q 'Send Total: 4000 .*Send Failed: 0 Response Failed: 0' <<<"$o"
}
check "mqbench producer: 4000 sends to the SYNC_MASTERs, none failed" sends

# lag0 MASTER SLAVEIP: the master's Slaves table shows the slave in sync with lag 0.
lag0() {
  local st
  st=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "$1") || return 1
  echo "$st" | sed -n '/^Slaves/,$p'
  grep -Eq "^[0-9]+ +$2:[0-9]+ +1 +[0-9]+ +0 +true" <<<"$st"
}
# same_max MASTER SLAVE: both have the same commitLogMaxOffset (> 0).
same_max() {
  local m s
  m=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "$1" | awk '$1 == "commitLogMaxOffset" { print $2 }')
  s=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "$2" | awk '$1 == "commitLogMaxOffset" { print $2 }')
  echo "master $m slave $s"
  [ -n "$m" ] && [ "$m" -gt 0 ] && [ "$m" = "$s" ]
}
repl_lag() {
  lag0 "${IPOF[a]}:10911" "${IPOF[as]}" && lag0 "${IPOF[b]}:10931" "${IPOF[bs]}" &&
    same_max "${IPOF[a]}:10911" "${IPOF[as]}:10921" && same_max "${IPOF[b]}:10931" "${IPOF[bs]}:10941"
}
# the slaves copy topic configs every slaveSyncInterval (10 s): two more
# rounds than before updateTopic and they know NetnsTopic
synced() {
  local a b
  a=$(sync_count "${IPOF[as]}:10921") b=$(sync_count "${IPOF[bs]}:10941")
  echo "slaveSyncCount broker-a-s ${as_sync0:-?} -> $a, broker-b-s ${bs_sync0:-?} -> $b"
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge $((${as_sync0:-0} + 2)) ] && [ "$b" -ge $((${bs_sync0:-0} + 2)) ]
}
repl() {
  synced && repl_lag
}
if retry 40 repl; then ok "replication: both slaves in sync, lag 0, same commit-log end, topic config copied"; else not_ok "replication: both slaves in sync, lag 0, same commit-log end, topic config copied"; fi

status_lag0() {
  local st
  st=$("$cluster" -H "$hosts_file" status) || { echo "$st"; return 1; }
  echo "$st"
  grep -Eq "^broker-a-s +${IPOF[as]} +SLAVE .* running +0$" <<<"$st" &&
    grep -Eq "^broker-b-s +${IPOF[bs]} +SLAVE .* running +0$" <<<"$st"
}
check "cluster.sh -H status: LAG 0 for both slaves (mqadmin run on the slaves' hosts)" retry 10 status_lag0

# ---- failover ---------------------------------------------------------------------------

apid=$(cat "$RMQ_RUN_DIR/pid/broker-a.pid" 2>/dev/null)
check "kill -9 broker-a's master in its namespace" kill -9 "${apid:-0}"

a_gone() {
  cluster_has "broker-a +1 +${IPOF[as]}:10921 +SLAVE" || return 1
  ! grep -Eq "broker-a +0 " <<<"$(on ns "$ADMIN" clusterList -n "$NS")"
}
if retry 30 a_gone; then ok "clusterList: broker-a has only its slave"; else not_ok "clusterList: broker-a has only its slave"; fi

from_slave() {
  local st
  st=$(on ns "$ADMIN" topicStatus -n "$NS" -t NetnsTopic) || { echo "$st"; return 1; }
  echo "$st"
  [ "$(grep -Ec "^broker-a +${IPOF[as]}:10921 \(slave\)" <<<"$st")" = 4 ]
}
check "topicStatus reads broker-a's 4 queues from its slave" retry 10 from_slave

consume_slave() {
  local o before after
  before=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "${IPOF[as]}:10921" | awk '$1 == "msgGetTotalTodayNow" { print $2 }')
  o=$(on ns "$BENCH" consumer -n "$NS" -t NetnsTopic -g NetnsReplay -f first -w 4 -d 6 2>&1) || { echo "$o"; return 1; }
  echo "$o" | tail -n 2
  after=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "${IPOF[as]}:10921" | awk '$1 == "msgGetTotalTodayNow" { print $2 }')
  echo "slave served $before -> $after"
  # every message is read once: 4000 in all, broker-a's share from the slave
  grep -q 'Consume Total: 4000 ' <<<"$o" && [ "$((after - before))" -gt 0 ]
}
check "a consumer reads all 4000, broker-a's queues from the slave" consume_slave

sends_b() {
  local o
  o=$(on ns "$BENCH" producer -n "$NS" -t NetnsTopic -w 8 -s 256 -d 4 2>&1) || { echo "$o"; return 1; }
  echo "$o" | tail -n 3
  grep -Eq 'Send Total: [1-9][0-9]* .*Send Failed: 0 Response Failed: 0' <<<"$o" || return 1
  # only broker-b took them: broker-a's queues did not move on the slave
  on ns "$ADMIN" topicStatus -n "$NS" -t NetnsTopic
}
b_grew() {
  local before after
  before=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "${IPOF[b]}:10931" | awk '$1 == "commitLogMaxOffset" { print $2 }')
  sends_b || return 1
  after=$(on ns "$ADMIN" brokerStatus -n "$NS" -b "${IPOF[b]}:10931" | awk '$1 == "commitLogMaxOffset" { print $2 }')
  echo "broker-b commit log $before -> $after"
  [ "$after" -gt "$before" ]
}
check "the producer carries on through broker-b, no send failed" b_grew

check "cluster.sh -H down stops every piece" "$cluster" -H "$hosts_file" down

exit $((failed > 0))
