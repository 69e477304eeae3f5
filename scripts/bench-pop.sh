#!/bin/bash
# scripts/bench-pop.sh [COUNT] [--rocketmq | --callgrind]: pop consumption (receive + ack)
# against pull consumption of the same topic, on one loopback broker, driven
# by the unmodified RocketMQ 5.x Java client over remoting (tests/java
# PopBench: COUNT messages of 128 B, default 200000, each consumed by a push
# consumer of a new group in pull mode and in pop mode, twice each after a
# warm-up). Prints the CONSUME lines (messages per second, the broker's CPU
# time per message) and RATIO, pop over pull. With --rocketmq the same runs
# follow against Apache RocketMQ 5.5.0's own name server and broker (the
# jars from Maven Central, tests/java/rocketmq_lib.sh; its JVM warmed for
# 30 s of pull and pop first), each line prefixed "rmq" or "rocketmq", so
# both ratios come from one run. With --callgrind rmq's broker runs under
# valgrind --tool=callgrind (COUNT 5000 is plenty) and the end prints the
# instructions per message of its POP_MESSAGE, ACK_MESSAGE and PULL_MESSAGE
# handlers (inclusive, over the warm-up and the timed runs: 3 x COUNT
# messages each way), steadier than the CPU times. Gives up after 30 min
# per broker. Builds build/ first.
set -euo pipefail
count=200000
peer=0 cg=0
for a in "$@"; do
  case $a in
    --rocketmq) peer=1 ;;
    --callgrind) cg=1 ;;
    [0-9]*) count=$a ;;
    *) echo "usage: scripts/bench-pop.sh [COUNT] [--rocketmq | --callgrind]" >&2; exit 2 ;;
  esac
done
# shellcheck source=scripts/bench/lib-java.sh
. "$(dirname "$0")/bench/lib-java.sh"
java_build 1 "$repo/tests/java" rocketmq5
# shellcheck source=scripts/bench/lib.sh
. "$repo/scripts/bench/lib.sh"   # bk_callgrind_wrapper

# pop_bench LABEL NS PID [WARMUP_S]: PopBench on the broker of pid PID
# (PopBenchTopic, routed by NS), its lines prefixed LABEL.
pop_bench() {
  timeout 1800 java -cp "$cp" rmqtest.PopBench "$2" PopBenchTopic "$count" "$3" "${4:-0}" | sed "s/^/$1 /"
}

# callgrind_broker: bin/ becomes a directory whose broker/mqbroker runs the
# build's broker under callgrind (output $run/callgrind.out).
callgrind_broker() {
  local real=$bin
  bin=$run/cg-bin
  mkdir -p "$bin/broker"
  ln -s "$real/namesrv" "$real/tools" "$bin/"
  bk_callgrind_wrapper "$bin/broker/mqbroker" "$run/callgrind.out" "$real/broker/mqbroker"
}

# callgrind_report: each handler's inclusive instructions per message.
callgrind_report() {
  local h ir
  kill "$bk_pid" && wait "$bk_pid" 2>/dev/null || true   # callgrind writes its file at exit
  for h in fr_rm_handle_pop fr_rm_handle_ack fr_rm_handle_pull; do
    ir=$(callgrind_annotate --inclusive=yes "$run/callgrind.out" 2>/dev/null |
      awk -v h=":$h " '!seen && index($0, h) && $0 !~ /=>/ {gsub(",", "", $1); print $1; seen = 1}')
    echo "rmq CALLGRIND $h Ir/msg=$(( ${ir:-0} / (3 * count) ))"
  done
}

[ $cg = 0 ] || callgrind_broker
start_namesrv
start_broker PopBench broker-p
for i in $(seq 30); do   # a broker under callgrind registers seconds after it listens
  (create_topic PopBench PopBenchTopic) 2>/dev/null && break
  [ "$i" -lt 30 ] || create_topic PopBench PopBenchTopic
  sleep 1
done
pop_bench rmq "$ns" "$bk_pid"
[ $cg = 0 ] || callgrind_report
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
