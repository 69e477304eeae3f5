#!/bin/bash
# deploy/mqbroker.sh: start, stop or query one broker (a master or a slave).
#
#   deploy/mqbroker.sh -c FILE [-n "host:port;host:port"] [-k "host:port;host:port"]
#                      [-i IP] start|stop|status
#
#   -c FILE  the broker's properties file (e.g. deploy/2m-2s-sync/broker-a.properties);
#            its base name (broker-a) names the pid, ready and log files
#   -n ADDRS name servers: replaces namesrvAddr from the file (taken as is,
#            RMQ_PORT_OFFSET does not apply to it)
#   -k ADDRS controllers (controller mode): replaces controllerAddr from the
#            file, taken as is like -n
#   -i IP    replaces brokerIP1 from the file (the address others reach this broker at)
#
# start  writes the effective config to RMQ_RUN_DIR/conf/NAME.properties, checks
#        it with mqbroker -p, starts the broker in the background and waits until
#        its port answers; on failure prints the log's last lines.
# stop   SIGTERM, waits up to RMQ_STOP_TIMEOUT s for the exit, then SIGKILL.
# status prints "NAME running pid=N port=P role=R" or "NAME stopped".
#
# Exit codes: 0 ok (status: running); 1 failed (stop: had to SIGKILL or the
# broker did not stop cleanly); 2 usage; 3 status: not running.
# Environment (RMQ_BIN, RMQ_RUN_DIR, RMQ_PORT_OFFSET, ...): see deploy/lib.sh.
set -euo pipefail
RMQ_PROG=mqbroker.sh
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
  echo "usage: $RMQ_PROG -c FILE [-n ADDRS] [-k ADDRS] [-i IP] start|stop|status" >&2
  exit 2
}

file='' overrides=()
while getopts "c:n:k:i:h" opt; do
  case $opt in
    c) file=$OPTARG ;;
    n) overrides+=("namesrvAddr=$OPTARG") ;;
    k) overrides+=("controllerAddr=$OPTARG") ;;
    i) overrides+=("brokerIP1=$OPTARG") ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ] || [ -z "$file" ]; then usage; fi
action=$1

name=$(basename "$file" .properties)
rmq_piece_init "$name"

case $action in
  start)
    src=$(rmq_abspath "$file")
    bin=$(rmq_find_bin mqbroker broker)
    mkdir -p "$RMQ_RUN_DIR/conf" "$RMQ_RUN_DIR/pid" "$RMQ_RUN_DIR/logs"
    # do not rewrite the config under a running broker
    if rmq_alive "$(rmq_pid)" "$CONF"; then
      rmq_status "$(rmq_conf_get "$CONF" brokerRole)"
      exit 0
    fi
    rmq_gen_conf "$src" "$CONF" ${overrides[@]+"${overrides[@]}"}
    if ! eff=$("$bin" -p -c "$CONF" 2>&1); then
      echo "$RMQ_PROG: $name: bad configuration ($CONF):" >&2
      echo "$eff" >&2
      exit 1
    fi
    role=$(printf '%s\n' "$eff" | awk -F= '$1 == "brokerRole" { print $2 }')
    rmq_start "$bin" "$role" 127.0.0.1
    ;;
  stop)
    rmq_stop
    ;;
  status)
    rmq_status "$(rmq_conf_get "$CONF" brokerRole)"
    ;;
  *)
    usage
    ;;
esac
