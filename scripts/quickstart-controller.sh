# shellcheck shell=bash
# scripts/quickstart-controller.sh: the failover demo of scripts/quickstart.sh
# --controller, sourced by it once deploy/cluster.sh up controller runs (its
# helpers step, note, die, wait_for, bg, load_start, load_drain,
# cluster_down, row, check, its $work, $ADMIN, $BENCH, $OFF,
# $CHECK, $THREADS, $BEFORE, $AFTER and its cleanup trap are used here).
#
# Under an mqbench producer and consumer it kills broker-a's master with
# SIGKILL and shows: the controller promoting the in-sync slave (mqadmin
# getSyncStateSet: the new master at a higher epoch), the route naming it
# as brokerId 0 (clusterList), writes to broker-a resuming on it (the time
# from the kill to its first SEND_OK), the old master restarted rejoining
# as its slave, and every acknowledged message consumed.
# shellcheck disable=SC2154,SC2034 # shared with quickstart.sh
# Single-quoted $ expressions are for eval, on purpose:
# shellcheck disable=SC2016

NS="127.0.0.1:$((9876 + OFF));127.0.0.1:$((9877 + OFF))"
CTL_TIMEOUT=10   # controllerHeartBeatTimeoutMills in deploy/controller/, s
[ "$OFF" = 0 ] || note "(default ports busy: every port moved by RMQ_PORT_OFFSET=$OFF)"
deploy/cluster.sh status | sed 's/^/   /' || true

# broker-a in mqadmin getSyncStateSet, one row per replica: MASTER is
# column 2, EPOCH 3, IN_SYNC_SET 4, REPLICA 6, ADDR 7, ROLE 8.
sss() { "$ADMIN" getSyncStateSet -n "$NS" -b broker-a 2>/dev/null; }
master_of_a() { sss | awk '$1 == "broker-a" { print $2; exit }'; }
# row_of_a REPLICA N: column N of the replica's row
row_of_a() { sss | awk -v r="$1" -v n="$2" '$1 == "broker-a" && $6 == r { print $n }'; }
a_in_sync_full() { [ "$(sss | awk '$1 == "broker-a" { print $4; exit }' | tr , '\n' | wc -l)" -eq 2 ]; }

step "mqadmin updateTopic -t QuickStart -c DefaultCluster (4 queues on each group's master)"
"$ADMIN" updateTopic -n "$NS" -t QuickStart -c DefaultCluster -r 4 -w 4 | sed 's/^/   /'
route_has_all() {
  local out
  out=$("$ADMIN" topicRoute -n "$NS" -t QuickStart 2>/dev/null) || return 1
  grep -q broker-a <<<"$out" && grep -q broker-b <<<"$out" && grep -q broker-c <<<"$out"
}
wait_for 30 route_has_all || die "QuickStart never appeared on the three masters"
note "waiting until broker-a's slave is in the in-sync set (checkSyncStateSetPeriod 5 s)"
wait_for 60 a_in_sync_full || die "broker-a's slave never joined the in-sync set"
step "mqadmin getSyncStateSet: each group's master, epoch, in-sync set, every replica's lag"
"$ADMIN" getSyncStateSet -n "$NS" | sed 's/^/   /'

load_start
sleep "$BEFORE"

old=$(master_of_a)
old_epoch=$(row_of_a "$old" 3)
new=$((3 - old))
old_pid=$(cat "$RMQ_RUN_DIR/pid/broker-a-$old.pid")
step "kill -9 broker-a's master: replica $old, $(row_of_a "$old" 7), pid $old_pid, epoch $old_epoch"
kill -9 "$old_pid"
t_kill_ms=$(date +%s%3N)
note "the producer carries on through broker-b and broker-c; the controller waits for"
note "controllerHeartBeatTimeoutMills (${CTL_TIMEOUT} s) of silence, then elects broker-a's in-sync slave"
promoted() {
  [ "$(master_of_a)" = "$new" ] && [ "$(row_of_a "$new" 8)" = SYNC_MASTER ]
}
wait_for 60 promoted || die "replica $new of broker-a was never promoted"
t_promoted_ms=$(date +%s%3N)
new_addr=$(row_of_a "$new" 7)
new_epoch=$(row_of_a "$new" 3)
step "promoted: replica $new ($new_addr) is broker-a's master at epoch $new_epoch, $((t_promoted_ms - t_kill_ms)) ms after the kill"
"$ADMIN" getSyncStateSet -n "$NS" -b broker-a | sed 's/^/   /'
note "mqadmin clusterList: the route names $new_addr as broker-a's brokerId 0"
"$ADMIN" clusterList -n "$NS" | sed 's/^/   /'
send_a() { "$ADMIN" sendMessage -n "$NS" -t QuickStart -b broker-a -p "after the failover"; }
wait_for 30 send_a || die "writes to broker-a never resumed"
t_write_ms=$(date +%s%3N)
note "mqadmin sendMessage -b broker-a: SEND_OK from the new master, $((t_write_ms - t_kill_ms)) ms after the kill"
send_a | sed 's/^/   /'

step "restart the old master: deploy/mqbroker.sh -c deploy/controller/broker-a-$old.properties start"
deploy/mqbroker.sh -c "deploy/controller/broker-a-$old.properties" start | sed 's/^/   /'
rejoined() { [ "$(row_of_a "$old" 8)" = SLAVE ] && [ "$(master_of_a)" = "$new" ]; }
wait_for 60 rejoined || die "the old master never rejoined as slave"
wait_for 60 a_in_sync_full || note "replica $old has not caught up into the in-sync set yet"
note "replica $old rejoined as slave of replica $new (its log cut back to the last common epoch, then caught up):"
"$ADMIN" getSyncStateSet -n "$NS" -b broker-a | sed 's/^/   /'
sleep "$AFTER"

load_drain
acked=$(wc -l <"$work/acked.ids")
consumed=$(wc -l <"$work/consumed.ids")
complete=$(grep '^\[Complete\]' "$work/producer.out" || true)
send_failed=$(sed -n 's/.*Send Failed: \([0-9]*\).*/\1/p' <<<"$complete")

cluster_down

step "summary"
{
  row "cluster" "controller mode: etcd x3, 2 name servers, groups a, b (2 replicas), c (3)"
  row "producer ($THREADS threads, 128 B), $((t_prod_end - t_load))s" "acknowledged $acked, send failed ${send_failed:-?}"
  row "broker-a master killed" "replica $old at epoch $old_epoch (kill -9)"
  row "  promoted (getSyncStateSet)" "replica $new at epoch $new_epoch, $((t_promoted_ms - t_kill_ms)) ms after the kill"
  row "  first SEND_OK on broker-a's new master" "$((t_write_ms - t_kill_ms)) ms after the kill"
  row "  old master" "rejoined as slave"
  row "consumer (8 threads, from first)" "consumed $consumed"
  row "acknowledged but never consumed" "$missing"
} | tee "$work/summary.txt"
if [ "$missing" -ne 0 ] || [ "$acked" -eq 0 ]; then
  die "$missing of $acked acknowledged messages were never consumed"
fi
echo "every acknowledged message was consumed at least once"
if [ "$CHECK" = 1 ]; then
  check "the new master's epoch is above the old one's" '[ "$new_epoch" -gt "$old_epoch" ]'
  check "writes resumed on broker-a within 3 heartbeat timeouts" '[ $((t_write_ms - t_kill_ms)) -le $((3 * CTL_TIMEOUT * 1000)) ]'
  check "every acknowledged message consumed at least once" '[ "$missing" -eq 0 ]'
  [ "$fail" = 0 ] || exit 1
fi
