# shellcheck shell=bash
# offset, MODE_FILE, hosts_file, SSH, IP, NSADDR, START_PIECES, run,
# mqadmin_on and field come from cluster.sh
# shellcheck disable=SC2154
# deploy/controller.sh: cluster.sh's controller mode (cluster.sh [-H HOSTS]
# up controller). Sourced by cluster.sh after lib.sh, not run.
#
# Pieces: etcd-1..3 (deploy/mqetcd.sh), namesrv-1 and namesrv-2 (the
# controller in each; one leads), and the brokers of deploy/controller/ (or
# RMQ_CONF_DIR): broker-a-1, broker-a-2, broker-b-1, broker-b-2, broker-c-1,
# broker-c-2, broker-c-3, every one with enableControllerMode. Without -H
# all run on this host on loopback; with -H each runs on the host the hosts
# file gives it (deploy/hosts-controller.example) and is reached at its IP:
# the etcd members get every member's IP (mqetcd.sh -a), the name servers
# listen on theirs (mqnamesrv.sh -i) and reach the members' (-e), and the
# brokers register with both name servers, which are also the controllers
# (mqbroker.sh -n and -k), under their own IP (-i). mqadmin runs on the
# first name server's host. Ports (ARCHITECTURE.md "Ports", all moved by
# RMQ_PORT_OFFSET): etcd clients 9880/9882/9884, peers 9881/9883/9885; name
# servers 9876, 9877; brokers 10911, 10921, ... 10971 (HA one above each).

CTL_ETCDS=(1 2 3)
CTL_NAMESRVS=(namesrv-1 namesrv-2)
CTL_BROKERS=(broker-a-1 broker-a-2 broker-b-1 broker-b-2 broker-c-1 broker-c-2 broker-c-3)
CTL_GROUPS=(broker-a broker-b broker-c)
HOST_PIECES=(etcd-1 etcd-2 etcd-3 "${CTL_NAMESRVS[@]}" "${CTL_BROKERS[@]}")
CTL_CONF_DIR=${RMQ_CONF_DIR:-deploy/controller}
# how long up waits for etcd's health and for every group's master, s
CTL_WAIT=${RMQ_START_TIMEOUT:-30}

# ctl_init: the addresses the pieces are given, from IP (cluster.sh fills it
# from the hosts file, or with loopback).
ctl_init() {
  NSADDR="${IP[namesrv-1]}:$((9876 + offset));${IP[namesrv-2]}:$((9877 + offset))"
  CTL_ETCD_ADDRS="${IP[etcd-1]},${IP[etcd-2]},${IP[etcd-3]}"
  CTL_ETCD_ENDPOINTS="${IP[etcd-1]}:$((9880 + offset)),${IP[etcd-2]}:$((9882 + offset)),${IP[etcd-3]}:$((9884 + offset))"
}

# ctl_piece PIECE ACTION: runs PIECE's deploy script with ACTION where the
# piece lives; with -H, with the addresses of the hosts file.
ctl_piece() {
  local piece=$1 action=$2 args
  case $piece in
    etcd-*)
      args=(mqetcd.sh -m "${piece#etcd-}")
      [ -z "$hosts_file" ] || args+=(-a "$CTL_ETCD_ADDRS")
      ;;
    namesrv-*)
      args=(mqnamesrv.sh -c "$CTL_CONF_DIR/$piece.properties")
      [ -z "$hosts_file" ] || args+=(-i "${IP[$piece]}" -e "$CTL_ETCD_ENDPOINTS")
      ;;
    *)
      args=(mqbroker.sh -c "$CTL_CONF_DIR/$piece.properties")
      [ -z "$hosts_file" ] || args+=(-n "$NSADDR" -k "$NSADDR" -i "${IP[$piece]}")
      ;;
  esac
  run "${SSH[$piece]}" "${args[@]}" "$action"
}

# ctl_admin ARGS...: mqadmin ARGS against the name servers, on the first
# name server's host (fails when mqadmin is not built).
ctl_admin() {
  mqadmin_on "${SSH[namesrv-1]}" "$@"
}

# ctl_etcd_healthy: true when every etcd member reports itself healthy.
ctl_etcd_healthy() {
  local m
  for m in "${CTL_ETCDS[@]}"; do
    ctl_piece "etcd-$m" health || return 1
  done
}

# ctl_masters_elected: true when getSyncStateSet shows a master for every group.
ctl_masters_elected() {
  local out g
  out=$(ctl_admin getSyncStateSet -c DefaultCluster 2>/dev/null) || return 1
  for g in "${CTL_GROUPS[@]}"; do
    awk -v g="$g" '$1 == g && $2 ~ /^[0-9]+$/ && $2 > 0 { found = 1 } END { exit !found }' <<<"$out" || return 1
  done
}

