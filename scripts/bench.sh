#!/bin/bash
# scripts/bench.sh: the RocketMQ benchmark plan (issue 7), reproducible on one
# machine. Starts and stops its own name server, brokers and Redis peers on
# loopback, and writes bench-results/<timestamp>/report.md plus results.json.
#
#   scripts/bench.sh [--quick | --smoke] [--stage N[,M...]] [--rocketmq] [--minutes M] [--out DIR]
#   scripts/bench.sh --peers [--only SYSTEMS] [--sizes "S..."] [--shapes "SHAPES"]
#                    [--duration SECONDS] [--warmup SECONDS] [--out DIR]
#
# Stages:
#   1 base test: one master ASYNC_MASTER + ASYNC_FLUSH, 64 threads, 128 B, then
#     a consumer draining it; extras (not with --smoke): async sends (64 and 4
#     threads), batched sends, a SYNC_FLUSH master (transientStorePoolEnable
#     off, then on), and this disk's single-writer fdatasync rate; broker CPU
#     time per message of the base and batched runs
#   2 capacity: the 2m-2s cluster, SYNC (SYNC_MASTER; ASYNC_FLUSH as in
#     RocketMQ's 2m-2s-sync sample and like the Redis peer's appendonly
#     everysec, see RMQ_BENCH_SYNC_FLUSH) and ASYNC, a thread gradient at 128 B and 1 KiB (plus 64 threads at 128 B), 512 KiB
#     at 5 threads
#   3 consumer path: send and consume at once (one master): consume TPS vs send
#     TPS, B2C/S2C latency, backlog over time; then paced (mqbench --rate) at 50%
#     and 80% of that send TPS: send P99 and S2C P99 (scripts/bench/rate.sh)
#   4 latency: send percentiles at 64 and 256 threads (one master)
#   5 stability: the 2m-2s ASYNC cluster, 64 threads sending and a consumer for
#     M minutes: failures, each broker's RSS and TPS once a minute
#   6 exception: the 2m-2s SYNC cluster, 20 threads; kill -9 broker-a half-way:
#     TPS dip, time until TPS is back, acknowledged messages consumed
#   7 peers: redis-benchmark PING_INLINE -c 64 (request/response ceiling) and a
#     Redis stream peer (XADD, appendonly everysec, one replica) at 64 clients
#   8 RocketMQ: Apache RocketMQ 4.9.x and 5.x (Maven Central jars, java -cp) in
#     the 2m-2s SYNC and ASYNC layouts beside rmq's, 64 threads, 128 B, the
#     same Java client (Bench.java) driving both, and mqbench rmq: send TPS,
#     percentiles, broker CPU time per message, RSS (scripts/bench/rocketmq.sh);
#     --rocketmq runs this stage alone
#   9 peers (issue 35): Kafka 4.1.1 (KRaft, 1 controller + 2 brokers, 16
#     partitions RF 2, min.insync.replicas 2) and Artemis 2.40.0 (replicated
#     primary/backup) from Maven Central, and rmq's 2m-2s cluster, one system
#     at a time, per durability class (replica ack without fsync, replica ack
#     with fsync, leader ack only), size and shape (64 synchronous senders;
#     each tool's async defaults): TPS, P99, server CPU per message, RssAnon,
#     rmq/peer ratios (scripts/bench/peers.sh). Only with --peers or --stage 9:
#     never in the default run, --quick or --smoke. Its options:
#       --only SYSTEMS     comma list of kafka, artemis, rmq (default all three)
#       --sizes "S..."     message sizes in bytes (default "128 1024")
#       --shapes "SHAPES"  sync and/or async (default "sync async")
#       --duration SECONDS measured seconds per row (default 30, at least 2)
#       --warmup SECONDS   JVM peers' warm-up before each row (default 30)
#
# --quick runs every stage briefly (about 4 minutes, plus about 7 for stage
# 8's JVM start-ups); --smoke is stage 1's base test only with 3 s runs (CI;
# no stage 8); the default run takes about 45 minutes (stage 8 about 18 of
# them on a loaded 2-core machine).
#
# Environment:
#   RMQ_BUILD                  meson build directory (default build/; set up
#                              and built first, as scripts/quickstart.sh does)
#   RMQ_BENCH_PORT_BASE        first port (default 20000): name server BASE,
#                              brokers BASE+11/21/31/41 (HA +1), Redis from BASE+60
#   RMQ_BENCH_THREADS          stage 2 gradient (default "5 10 15 20 25 30 35 40")
#   RMQ_BENCH_EXTRA_THREADS    stage 2 extra 128 B columns (default 64)
#   RMQ_BENCH_STEP_SECONDS     stage 2 seconds per step (default 15; quick 3)
#   RMQ_BENCH_MINUTES          stage 5 minutes (default 5), same as --minutes
#   RMQ_BENCH_CP_THREADS       stage 3 producer threads (default 32)
#   RMQ_BENCH_SYNC_FLUSH       stage 2 SYNC masters' flushDiskType (default
#                              ASYNC_FLUSH; SYNC_FLUSH as in deploy/2m-2s-sync)
#   RMQ_BENCH_MAPPED_SIZE      commit-log file size (default 1 GiB)
#   RMQ_BENCH_PIN_HA           1 (default): slaves get haMasterAddress; 0: they
#                              learn it from the name server
#   RMQ_BENCH_PERF             1: perf-record broker-a during the runs named in
#                              RMQ_BENCH_PERF_RUNS (default "base syncflush
#                              sync-s128-w64 async-s128-w64"); top symbols in the report
#   RMQ_BENCH_NO_INSTALL       1: do not apt-get install redis/fio when missing
#   RMQ_BENCH_ROCKETMQ_VERSIONS stage 8 versions (default "4.9.7 5.5.0"), with
#                              RMQ_BENCH_ROCKETMQ_HEAP / _DIRECT / _CACHE
#   RMQ_BENCH_RQ_SECONDS       stage 8 seconds per row (default 25; quick 8), after
#                              RMQ_BENCH_RQ_WARMUP seconds of warm-up (15; quick 6)
#   TMPDIR                     where the stores go (a mktemp directory in it)
set -euo pipefail

