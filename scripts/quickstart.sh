#!/bin/bash
# The README's first command: installs what is missing, builds the four
# programs, starts the 2-master/2-slave cluster (deploy/cluster.sh up sync)
# on loopback, runs an mqbench producer and consumer, kills broker-a's master
# with SIGKILL half-way, shows the producer carrying on through broker-b and
# the consumer draining broker-a's queues from its slave, restarts the
# master, checks that every acknowledged message was consumed at least once
# (mqbench --ids-file), stops the cluster and prints a summary table.
#
#   scripts/quickstart.sh            the demo (about 1.5 minutes once built)
#   scripts/quickstart.sh --check    the same as a test: no bootstrap or build
#                                    (binaries from $RMQ_BUILD_ROOT or
#                                    $RMQ_BIN), shorter phases, exit 1 when an
#                                    assertion fails (meson test quickstart)
#   scripts/quickstart.sh --controller [--check]
#                                    automatic failover instead: deploy/cluster.sh
#                                    up controller (3-member etcd, two name
#                                    servers with the controller, broker groups
#                                    a, b of two replicas and c of three); under
#                                    load it kills broker-a's master with SIGKILL,
#                                    shows the controller promoting its in-sync
#                                    slave (mqadmin getSyncStateSet: a higher
#                                    epoch; clusterList: brokerId 0), writes to
#                                    broker-a resuming, and the old master
#                                    rejoining as slave (about 1.5 minutes)
#
# Environment: RMQ_BUILD_DIR (build directory, default build), RMQ_PORT_OFFSET
# (added to every port; by default 0, or the first free offset of 1000, 2000,
# ... when the default ports are busy), RMQ_QS_BEFORE / RMQ_QS_OUTAGE /
# RMQ_QS_AFTER (seconds of load before the kill, while broker-a's master is
# down, after it is back; 20 / 12 / 6), RMQ_QS_THREADS (producer threads, 16).
# Everything it starts is stopped on exit, whatever happens (trap).
# Single-quoted $ expressions are for an inner bash or eval, on purpose:
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/.."

CHECK=0 VARIANT=sync
for arg in "$@"; do
  case $arg in
    --check) CHECK=1 ;;
    --controller) VARIANT=controller ;;
    *) echo "usage: scripts/quickstart.sh [--controller] [--check]" >&2; exit 2 ;;
  esac
done

t_start=$(date +%s)
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
note() { printf '   %s\n' "$*"; }
die() { echo "quickstart: $*" >&2; exit 1; }

if [ $CHECK = 1 ]; then
  BIN=${RMQ_BIN:-${RMQ_BUILD_ROOT:-build}}
  BEFORE=${RMQ_QS_BEFORE:-10} OUTAGE=${RMQ_QS_OUTAGE:-10} AFTER=${RMQ_QS_AFTER:-5}
else
  BIN=${RMQ_BUILD_DIR:-build}
  BEFORE=${RMQ_QS_BEFORE:-20} OUTAGE=${RMQ_QS_OUTAGE:-12} AFTER=${RMQ_QS_AFTER:-6}
  step "bootstrap and build ($BIN)"
  ./scripts/bootstrap.sh
  ./scripts/build.sh "$BIN" -- namesrv/mqnamesrv broker/mqbroker tools/mqadmin tools/mqbench
  note "built mqnamesrv, mqbroker, mqadmin, mqbench in $BIN/"
fi
THREADS=${RMQ_QS_THREADS:-16}
BIN=$(cd "$BIN" && pwd)
for b in namesrv/mqnamesrv broker/mqbroker tools/mqadmin tools/mqbench; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing (build first)"
done
ADMIN=$BIN/tools/mqadmin
BENCH=$BIN/tools/mqbench

work=$(mktemp -d /tmp/rmq-quickstart.XXXXXX)
export RMQ_BIN=$BIN RMQ_RUN_DIR=$work/run
unset RMQ_PORT_BASE
pids=()
cluster_started=0

cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do
    kill -INT "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  if [ $cluster_started = 1 ]; then
    deploy/cluster.sh down >"$work/down.log" 2>&1 || cat "$work/down.log" >&2
  fi
  if [ $rc -ne 0 ] && [ "${RMQ_QS_KEEP:-0}" = 1 ]; then
    echo "quickstart: failed; files kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# port_busy PORT: true if something accepts TCP connections on 127.0.0.1:PORT.
