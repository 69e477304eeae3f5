# scripts/chaos-lib.sh: what scripts/chaos.sh and scripts/chaos-controller.sh
# share (sourced, not run): their log lines, their failure exit, and the
# build directory whose programs they drive.
# shellcheck shell=bash

log() { printf '%s chaos: %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "FAIL: $*" >&2; exit 1; }

# chaos_bins: sets BIN (RMQ_BIN, else RMQ_BUILD_ROOT, else build), ADMIN and
# BENCH; dies when a program the chaos run starts is not built.
chaos_bins() {
  local b
  BIN=${RMQ_BIN:-${RMQ_BUILD_ROOT:-build}}
  BIN=$(cd "$BIN" && pwd)
  for b in namesrv/mqnamesrv broker/mqbroker tools/mqadmin tools/mqbench; do
    [ -x "$BIN/$b" ] || die "$BIN/$b is missing (build first)"
  done
  ADMIN=$BIN/tools/mqadmin
  BENCH=$BIN/tools/mqbench
}
