#!/bin/bash
# scripts/chaos-controller.sh: scripts/chaos.sh --controller, fault injection
# on the controller-mode cluster (automatic failover, issue 15) under load.
#
#   scripts/chaos.sh --controller [--netns] [--duration SECONDS] [--seed N]
#                    [--keep] [--faults LIST]
#
# --netns: every piece in its own network namespace, deployed with
# deploy/cluster.sh -H, and the faults of scripts/chaos-netns.sh (packets
# dropped by nftables per peer and direction: master/slave cuts one and
# both ways, a master or the leading controller with a master partitioned,
# lossy links, a promoted slave killed right after its master) besides
# kill9, stop, ctlmaster, truncate, etcd and restart below; default
# slavecut1,slavecut2,ctlpart,leaderpart,lossy,kill2,kill9,truncate (kill9
# and truncate kill the master over a lossy link to its slaves). Needs root
# and nft. Without it, as follows.
#
# Starts deploy/cluster.sh up controller (3 etcd members, 2 name servers
# running the controller, groups broker-a and broker-b of 2 replicas and
# broker-c of 3; ports moved by RMQ_PORT_OFFSET, a free random offset unless
# set) with each broker's namesrvAddr and controllerAddr pointed at its own
# relays of scripts/chaos-proxy.py, creates ChaosTopic, runs an mqbench
# producer (--ids-file --ids-detail: every SEND_OK with its group, queue,
# offset, offset msgId and the master epoch the broker stamped) and two
# consumer groups (every message seen with its queue offset), and for
# --duration seconds (default 120) injects one fault at a time from LIST
# (comma-separated; default all), in rounds that run each fault once in a
# random order:
#   kill9      kill -9 a group's master; restart it after a few seconds (it
#              rejoins as a slave, truncating what the new master lacks)
#   stop       SIGSTOP a master past its lease (controllerHeartBeatTimeoutMills
#              + 3..6 s), then SIGCONT
#   cutctl     cut a master off from the controllers (its relays stop both
#              ways) past its lease; its producers and its slaves stay connected
#   isolate    cut every replica of a group off from the controllers at once
#              (the clients still reach them: the relays carry only the
#              broker -> name server/controller links)
#   ctlmaster  kill -9 the leading controller's name server and a master at
#              once; restart both
#   truncate   kill -9 a master, wait for the new one, restart the old one
#              and kill -9 it again 0.2-1.5 s into its rejoin (mid truncation,
#              best effort), then restart it
#   asym       one-way cut between a random broker and the controllers
#              (broker -> controller or controller -> broker only)
#   etcd       kill -9 one etcd member; restart it
#   restart    deploy/cluster.sh down, then up controller (the whole cluster)
# After each fault the cluster must heal (every process up, every group with
# a master) within 90 s, or the run fails. At the end: heal, 5 s more of
# load, stop the producer, wait (up to 180 s; a group that consumed nothing
# new for 20 s is not waited for longer) until both groups consumed every
# acknowledged id, read the whole topic once more with a fresh group, and run
# scripts/chaos-check.py over the logs (no acknowledged id missing, one
# broker per group and epoch, no acknowledgement after the next epoch was
# committed, nothing consumed that the final log does not hold at the same
# place).
#
# Exit 0 when the checker passes; 1 otherwise; 2 on usage. Everything it
# starts is stopped on exit (INT/TERM too). Environment: RMQ_BIN,
# RMQ_PORT_OFFSET, RMQ_CHAOS_THREADS (producer threads, 4), RMQ_CHAOS_SIZE
# (body bytes, 256), RMQ_CHAOS_RATE (producer messages/s, 300; 0: unpaced),
# RMQ_CHAOS_HB_TIMEOUT (controllerHeartBeatTimeoutMills,
# default 10000 as deployed; brokerHeartbeatInterval is a tenth of it).
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_FAULTS=kill9,stop,cutctl,isolate,ctlmaster,truncate,asym,etcd,restart
DURATION=120 SEED=$RANDOM KEEP=0 FAULTS='' NETNS=0
usage() {
  echo "usage: scripts/chaos.sh --controller [--netns] [--duration SECONDS] [--seed N] [--keep] [--faults $ALL_FAULTS]" >&2
  echo "       (--netns: kill9,stop,ctlmaster,truncate,etcd,restart,slavecut1,slavecut2,ctlpart,leaderpart,lossy,kill2)" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --controller) shift ;;
    --netns) NETNS=1; shift ;;
    --duration) [ $# -ge 2 ] || usage; DURATION=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; SEED=$2; shift 2 ;;
    --faults) [ $# -ge 2 ] || usage; FAULTS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    *) usage ;;
  esac
done
[[ $DURATION =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ ]] || usage
# shellcheck source=scripts/chaos-lib.sh
. scripts/chaos-lib.sh
CL=()           # the clients' command prefix (--netns: their namespace)
HOSTS_ARG=()    # deploy/cluster.sh's -H HOSTS (--netns)
if [ $NETNS = 1 ]; then
  # shellcheck source=scripts/chaos-netns.sh
  . scripts/chaos-netns.sh
  # the relays' faults have no relays here
  ALL_FAULTS=kill9,stop,ctlmaster,truncate,etcd,restart,$NETNS_FAULTS
  FAULTS=${FAULTS:-$NETNS_FAULTS,kill9,truncate}
fi
FAULTS=${FAULTS:-$ALL_FAULTS}
IFS=, read -r -a FAULT_LIST <<<"$FAULTS"
for f in "${FAULT_LIST[@]}"; do
  [[ ,$ALL_FAULTS, == *,$f,* ]] || { echo "chaos: unknown fault $f" >&2; usage; }
done
RANDOM=$SEED

chaos_bins
command -v etcd >/dev/null || die "etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)"
THREADS=${RMQ_CHAOS_THREADS:-4}
SIZE=${RMQ_CHAOS_SIZE:-256}
RATE=${RMQ_CHAOS_RATE:-300}
[[ $RATE =~ ^[0-9]+$ ]] || die "RMQ_CHAOS_RATE=$RATE: an integer (messages/s)"
rate_args=()
[ "$RATE" = 0 ] || rate_args=(--rate "$RATE")
HB=${RMQ_CHAOS_HB_TIMEOUT:-10000}
{ [[ $HB =~ ^[0-9]+$ ]] && [ "$HB" -ge 1000 ]; } || die "RMQ_CHAOS_HB_TIMEOUT=$HB: an integer >= 1000 (ms)"
HB_S=$(((HB + 999) / 1000))
BROKERS=(broker-a-1 broker-a-2 broker-b-1 broker-b-2 broker-c-1 broker-c-2 broker-c-3)
GROUPS_=(broker-a broker-b broker-c)
HEAL_WAIT=90

work=$(mktemp -d /tmp/rmq-chaos-ctl.XXXXXX)
export RMQ_BIN=$BIN RMQ_RUN_DIR=$work/run RMQ_CONF_DIR=$work/conf
export RMQ_START_TIMEOUT=${RMQ_START_TIMEOUT:-60}
unset RMQ_PORT_BASE
CUTS=$work/cuts
bench_pids=()
stopped=()
proxy_pid=''
cluster_started=0

pid_of() { cat "$RMQ_RUN_DIR/pid/$1.pid" 2>/dev/null || true; }
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  : >"$CUTS" 2>/dev/null || true
  for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $cluster_started = 1 ]; then
    for p in "${BROKERS[@]}" namesrv-1 namesrv-2 etcd-1 etcd-2 etcd-3; do
      p=$(pid_of "$p")
      [ -z "$p" ] || kill -CONT "$p" 2>/dev/null || true
    done
    deploy/cluster.sh "${HOSTS_ARG[@]}" down >"$work/down.log" 2>&1 || cat "$work/down.log" >&2
  fi
  [ -z "$proxy_pid" ] || { kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; }
  [ $NETNS = 0 ] || netns_down
  if [ $rc -ne 0 ] || [ $KEEP = 1 ]; then
    echo "chaos: files kept in $work" >&2
  else
    rm -rf "$work"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- configuration: each broker talks to the name servers through its relays ----------