port_busy() {
  timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# ports_free OFFSET: true if none of the cluster's ports (+OFFSET) is in use.
ports_free() {
  local p ports=(9876 10911 10912 10921 10922 10931 10932 10941 10942)
  [ $VARIANT = sync ] || ports+=(9877 9880 9881 9882 9883 9884 9885 10951 10952 10961 10962 10971 10972)
  for p in "${ports[@]}"; do
    if port_busy $((p + $1)); then
      return 1
    fi
  done
}

# wait_for SECONDS CMD...: runs CMD every half second until it succeeds.
wait_for() {
  local n=$(($1 * 2))
  shift
  while ! "$@" >/dev/null 2>&1; do
    n=$((n - 1))
    [ $n -gt 0 ] || return 1
    sleep 0.5
  done
}
# bg NAME CMD...: runs CMD in the background, its output to $work/NAME.out and,
# prefixed with NAME, to the terminal; the pid of CMD itself goes to pids.
bg() {
  local name=$1
  shift
  "$@" > >(tee "$work/$name.out" | sed -u "s/^/   $name | /") 2>&1 &
  pids+=($!)
  eval "${name}_pid=$!"
}

# ---- what both demos do -------------------------------------------------------------

# load_start: an mqbench consumer (group QuickStartGroup, ids to
# $work/consumed.ids), then a producer ($THREADS threads, acknowledged ids
# to $work/acked.ids) on QuickStart; sets t_load.
load_start() {
  step "mqbench consumer (group QuickStartGroup) and producer ($THREADS threads, 128 B)"
  consumer_pid='' producer_pid=''
  bg consumer "$BENCH" consumer -n "$NS" -t QuickStart -g QuickStartGroup -f first -w 8 \
    --ids-file "$work/consumed.ids" --json "$work/consumer.json"
  sleep 2
  t_load=$(date +%s)
  bg producer "$BENCH" producer -n "$NS" -t QuickStart -w "$THREADS" -s 128 \
    --ids-file "$work/acked.ids" --json "$work/producer.json"
}

# load_drain: stops the producer, waits up to 60 s until the consumer has
# every acknowledged id, stops the consumer; sets t_prod_end and missing
# (acknowledged ids never consumed).
load_drain() {
  kill -INT "$producer_pid"
  wait "$producer_pid" || die "the producer failed"
  t_prod_end=$(date +%s)
  step "producer stopped; waiting for the consumer to drain every queue"
  missing=-1
  for _ in $(seq 60); do
    sort -u "$work/acked.ids" >"$work/acked.sorted"
    sort -u "$work/consumed.ids" >"$work/consumed.sorted"
    missing=$(comm -23 "$work/acked.sorted" "$work/consumed.sorted" | wc -l)
    [ "$missing" -gt 0 ] || break
    sleep 1
  done
  sleep 1
  kill -INT "$consumer_pid"
  wait "$consumer_pid" || die "the consumer failed"
}

# cluster_down: deploy/cluster.sh down, so the cleanup trap has nothing left.
cluster_down() {
  step "cluster down"
  deploy/cluster.sh down | sed 's/^/   /'
  cluster_started=0
}

# topic_create WHERE WHICH BROKER...: mqadmin updateTopic -t QuickStart -c
# DefaultCluster, 4 queues on each master (WHERE: the step's words for
# them), then up to 30 s until QuickStart's route names every BROKER (WHICH:
# the error's words for them).
topic_create() {
  local where=$1 which=$2
  shift 2
  step "mqadmin updateTopic -t QuickStart -c DefaultCluster (4 queues on $where)"
  "$ADMIN" updateTopic -n "$NS" -t QuickStart -c DefaultCluster -r 4 -w 4 | sed 's/^/   /'
  wait_for 30 route_names "$@" || die "QuickStart never appeared on $which"
}

# route_names BROKER...: QuickStart's route names every BROKER.
route_names() {
  local out b
  out=$("$ADMIN" topicRoute -n "$NS" -t QuickStart 2>/dev/null) || return 1
  for b in "$@"; do
    grep -q "$b" <<<"$out" || return 1
  done
}

# row LABEL VALUE: one line of the summary table.
row() { printf '%-44s %s\n' "$1" "$2"; }

# check DESC CONDITION: CONDITION (single-quoted) is eval'd here; a failed
# one sets fail (--check exits 1 at the end).
fail=0
check() {
  if eval "$2"; then echo "ok - $1"; else echo "not ok - $1 ($2)"; fail=1; fi
}

# controller_demo: quickstart.sh --controller, once deploy/cluster.sh up
# controller runs. Under an mqbench producer and consumer it kills broker-a's
# master with SIGKILL and shows: the controller promoting the in-sync slave
# (mqadmin getSyncStateSet: the new master at a higher epoch), the route
# naming it as brokerId 0 (clusterList), writes to broker-a resuming on it
# (the time from the kill to its first SEND_OK), the old master restarted
# rejoining as its slave, and every acknowledged message consumed.
controller_demo() {
  NS="127.0.0.1:$((9876 + OFF));127.0.0.1:$((9877 + OFF))"
  CTL_TIMEOUT=10   # controllerHeartBeatTimeoutMills in deploy/controller/, s

  # broker-a in mqadmin getSyncStateSet, one row per replica: MASTER is
  # column 2, EPOCH 3, IN_SYNC_SET 4, REPLICA 6, ADDR 7, ROLE 8.
  sss() { "$ADMIN" getSyncStateSet -n "$NS" -b broker-a 2>/dev/null; }
  master_of_a() { sss | awk '$1 == "broker-a" { print $2; exit }'; }
  # row_of_a REPLICA N: column N of the replica's row
  row_of_a() { sss | awk -v r="$1" -v n="$2" '$1 == "broker-a" && $6 == r { print $n }'; }
  a_in_sync_full() { [ "$(sss | awk '$1 == "broker-a" { print $4; exit }' | tr , '\n' | wc -l)" -eq 2 ]; }

  topic_create "each group's master" "the three masters" broker-a broker-b broker-c
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
}

# ---- cluster ------------------------------------------------------------------------

if [ $VARIANT = sync ]; then
  step "cluster up: deploy/cluster.sh up sync (name server, broker-a, broker-b, their slaves)"
else
  step "cluster up: deploy/cluster.sh up controller (etcd x3, two name servers with the controller, 7 brokers)"
fi
offsets=()
if [ -n "${RMQ_PORT_OFFSET:-}" ]; then
  offsets=("$RMQ_PORT_OFFSET")
elif [ $CHECK = 1 ]; then
  # 11000..15900: every port (at most 10942 + offset) stays below the
  # kernel's ephemeral range (32768 up), where a client socket may hold it;
  # chaos.sh draws from 16000..20900 and the deploy test uses 21000.
  offsets=($((11000 + RANDOM % 50 * 100)) $((11000 + RANDOM % 50 * 100)) $((11000 + RANDOM % 50 * 100)))
else
  offsets=(0 1000 2000 3000 4000 5000)
fi
OFF=''
for o in "${offsets[@]}"; do
  if ! ports_free "$o"; then
    note "ports of offset $o are in use; trying another"
    continue
  fi
  export RMQ_PORT_OFFSET=$o
  cluster_started=1
  if deploy/cluster.sh up $VARIANT >"$work/up.log" 2>&1; then
    OFF=$o
    break
  fi
  note "cluster.sh up failed with port offset $o:"
  sed 's/^/     /' "$work/up.log" | tail -n 8
  deploy/cluster.sh down >/dev/null 2>&1 || true
done
[ -n "$OFF" ] || die "could not start the cluster on any port offset (${offsets[*]})"
sed 's/^/   /' "$work/up.log"
[ "$OFF" = 0 ] || note "(default ports busy: every port moved by RMQ_PORT_OFFSET=$OFF)"
deploy/cluster.sh status | sed 's/^/   /' || true
if [ $VARIANT = controller ]; then
  controller_demo
  exit 0
fi
NS=127.0.0.1:$((9876 + OFF))
BROKER_A=127.0.0.1:$((10911 + OFF))
BROKER_A_S=127.0.0.1:$((10921 + OFF))
BROKER_B=127.0.0.1:$((10931 + OFF))
BROKER_B_S=127.0.0.1:$((10941 + OFF))

# sync_rounds ADDR: a slave's completed metadata sync rounds (slaveSyncCount).
sync_rounds() {
  "$ADMIN" brokerStatus -n "$NS" -b "$1" 2>/dev/null | awk '$1 == "slaveSyncCount" { print $2 }'
}
sync_a0=$(sync_rounds "$BROKER_A_S")
sync_b0=$(sync_rounds "$BROKER_B_S")
topic_create "each master" "both masters" broker-a broker-b
# The slaves copy topic configs from their masters every slaveSyncInterval
# (10 s); a consumer can read QuickStart from a slave once it has.
slaves_know_topic() {
  local a b
  a=$(sync_rounds "$BROKER_A_S") b=$(sync_rounds "$BROKER_B_S")
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge $((${sync_a0:-0} + 2)) ] && [ "$b" -ge $((${sync_b0:-0} + 2)) ]
}

