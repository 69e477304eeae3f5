# shellcheck shell=bash
# offset, MODE_FILE and field come from cluster.sh
# shellcheck disable=SC2154
# deploy/controller.sh: cluster.sh's controller mode (cluster.sh up
# controller). Sourced by cluster.sh after lib.sh, not run.
#
# Pieces, all on this host: etcd-1..3 (deploy/mqetcd.sh), namesrv-1 and
# namesrv-2 (the controller in each; one leads), and the brokers of
# deploy/controller/ (or RMQ_CONF_DIR): broker-a-1, broker-a-2, broker-b-1,
# broker-b-2, broker-c-1, broker-c-2, broker-c-3, every one with
# enableControllerMode. Ports (ARCHITECTURE.md "Ports", all moved by
# RMQ_PORT_OFFSET): etcd clients 9880/9882/9884, peers 9881/9883/9885; name
# servers 9876, 9877; brokers 10911, 10921, ... 10971 (HA one above each).

CTL_ETCDS=(1 2 3)
CTL_NAMESRVS=(namesrv-1 namesrv-2)
CTL_BROKERS=(broker-a-1 broker-a-2 broker-b-1 broker-b-2 broker-c-1 broker-c-2 broker-c-3)
CTL_GROUPS=(broker-a broker-b broker-c)
CTL_CONF_DIR=${RMQ_CONF_DIR:-deploy/controller}
CTL_NSADDR="127.0.0.1:$((9876 + offset));127.0.0.1:$((9877 + offset))"
# how long up waits for etcd's health and for every group's master, s
CTL_WAIT=${RMQ_START_TIMEOUT:-30}

# ctl_run SCRIPT ARGS...: deploy/SCRIPT ARGS from the checkout.
ctl_run() {
  local script=$1
  shift
  (cd "$RMQ_HOME" && "deploy/$script" "$@")
}

# ctl_admin ARGS...: mqadmin ARGS against the name servers (nothing when mqadmin is not built).
ctl_admin() {
  local admin
  admin=$(RMQ_PROG=cluster.sh rmq_find_bin mqadmin tools 2>/dev/null) || return 1
  timeout 20 "$admin" "$@" -n "$CTL_NSADDR"
}

# ctl_etcd_healthy: true when every etcd member reports itself healthy.
ctl_etcd_healthy() {
  local m
  for m in "${CTL_ETCDS[@]}"; do
    ctl_run mqetcd.sh -m "$m" health || return 1
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
    ctl_run mqetcd.sh -m "$m" start || rmq_die "etcd-$m did not start (cluster.sh down stops what runs)"
  done
  ctl_wait "$CTL_WAIT" ctl_etcd_healthy || rmq_die "etcd is not healthy after ${CTL_WAIT}s (logs in $RMQ_RUN_DIR/logs/etcd-*.log)"
  for piece in "${CTL_NAMESRVS[@]}"; do
    ctl_run mqnamesrv.sh -c "$CTL_CONF_DIR/$piece.properties" start || rmq_die "$piece did not start (cluster.sh down stops what runs)"
  done
  for piece in "${CTL_BROKERS[@]}"; do
    ctl_run mqbroker.sh -c "$CTL_CONF_DIR/$piece.properties" start || rmq_die "$piece did not start (cluster.sh down stops what runs)"
  done
  echo controller >"$MODE_FILE"
  ctl_wait "$CTL_WAIT" ctl_masters_elected ||
    rmq_die "not every group has a master after ${CTL_WAIT}s (cluster.sh status shows them)"
  echo "cluster up (controller): etcd 127.0.0.1:$((9880 + offset)),$((9882 + offset)),$((9884 + offset)); name servers $CTL_NSADDR"
}

ctl_down() {
  local i piece m rc=0
  for ((i = ${#CTL_BROKERS[@]} - 1; i >= 0; i--)); do
    ctl_run mqbroker.sh -c "$CTL_CONF_DIR/${CTL_BROKERS[$i]}.properties" stop || rc=1
  done
  for piece in "${CTL_NAMESRVS[@]}"; do
    ctl_run mqnamesrv.sh -c "$CTL_CONF_DIR/$piece.properties" stop || rc=1
  done
  for m in "${CTL_ETCDS[@]}"; do
    ctl_run mqetcd.sh -m "$m" stop || rc=1
  done
  rm -f "$MODE_FILE"
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
    line=$(ctl_run mqetcd.sh -m "$m" status | tail -n 1) || true
    ctl_status_row "etcd-$m" "$line" ETCD -
  done
  for piece in "${CTL_NAMESRVS[@]}"; do
    line=$(ctl_run mqnamesrv.sh -c "$CTL_CONF_DIR/$piece.properties" status | tail -n 1) || true
    ctl_status_row "$piece" "$line" NAMESRV -
  done
  for piece in "${CTL_BROKERS[@]}"; do
    line=$(ctl_run mqbroker.sh -c "$CTL_CONF_DIR/$piece.properties" status | tail -n 1) || true
    port=$(field "$line" port)
    role=$(awk -v a="127.0.0.1:$port" '$7 == a { print $8 }' <<<"$sss")
    lag=$(awk -v a="127.0.0.1:$port" '$7 == a { print $11 }' <<<"$sss")
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
  printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' "$1" 127.0.0.1 "$3" "$(field "$2" port)" \
    "$(field "$2" pid)" "${state:-unknown}" "$4"
}

# ctl_main ACTION: up, down or status of the controller-mode cluster.
ctl_main() {
  case $1 in
    up) ctl_up ;;
    down) ctl_down ;;
    status) ctl_status ;;
  esac
}
