#!/bin/bash
# scripts/chaos.sh: fault injection on the 2-master/2-slave SYNC cluster
# (SYNC_MASTER + SYNC_FLUSH, deploy/2m-2s-sync) on loopback, under load.
#
#   scripts/chaos.sh [--duration SECONDS] [--seed N] [--keep]
#   scripts/chaos.sh --controller [--netns] [--duration SECONDS] [--seed N] [--keep] [--faults LIST]
#
# --controller: the controller-mode cluster (automatic failover) instead,
# with its own faults and checker: scripts/chaos-controller.sh says how;
# --netns puts each of its pieces in a network namespace and drops packets
# with nftables (scripts/chaos-netns.sh).
#
# Starts the cluster with deploy/cluster.sh (ports moved by RMQ_PORT_OFFSET,
# a free random offset unless set), creates ChaosTopic (4 queues on each
# master), runs an mqbench consumer (--ids-file, --check-body) and an mqbench
# producer (--ids-file: the id of every send the broker answered), and for
# --duration seconds (default 60) injects one fault at a time, each lasting a
# few seconds, picked at random:
#   kill9    kill -9 a random broker (master or slave), restart it
#   stop     SIGSTOP a random slave, SIGCONT it
#   cut      cut the HA link of a master and its slave: iptables DROP of the
#            HA port in both directions on lo (when iptables works here; else
#            SIGSTOP of the slave as an approximation; the summary says which)
# Then heals everything, stops the producer, waits (up to 120 s) until every
# acknowledged id was consumed, stops the consumer and prints a summary:
# faults, acknowledged and consumed ids, missing ids (acknowledged, never
# consumed), duplicates (consumed more than once) and bodies whose CRC32C
# differs (mqbench --check-body; the client also checks each record's CRC
# on decode and refuses a corrupt one).
#
# Exit 0 when nothing acknowledged is missing and no body differs; 1
# otherwise; 2 on usage. Runs at most --duration + about 200 s. Everything it
# starts (processes, iptables rules) is removed on exit.
#
# Environment: RMQ_BIN (build directory, default $RMQ_BUILD_ROOT or build),
# RMQ_PORT_OFFSET, RMQ_CHAOS_THREADS (producer threads, 8), RMQ_CHAOS_SIZE
# (body bytes, 512).
set -euo pipefail
cd "$(dirname "$0")/.."
for a in "$@"; do
  [ "$a" != --controller ] || exec scripts/chaos-controller.sh "$@"
done