# ---- load ---------------------------------------------------------------------------

load_start
sleep "$BEFORE"
wait_for 20 slaves_know_topic || note "the slaves have not copied QuickStart's config yet"

step "kill -9 broker-a's master (pid $(cat "$RMQ_RUN_DIR/pid/broker-a.pid"))"
kill -9 "$(cat "$RMQ_RUN_DIR/pid/broker-a.pid")"
t_kill=$(date +%s)
lines_before_kill=$(grep -c '^Send TPS' "$work/producer.out" || true)
sleep 1
step "while broker-a's master is down"
note "a second consumer group, QuickStartReplay, reads the topic from the first offset:"
note "broker-a's queues come from its slave $BROKER_A_S, broker-b's from broker-b"
replay_pid=''
bg replay "$BENCH" consumer -n "$NS" -t QuickStart -g QuickStartReplay -f first -w 8 \
  -d $((OUTAGE > 6 ? OUTAGE - 3 : 3))
sleep 2
note "mqadmin clusterList: broker-a has only its slave (BID 1)"
"$ADMIN" clusterList -n "$NS" | sed 's/^/   /'
note "mqadmin topicStatus -t QuickStart: broker-a's queues read from its slave $BROKER_A_S"
"$ADMIN" topicStatus -n "$NS" -t QuickStart | sed 's/^/   /'
sleep $((OUTAGE > 6 ? OUTAGE - 6 : 1))
note "mqadmin consumerProgress -g QuickStartGroup: broker-a's queues consumed from the slave"
"$ADMIN" consumerProgress -n "$NS" -g QuickStartGroup | sed 's/^/   /' || true
wait "$replay_pid" || die "the replay consumer failed"
replay_total=$(sed -n 's/^\[Complete\] Consume Total: \([0-9]*\).*/\1/p' "$work/replay.out")
a_s_get=$("$ADMIN" brokerStatus -n "$NS" -b "$BROKER_A_S" 2>/dev/null | awk '$1 == "msgGetTotalTodayNow" { print $2 }')
b_put=$("$ADMIN" brokerStatus -n "$NS" -b "$BROKER_B" 2>/dev/null | awk '$1 == "putTps" { print $2 }')
note "broker-a-s served ${a_s_get:-?} messages to consumers; broker-b putTps now ${b_put:-?}/s"
lines_outage_end=$(grep -c '^Send TPS' "$work/producer.out" || true)

