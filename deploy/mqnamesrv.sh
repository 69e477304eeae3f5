#!/bin/bash
# deploy/mqnamesrv.sh: start, stop or query a name server.
#
#   deploy/mqnamesrv.sh [-c FILE] [-i IP] [-e ENDPOINTS] start|stop|status
#
#   -c FILE  the name server's properties file (default
#            deploy/2m-2s-sync/namesrv.properties); its base name (namesrv)
#            names the pid, ready and log files
#   -i IP    replaces bindAddress from the file (the address it listens on)
#   -e ENDPOINTS replaces controllerEtcdEndpoints from the file (the etcd
#            members' host:port,host:port; taken as is, RMQ_PORT_OFFSET does
#            not apply to it)
#
# start  writes the effective config to RMQ_RUN_DIR/conf/NAME.properties, checks
#        it with mqnamesrv -p, starts the name server in the background and waits
#        until its port answers; on failure prints the log's last lines.
# stop   SIGTERM, waits up to RMQ_STOP_TIMEOUT s for the exit, then SIGKILL.
# status prints "NAME running pid=N port=P role=NAMESRV" or "NAME stopped".
#
# Exit codes: 0 ok (status: running); 1 failed; 2 usage; 3 status: not running.
# Environment (RMQ_BIN, RMQ_RUN_DIR, RMQ_PORT_OFFSET, ...): see deploy/lib.sh.
set -euo pipefail
RMQ_PROG=mqnamesrv.sh
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  echo "usage: $RMQ_PROG [-c FILE] [-i IP] [-e ENDPOINTS] start|stop|status" >&2
  exit 2
}

# options may come before or after the action
file=$RMQ_HOME/deploy/2m-2s-sync/namesrv.properties
action=
overrides=()
while [ $# -gt 0 ]; do
  case $1 in
    -c) [ $# -ge 2 ] || usage; file=$2; shift 2 ;;
    -i) [ $# -ge 2 ] || usage; overrides+=("bindAddress=$2"); shift 2 ;;
    -e) [ $# -ge 2 ] || usage; overrides+=("controllerEtcdEndpoints=$2"); shift 2 ;;
    start | stop | status) [ -z "$action" ] || usage; action=$1; shift ;;
    *) usage ;;
  esac
done
[ -n "$action" ] || usage

name=$(basename "$file" .properties)
rmq_piece_init "$name"

case $action in
  start)
    src=$(rmq_abspath "$file")
    bin=$(rmq_find_bin mqnamesrv namesrv)
    mkdir -p "$RMQ_RUN_DIR/conf" "$RMQ_RUN_DIR/pid" "$RMQ_RUN_DIR/logs"
    if rmq_alive "$(rmq_pid)" "$CONF"; then
      rmq_status NAMESRV
      exit 0
    fi
    rmq_gen_conf "$src" "$CONF" ${overrides[@]+"${overrides[@]}"}
    if ! eff=$("$bin" -p -c "$CONF" 2>&1); then
      echo "$RMQ_PROG: $name: bad configuration ($CONF):" >&2
      echo "$eff" >&2
      exit 1
    fi
    host=$(printf '%s\n' "$eff" | awk -F= '$1 == "bindAddress" { print $2 }')
    case $host in "" | 0.0.0.0) host=127.0.0.1 ;; esac
    rmq_start "$bin" NAMESRV "$host"
    ;;
  stop)
    rmq_stop
    ;;
  status)
    rmq_status NAMESRV
    ;;
  *)
    usage
    ;;
esac