BK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=SCRIPTDIR/bench/lib.sh
. "$BK_ROOT/scripts/bench/lib.sh"
# shellcheck source=SCRIPTDIR/bench/stages.sh
. "$BK_ROOT/scripts/bench/stages.sh"
# shellcheck source=SCRIPTDIR/bench/rocketmq.sh
. "$BK_ROOT/scripts/bench/rocketmq.sh"
# shellcheck source=SCRIPTDIR/bench/rate.sh
. "$BK_ROOT/scripts/bench/rate.sh"
# shellcheck source=SCRIPTDIR/bench/peers.sh
. "$BK_ROOT/scripts/bench/peers.sh"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 2
}

ARGS="$*"
MODE=full STAGES='' MINUTES=${RMQ_BENCH_MINUTES:-5} OUT_DIR=''
PE_ONLY=kafka,artemis,rmq PE_SIZES='128 1024' PE_SHAPES='sync async' PE_DUR=30 PE_WARM=30
while [ $# -gt 0 ]; do
  case $1 in
    --quick) MODE=quick; shift ;;
    --smoke) MODE=smoke; shift ;;
    --rocketmq) STAGES=${STAGES:+$STAGES,}8; shift ;;
    --peers) STAGES=${STAGES:+$STAGES,}9; shift ;;
    --only) [ $# -ge 2 ] || usage; PE_ONLY=$2; shift 2 ;;
    --sizes) [ $# -ge 2 ] || usage; PE_SIZES=$2; shift 2 ;;
    --shapes) [ $# -ge 2 ] || usage; PE_SHAPES=$2; shift 2 ;;
    --duration) [ $# -ge 2 ] || usage; PE_DUR=$2; shift 2 ;;
    --warmup) [ $# -ge 2 ] || usage; PE_WARM=$2; shift 2 ;;
    --stage | --stages) [ $# -ge 2 ] || usage; STAGES=$2; shift 2 ;;
    --stage=*) STAGES=${1#*=}; shift ;;
    --minutes) [ $# -ge 2 ] || usage; MINUTES=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; OUT_DIR=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "bench.sh: unknown argument $1" >&2; usage ;;
  esac
done
if [ -z "$STAGES" ]; then
  STAGES=1,2,3,4,5,6,7,8
  [ "$MODE" != smoke ] || STAGES=1
fi
[[ $STAGES =~ ^[1-9](,[1-9])*$ ]] || { echo "bench.sh: --stage takes N[,M...] with N in 1..9" >&2; exit 2; }
[[ ,$PE_ONLY, =~ ^(,(kafka|artemis|rmq))+,$ ]] || { echo "bench.sh: --only takes a comma list of kafka, artemis, rmq" >&2; exit 2; }
[[ $PE_SIZES =~ ^\ *[1-9][0-9]*(\ +[1-9][0-9]*)*\ *$ ]] || { echo "bench.sh: --sizes takes sizes in bytes" >&2; exit 2; }
[[ $PE_SHAPES =~ ^\ *(sync|async)(\ +(sync|async))?\ *$ ]] || { echo "bench.sh: --shapes takes sync and/or async" >&2; exit 2; }
[[ $PE_DUR =~ ^([2-9]|[1-9][0-9]+)$ && $PE_WARM =~ ^[0-9]+$ ]] || { echo "bench.sh: --duration takes whole seconds (at least 2), --warmup whole seconds" >&2; exit 2; }
[[ $MINUTES =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench.sh: --minutes takes a number" >&2; exit 2; }

# Durations (seconds) and sizes per mode.
case $MODE in
  full)
    D_BASE=20 D_EXTRA=15 D_STEP=${RMQ_BENCH_STEP_SECONDS:-15}
    THREADS=${RMQ_BENCH_THREADS:-5 10 15 20 25 30 35 40}
    D_CP=60 D_LAT=20 D_STAB=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }') STAB_EVERY=60
    D_EXC=60 N_PING=2000000 N_XADD=500000 N_XADD_BIG=2000
    D_RQ=${RMQ_BENCH_RQ_SECONDS:-25} D_RQ_WARM=${RMQ_BENCH_RQ_WARMUP:-15}
    ;;
  quick)
    D_BASE=5 D_EXTRA=3 D_STEP=${RMQ_BENCH_STEP_SECONDS:-3}
    THREADS=${RMQ_BENCH_THREADS:-5 20 40}
    D_CP=10 D_LAT=4 D_STAB=30 STAB_EVERY=10
    D_EXC=16 N_PING=300000 N_XADD=100000 N_XADD_BIG=200
    D_RQ=${RMQ_BENCH_RQ_SECONDS:-8} D_RQ_WARM=${RMQ_BENCH_RQ_WARMUP:-6}
    ;;
  smoke)
    D_BASE=3 D_EXTRA=0 D_STEP=3 THREADS="5" D_CP=3 D_LAT=3 D_STAB=10 STAB_EVERY=5
    D_EXC=10 N_PING=100000 N_XADD=50000 N_XADD_BIG=100
    D_RQ=5 D_RQ_WARM=2
    ;;
