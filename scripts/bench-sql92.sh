#!/bin/bash
# scripts/bench-sql92.sh [COUNT]: pull throughput with a two-clause SQL92
# filter ("a > 4 AND s IN ('x', 'y')", matching 1 in 3 of the messages)
# against an unfiltered pull, on one loopback broker with
# enablePropertyFilter=true, driven by the unmodified RocketMQ 4.9 Java
# client (tests/java SqlBench: COUNT messages, default 200000, each queue
# read from 0 to its end). Prints the PULL lines (queue offsets scanned per
# second) and RATIO, filtered over unfiltered. Builds build/ first.
set -euo pipefail
count=${1:-200000}
# shellcheck source=scripts/bench/lib-java.sh
. "$(dirname "$0")/bench/lib-java.sh"
java_build 1 "$repo/tests/java"
start_namesrv
broker_extra="enablePropertyFilter=true"
start_broker SqlBench broker-s
create_topic SqlBench SqlBenchTopic
java -cp "$cp" rmqtest.SqlBench "$ns" SqlBenchTopic "$count"
