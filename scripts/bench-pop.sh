#!/bin/bash
# scripts/bench-pop.sh [COUNT]: pop consumption (receive + ack) against pull
# consumption of the same topic, on one loopback broker, driven by the
# unmodified RocketMQ 5.x Java client over remoting (tests/java PopBench:
# COUNT messages of 128 B, default 200000, each consumed by a push consumer
# of a new group in pull mode and in pop mode, twice each after a warm-up).
# Prints the CONSUME lines (messages per second, the broker's CPU time per
# message) and RATIO, pop over pull; gives up after 30 min. Builds build/ first.
set -euo pipefail
count=${1:-200000}
# shellcheck source=scripts/bench/lib-java.sh
. "$(dirname "$0")/bench/lib-java.sh"
java_build 1 "$repo/tests/java" rocketmq5
start_namesrv
start_broker PopBench broker-p
create_topic PopBench PopBenchTopic
timeout 1800 java -cp "$cp" rmqtest.PopBench "$ns" PopBenchTopic "$count" "$bk_pid"
