# shellcheck shell=bash
# scripts/chaos-netns.sh: what scripts/chaos.sh --controller --netns changes
# in scripts/chaos-controller.sh (sourced by it, not run): the hosts and the
# faults of the kernel's network.
#
# Every piece of the controller-mode cluster (etcd-1..3, namesrv-1/2 with
# their controllers, the seven brokers) runs in its own network namespace
# (scripts/netns-lib.sh), started by deploy/cluster.sh -H HOSTS with
# RMQ_SSH="ip netns exec": the namespaces are its hosts. The producer, the
# consumers and mqadmin run in one more namespace, "cl". Each namespace
# gets an nftables table (inet rmqchaos) whose output chain drops packets
# to chosen peers, per direction, all of them or a random share
# (numgen random mod 100 < N), so faults cut and damage links in the kernel:
#   slavecut1  one direction between a group's master and one of its slaves
#              (master -> slave or slave -> master) until the slave left the
#              in-sync set (haMaxTimeSlaveNotCatchup, twice the heartbeat
#              timeout here, plus a check period); healed, then, as soon as
#              the controller lists the slave in the in-sync set again, the
#              slave cut off from the master and the master killed -9 (an
#              admitted slave must already hold every acknowledged
#              message); restart
#   slavecut2  the same with both directions cut
#   ctlpart    a master cut off from both controllers (name servers) past its
#              lease; its producers, consumers and slaves still reach it
#   leaderpart the leading controller and a master cut off together from the
#              rest of the control plane (the other controller and every etcd
#              member; brokers and clients still reach both) past the
#              controller's etcd lease and the master's: the minority side
#              keeps a leader's view while the majority elects
#   lossy      10-30 % of the packets dropped both ways between a master and
#              a slave or a controller, for a lease and more
#   kill2      kill -9 a master under load, 1 s into a 30 % loss on its
#              links to its slaves (so they likely stop partway through a
#              record, as after a crash mid-transfer), then kill -9 the
#              slave the controller promotes, 0-0.9 s after the producer's
#              log shows its first acknowledgement in the new epoch (or 10 s
#              after it was named without one); restart both
# kill9 and truncate (a crash during the rejoin that follows) kill their
# master the same way. At the end every replica must be back in its group's
# in-sync set within 120 s (a slave stuck behind a torn record never is).
# Sets NETNS_FAULTS (these) and CL (the command prefix of the clients);
# chaos-controller.sh calls netns_up, netns_heal and netns_down.
# shellcheck disable=SC2154 # work, HB_S, pid_of, master_of, ... from chaos-controller.sh

# shellcheck source=scripts/netns-lib.sh
. scripts/netns-lib.sh

NETNS_FAULTS=slavecut1,slavecut2,ctlpart,leaderpart,lossy,kill2
declare -A NS_HOST=([etcd-1]=e1 [etcd-2]=e2 [etcd-3]=e3 [namesrv-1]=n1 [namesrv-2]=n2
  [broker-a-1]=a1 [broker-a-2]=a2 [broker-b-1]=b1 [broker-b-2]=b2
  [broker-c-1]=c1 [broker-c-2]=c2 [broker-c-3]=c3)
NFT_TABLE=rmqchaos
CL=()

# netns_up: the namespaces (root, iproute2 and nft needed), each with its
# nft table, and the hosts file $work/hosts for deploy/cluster.sh -H; sets
# CL and exports RMQ_SSH. Dies on failure (the caller's cleanup removes
# what was made).
netns_up() {
  local id piece k=1 h
  [ "$(id -u)" = 0 ] || die "--netns needs root (network namespaces)"
  command -v nft >/dev/null || die "--netns needs nft (apt-get install nftables)"
  id=$(($$ % 10000))
  netns_init "$id" "10.214.$((id % 250))"
  for piece in etcd-1 etcd-2 etcd-3 namesrv-1 namesrv-2 "${BROKERS[@]}" client; do
    h=${NS_HOST[$piece]:-cl}
    netns_add "$h" $k >"$work/netns.err" || die "$(cat "$work/netns.err")"
    netns_on "$h" nft -f - <<EOF || die "nft in namespace $(netns_name "$h") failed"
table inet $NFT_TABLE {
  chain out { type filter hook output priority 0; policy accept; }
}
EOF
    k=$((k + 1))
  done
  {
    echo "# made by scripts/chaos.sh --controller --netns: one namespace per piece"
    for piece in etcd-1 etcd-2 etcd-3 namesrv-1 namesrv-2 "${BROKERS[@]}"; do
      echo "$piece $(netns_name "${NS_HOST[$piece]}") $(netns_ip "${NS_HOST[$piece]}")"
    done
  } >"$work/hosts"
  export RMQ_SSH="ip netns exec"
  CL=(ip netns exec "$(netns_name cl)")
}