DURATION=60 SEED=$RANDOM KEEP=0
usage() { echo "usage: scripts/chaos.sh [--duration SECONDS] [--seed N] [--keep]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --duration) [ $# -ge 2 ] || usage; DURATION=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; SEED=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) usage ;;
  esac
done
[[ $DURATION =~ ^[0-9]+$ ]] || usage
RANDOM=$SEED

# shellcheck source=scripts/chaos-lib.sh
. scripts/chaos-lib.sh
chaos_bins
THREADS=${RMQ_CHAOS_THREADS:-8}
SIZE=${RMQ_CHAOS_SIZE:-512}
CONF=deploy/2m-2s-sync
BROKERS=(broker-a broker-a-s broker-b broker-b-s)
SLAVES=(broker-a-s broker-b-s)
declare -A HA_PORT=([broker-a]=10912 [broker-b]=10932)
declare -A SLAVE_OF=([broker-a]=broker-a-s [broker-b]=broker-b-s)

work=$(mktemp -d /tmp/rmq-chaos.XXXXXX)
export RMQ_BIN=$BIN RMQ_RUN_DIR=$work/run
unset RMQ_PORT_BASE
TAG=rmq-chaos-$$
bench_pids=()
cluster_started=0
stopped=()

# shellcheck disable=SC2016  # $1 expands in the inner bash
port_busy() { timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }
ports_free() {
  local p
  for p in 9876 10911 10912 10921 10922 10931 10932 10941 10942; do
    if port_busy $((p + $1)); then return 1; fi
  done
}

# ---- iptables (loopback HA link cuts) ------------------------------------------------

USE_IPTABLES=0
if command -v iptables >/dev/null 2>&1 &&
   iptables -I INPUT -i lo -p tcp --dport 1 -m comment --comment "$TAG" -j DROP 2>/dev/null; then
  iptables -D INPUT -i lo -p tcp --dport 1 -m comment --comment "$TAG" -j DROP
  USE_IPTABLES=1
fi

# cut_rule -I|-D PORT: drops (or stops dropping) TCP to and from PORT on lo.
cut_rule() {
  iptables "$1" INPUT -i lo -p tcp --dport "$2" -m comment --comment "$TAG" -j DROP
  iptables "$1" INPUT -i lo -p tcp --sport "$2" -m comment --comment "$TAG" -j DROP
}

iptables_clear() {
  [ $USE_IPTABLES = 1 ] || return 0
  local rule
  while rule=$(iptables -S INPUT 2>/dev/null | grep -m1 -- "$TAG"); do
    # shellcheck disable=SC2086
    iptables ${rule/-A /-D } || break
  done
}

pid_of() { cat "$RMQ_RUN_DIR/pid/$1.pid" 2>/dev/null || true; }
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  iptables_clear
  for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
  for b in "${BROKERS[@]}"; do p=$(pid_of "$b"); [ -z "$p" ] || kill -CONT "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $cluster_started = 1 ]; then
    deploy/cluster.sh down >"$work/down.log" 2>&1 || cat "$work/down.log" >&2
  fi
  if [ $rc -ne 0 ] || [ $KEEP = 1 ]; then
    echo "chaos: files kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- cluster ---------------------------------------------------------------------------

offsets=()
if [ -n "${RMQ_PORT_OFFSET:-}" ]; then
  offsets=("$RMQ_PORT_OFFSET")
else
  # 16000..20900: every port stays below the ephemeral range (32768 up) and
  # apart from quickstart --check's offsets and the deploy test's 21000
  for _ in 1 2 3 4; do offsets+=($((16000 + RANDOM % 50 * 100))); done
fi
OFF=''
for o in "${offsets[@]}"; do
  ports_free "$o" || continue
  export RMQ_PORT_OFFSET=$o
  cluster_started=1
  if deploy/cluster.sh up sync >"$work/up.log" 2>&1; then OFF=$o; break; fi
  tail -n 8 "$work/up.log" >&2
  deploy/cluster.sh down >/dev/null 2>&1 || true
done
[ -n "$OFF" ] || die "could not start the cluster (port offsets ${offsets[*]})"
NS=127.0.0.1:$((9876 + OFF))
log "cluster up (port offset $OFF, seed $SEED, run dir $RMQ_RUN_DIR)"
log "link cuts by $([ $USE_IPTABLES = 1 ] && echo 'iptables DROP on lo' || echo 'SIGSTOP of the slave (no usable iptables)')"

"$ADMIN" updateTopic -n "$NS" -t ChaosTopic -c DefaultCluster -r 4 -w 4 >"$work/topic.log" 2>&1 ||
  { cat "$work/topic.log" >&2; die "updateTopic failed"; }
sleep 2

"$BENCH" consumer -n "$NS" -t ChaosTopic -g ChaosGroup -f first -w 8 --check-body \
  --ids-file "$work/consumed.ids" >"$work/consumer.out" 2>"$work/consumer.err" &
cons_pid=$!
bench_pids+=("$cons_pid")
sleep 2
"$BENCH" producer -n "$NS" -t ChaosTopic -w "$THREADS" -s "$SIZE" \
  --ids-file "$work/acked.ids" >"$work/producer.out" 2>"$work/producer.err" &
prod_pid=$!
bench_pids+=("$prod_pid")
sleep 3

# ---- faults ------------------------------------------------------------------------------

n_kill=0 n_stop=0 n_cut=0
restart() { # NAME
  deploy/mqbroker.sh -c "$CONF/$1.properties" start >>"$work/restart.log" 2>&1 ||
    { tail -n 20 "$work/restart.log" >&2; die "restart of $1 failed"; }
}
pause() { sleep $((2 + RANDOM % 4)); }

fault_kill9() {
  local b=${BROKERS[RANDOM % ${#BROKERS[@]}]} p
  p=$(pid_of "$b")
  log "kill -9 $b (pid $p)"
  kill -9 "$p"
  n_kill=$((n_kill + 1))
  pause
  restart "$b"
  log "restarted $b (pid $(pid_of "$b"))"
}

fault_stop() {
  local b=${SLAVES[RANDOM % ${#SLAVES[@]}]} p
  p=$(pid_of "$b")
  log "SIGSTOP $b (pid $p)"
  kill -STOP "$p"
  stopped+=("$p")
  n_stop=$((n_stop + 1))
  pause
  kill -CONT "$p"
  stopped=()
  log "SIGCONT $b"
}

fault_cut() {
  local m=broker-a
  [ $((RANDOM % 2)) = 0 ] || m=broker-b
  local port=$((HA_PORT[$m] + OFF)) s=${SLAVE_OF[$m]} p
  n_cut=$((n_cut + 1))
  if [ $USE_IPTABLES = 1 ]; then
    log "cut HA link $m <-> $s (iptables DROP port $port)"
    cut_rule -I "$port"
    pause
    cut_rule -D "$port"
    log "healed HA link $m <-> $s"
  else
    p=$(pid_of "$s")
    log "cut HA link $m <-> $s approximated by SIGSTOP $s"
    kill -STOP "$p"
    stopped+=("$p")
    pause
    kill -CONT "$p"
    stopped=()
  fi
}

t_end=$(( $(date +%s) + DURATION ))
while [ "$(date +%s)" -lt "$t_end" ]; do
  kill -0 "$prod_pid" 2>/dev/null || die "the producer died (see $work/producer.err)"
  kill -0 "$cons_pid" 2>/dev/null || die "the consumer died (see $work/consumer.err)"
  case $((RANDOM % 3)) in
    0) fault_kill9 ;;
    1) fault_stop ;;
    2) fault_cut ;;
  esac
  sleep $((1 + RANDOM % 3))
done

# ---- heal, drain, count ----------------------------------------------------------------------

iptables_clear
for b in "${BROKERS[@]}"; do
  alive "$b" || { log "$b is down at the end: restarting"; restart "$b"; }
done
log "faults over; letting the producer run 3 s more on the healed cluster"
sleep 3
kill -INT "$prod_pid"
wait "$prod_pid" || die "the producer failed (see $work/producer.err)"
acked=$(wc -l <"$work/acked.ids")
sort -u "$work/acked.ids" >"$work/acked.sorted"
log "producer stopped: $acked acknowledged; waiting for the consumer"
missing=-1
for _ in $(seq 120); do
  sort -u "$work/consumed.ids" >"$work/consumed.sorted"
  missing=$(comm -23 "$work/acked.sorted" "$work/consumed.sorted" | wc -l)
  [ "$missing" -gt 0 ] || break
  sleep 1
done
sleep 1
kill -INT "$cons_pid"
wait "$cons_pid" || die "the consumer failed (see $work/consumer.err)"
bench_pids=()

sort -u "$work/consumed.ids" >"$work/consumed.sorted"
comm -23 "$work/acked.sorted" "$work/consumed.sorted" >"$work/missing.ids"
missing=$(wc -l <"$work/missing.ids")
acked_distinct=$(wc -l <"$work/acked.sorted")
consumed=$(wc -l <"$work/consumed.ids")
consumed_distinct=$(wc -l <"$work/consumed.sorted")
dups=$((consumed - consumed_distinct))
body_bad=$(sed -n 's/^\[Complete\] Body Check: \([0-9]*\) differing.*/\1/p' "$work/consumer.out")
send_failed=$(sed -n 's/^\[Complete\] Send Total: .*Send Failed: \([0-9]*\) Response Failed: \([0-9]*\).*/\1 + \2/p' "$work/producer.out")
corrupt_pulls=$(grep -c -i 'corrupt' "$work/consumer.err" || true)

printf '\n== chaos summary (%s s of faults, seed %s)\n' "$DURATION" "$SEED"
printf '%-34s %s\n' "faults: kill -9 / SIGSTOP / link cut" "$n_kill / $n_stop / $n_cut ($([ $USE_IPTABLES = 1 ] && echo iptables || echo SIGSTOP approximation))"
printf '%-34s %s\n' "acknowledged sends (distinct ids)" "$acked ($acked_distinct)"
printf '%-34s %s\n' "sends failed (send + response)" "${send_failed:-?}"
printf '%-34s %s\n' "consumed (distinct ids)" "$consumed ($consumed_distinct)"
printf '%-34s %s\n' "duplicates (consumed - distinct)" "$dups"
printf '%-34s %s\n' "acknowledged but never consumed" "$missing"
printf '%-34s %s\n' "bodies differing (CRC32C)" "${body_bad:-?}"
printf '%-34s %s\n' "consumer log lines about corruption" "$corrupt_pulls"

[ "$missing" = 0 ] || { head -n 5 "$work/missing.ids" | sed 's/^/  missing: /' >&2; die "$missing acknowledged messages were never consumed"; }
[ "${body_bad:-x}" = 0 ] || die "bodies differ or the body check did not run (${body_bad:-no result})"
[ "$acked" -gt 0 ] || die "nothing was acknowledged"
log "PASS"