# broker i's relays to name server j (0, 1) listen on 9890 + 2i + j (+ offset)
relay_port() { echo $((9890 + 2 * $1 + $2 + OFF)); }

# shellcheck disable=SC2016  # $1 expands in the inner bash
port_busy() { timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }
ports_free() {
  local p
  for p in 9876 9877 9880 9881 9882 9883 9884 9885 $(seq 9890 9903) \
           10911 10912 10921 10922 10931 10932 10941 10942 10951 10952 10961 10962 10971 10972; do
    if port_busy $((p + $1)); then return 1; fi
  done
}

write_conf() {
  local i f piece
  mkdir -p "$RMQ_CONF_DIR"
  for f in deploy/controller/*.properties; do
    piece=$(basename "$f" .properties)
    # 64 MiB commit-log files (not 1 GiB each: seven brokers on one disk)
    sed -e "s/^controllerHeartBeatTimeoutMills=.*/controllerHeartBeatTimeoutMills=$HB/" \
      -e "s/^mapedFileSizeCommitLog=.*/mapedFileSizeCommitLog=67108864/" "$f" >"$RMQ_CONF_DIR/$piece.properties"
  done
  for i in "${!BROKERS[@]}"; do
    f=$RMQ_CONF_DIR/${BROKERS[$i]}.properties
    sed -i -e "s/^brokerHeartbeatInterval=.*/brokerHeartbeatInterval=$((HB / 10))/" "$f"
    [ $NETNS = 0 ] || { netns_conf "$f"; continue; }
    # the relays' ports as written (cluster.sh moves them by the offset)
    local a="127.0.0.1:$((9890 + 2 * i));127.0.0.1:$((9891 + 2 * i))"
    sed -i -e "s/^namesrvAddr=.*/namesrvAddr=$a/" -e "s/^controllerAddr=.*/controllerAddr=$a/" "$f"
  done
}