# ip_of PIECE: the piece's address.
ip_of() { netns_ip "${NS_HOST[$1]}"; }

# nft_drop FROM TO [PERCENT]: FROM's packets to TO dropped (PERCENT of them,
# at random, when given).
nft_drop() {
  local rule=(ip daddr "$(ip_of "$2")")
  [ -z "${3:-}" ] || rule+=(numgen random mod 100 "<" "$3")
  netns_on "${NS_HOST[$1]}" nft add rule inet "$NFT_TABLE" out "${rule[@]}" drop
}

# nft_cut A B [PERCENT]: both directions between A and B.
nft_cut() { nft_drop "$1" "$2" "${3:-}"; nft_drop "$2" "$1" "${3:-}"; }

# netns_heal: every rule gone.
netns_heal() {
  local h
  for h in "${NETNS_HOSTS[@]}"; do
    netns_on "$h" nft flush chain inet "$NFT_TABLE" out 2>/dev/null || true
  done
}

netns_down() { netns_cleanup; }

# pick_slave MASTER: a random other replica of MASTER's group.
pick_slave() {
  local others
  mapfile -t others < <(members "${1%-*}" | grep -vx "$1")
  echo "${others[RANDOM % ${#others[@]}]}"
}

# past_catchup: past haMaxTimeSlaveNotCatchup (netns_conf) and a check period (5 s).
past_catchup() { sleep $((2 * HB_S + 7 + RANDOM % 3)); }

# netns_conf FILE: a broker's settings for these faults: a slave cut off
# leaves the in-sync set after twice the heartbeat timeout.
netns_conf() { sed -i "s/^haMaxTimeSlaveNotCatchup=.*/haMaxTimeSlaveNotCatchup=$((2 * HB))/" "$1"; }

# in_sync_set GROUP: the group's in-sync replica ids as the controller has them ("1,2").
in_sync_set() { sss | awk -v g="$1" '$1 == g && $4 ~ /^[0-9,]+$/ { print $4; exit }'; }