step "restart broker-a's master: deploy/mqbroker.sh -c deploy/2m-2s-sync/broker-a.properties start"
deploy/mqbroker.sh -c deploy/2m-2s-sync/broker-a.properties start | sed 's/^/   /'
t_back=$(date +%s)
caught_up() {
  "$ADMIN" brokerStatus -n "$NS" -b "$BROKER_A" 2>/dev/null | grep -E '^Slaves of this .*: [1-9]' >/dev/null
}
wait_for 20 caught_up || note "broker-a's slave has not reconnected yet"
"$ADMIN" brokerStatus -n "$NS" -b "$BROKER_A" | sed -n '/^Slaves/,$p' | sed 's/^/   /'
lines_at_restart=$(grep -c '^Send TPS' "$work/producer.out" || true)
sleep "$AFTER"

load_drain
"$ADMIN" consumerProgress -n "$NS" -g QuickStartGroup | sed 's/^/   /' || true

# ---- counting -------------------------------------------------------------------------

sort -u "$work/consumed.ids" >"$work/consumed.sorted"
acked=$(wc -l <"$work/acked.ids")
acked_distinct=$(wc -l <"$work/acked.sorted")
consumed=$(wc -l <"$work/consumed.ids")
consumed_distinct=$(wc -l <"$work/consumed.sorted")
missing=$(comm -23 "$work/acked.sorted" "$work/consumed.sorted" | wc -l)
dups=$((consumed - consumed_distinct))