start_proxy() {
  local i specs=()
  for i in "${!BROKERS[@]}"; do
    specs+=("${BROKERS[$i]}:$(relay_port "$i" 0):$((9876 + OFF))" "${BROKERS[$i]}:$(relay_port "$i" 1):$((9877 + OFF))")
  done
  : >"$CUTS"
  python3 scripts/chaos-proxy.py "$CUTS" "${specs[@]}" >"$work/proxy.log" 2>&1 &
  proxy_pid=$!
  for _ in $(seq 50); do
    grep -q listening "$work/proxy.log" && return 0
    kill -0 "$proxy_pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$work/proxy.log" >&2
  die "the relays did not start"
}

# ---- cluster state ---------------------------------------------------------------------

NS="127.0.0.1:9876;127.0.0.1:9877"
sss() { "${CL[@]}" timeout 20 "$ADMIN" getSyncStateSet -n "$NS" -c DefaultCluster 2>/dev/null || true; }

# master_of GROUP: the piece name of the group's master (empty when none).
master_of() {
  local id
  id=$(sss | awk -v g="$1" '$1 == g && $2 ~ /^[0-9]+$/ && $2 > 0 { print $2; exit }')
  [ -z "$id" ] || echo "$1-$id"
}

# epoch_of GROUP: the group's master epoch as the controller answers it.
epoch_of() { sss | awk -v g="$1" '$1 == g && $3 ~ /^[0-9]+$/ { print $3; exit }'; }

# members GROUP: the group's pieces.
members() { local b; for b in "${BROKERS[@]}"; do [[ $b == "$1"-* ]] && echo "$b"; done; }

# leader_ns: the name server whose controller leads (its log's last word on it).
leader_ns() {
  local n line
  for n in namesrv-1 namesrv-2; do
    line=$(grep -E 'controller [^ ]+: (leader \(token|no longer leader)' "$RMQ_RUN_DIR/logs/$n.log" 2>/dev/null | tail -n 1)
    if [[ $line == *": leader (token"* ]]; then echo "$n"; return; fi
  done
  echo "namesrv-$((1 + RANDOM % 2))"
}

# all_masters: every group's master, as the controller names it, acts as one.
all_masters() {
  local out g
  out=$(sss)
  for g in "${GROUPS_[@]}"; do
    awk -v g="$g" '$1 == g && $2 ~ /^[0-9]+$/ && $2 > 0 && $6 == $2 && $8 ~ /MASTER/ { f = 1 } END { exit !f }' <<<"$out" ||
      return 1
  done
}

start_piece() { # PIECE
  local rc=0
  deploy/cluster.sh "${HOSTS_ARG[@]}" start "$1" >>"$work/restart.log" 2>&1 || rc=$?
  [ $rc = 0 ] || log "start of $1 failed (rc $rc; $work/restart.log)"
  return $rc
}