# kill_on_rejoin FAULT MASTER SLAVE: once SLAVE is in the in-sync set again
# (at most 60 s), cut it off from MASTER (what it holds stays as admitted)
# and kill -9 MASTER at once; heal and restart it.
kill_on_rejoin() {
  local f=$1 m=$2 s=$3 t_end p
  t_end=$(($(date +%s) + 60))
  until [[ ,$(in_sync_set "${m%-*}"), == *,${s##*-},* ]]; do
    [ "$(date +%s)" -lt "$t_end" ] || { log "$f: $s not back in sync within 60 s"; return 0; }
    sleep 0.2
  done
  p=$(pid_of "$m")
  nft_cut "$m" "$s"
  log "$f: $s back in the in-sync set; cut off from $m, kill -9 master $m (pid $p)"
  kill -9 "$p"
  netns_heal
  pause
  start_piece "$m" || true
}

fault_slavecut1() {
  local m s
  m=$(pick_master); [ -n "$m" ] || return 1
  s=$(pick_slave "$m")
  if [ $((RANDOM % 2)) = 0 ]; then
    log "slavecut1: $m -> $s dropped (master to slave only)"
    nft_drop "$m" "$s"
  else
    log "slavecut1: $s -> $m dropped (slave to master only)"
    nft_drop "$s" "$m"
  fi
  past_catchup
  netns_heal
  log "slavecut1: healed"
  kill_on_rejoin slavecut1 "$m" "$s"
}

fault_slavecut2() {
  local m s
  m=$(pick_master); [ -n "$m" ] || return 1
  s=$(pick_slave "$m")
  log "slavecut2: $m <-> $s dropped both ways"
  nft_cut "$m" "$s"
  past_catchup
  netns_heal
  log "slavecut2: healed"
  kill_on_rejoin slavecut2 "$m" "$s"
}

fault_ctlpart() {
  local m
  m=$(pick_master); [ -n "$m" ] || return 1
  log "ctlpart: master $m <-> both controllers dropped (clients and slaves still reach it)"
  nft_cut "$m" namesrv-1
  nft_cut "$m" namesrv-2
  past_lease
  netns_heal
  log "ctlpart: healed"
}

fault_leaderpart() {
  local m n p
  m=$(pick_master); [ -n "$m" ] || return 1
  n=$(leader_ns)
  log "leaderpart: controller $n and master $m cut off together from the other controller and etcd"
  for p in etcd-1 etcd-2 etcd-3 namesrv-1 namesrv-2; do
    [ "$p" = "$n" ] || { nft_cut "$m" "$p"; nft_cut "$n" "$p"; }
  done
  # past the controller's etcd lease (controllerLeaseTtlSeconds, 10 s) too
  sleep 10
  past_lease
  netns_heal
  log "leaderpart: healed"
}

fault_lossy() {
  local m peer pct=$((10 + RANDOM % 21))
  m=$(pick_master); [ -n "$m" ] || return 1
  if [ $((RANDOM % 2)) = 0 ]; then peer=$(pick_slave "$m"); else peer=namesrv-$((1 + RANDOM % 2)); fi
  log "lossy: $pct % of packets dropped both ways between $m and $peer"
  nft_cut "$m" "$peer" "$pct"
  past_lease
  netns_heal
  log "lossy: healed"
}

# netns_kill_master MASTER: kill -9 of MASTER 1 s into a 30 % loss on its
# links to its slaves (so they likely stop partway through a record, as
# after a crash mid-transfer); the loss ends with it.
netns_kill_master() {
  local s
  for s in $(members "${1%-*}"); do
    [ "$s" = "$1" ] || nft_drop "$1" "$s" 30
  done
  sleep 1
  kill -9 "$(pid_of "$1")"
  netns_heal
}

# first_ack GROUP EPOCH: waits (at most 10 s) until the producer's log
# (flushed each second) holds an acknowledgement from GROUP at EPOCH.
first_ack() {
  local t_end=$(($(date +%s) + 10))
  until tail -n 3000 "$work/acked.ids" | awk -v g="$1" -v e="$2" '$2 == g && $3 == e { f = 1 } END { exit !f }'; do
    [ "$(date +%s)" -lt "$t_end" ] || { log "kill2: no acknowledgement from $1 at epoch $2 within 10 s"; return 0; }
    sleep 0.1
  done
}

fault_kill2() {
  local g m p now d
  g=$(pick_group)
  m=$(master_of "$g"); [ -n "$m" ] || return 1
  log "kill2: kill -9 master $m (pid $(pid_of "$m")) under load, its links to the slaves lossy (30 %)"
  netns_kill_master "$m"
  now=$(new_master "$g" "$m") || { log "kill2: no new master for $g"; start_piece "$m" || true; return 0; }
  first_ack "$g" "$(epoch_of "$g")"
  d=$((RANDOM % 9))
  sleep "0.$d"
  p=$(pid_of "$now")
  log "kill2: kill -9 promoted $now (pid $p) 0.$d s after its first acknowledgement seen"
  [ -z "$p" ] || kill -9 "$p" 2>/dev/null || true
  pause
  start_piece "$m" || true
  start_piece "$now" || true
}

# wait_all_in_sync: every replica in its group's in-sync set within 120 s,
# or the run fails.
wait_all_in_sync() {
  local g t_end=$(($(date +%s) + 120)) missing
  while :; do
    missing=''
    for g in "${GROUPS_[@]}"; do
      [ "$(in_sync_set "$g" | tr ',' '\n' | grep -c .)" = "$(members "$g" | grep -c .)" ] || missing+=" $g"
    done
    [ -n "$missing" ] || return 0
    [ "$(date +%s)" -lt "$t_end" ] || { sss >&2; die "not every replica of$missing is back in the in-sync set after 120 s"; }
    sleep 1
  done
}