# ctl_masters_routed: true when every name server routes a master
# (brokerId 0 in clusterList) of every group: a master the controller
# named registers with that id only once it switched its role.
ctl_masters_routed() {
  local addr out g
  for addr in ${NSADDR//;/ }; do
    out=$(NSADDR=$addr ctl_admin clusterList 2>/dev/null) || return 1
    for g in "${CTL_GROUPS[@]}"; do
      awk -v g="$g" '$2 == g && $3 == "0" { found = 1 } END { exit !found }' <<<"$out" || return 1
    done
  done
}

# ctl_wait SECONDS CMD...: runs CMD every half second until it succeeds.
ctl_wait() {
  local n=$(($1 * 2))
  shift
  until "$@"; do
    n=$((n - 1))
    [ $n -gt 0 ] || return 1
    sleep 0.5
  done
}

ctl_up() {
  local m piece
  for m in "${CTL_ETCDS[@]}"; do
    ctl_piece "etcd-$m" start || rmq_die "etcd-$m did not start (cluster.sh down stops what runs)"
  done
  ctl_wait "$CTL_WAIT" ctl_etcd_healthy || rmq_die "etcd is not healthy after ${CTL_WAIT}s (logs in $RMQ_RUN_DIR/logs/etcd-*.log)"
  for piece in "${CTL_NAMESRVS[@]}" "${CTL_BROKERS[@]}"; do
    ctl_piece "$piece" start || rmq_die "$piece did not start (cluster.sh down stops what runs)"
  done
  [ -n "$hosts_file" ] || echo controller >"$MODE_FILE"
  ctl_wait "$CTL_WAIT" ctl_masters_elected ||
    rmq_die "not every group has a master after ${CTL_WAIT}s (cluster.sh status shows them)"
  ctl_wait "$CTL_WAIT" ctl_masters_routed ||
    rmq_die "not every group's master is registered at every name server after ${CTL_WAIT}s (mqadmin clusterList)"
  echo "cluster up (controller): etcd $CTL_ETCD_ENDPOINTS; name servers $NSADDR"
}

# ctl_start: starts START_PIECES again, each where it lives (no wait for a master).
ctl_start() {
  local piece rc=0
  [ ${#START_PIECES[@]} -gt 0 ] || rmq_die "start: name the pieces (${HOST_PIECES[*]})"
  for piece in "${START_PIECES[@]}"; do
    [[ " ${HOST_PIECES[*]} " == *" $piece "* ]] || rmq_die "start: unknown piece $piece (${HOST_PIECES[*]})"
  done
  for piece in "${START_PIECES[@]}"; do
    ctl_piece "$piece" start || rc=1
  done
  return $rc
}

ctl_down() {
  local i m piece rc=0
  for ((i = ${#CTL_BROKERS[@]} - 1; i >= 0; i--)); do
    ctl_piece "${CTL_BROKERS[$i]}" stop || rc=1
  done
  for piece in "${CTL_NAMESRVS[@]}"; do
    ctl_piece "$piece" stop || rc=1
  done
  for m in "${CTL_ETCDS[@]}"; do
    ctl_piece "etcd-$m" stop || rc=1
  done
  [ -n "$hosts_file" ] || rm -f "$MODE_FILE"
  return $rc
}

# ctl_status: one line per piece (a broker's ROLE is the one it acts in now,
# LAG its distance behind its group's master in commit-log bytes), then each
# group's master, epoch and in-sync set (mqadmin getSyncStateSet).
ctl_status() {
  local line state running=0 total=0 piece m sss role lag port
  printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' PIECE HOST ROLE PORT PID STATE LAG
  # a standby's view (exit 1) is still worth showing
  sss=$(ctl_admin getSyncStateSet -c DefaultCluster 2>/dev/null) || true
  for m in "${CTL_ETCDS[@]}"; do
    line=$(ctl_piece "etcd-$m" status | tail -n 1) || true
    ctl_status_row "etcd-$m" "$line" ETCD -
  done
  for piece in "${CTL_NAMESRVS[@]}"; do
    line=$(ctl_piece "$piece" status | tail -n 1) || true
    ctl_status_row "$piece" "$line" NAMESRV -
  done
  for piece in "${CTL_BROKERS[@]}"; do
    line=$(ctl_piece "$piece" status | tail -n 1) || true
    port=$(field "$line" port)
    role=$(awk -v a="${IP[$piece]}:$port" '$7 == a { print $8 }' <<<"$sss")
    lag=$(awk -v a="${IP[$piece]}:$port" '$7 == a { print $11 }' <<<"$sss")
    ctl_status_row "$piece" "$line" "${role:--}" "${lag:--}"
  done
  echo
  if [ -n "$sss" ]; then
    echo "$sss"
  else
    echo "(no controller answered mqadmin getSyncStateSet)"
  fi
  if [ "$running" -eq "$total" ]; then
    return 0
  elif [ "$running" -eq 0 ]; then
    return 3
  fi
  return 1
}

# ctl_status_row PIECE STATUS_LINE ROLE LAG: prints the piece's row and counts it.
ctl_status_row() {
  local state
  state=$(awk '{ print $2 }' <<<"$2")
  total=$((total + 1))
  [ "$state" != running ] || running=$((running + 1))
  printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' "$1" "${IP[$1]}" "$3" "$(field "$2" port)" \
    "$(field "$2" pid)" "${state:-unknown}" "$4"
}

# ctl_main ACTION: up, down, status or start of the controller-mode cluster.
ctl_main() {
  case $1 in
    up) ctl_up ;;
    start) ctl_start ;;
    down) ctl_down ;;
    status) ctl_status ;;
  esac
}
