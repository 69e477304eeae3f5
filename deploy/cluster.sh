#!/bin/bash
# deploy/cluster.sh: the 2-master/2-slave cluster as a whole.
#
#   deploy/cluster.sh [-H HOSTS] up [sync|async|controller]
#   deploy/cluster.sh [-H HOSTS] down [controller]
#   deploy/cluster.sh [-H HOSTS] status [controller]
#   deploy/cluster.sh [-H HOSTS] start PIECE...      (controller mode)
#
# controller: automatic failover. A 3-member etcd (deploy/mqetcd.sh), two
# name servers running the controller and three broker groups in controller
# mode from deploy/controller/: broker-a and broker-b of two replicas,
# broker-c of three; the controller names each group's master. up waits
# until every group has one and every name server routes it; status adds each group's master, epoch and
# in-sync set (mqadmin getSyncStateSet); start PIECE starts pieces of a
# running cluster again (e.g. after a crash), each where it lives. Without
# -H, up records the mode in RMQ_RUN_DIR/cluster.mode, so down and status
# without a mode act on what runs; with -H a hosts file naming etcd-1 is
# a controller-mode one.
#
# Without -H everything runs on this host on loopback, from
# deploy/2m-2s-VARIANT/*.properties (VARIANT sync by default): up starts the
# name server, then the masters broker-a and broker-b, then the slaves
# broker-a-s and broker-b-s, each with deploy/mqnamesrv.sh / deploy/mqbroker.sh
# (so each waits until its port answers); down stops them in the reverse
# order; status prints each process with its role, port, pid and, for a
# slave, its lag behind its master in commit-log bytes.
#
# With -H HOSTS the pieces run where the hosts file says (see
# deploy/hosts.example and deploy/hosts-controller.example: lines
# "PIECE SSH_HOST [IP]"); each command runs as
#   $RMQ_SSH SSH_HOST bash -s   <<< "cd $RMQ_REMOTE_HOME && deploy/mqbroker.sh ..."
# and the brokers get -n (every name server's IP:port) and -i (their IP);
# in controller mode also -k (the controllers: the name servers), the name
# servers -i (the address they listen on) and -e (the etcd members), and
# the etcd members -a (every member's address).
#
# Environment (besides RMQ_BIN, RMQ_RUN_DIR, RMQ_PORT_OFFSET/RMQ_PORT_BASE,
# RMQ_START_TIMEOUT, RMQ_STOP_TIMEOUT of deploy/lib.sh, which are also passed
# to the remote commands when set):
#   RMQ_SSH          command prefix that runs "bash -s" on a host, reading the
#                    script from standard input (default "ssh -o BatchMode=yes";
#                    "ip netns exec" runs it in a network namespace instead)
#   RMQ_REMOTE_HOME  the checkout on the hosts (default: the same path as here)
#   RMQ_CONF_DIR     the properties directory, relative to the checkout or
#                    absolute (default deploy/2m-2s-VARIANT)
#
# Exit codes: 0 ok (status: all running); 1 failed (status: some running);
# 2 usage; 3 status: none running.
set -euo pipefail
RMQ_PROG=cluster.sh
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RMQ_SSH=${RMQ_SSH:-ssh -o BatchMode=yes}
RMQ_REMOTE_HOME=${RMQ_REMOTE_HOME:-$RMQ_HOME}
MASTERS=(broker-a broker-b)
SLAVES=(broker-a-s broker-b-s)

usage() {
  echo "usage: $RMQ_PROG [-H HOSTS] up [sync|async|controller] | down | status | start PIECE..." >&2
  exit 2
}

hosts_file='' action='' variant='' START_PIECES=()
while [ $# -gt 0 ]; do
  case $1 in
    -H) [ $# -ge 2 ] || usage; hosts_file=$2; shift 2 ;;
    up | down | status | start) [ -z "$action" ] || usage; action=$1; shift ;;
    sync | async | controller) variant=$1; shift ;;
    *) [ "$action" = start ] || usage; START_PIECES+=("$1"); shift ;;
  esac
done
[ -n "$action" ] || usage
MODE_FILE=$RMQ_RUN_DIR/cluster.mode
if [ -z "$variant" ] && [ -n "$hosts_file" ]; then
  if grep -Eq '^[[:space:]]*etcd-' "$hosts_file" 2>/dev/null; then variant=controller; fi
elif [ -z "$variant" ] && [ "$action" != up ]; then
  variant=$(cat "$MODE_FILE" 2>/dev/null || true)
fi
variant=${variant:-sync}
offset=$(rmq_port_offset)

