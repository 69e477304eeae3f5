#!/bin/bash
# tests/cluster/test_deploy.sh: deploy/cluster.sh up/status/down on one host
# with the async configs, on ports moved out of the way (RMQ_PORT_OFFSET) and
# a private run directory; plus the single-piece scripts' status, stop and
# failure paths. Prints TAP. Always stops what it started.
# functions run through check() look unreachable to shellcheck
# shellcheck disable=SC2317
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/deploy_lib.sh
. "$here/deploy_lib.sh"
# ports 9876+OFF, 10911+OFF ... 10942+OFF; default 21000 puts them at
# 30876..31942, below the usual ephemeral range (32768-)
deploy_env "$(mktemp -d /tmp/rmq-test-deploy.XXXXXX)" "${RMQ_TEST_PORT_OFFSET:-21000}" 30
out=$RMQ_RUN_DIR/out.txt
broker=$src/deploy/mqbroker.sh
ns_port=$((9876 + RMQ_PORT_OFFSET))

trap deploy_cleanup EXIT
trap 'exit 1' INT TERM

. "$here/../tap.sh"
# row PIECE: the piece's row of the last status output
row() {
  awk -v p="$1" '$1 == p' "$out"
}

echo "1..14"

deploy_need_bins

check "cluster.sh up async starts the name server and four brokers" "$cluster" up async

check_rc "cluster.sh status: all running (exit 0)" 0 "$cluster" status
cp "$out" "$RMQ_RUN_DIR/status1.txt"
running=$(awk '$6 == "running"' "$out" | wc -l)
roles=$(awk 'NR > 1 { printf "%s:%s:%s ", $1, $3, $4 }' "$out")
want="namesrv:NAMESRV:$ns_port broker-a:ASYNC_MASTER:$((10911 + RMQ_PORT_OFFSET)) broker-b:ASYNC_MASTER:$((10931 + RMQ_PORT_OFFSET)) broker-a-s:SLAVE:$((10921 + RMQ_PORT_OFFSET)) broker-b-s:SLAVE:$((10941 + RMQ_PORT_OFFSET)) "
if [ "$running" -eq 5 ] && [ "$roles" = "$want" ]; then
  ok "status lists each piece with its role and offset port"
else
  echo "# got: $roles" >>"$out"
  echo "# want: $want" >>"$out"
  not_ok "status lists each piece with its role and offset port"
fi

# the slaves' lag column is a number (commitLogMaxOffset master - slave)
lag_a=$(awk '$1 == "broker-a-s" { print $7 }' "$RMQ_RUN_DIR/status1.txt")
lag_b=$(awk '$1 == "broker-b-s" { print $7 }' "$RMQ_RUN_DIR/status1.txt")
if [[ $lag_a =~ ^-?[0-9]+$ ]] && [[ $lag_b =~ ^-?[0-9]+$ ]]; then
  ok "status shows a numeric lag for both slaves ($lag_a, $lag_b)"
else
  cp "$RMQ_RUN_DIR/status1.txt" "$out"
  not_ok "status shows a numeric lag for both slaves"
fi

four_brokers() {
  "$RMQ_BIN/tools/mqadmin" clusterList -n "127.0.0.1:$ns_port" >"$RMQ_RUN_DIR/cl.txt" || return 1
  cat "$RMQ_RUN_DIR/cl.txt"
  [ "$(grep -c -E 'broker-[ab]' "$RMQ_RUN_DIR/cl.txt")" -eq 4 ]
}
check "the name server lists all four brokers of DefaultCluster" four_brokers

effective_conf() {
  local c=$RMQ_RUN_DIR/conf/broker-b-s.properties
  cat "$c"
  grep -qx "storePathRootDir=$RMQ_RUN_DIR/store/broker-b-s" "$c" &&
    grep -qx "namesrvAddr=127.0.0.1:$ns_port" "$c" &&
    grep -qx "listenPort=$((10941 + RMQ_PORT_OFFSET))" "$c" &&
    test -d "$RMQ_RUN_DIR/store/broker-b-s/commitlog"
}
check "effective configs: store and ports under the run dir and offset" effective_conf

check "cluster.sh up again is harmless (already running)" "$cluster" up async

conf_b=$src/deploy/2m-2s-async/broker-b.properties
stop_clean() {
  "$broker" -c "$conf_b" stop && ! grep -q unconfirmed "$out"
}
check "mqbroker.sh stop broker-b stops it cleanly" stop_clean
check_rc "mqbroker.sh status broker-b: stopped (exit 3)" 3 "$broker" -c "$conf_b" status
check_rc "cluster.sh status with one broker down: exit 1" 1 "$cluster" status
if row broker-b | grep -q stopped && row broker-a | grep -q running; then
  ok "status shows broker-b stopped and the others running"
else
  not_ok "status shows broker-b stopped and the others running"
fi

# start fails, with the log's last lines, when the port is taken: run
# broker-b from a copy whose listenPort is broker-a's
sed 's/^listenPort=.*/listenPort=10911/; s/^brokerName=.*/brokerName=broker-x/; s|^storePathRootDir=.*|storePathRootDir=store/broker-x|' \
  "$conf_b" >"$RMQ_RUN_DIR/broker-x.properties"
check_rc "mqbroker.sh start fails (exit 1) when its port is in use" 1 "$broker" -c "$RMQ_RUN_DIR/broker-x.properties" start

check "cluster.sh down stops everything" "$cluster" down
check_rc "cluster.sh status after down: none running (exit 3)" 3 "$cluster" status

exit $((failed > 0))
