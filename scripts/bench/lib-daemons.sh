# shellcheck shell=bash
# scripts/bench/lib-daemons.sh: the daemons of the one-off benchmarks
# (scripts/bench-ha.sh, scripts/bench-topics.sh, scripts/bench-syncflush.sh).
# Sourced, not run.
#
# bd_init makes the work directory $work and the traps; bd_start starts a
# daemon from a properties text and waits for its ready file; every daemon
# started is recorded in pids, so bd_stop_all and the EXIT trap stop exactly
# what was started, by pid, and the work directory goes with them.
# bd_wait_ha waits for a slave to connect to its master.

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

# bd_wait_ha ADMIN NS SLAVE_ADDR: waits up to 20 s until the slave at
# SLAVE_ADDR reports haConnected (its brokerStatus through ADMIN, name
# server NS).
bd_wait_ha() {
  for _ in $(seq 100); do
    "$1" brokerStatus -n "$2" -b "$3" 2>/dev/null | grep '^haConnected *true' >/dev/null && return 0
    sleep 0.2
  done
}
