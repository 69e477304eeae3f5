#!/bin/bash
# scripts/bench-pop.sh [COUNT] [--rocketmq]: pop consumption (receive + ack)
# against pull consumption of the same topic, on one loopback broker, driven
# by the unmodified RocketMQ 5.x Java client over remoting (tests/java
# PopBench: COUNT messages of 128 B, default 200000, each consumed by a push
# consumer of a new group in pull mode and in pop mode, twice each after a
# warm-up). Prints the CONSUME lines (messages per second, the broker's CPU
# time per message) and RATIO, pop over pull. With --rocketmq the same runs
# follow against Apache RocketMQ 5.5.0's own name server and broker (the
# jars from Maven Central, tests/java/rocketmq_lib.sh; its JVM warmed for
# 30 s of pull and pop first), each line prefixed "rmq" or "rocketmq", so
# both ratios come from one run. Gives up after 30 min per broker. Builds
# build/ first.
set -euo pipefail
count=200000
peer=0
for a in "$@"; do
  case $a in
    --rocketmq) peer=1 ;;
    [0-9]*) count=$a ;;
    *) echo "usage: scripts/bench-pop.sh [COUNT] [--rocketmq]" >&2; exit 2 ;;
  esac
done
# shellcheck source=scripts/bench/lib-java.sh
. "$(dirname "$0")/bench/lib-java.sh"
java_build 1 "$repo/tests/java" rocketmq5

# pop_bench LABEL NS PID [WARMUP_S]: PopBench on the broker of pid PID
# (PopBenchTopic, routed by NS), its lines prefixed LABEL.
pop_bench() {
  timeout 1800 java -cp "$cp" rmqtest.PopBench "$2" PopBenchTopic "$count" "$3" "${4:-0}" | sed "s/^/$1 /"
}

start_namesrv
start_broker PopBench broker-p
create_topic PopBench PopBenchTopic
pop_bench rmq "$ns" "$bk_pid"
[ $peer = 1 ] || exit 0
kill "${pids[@]}" 2>/dev/null   # a quiet machine for the peer
wait "${pids[@]}" 2>/dev/null || true
pids=()

export RMQ_TEST_ROCKETMQ_VERSION=5.5.0
# shellcheck source=tests/java/rocketmq_lib.sh
. "$repo/tests/java/rocketmq_lib.sh"
rq_jars 1
mig_rq_namesrv
rq_topic_seed rq-broker PopBenchTopic 4
rq_broker_ready rq-broker PopBenchCluster broker-q "$(free_port_run)" "$ns"
sleep 5   # its first registration with the name server
pop_bench rocketmq "$ns" "$rq_pid" 30