# Where each piece runs: SSH[piece] (empty: here) and IP[piece]; NAMESRVS
# lists the name servers as "ssh_host ip" (one, local, without -H), in the
# 2m-2s cluster whose hosts file names every name server "namesrv".
# HOST_PIECES: the pieces a hosts file must place.
declare -A SSH IP
NAMESRVS=()
if [ "$variant" = controller ]; then
  # shellcheck source=SCRIPTDIR/controller.sh
  . "$RMQ_HOME/deploy/controller.sh"
else
  [ "$action" != start ] || rmq_die "start PIECE: controller mode only"
  HOST_PIECES=("${MASTERS[@]}" "${SLAVES[@]}")
fi
conf_dir=${RMQ_CONF_DIR:-deploy/2m-2s-$variant}

# ipv4 HOST: prints HOST if it is an IPv4 address, else its first IPv4 address.
ipv4() {
  if [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "$1"
  else
    getent ahostsv4 "$1" | awk 'NR == 1 { print $1 }'
  fi
}

read_hosts() {
  local piece host ip rest
  [ -f "$hosts_file" ] || rmq_die "$hosts_file: no such file"
  while read -r piece host ip rest; do
    case $piece in "" | \#*) continue ;; esac
    [ -n "$host" ] || rmq_die "$hosts_file: $piece: no host"
    [ -z "$rest" ] || rmq_die "$hosts_file: $piece: too many fields"
    [ -n "$ip" ] || ip=$(ipv4 "$host")
    [ -n "$ip" ] || rmq_die "$hosts_file: $piece: cannot find an IPv4 address for $host (give it as the third field)"
    if [ "$piece" = namesrv ] && [ "$variant" != controller ]; then
      NAMESRVS+=("$host $ip")
    elif [[ " ${HOST_PIECES[*]} " == *" $piece "* ]]; then
      [ -z "${SSH[$piece]:-}" ] || rmq_die "$hosts_file: $piece: placed twice"
      SSH[$piece]=$host
      IP[$piece]=$ip
    else
      rmq_die "$hosts_file: unknown piece $piece for $variant mode ($([ "$variant" = controller ] || echo 'namesrv, ')${HOST_PIECES[*]})"
    fi
  done <"$hosts_file"
  [ "$variant" = controller ] || [ ${#NAMESRVS[@]} -gt 0 ] || rmq_die "$hosts_file: no namesrv line"
  for piece in "${HOST_PIECES[@]}"; do
    [ -n "${SSH[$piece]:-}" ] || rmq_die "$hosts_file: no $piece line"
  done
}

if [ -n "$hosts_file" ]; then
  read_hosts
else
  for piece in "${HOST_PIECES[@]}"; do
    SSH[$piece]=''
    IP[$piece]=127.0.0.1
  done
fi
if [ "$variant" = controller ]; then
  ctl_init
elif [ -n "$hosts_file" ]; then
  NSADDR=''
  for ns in "${NAMESRVS[@]}"; do
    NSADDR+="${NSADDR:+;}${ns#* }:$((9876 + offset))"
  done
else
  NAMESRVS=(" 127.0.0.1")
  NSADDR=127.0.0.1:$((9876 + offset))
fi

# remote_env: the start of a remote command: into the checkout, with the
# deploy settings that are set here.
remote_env() {
  local cmd v
  cmd="cd $(printf %q "$RMQ_REMOTE_HOME") &&"
  for v in RMQ_BIN RMQ_RUN_DIR RMQ_PORT_OFFSET RMQ_PORT_BASE RMQ_START_TIMEOUT RMQ_STOP_TIMEOUT; do
    if [ -n "${!v:-}" ]; then
      cmd+=" export $v=$(printf %q "${!v}") &&"
    fi
  done
  echo "$cmd"
}

# run HOST SCRIPT ARGS...: runs deploy/SCRIPT ARGS here (HOST empty) or on HOST.
run() {
  local host=$1 script=$2
  shift 2
  if [ -z "$host" ]; then
    (cd "$RMQ_HOME" && "deploy/$script" "$@")
    return
  fi
  # word splitting of RMQ_SSH is intended: it is a command and its options
  # shellcheck disable=SC2086
  $RMQ_SSH "$host" bash -s <<<"$(remote_env) deploy/$script$(printf ' %q' "$@")"
}

# mqadmin_on HOST ARGS...: mqadmin ARGS -n NSADDR (at most 20 s) here (HOST
# empty) or on HOST; fails when mqadmin is not built.
mqadmin_on() {
  local host=$1 admin
  shift
  if [ -z "$host" ]; then
    admin=$(RMQ_PROG=cluster.sh rmq_find_bin mqadmin tools 2>/dev/null) || return 1
    timeout 20 "$admin" "$@" -n "$NSADDR"
    return
  fi
  # shellcheck disable=SC2016 # $b and $a expand on the remote host
  local find='b=${RMQ_BIN:-build}; a=$b/tools/mqadmin; [ -x "$a" ] || a=$b/mqadmin;'
  # shellcheck disable=SC2086 # RMQ_SSH is a command and its options
  $RMQ_SSH "$host" bash -s <<<"$(remote_env) $find timeout 20 \"\$a\"$(printf ' %q' "$@" -n "$NSADDR")"
}

# broker PIECE ACTION: runs mqbroker.sh for PIECE where it lives.
broker() {
  local piece=$1 action=$2 args
  args=(-c "$conf_dir/$piece.properties")
  if [ -n "$hosts_file" ] && [ "$action" = start ]; then
    args+=(-n "$NSADDR" -i "${IP[$piece]}")
  fi
  run "${SSH[$piece]}" mqbroker.sh "${args[@]}" "$action"
}

namesrv() {
  run "${1%% *}" mqnamesrv.sh -c "$conf_dir/namesrv.properties" "$2"
}

cluster_up() {
  local ns piece
  for ns in "${NAMESRVS[@]}"; do
    namesrv "$ns" start || rmq_die "the name server on ${ns#* } did not start; stopped nothing (cluster.sh down stops what runs)"
  done
  for piece in "${MASTERS[@]}" "${SLAVES[@]}"; do
    broker "$piece" start || rmq_die "$piece did not start; the pieces started before it keep running (cluster.sh down stops them)"
  done
  [ -n "$hosts_file" ] || echo "$variant" >"$MODE_FILE"
  echo "cluster up ($variant): name servers $NSADDR"
}

cluster_down() {
  local ns piece rc=0
  for piece in "${SLAVES[@]}" "${MASTERS[@]}"; do
    broker "$piece" stop || rc=1
  done
  for ns in "${NAMESRVS[@]}"; do
    namesrv "$ns" stop || rc=1
  done
  [ -n "$hosts_file" ] || rm -f "$MODE_FILE"
  return $rc
}

# field LINE KEY: prints KEY's value from a "NAME running pid=N port=P role=R" line.
field() {
  local w
  for w in $1; do
    case $w in "$2="*) echo "${w#*=}"; return ;; esac
  done
  echo -
}

# max_offset ADDR [HOST]: the broker's commitLogMaxOffset from mqadmin
# brokerStatus (or nothing). With -H, mqadmin runs on HOST (the slave's host,
# which reaches its master and itself), not here: this machine may not reach
# the brokers' addresses (e.g. network namespaces).
max_offset() {
  mqadmin_on "${2:-}" brokerStatus -b "$1" 2>/dev/null | awk '$1 == "commitLogMaxOffset" { print $2 }' || true
}

cluster_status() {
  local ns piece line state running=0 total=0 lag m s
  declare -A LINE
  printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' PIECE HOST ROLE PORT PID STATE LAG
  for ns in "${NAMESRVS[@]}"; do
    line=$(namesrv "$ns" status | grep '^namesrv ' | tail -n 1) || true
    total=$((total + 1))
    state=$(awk '{ print $2 }' <<<"$line")
    [ "$state" != running ] || running=$((running + 1))
    printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' namesrv "${ns#* }" "$(field "$line" role)" \
      "$(field "$line" port)" "$(field "$line" pid)" "${state:-unknown}" -
  done
  for piece in "${MASTERS[@]}" "${SLAVES[@]}"; do
    line=$(broker "$piece" status | grep "^$piece " | tail -n 1) || true
    LINE[$piece]=$line
    total=$((total + 1))
    state=$(awk '{ print $2 }' <<<"$line")
    [ "$state" != running ] || running=$((running + 1))
    lag=-
    case $piece in
      *-s)
        if [ "$state" = running ] && [ "$(field "${LINE[${piece%-s}]}" port)" != - ]; then
          m=$(max_offset "${IP[${piece%-s}]}:$(field "${LINE[${piece%-s}]}" port)" "${SSH[$piece]}")
          s=$(max_offset "${IP[$piece]}:$(field "$line" port)" "${SSH[$piece]}")
          if [[ $m =~ ^[0-9]+$ ]] && [[ $s =~ ^[0-9]+$ ]]; then
            lag=$((m - s))
          fi
        fi
        ;;
    esac
    printf '%-11s %-15s %-12s %-6s %-8s %-8s %s\n' "$piece" "${IP[$piece]}" "$(field "$line" role)" \
      "$(field "$line" port)" "$(field "$line" pid)" "${state:-unknown}" "$lag"
  done
  if [ "$running" -eq "$total" ]; then
    return 0
  elif [ "$running" -eq 0 ]; then
    return 3
  fi
  return 1
}

if [ "$variant" = controller ]; then
  ctl_main "$action"
  exit $?
fi
case $action in
  up) cluster_up ;;
  down) cluster_down ;;
  status) cluster_status ;;
esac
