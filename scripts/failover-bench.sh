#!/bin/bash
# scripts/failover-bench.sh: automatic failover time in controller mode. A
# private etcd, a name server with the controller and two mqbroker replicas
# (enableControllerMode, SYNC_MASTER when elected) on loopback ephemeral
# ports; N times: load the master (pipelined sends), kill -9 it after 1 s,
# and measure from the kill to the first SEND_OK on the new master (probes
# every 20 ms sent straight to the other replica); every message
# acknowledged before the kill is read back from the new master, and the
# killed replica restarts (over an empty store) and rejoins as slave before
# the next repetition.
# Runs once with the default settings (controllerHeartBeatTimeoutMills
# 10000, brokerHeartbeatInterval 1000) and once tuned (2000 / 200), and
# prints the median and the worst of each.
#
#   scripts/failover-bench.sh [-n REPS] [-b BUILD_DIR] [--default-only|--tuned-only]
#
# -n repetitions per setting (default 20), -b the meson build directory
# (default build; $RMQ_BUILD_ROOT when set). The driver is
# tests/cluster/failover_bench.c; everything it starts dies with it.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=20 RUN_DEFAULT=1 RUN_TUNED=1
BUILD=${RMQ_BUILD_ROOT:-build}
while [ $# -gt 0 ]; do
  case $1 in
    -n) REPS=$2; shift 2 ;;
    -b) BUILD=$2; shift 2 ;;
    --default-only) RUN_TUNED=0; shift ;;
    --tuned-only) RUN_DEFAULT=0; shift ;;
    *) echo "usage: scripts/failover-bench.sh [-n REPS] [-b BUILD_DIR] [--default-only|--tuned-only]" >&2; exit 2 ;;
  esac
done
command -v etcd >/dev/null || { echo "failover-bench: etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)" >&2; exit 1; }
scripts/build.sh "$BUILD" -- namesrv/mqnamesrv broker/mqbroker tests/cluster/failover_bench >/dev/null
BUILD=$(cd "$BUILD" && pwd)

# run LABEL ENV...: one series; prints its repetitions and its summary line.
run() {
  local label=$1 out
  shift
  echo "== $label: $*"
  out=$(env RMQ_BUILD_ROOT="$BUILD" CK_VERBOSITY=normal CK_DEFAULT_TIMEOUT=7200 FB_REPS="$REPS" "$@" \
        "$BUILD/tests/cluster/failover_bench" 2>&1) || { echo "$out" | tail -n 60 >&2; echo "failover-bench: $label failed" >&2; exit 1; }
  echo "$out" | grep '^# rep'
  SUMMARY[$label]=$(echo "$out" | grep '^failover:')
}

declare -A SUMMARY
[ $RUN_DEFAULT = 1 ] && run default
[ $RUN_TUNED = 1 ] && run tuned FB_HB_TIMEOUT=2000 FB_HB_INTERVAL=200 FB_CHECK=500 FB_CATCHUP=3000 FB_LEASE=2
echo
echo "kill -9 master -> first SEND_OK on the new master, $REPS repetitions:"
for label in default tuned; do
  [ -n "${SUMMARY[$label]:-}" ] && printf '  %-8s %s\n' "$label" "${SUMMARY[$label]#failover: }"
done