# heal: every piece running, nothing cut or stopped, every group with a
# master, within HEAL_WAIT s; fails the run otherwise.
heal() {
  local p t_end
  : >"$CUTS"
  [ $NETNS = 0 ] || netns_heal
  for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
  stopped=()
  local down
  t_end=$(($(date +%s) + HEAL_WAIT))
  while :; do
    down=0
    for p in etcd-1 etcd-2 etcd-3 namesrv-1 namesrv-2 "${BROKERS[@]}"; do
      alive "$p" || { down=1; log "$p is down: starting it"; start_piece "$p" || true; }
    done
    [ $down = 1 ] || ! all_masters || return 0
    [ "$(date +%s)" -lt "$t_end" ] || { sss >&2; die "the cluster did not heal within ${HEAL_WAIT}s"; }
    sleep 1
  done
}

# ---- faults --------------------------------------------------------------------------------

declare -A N_FAULT
for f in "${FAULT_LIST[@]}"; do N_FAULT[$f]=0; done
pause() { sleep $((2 + RANDOM % 4)); }
past_lease() { sleep $((HB_S + 3 + RANDOM % 4)); }
pick_group() { echo "${GROUPS_[RANDOM % ${#GROUPS_[@]}]}"; }
cut_link() { echo "$1 $2" >>"$CUTS"; }

# pick_master: a random group's master piece (empty if it has none now).
pick_master() { master_of "$(pick_group)"; }

# kill_master MASTER: kill -9 of MASTER (--netns: 1 s into a lossy link to
# its slaves, netns_kill_master).
kill_master() {
  if [ $NETNS = 1 ]; then
    netns_kill_master "$1"
  else
    kill -9 "$(pid_of "$1")"
  fi
}

fault_kill9() {
  local m p
  m=$(pick_master); [ -n "$m" ] || return 1
  p=$(pid_of "$m")
  log "kill9: kill -9 master $m (pid $p, epoch $(epoch_of "${m%-*}"))"
  kill_master "$m"
  pause
  start_piece "$m" || true
}

fault_stop() {
  local m p
  m=$(pick_master); [ -n "$m" ] || return 1
  p=$(pid_of "$m")
  log "stop: SIGSTOP master $m (pid $p) past its lease"
  kill -STOP "$p"
  stopped+=("$p")
  past_lease
  kill -CONT "$p"
  stopped=()
  log "stop: SIGCONT $m"
}

fault_cutctl() {
  local m
  m=$(pick_master); [ -n "$m" ] || return 1
  log "cutctl: master $m cut off from the controllers"
  cut_link "$m" both
  past_lease
  : >"$CUTS"
  log "cutctl: healed $m"
}

fault_isolate() {
  local g b
  g=$(pick_group)
  log "isolate: every replica of $g cut off from the controllers"
  for b in $(members "$g"); do cut_link "$b" both; done
  past_lease
  : >"$CUTS"
  log "isolate: healed $g"
}

fault_ctlmaster() {
  local m n pm pn
  m=$(pick_master); [ -n "$m" ] || return 1
  n=$(leader_ns)
  pm=$(pid_of "$m") pn=$(pid_of "$n")
  log "ctlmaster: kill -9 controller $n (pid $pn) and master $m (pid $pm) at once"
  kill -9 "$pn" "$pm"
  pause
  start_piece "$n" || true
  start_piece "$m" || true
}

# new_master GROUP OLD: waits (up to the heartbeat timeout + 30 s) until the
# controller names a master of GROUP other than OLD and prints it; fails
# when none came.
new_master() {
  local t_end=$(($(date +%s) + HB_S + 30)) now
  while now=$(master_of "$1"); [ -z "$now" ] || [ "$now" = "$2" ]; do
    [ "$(date +%s)" -lt "$t_end" ] || return 1
    sleep 0.2
  done
  echo "$now"
}

fault_truncate() {
  local g m p now
  g=$(pick_group)
  m=$(master_of "$g"); [ -n "$m" ] || return 1
  p=$(pid_of "$m")
  log "truncate: kill -9 master $m (pid $p), waiting for a new master"
  kill_master "$m"
  now=$(new_master "$g" "$m") || { log "truncate: no new master for $g; restarting $m"; start_piece "$m" || true; return 0; }
  start_piece "$m" || true
  local d=$((2 + RANDOM % 14))
  sleep "$((d / 10)).$((d % 10))"
  p=$(pid_of "$m")
  log "truncate: new master $now; kill -9 rejoining $m (pid $p) again"
  [ -z "$p" ] || kill -9 "$p" 2>/dev/null || true
  pause
  start_piece "$m" || true
}

