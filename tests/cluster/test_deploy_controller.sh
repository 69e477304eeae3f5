#!/bin/bash
# tests/cluster/test_deploy_controller.sh: deploy/cluster.sh up controller on
# one host (a 3-member etcd, two name servers running the controller, groups
# broker-a and broker-b of two replicas and broker-c of three) on ports moved
# out of the way and a private run directory: every group gets one master;
# kill -9 of broker-a's master promotes its in-sync slave, which mqadmin
# getSyncStateSet and clusterList show (a higher epoch, brokerId 0), writes
# to broker-a resume, the old master started again by cluster.sh start rejoins
# as slave; then down. Also the hosts-file checks of cluster.sh -H up
# controller (a piece missing, an unknown one). Prints TAP.
# Always stops what it started. SKIP (exit 77) without etcd.
# functions run through check() look unreachable to shellcheck
# shellcheck disable=SC2317
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/deploy_lib.sh
. "$here/deploy_lib.sh"
# 9876+OFF ... 10972+OFF: 31376..32472 with the default, below the usual
# ephemeral range (32768-) and apart from test_deploy.sh's 21000
deploy_env "$(mktemp -d /tmp/rmq-test-deployctl.XXXXXX)" "${RMQ_TEST_PORT_OFFSET:-21500}" 60
out=$RMQ_RUN_DIR/out.txt
admin=$RMQ_BIN/tools/mqadmin
ns="127.0.0.1:$((9876 + RMQ_PORT_OFFSET));127.0.0.1:$((9877 + RMQ_PORT_OFFSET))"
sss=$RMQ_RUN_DIR/sss.txt
TOPIC=DeployCtlTopic

if ! command -v etcd >/dev/null; then
  echo "1..0 # SKIP etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)"
  exit 77
fi
deploy_need_bins
trap deploy_cleanup EXIT
trap 'exit 1' INT TERM

# shellcheck source=SCRIPTDIR/../tap.sh
. "$here/../tap.sh"

# sync_state [GROUP]: mqadmin getSyncStateSet into $sss (and the output)
sync_state() {
  "$admin" getSyncStateSet -n "$ns" ${1:+-b "$1"} >"$sss" 2>&1
  local rc=$?
  cat "$sss"
  return $rc
}
# col GROUP REPLICA N: column N of the group's row for REPLICA in $sss
col() {
  awk -v g="$1" -v r="$2" -v n="$3" '$1 == g && $6 == r { print $n }' "$sss"
}
# master_of GROUP: the group's master replica id in $sss
master_of() {
  awk -v g="$1" '$1 == g { print $2; exit }' "$sss"
}
# wait_for SECONDS CMD...: runs CMD every half second until it succeeds.
wait_for() {
  local n=$(($1 * 2))
  shift
  until "$@" >>"$out" 2>&1; do
    n=$((n - 1))
    [ $n -gt 0 ] || return 1
    sleep 0.5
  done
}

echo "1..12"

check "cluster.sh up controller: etcd, two name servers, seven brokers, a master per group" "$cluster" up controller

# all_running: status exits 0 with twelve pieces running and each group's state
all_running() {
  "$cluster" status || return 1
  [ "$("$cluster" status | awk '$6 == "running"' | wc -l)" -eq 12 ]
}
check "cluster.sh status: twelve pieces running (exit 0), the groups' masters and epochs" all_running

# one_master_each: every group has exactly one replica acting as master,
# the one the controller names, and broker-c has three replicas
one_master_each() {
  sync_state || return 1
  local g m masters
  for g in broker-a broker-b broker-c; do
    m=$(master_of "$g")
    masters=$(awk -v g="$g" '$1 == g && $8 ~ /MASTER$/' "$sss" | wc -l)
    [ "$masters" -eq 1 ] && [ "$(col "$g" "$m" 8)" = SYNC_MASTER ] || return 1
  done
  [ "$(awk '$1 == "broker-c"' "$sss" | wc -l)" -eq 3 ]
}
check "getSyncStateSet: every group has one master, the one the controller names" wait_for 30 one_master_each

# in_sync_full GROUP N: the group's in-sync set holds N replicas
in_sync_full() {
  sync_state "$1" >/dev/null || return 1
  [ "$(awk -v g="$1" '$1 == g { print $4; exit }' "$sss" | tr ',' '\n' | wc -l)" -eq "$2" ]
}
check "broker-a's slave joins the in-sync set" wait_for 60 in_sync_full broker-a 2

check "a topic on every master" "$admin" updateTopic -n "$ns" -t $TOPIC -c DefaultCluster -r 2 -w 2
route_ready() {
  "$admin" topicRoute -n "$ns" -t $TOPIC | grep -q broker-a
}
send_before() {
  wait_for 30 route_ready && "$admin" sendMessage -n "$ns" -t $TOPIC -b broker-a -p before
}
check "a message to broker-a is stored" send_before

sync_state broker-a >/dev/null
old=$(master_of broker-a)
old_epoch=$(col broker-a "$old" 3)
new=$((3 - old))
pid=$(cat "$RMQ_RUN_DIR/pid/broker-a-$old.pid" 2>/dev/null)
kill -9 "$pid" 2>/dev/null
# promoted: the other replica is master at a higher epoch and routed as brokerId 0
promoted() {
  sync_state broker-a || return 1
  [ "$(master_of broker-a)" = "$new" ] && [ "$(col broker-a "$new" 3)" -gt "$old_epoch" ] &&
    [ "$(col broker-a "$new" 8)" = SYNC_MASTER ] || return 1
  "$admin" clusterList -n "$ns" | awk -v a="$(col broker-a "$new" 7)" '$2 == "broker-a" && $3 == 0 && $4 == a' | grep -q .
}
check "kill -9 of broker-a's master (replica $old): replica $new promoted at a higher epoch, routed as brokerId 0" \
  wait_for 60 promoted

check "writes to broker-a resume on the new master" wait_for 30 "$admin" sendMessage -n "$ns" -t $TOPIC -b broker-a -p after

rejoined() {
  sync_state broker-a || return 1
  [ "$(col broker-a "$old" 8)" = SLAVE ] && [ "$(master_of broker-a)" = "$new" ]
}
restart_old() {
  "$cluster" start "broker-a-$old" && wait_for 60 rejoined
}
check "the old master started again (cluster.sh start broker-a-$old) rejoins as slave" restart_old

# refused CODE TEXT CMD...: CMD exits CODE and says TEXT on stderr.
refused() {
  local code=$1 text=$2 rc err=$RMQ_RUN_DIR/refused.txt
  shift 2
  "$@" 2>"$err"
  rc=$?
  cat "$err"
  echo "exit $rc"
  [ $rc -eq "$code" ] && grep -qF -- "$text" "$err"
}
hosts=$RMQ_RUN_DIR/hosts
sed -n 's/^\(etcd-\|namesrv-\|broker-\)/&/p' "$src/deploy/hosts-controller.example" | grep -v '^broker-c-3 ' >"$hosts"
check "cluster.sh -H up controller: a hosts file without broker-c-3 is refused" \
  refused 1 "no broker-c-3 line" "$cluster" -H "$hosts" up controller
echo "broker-c-3 rmq3 10.0.0.3" >>"$hosts"
check "cluster.sh -H start: an unknown piece is refused" \
  refused 1 "start: unknown piece broker-d-1" "$cluster" -H "$hosts" start broker-d-1

down_all() {
  "$cluster" down || return 1
  "$cluster" status controller
  [ $? -eq 3 ]
}
check "cluster.sh down stops everything; status then exits 3" down_all

[ "$failed" -eq 0 ]