# avg_tps FROM TO: mean of the producer's "Send TPS" lines FROM..TO (1-based).
avg_tps() {
  grep '^Send TPS' "$work/producer.out" | sed -n "$1,$2p" |
    awk '{ s += $3; n++ } END { if (n) printf "%d", s / n; else print "-" }'
}
min_tps() {
  grep '^Send TPS' "$work/producer.out" | sed -n "$1,$2p" |
    awk 'NR == 1 || $3 < m { m = $3 } END { if (NR) print m; else print "-" }'
}
tps_before=$(avg_tps 2 "$lines_before_kill")
tps_outage=$(avg_tps $((lines_before_kill + 1)) "$lines_outage_end")
min_outage=$(min_tps $((lines_before_kill + 2)) "$lines_outage_end")
tps_after=$(avg_tps $((lines_at_restart + 2)) 100000)
complete=$(grep '^\[Complete\]' "$work/producer.out" || true)
send_failed=$(sed -n 's/.*Send Failed: \([0-9]*\).*/\1/p' <<<"$complete")
resp_failed=$(sed -n 's/.*Response Failed: \([0-9]*\).*/\1/p' <<<"$complete")
p99=$(grep '^Latency' "$work/producer.out" | sed -n 's/.*P99: \([0-9.]*\).*/\1/p')
cons_complete=$(grep '^\[Complete\]' "$work/consumer.out" || true)

cluster_down

t_end=$(date +%s)
step "summary"
{
  row "cluster" "2 masters + 2 slaves, SYNC_MASTER + SYNC_FLUSH, name server $NS"
  row "producer ($THREADS threads, 128 B), $((t_prod_end - t_load))s" "acknowledged $acked (distinct ids $acked_distinct)"
  row "  send TPS before the kill (avg)" "$tps_before"
  row "  send TPS broker-a master down (avg / min)" "$tps_outage / $min_outage  (all through broker-b)"
  row "  send TPS after its restart (avg)" "$tps_after"
  row "  send failed / response failed" "${send_failed:-?} / ${resp_failed:-?}"
  row "  latency P99 (ms)" "${p99:-?}"
  row "consumer (8 threads, from first)" "consumed $consumed (distinct $consumed_distinct, duplicates $dups)"
  row "replay consumer (new group, during the outage)" "consumed ${replay_total:-?}"
  row "  broker-a-s served to consumers (outage)" "${a_s_get:-?} messages"
  row "broker-a master down" "$((t_back - t_kill)) s (kill -9, then mqbroker.sh start)"
  row "acknowledged but never consumed" "$missing"
  row "wall time" "$((t_end - t_start)) s (load $((t_end - t_load)) s)"
} | tee "$work/summary.txt"
if [ "$missing" -eq 0 ] && [ "$acked" -gt 0 ]; then
  echo "every acknowledged message was consumed at least once"
else
  die "$missing acknowledged messages were never consumed"
fi
[ -n "$cons_complete" ] || die "the consumer did not finish cleanly"

if [ $CHECK = 1 ]; then
  check "producer acknowledged messages before the kill" '[ "$tps_before" != - ] && [ "$tps_before" -gt 0 ]'
  check "producer carried on through broker-b while broker-a's master was down" \
    '[ "$tps_outage" != - ] && [ "$tps_outage" -gt 0 ] && [ "$min_outage" != - ] && [ "$min_outage" -gt 0 ]'
  check "producer acknowledged messages after the restart" '[ "$tps_after" != - ] && [ "$tps_after" -gt 0 ]'
  check "the slave served broker-a's queues during the outage" '[ -n "$a_s_get" ] && [ "$a_s_get" -gt 0 ]'
  check "the replay group's retry topic was routed without a warning" \
    '! grep -q "route of %RETRY%QuickStartReplay" "$work/replay.out"'
  check "every acknowledged message consumed at least once" '[ "$missing" -eq 0 ]'
  check "duplicates within an at-least-once window (<= 5%)" '[ $((dups * 20)) -le "$acked" ]'
  check "no message consumed that was not sent" '[ "$consumed_distinct" -ge "$acked_distinct" ]'
  [ $fail = 0 ] || exit 1
fi