fault_asym() {
  local b dir
  b=${BROKERS[RANDOM % ${#BROKERS[@]}]}
  dir=up
  [ $((RANDOM % 2)) = 0 ] || dir=down
  log "asym: $b's $([ $dir = up ] && echo 'broker -> controller' || echo 'controller -> broker') direction cut"
  cut_link "$b" "$dir"
  past_lease
  : >"$CUTS"
  log "asym: healed $b"
}

fault_etcd() {
  local m p
  m=etcd-$((1 + RANDOM % 3))
  p=$(pid_of "$m")
  log "etcd: kill -9 $m (pid $p)"
  kill -9 "$p"
  sleep $((3 + RANDOM % 6))
  start_piece "$m" || true
}

fault_restart() {
  log "restart: the whole cluster down and up"
  deploy/cluster.sh "${HOSTS_ARG[@]}" down >>"$work/restart.log" 2>&1 || log "restart: cluster.sh down reported a failure"
  sleep 2
  deploy/cluster.sh "${HOSTS_ARG[@]}" up controller >>"$work/restart.log" 2>&1 || log "restart: cluster.sh up reported a failure (heal restarts what is down)"
}

# ---- run --------------------------------------------------------------------------------

offsets=()
if [ $NETNS = 1 ]; then
  offsets=(0) # the namespaces' ports are their own
elif [ -n "${RMQ_PORT_OFFSET:-}" ]; then
  offsets=("$RMQ_PORT_OFFSET")
else
  for _ in 1 2 3 4; do offsets+=($((16000 + RANDOM % 50 * 100))); done
fi
OFF=''
for o in "${offsets[@]}"; do
  [ $NETNS = 1 ] || ports_free "$o" || continue
  export RMQ_PORT_OFFSET=$o
  OFF=$o
  break
done
[ -n "$OFF" ] || die "no free port offset among ${offsets[*]}"
write_conf
if [ $NETNS = 1 ]; then
  netns_up
  HOSTS_ARG=(-H "$work/hosts")
  NS="$(ip_of namesrv-1):9876;$(ip_of namesrv-2):9877"
else
  NS="127.0.0.1:$((9876 + OFF));127.0.0.1:$((9877 + OFF))"
  start_proxy
fi
cluster_started=1
deploy/cluster.sh "${HOSTS_ARG[@]}" up controller >"$work/up.log" 2>&1 || { tail -n 20 "$work/up.log" >&2; die "deploy/cluster.sh up controller failed"; }
log "cluster up (port offset $OFF, seed $SEED, faults $FAULTS, heartbeat timeout ${HB} ms, files in $work)"

for _ in $(seq 10); do
  "${CL[@]}" "$ADMIN" updateTopic -n "$NS" -t ChaosTopic -c DefaultCluster -r 4 -w 4 >"$work/topic.log" 2>&1 && break
  sleep 2
done || { cat "$work/topic.log" >&2; die "updateTopic failed"; }
sleep 2

for g in 1 2; do
  "${CL[@]}" "$BENCH" consumer -n "$NS" -t ChaosTopic -g "ChaosGroup$g" -f first -w 4 --check-body \
    --ids-file "$work/consumed$g.ids" --ids-detail >"$work/consumer$g.out" 2>"$work/consumer$g.err" &
  bench_pids+=($!)
done
sleep 2
"${CL[@]}" "$BENCH" producer -n "$NS" -t ChaosTopic -w "$THREADS" -s "$SIZE" "${rate_args[@]}" \
  --ids-file "$work/acked.ids" --ids-detail >"$work/producer.out" 2>"$work/producer.err" &
prod_pid=$!
bench_pids+=("$prod_pid")
sleep 5

# next_fault: the next fault of the round (a new shuffled round when it is over).
round=()
next_fault() {
  local i j t
  if [ ${#round[@]} = 0 ]; then
    round=("${FAULT_LIST[@]}")
    for ((i = ${#round[@]} - 1; i > 0; i--)); do
      j=$((RANDOM % (i + 1))) t=${round[i]}
      round[i]=${round[j]} round[j]=$t
    done
  fi
  f=${round[0]}
  round=("${round[@]:1}")
}

t_end=$(($(date +%s) + DURATION))
n_faults=0
while [ "$(date +%s)" -lt "$t_end" ]; do
  for p in "${bench_pids[@]}"; do
    kill -0 "$p" 2>/dev/null || die "a client died (pid $p; see $work/*.err)"
  done
  next_fault
  if "fault_$f"; then
    N_FAULT[$f]=$((N_FAULT[$f] + 1))
    n_faults=$((n_faults + 1))
  else
    log "$f: skipped (no master to aim at)"
  fi
  heal
  sleep $((1 + RANDOM % 3))
done

# ---- heal, drain, check ----------------------------------------------------------------------

heal
[ $NETNS = 0 ] || wait_all_in_sync
log "faults over ($n_faults); 5 s more of load on the healed cluster"
sleep 5
kill -INT "$prod_pid"
wait "$prod_pid" || die "the producer failed (see $work/producer.err)"
acked=$(wc -l <"$work/acked.ids")
cut -d' ' -f1 "$work/acked.ids" | sort -u >"$work/acked.sorted"
log "producer stopped: $acked acknowledged; waiting for the consumers"
for g in 1 2; do
  last=-1 still=0
  for _ in $(seq 180); do
    cut -d' ' -f1 "$work/consumed$g.ids" | sort -u >"$work/consumed$g.sorted"
    [ "$(comm -23 "$work/acked.sorted" "$work/consumed$g.sorted" | wc -l)" -gt 0 ] || break
    n=$(wc -l <"$work/consumed$g.sorted")
    if [ "$n" = "$last" ]; then still=$((still + 1)); else still=0; fi
    last=$n
    [ $still -lt 20 ] || break
    sleep 1
  done
done
sleep 2
for p in "${bench_pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
for p in "${bench_pids[@]}"; do wait "$p" || die "a client failed at its end (see $work/*.err)"; done
bench_pids=()

log "reading the whole topic again with a fresh group"
"${CL[@]}" "$BENCH" consumer -n "$NS" -t ChaosTopic -g ChaosFinal -f first -w 4 \
  --ids-file "$work/final.ids" --ids-detail >"$work/final.out" 2>"$work/final.err" &
bench_pids+=($!)
last=-1 still=0
for _ in $(seq 240); do
  sleep 1
  n=$(wc -l <"$work/final.ids")
  if [ "$n" = "$last" ] && [ "$n" -gt 0 ]; then still=$((still + 1)); else still=0; fi
  last=$n
  [ $still -lt 10 ] || break
done
kill -INT "${bench_pids[0]}"
wait "${bench_pids[0]}" || die "the final reader failed (see $work/final.err)"
bench_pids=()

cp "$RMQ_RUN_DIR"/logs/*.log "$work/" 2>/dev/null || true
faults_line=''
for f in "${FAULT_LIST[@]}"; do faults_line+="$f=${N_FAULT[$f]} "; done
printf '\n== controller chaos summary (%s s of faults, seed %s, heartbeat timeout %s ms)\n' "$DURATION" "$SEED" "$HB"
printf '%-34s %s\n' "faults ($n_faults)" "$faults_line"
for g in 1 2; do
  printf '%-34s %s\n' "bodies differing, group $g" \
    "$(sed -n 's/^\[Complete\] Body Check: \([0-9]*\) differing.*/\1/p' "$work/consumer$g.out")"
done
printf '%-34s %s\n' "sends failed (send + response)" \
  "$(sed -n 's/^\[Complete\] Send Total: .*Send Failed: \([0-9]*\) Response Failed: \([0-9]*\).*/\1 + \2/p' "$work/producer.out")"
python3 scripts/chaos-check.py --acked "$work/acked.ids" --consumed "$work/consumed1.ids" \
  --consumed "$work/consumed2.ids" --final "$work/final.ids" --logs "$RMQ_RUN_DIR/logs" ||
  die "the checker found a violation (files in $work)"
for g in 1 2; do
  grep -q '^\[Complete\] Body Check: 0 differing' "$work/consumer$g.out" || die "bodies differ in group $g (see $work/consumer$g.out)"
done
log "PASS"