esac
EXTRA_THREADS=${RMQ_BENCH_EXTRA_THREADS:-64}
BK_SYNC_FLUSH=${RMQ_BENCH_SYNC_FLUSH:-ASYNC_FLUSH}
[ "$D_STAB" -ge 10 ] || D_STAB=10

BK_BUILD=${RMQ_BUILD:-$BK_ROOT/build}
[[ $BK_BUILD = /* ]] || BK_BUILD=$PWD/$BK_BUILD
# What the runs need, installed and built as scripts/quickstart.sh does.
"$BK_ROOT/scripts/bootstrap.sh"
"$BK_ROOT/scripts/build.sh" "$BK_BUILD" -- namesrv/mqnamesrv broker/mqbroker tools/mqbench tools/mqadmin
BK_PORT_BASE=${RMQ_BENCH_PORT_BASE:-20000}
bk_init_bins

stamp=$(date +%Y%m%d-%H%M%S)
BK_OUT=${OUT_DIR:-$BK_ROOT/bench-results/$stamp}
mkdir -p "$BK_OUT"
BK_OUT=$(cd "$BK_OUT" && pwd)
BK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rmq-bench.XXXXXX")
trap bk_cleanup EXIT
trap 'bk_log "interrupted"; exit 130' INT TERM

# meta.json: what the report needs to know about the run.
{
  printf '{"timestamp": "%s", "mode": "%s", "stages": "%s", "build": "%s",\n' \
    "$stamp" "$MODE" "$STAGES" "$BK_BUILD"
  printf ' "git": "%s", "host": "%s", "cpus": %s, "mem_kb": %s,\n' \
    "$(git -C "$BK_ROOT" describe --always --dirty 2>/dev/null || echo unknown)" \
    "$(uname -srm)" "$(nproc)" "$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)"
  printf ' "cpu_model": "%s", "command": "%s",\n' \
    "$(awk -F': ' '$1 ~ /^model name/ { print $2; exit }' /proc/cpuinfo | tr -d '"')" \
    "scripts/bench.sh${ARGS:+ $ARGS}"
  printf ' "durations": {"base": %s, "extra": %s, "step": %s, "consumer_path": %s, "latency": %s, "stability": %s, "stability_every": %s, "exception": %s},\n' \
    "$D_BASE" "$D_EXTRA" "$D_STEP" "$D_CP" "$D_LAT" "$D_STAB" "$STAB_EVERY" "$D_EXC"
  printf ' "threads": "%s", "extra_threads": "%s", "port_base": %s, "sync_flush": "%s"}\n' \
    "$THREADS" "$EXTRA_THREADS" "$BK_PORT_BASE" "$BK_SYNC_FLUSH"
} >"$BK_OUT/meta.json"

bk_log "results in $BK_OUT (mode $MODE, stages $STAGES, build $BK_BUILD)"
IFS=, read -r -a stage_list <<<"$STAGES"
for s in "${stage_list[@]}"; do
  "stage$s"
  bk_down
  bk_stage_end
done

/usr/bin/env python3 "$BK_ROOT/scripts/bench/report.py" "$BK_OUT"
bk_log "report: $BK_OUT/report.md"
# stage 9's table on the terminal too
[[ ,$STAGES, != *,9,* ]] || sed -n '/^## Stage 9/,/^## /{/^## [^S]/d; p}' "$BK_OUT/report.md"
