# shellcheck shell=bash
# scripts/bench/lib-daemons.sh: the daemons of the one-off benchmarks
# (scripts/bench-ha.sh, scripts/bench-topics.sh, scripts/bench-syncflush.sh).
# Sourced, not run.
#
# bd_init makes the work directory $work and the traps; bd_start starts a
# daemon from a properties text and waits for its ready file; every daemon
# started is recorded in pids, so bd_stop_all and the EXIT trap stop exactly
# what was started, by pid, and the work directory goes with them.
# bd_start_slave starts a slave and waits until it is connected.

# bd_init NAME: $work (a fresh /tmp/rmq-NAME.XXXXXX), no daemon yet, and
# the traps that stop them and remove $work on exit.
bd_init() {
  BD_NAME=$1
  work=$(mktemp -d "/tmp/rmq-$1.XXXXXX")
  pids=()
  trap bd_cleanup EXIT
  trap 'exit 130' INT TERM
}

# bd_stop_all: stops every daemon started, and waits for each.
bd_stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

bd_cleanup() {
  bd_stop_all
  rm -rf "$work"
}

# bd_start NAME BIN PROPS: starts BIN on PROPS (written to
# $work/NAME.properties, its output appended to $work/NAME.log) and waits
# up to 60 s for its ready file; sets LAST_PID and LAST_PORT (its listenPort).
bd_start() {
  local name=$1 bin=$2 props=$3
  rm -f "$work/$name.ready"
  printf '%s\n' "$props" >"$work/$name.properties"
  "$bin" -c "$work/$name.properties" --ready-file "$work/$name.ready" >>"$work/$name.log" 2>&1 &
  LAST_PID=$!
  pids+=("$LAST_PID")
  for _ in $(seq 600); do
    if [ -s "$work/$name.ready" ]; then
      # shellcheck disable=SC2034 # read by the caller
      LAST_PORT=$(sed -n 's/^listenPort=//p' "$work/$name.ready")
      return 0
    fi
    sleep 0.1
  done
  echo "$BD_NAME: $name did not start:" >&2
  tail -n 20 "$work/$name.log" >&2
  exit 1
}

# bd_start_slave BROKER ADMIN PROPS PORT: starts BROKER as "slave" (brokerId
# 1, SLAVE, listenPort PORT, haListenPort PORT + 1, store $work/store-slave)
# on the common PROPS (cluster, broker name, name server), then waits up to
# 20 s until it reports haConnected (brokerStatus through ADMIN).
bd_start_slave() {
  local ns
  ns=$(printf '%s\n' "$3" | sed -n 's/^namesrvAddr=//p')
  bd_start slave "$1" "$3
brokerId=1
brokerRole=SLAVE
listenPort=$4
haListenPort=$(($4 + 1))
storePathRootDir=$work/store-slave"
  for _ in $(seq 100); do
    "$2" brokerStatus -n "$ns" -b "127.0.0.1:$4" 2>/dev/null | grep '^haConnected *true' >/dev/null && return 0
    sleep 0.2
  done
}
