# shellcheck shell=bash
# tests/cluster/deploy_lib.sh: what the tests of deploy/cluster.sh and of
# the clusters it starts share (test_deploy.sh, test_deploy_controller.sh,
# test_netns.sh, tests/java/run_examples_test.sh,
# tests/node/run_ali_ons_test.sh): their environment, the check that the
# programs are built, the cluster started as a TAP check, a topic on every
# master, and the cleanup that stops what a test started, by the pids of its
# own run directory.
# Sourced, not run; the caller sets here (its folder).
# shellcheck disable=SC2154 # here

src=$(cd "$here/../.." && pwd)
export RMQ_BIN=${RMQ_BUILD_ROOT:-$src/build}
cluster=$src/deploy/cluster.sh

# deploy_env RUN_DIR OFFSET START_TIMEOUT: cluster.sh's files in RUN_DIR
# (RMQ_RUN_DIR), every port moved by OFFSET (RMQ_PORT_OFFSET),
# RMQ_START_TIMEOUT START_TIMEOUT s, and none of the caller's deploy
# settings (one host, the shipped configs).
deploy_env() {
  export RMQ_RUN_DIR=$1 RMQ_PORT_OFFSET=$2 RMQ_START_TIMEOUT=$3 RMQ_STOP_TIMEOUT=30
  unset RMQ_PORT_BASE RMQ_SSH RMQ_CONF_DIR
}

# deploy_create_topic NS TOPIC: TOPIC with 4 queues on each master of
# DefaultCluster (mqadmin's output shown on failure); waits up to 20 s
# until the route names two brokers.
deploy_create_topic() {
  "$RMQ_BIN/tools/mqadmin" updateTopic -n "$1" -c DefaultCluster -t "$2" -r 4 -w 4 >"$RMQ_RUN_DIR/topic.log" 2>&1 \
    || sed 's/^/# /' "$RMQ_RUN_DIR/topic.log"
  for _ in $(seq 1 100); do
    [ "$("$RMQ_BIN/tools/mqadmin" topicRoute -n "$1" -t "$2" 2>/dev/null | grep -c broker-)" -ge 2 ] && return
    sleep 0.2
  done
}

# deploy_need_bins: TAP "Bail out!" and exit 1 unless the programs are built.
deploy_need_bins() {
  local b
  for b in namesrv/mqnamesrv broker/mqbroker tools/mqadmin; do
    if [ ! -x "$RMQ_BIN/$b" ]; then
      echo "Bail out! $RMQ_BIN/$b not built"
      exit 1
    fi
  done
}

# deploy_kill_rest: kill -9 of anything still running from $RMQ_RUN_DIR
# (what a failed down left).
deploy_kill_rest() {
  local f pid
  for f in "$RMQ_RUN_DIR"/pid/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if [ -n "$pid" ] && grep -q "$RMQ_RUN_DIR" "/proc/$pid/cmdline" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null
    fi
  done
}

# deploy_cleanup: cluster.sh down, what is left killed, the run dir removed
# (the EXIT trap of a one-host test).
deploy_cleanup() {
  "$cluster" down >/dev/null 2>&1
  deploy_kill_rest
  rm -rf "$RMQ_RUN_DIR"
}

# deploy_up_tap N VARIANT: TAP check N, deploy/cluster.sh up VARIANT with its
# files in $RMQ_RUN_DIR (made here); on failure its output as comments, and
# exit 1.
deploy_up_tap() {
  mkdir -p "$RMQ_RUN_DIR"
  if "$cluster" up "$2" >"$RMQ_RUN_DIR/up.log" 2>&1; then echo "ok $1 - deploy/cluster.sh up $2"; else
    echo "not ok $1 - deploy/cluster.sh up $2"; sed 's/^/# /' "$RMQ_RUN_DIR/up.log"; exit 1; fi
}
