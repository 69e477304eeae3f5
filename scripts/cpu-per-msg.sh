#!/bin/bash
# scripts/cpu-per-msg.sh: the broker's cost per acknowledged message (issue 19).
# Starts a name server and one master broker (ASYNC_MASTER) from a build dir on
# loopback, drives N messages with mqbench, and prints the broker's
# CPU-microseconds per message: utime+stime of the broker process (every
# thread, /proc/PID/stat) before and after the run, divided by the messages
# mqbench had acknowledged.
#
#   scripts/cpu-per-msg.sh [--build DIR] [--base DIR] [-n N] [-w THREADS] [-s SIZE]
#                          [-b BATCH] [--async] [--sync-flush] [--runs R] [--callgrind]
#                          [--client mqbench|java|grpc|both|all] [--binary] [--keep-cg DIR]
#
#   --build DIR   build directory measured (default build/)
#   --base DIR    a second build measured the same way, run for run alternating
#                 with the measured one (old vs new in one run)
#   -n N          messages per run (default 300000; 20000 with --callgrind)
#   -w, -s, -b    mqbench's threads (64), body size (128), batch (1)
#   --async       mqbench --async (4 threads unless -w is given; not with --callgrind)
#   --sync-flush  the broker flushes synchronously (default ASYNC_FLUSH)
#   --runs R      runs per build (default 3); the medians are printed too
#                 (without --callgrind: CPU-us per message and mqbench's TPS)
#   --callgrind   the broker runs under valgrind --tool=callgrind and the tool
#                 prints instructions (Ir) per message: each run drives N and
#                 then, on a fresh broker, N/10 messages, and divides the
#                 difference of the totals by the difference of the messages
#                 acknowledged, so start-up, shutdown and per-connection work
#                 cancel out
#   --syscalls    also prints the broker's syscalls, context switches and
#                 wake-ups per message of each run (perf stat on the broker's
#                 threads during the measured drive: read/readv, write/writev,
#                 epoll_wait, epoll_ctl, ioctl, futex, every syscall; needs
#                 perf and tracepoint access)
#   --annotate    with --callgrind: also prints callgrind_annotate's top
#                 functions (self Ir, whole process) of each N-message run
#   --keep DIR    with --callgrind: keeps each broker's callgrind.out in DIR
#                 as B<k>-<client>-run<i>-n<count>.out (B0 the base when given), so
#                 per-function costs per message can be compared afterwards
#                 (callgrind_annotate of the N and the N/10 run)
#   --client C    who sends: mqbench (the native protocol, the default), java
#                 (the unmodified RocketMQ 4.9 Java producer over remoting:
#                 tests/java BenchSend, W threads of sync sends of S bytes;
#                 needs java, mvn and tests/java's pom in ~/.m2), grpc (the
#                 unmodified RocketMQ 5 gRPC Java client, rocketmq-client-java
#                 of tests/java's grpc5 profile: GrpcBenchSend, W threads of
#                 sync sends of S bytes through the name server's endpoint),
#                 both (mqbench and java) or all (mqbench, java and grpc): the
#                 clients run by run alternating, and each one's ratio to
#                 native (mqbench) of the medians printed
#   --binary      java's headers in ROCKETMQ binary encoding
#                 (-Drocketmq.serialize.type=ROCKETMQ) instead of JSON
#
# Environment: RMQ_CPM_PORT_BASE (first port, default 21000), TMPDIR.
set -euo pipefail

BK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=SCRIPTDIR/bench/lib.sh
. "$BK_ROOT/scripts/bench/lib.sh"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 2
}

BUILD=$BK_ROOT/build BASE='' N='' W='' S=128 B=1 ASYNC=0 FLUSH=ASYNC_FLUSH RUNS=3 CG=0 ANNOTATE=0 KEEP=''
CLIENTS=mqbench JOPTS='' SYSC=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    -n) N=$2; shift 2 ;;
    -w) W=$2; shift 2 ;;
    -s) S=$2; shift 2 ;;
    -b) B=$2; shift 2 ;;
    --async) ASYNC=1; shift ;;
    --sync-flush) FLUSH=SYNC_FLUSH; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    --callgrind) CG=1; shift ;;
    --annotate) ANNOTATE=1; shift ;;
    --keep) KEEP=$2; shift 2 ;;
    --syscalls) SYSC=1; shift ;;
    --client)
      case $2 in
        mqbench | java | grpc) CLIENTS=$2 ;;
        both) CLIENTS='mqbench java' ;;
        all) CLIENTS='mqbench java grpc' ;;
        *) echo "cpu-per-msg.sh: --client takes mqbench, java, grpc, both or all" >&2; usage ;;
      esac
      shift 2 ;;
    --binary) JOPTS=-Drocketmq.serialize.type=ROCKETMQ; shift ;;
    -h | --help) usage ;;
    *) echo "cpu-per-msg.sh: unknown argument $1" >&2; usage ;;
  esac
done
[ -n "$N" ] || { N=300000; [ $CG = 0 ] || N=20000; }
[ -n "$W" ] || { W=64; [ $ASYNC = 0 ] || W=4; }
for v in "$N" "$W" "$S" "$B" "$RUNS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "cpu-per-msg.sh: \"$v\" must be a positive integer" >&2; exit 2; }
done
if [ $CG = 1 ] && [ $ASYNC = 1 ]; then
  # thousands of sends in flight against a broker slowed 50x: most time out
  echo "cpu-per-msg.sh: --callgrind with --async: async sends time out against a broker under valgrind; measure --async without --callgrind" >&2
  exit 2
fi
if [ -n "$KEEP" ] && { [ $CG = 0 ] || ! mkdir -p "$KEEP"; }; then
  echo "cpu-per-msg.sh: --keep needs --callgrind and a directory it can create" >&2
  exit 2
fi
if [ $CG = 1 ] && ! command -v valgrind >/dev/null; then
  echo "cpu-per-msg.sh: --callgrind needs valgrind (apt-get install valgrind)" >&2
  exit 2
fi

if [ "$CLIENTS" != mqbench ] && { [ $ASYNC = 1 ] || [ "$B" != 1 ]; }; then
  echo "cpu-per-msg.sh: the java client sends single sync messages (no --async, no -b)" >&2
  exit 2
fi

BK_PORT_BASE=$(bk_free_port "${RMQ_CPM_PORT_BASE:-21000}")
BK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rmq-cpm.XXXXXX")
BK_OUT=$BK_TMP/out
BK_STAGE_DIR=$BK_OUT/run
mkdir -p "$BK_STAGE_DIR"
trap bk_cleanup EXIT
trap 'bk_log "interrupted"; exit 130' INT TERM
TCK=$(getconf CLK_TCK)
CLIENT=mqbench   # the client of the current run

# java_build PROFILE: compiles tests/java (BenchSend; GrpcBenchSend with
# PROFILE grpc5) offline into $BK_TMP/java-PROFILE; prints its class path.
java_build() {
  local d=$BK_TMP/java-$1 mvn=(mvn -q -B "-P$1")
  [ "$1" != default ] || mvn=(mvn -q -B)
  mkdir -p "$d"
  cp -r "$BK_ROOT/tests/java/pom.xml" "$BK_ROOT/tests/java/src" "$d/"
  (cd "$d" && "${mvn[@]}" -o package dependency:build-classpath -Dmdep.outputFile=cp.txt >"$d/mvn.log" 2>&1) ||
    (cd "$d" && "${mvn[@]}" dependency:go-offline >>"$d/mvn.log" 2>&1 &&
      "${mvn[@]}" -o package dependency:build-classpath -Dmdep.outputFile=cp.txt >>"$d/mvn.log" 2>&1) ||
    { tail -20 "$d/mvn.log" >&2; bk_die "tests/java does not build (mvn, profile $1)"; }
  echo "$(cat "$d/cp.txt"):$d/target/classes"
}
JCP='' JCP5=''
[[ " $CLIENTS " != *" java "* ]] || JCP=$(java_build default)
[[ " $CLIENTS " != *" grpc "* ]] || JCP5=$(java_build grpc5)
[ $CG = 0 ] || BK_READY_SECS=120   # valgrind starts slowly

# broker_up BUILD: name server and broker-a from BUILD (under callgrind with
# --callgrind, writing $BK_TMP/callgrind.out); topic CpuBench with 8 queues.
broker_up() {
  BK_BUILD=$(cd "$1" && pwd)
  bk_init_bins
  if [ $CG = 1 ]; then
    local real=$MQBROKER
    MQBROKER=$BK_TMP/mqbroker-callgrind
    bk_callgrind_wrapper "$MQBROKER" "$BK_TMP/callgrind.out" "$real"
    bk_cmd valgrind --tool=callgrind --callgrind-out-file="$BK_TMP/callgrind.out" "$real"
    rm -f "$BK_TMP/callgrind.out"
  fi
  bk_namesrv_up
  RMQ_BENCH_MAPPED_SIZE=$((256 * 1024 * 1024)) bk_broker_up broker-a broker-a 0 ASYNC_MASTER "$FLUSH" 11
  bk_topic CpuBench
}

# drive_java CLASS_PATH_VAR CLASS COUNT: the Java sender CLASS (on the class
# path named by CLASS_PATH_VAR) sends COUNT messages; prints how many were
# acknowledged.
drive_java() {
  local cp=${!1}
  # shellcheck disable=SC2086
  bk_cmd java $JOPTS -cp "'\$$1'" "rmqtest.$2" "$BK_NS" CpuBench "$W" "$3" "$S"
  # shellcheck disable=SC2086
  timeout --kill-after=10 900 java $JOPTS -cp "$cp" "rmqtest.$2" "$BK_NS" CpuBench "$W" "$3" "$S" \
    >"$BK_TMP/drive-java.out" 2>&1 || bk_log "java $2 exited $?: $(grep -m2 -E 'Exception|Error' "$BK_TMP/drive-java.out" | tr '\n' ' ')"
  sed -n 's/^ACKED //p' "$BK_TMP/drive-java.out"
}

# drive COUNT: the run's client sends COUNT messages; prints how many were acknowledged.
drive() {
  case $CLIENT in
    java) drive_java JCP BenchSend "$1"; return ;;
    grpc) drive_java JCP5 GrpcBenchSend "$1"; return ;;
  esac
  local args=(-t CpuBench -w "$W" -s "$S" -q "$1")
  [ "$B" = 1 ] || args+=(-b "$B")
  [ $ASYNC = 0 ] || args+=(--async)
  bk_producer "$BK_TMP/drive" 600 "${args[@]}"
  bk_json_num "$BK_TMP/drive.json" total
}

# The per-message counters of --syscalls: perf event, label.
SYSC_EVENTS=(raw_syscalls:sys_enter:all syscalls:sys_enter_read:read syscalls:sys_enter_readv:readv
  syscalls:sys_enter_write:write syscalls:sys_enter_writev:writev
  syscalls:sys_enter_epoll_wait:epoll_wait syscalls:sys_enter_epoll_ctl:epoll_ctl
  syscalls:sys_enter_ioctl:ioctl syscalls:sys_enter_futex:futex context-switches:cs
  sched:sched_wakeup:wakeups)

# sysc_start PID: perf stat counts SYSC_EVENTS on PID's threads in the
# background (SYSC_PID) into $BK_TMP/sysc.csv.
sysc_start() {
  local e=() ev
  for ev in "${SYSC_EVENTS[@]}"; do e+=(-e "${ev%:*}"); done
  perf stat -x, "${e[@]}" -p "$1" -o "$BK_TMP/sysc.csv" 2>/dev/null &
  SYSC_PID=$!
  sleep 0.3
}

# sysc_finish ACKED: stops perf stat; prints each counter per message.
sysc_finish() {
  kill -INT "$SYSC_PID" 2>/dev/null || true
  wait "$SYSC_PID" 2>/dev/null || true
  local ev line=''
  for ev in "${SYSC_EVENTS[@]}"; do
    line+=$(awk -F, -v e="${ev%:*}" -v l="${ev##*:}" -v n="$1" \
      '$3 == e && n > 0 { printf " %s %.2f", l, $1 / n }' "$BK_TMP/sysc.csv")
  done
  echo "  per message:$line" >&2
}

# cpu_run BUILD: one measured run; prints "us_per_msg acked tps" (tps:
# mqbench's send rate of the measured run).
cpu_run() {
  local pid t0 t1 acked tps
  broker_up "$1"
  pid=${BK_PIDS[broker-a]}
  drive 2000 >/dev/null   # warm-up: routes, connections, first pages of the store
  [ $SYSC = 0 ] || sysc_start "$pid"
  t0=$(bk_pid_ticks "$pid")
  acked=$(drive "$N")
  t1=$(bk_pid_ticks "$pid")
  [ $SYSC = 0 ] || sysc_finish "${acked:-0}"
  tps=0
  [ "$CLIENT" != mqbench ] || tps=$(bk_json_num "$BK_TMP/drive.json" tps)
  bk_down
  awk -v d=$((t1 - t0)) -v t="$TCK" -v n="${acked:-0}" -v tps="${tps:-0}" \
    'BEGIN { if (n > 0) printf "%.2f %d %d\n", d * 1e6 / t / n, n, tps; else print "nan 0 0" }'
}

# cg_total COUNT BUILD: "Ir acked": total Ir of a broker driven with COUNT
# messages and how many of them were acknowledged (with --keep its
# callgrind.out kept, named by measure_all's build index k and run i).
cg_total() {
  local acked
  broker_up "$2"
  acked=$(drive "$1")
  bk_down
  [ -z "$KEEP" ] || cp "$BK_TMP/callgrind.out" "$KEEP/B$k-$CLIENT-run$i-n$1.out"
  [ "${acked:-0}" = "$1" ] || bk_log "callgrind run: ${acked:-0} of $1 messages acknowledged (sends timed out under valgrind)"
  if [ $ANNOTATE = 1 ] && [ "$1" = "$N" ]; then
    callgrind_annotate "$BK_TMP/callgrind.out" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | head -25 >&2 || true
  fi
  printf '%s %s\n' "$(awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$BK_TMP/callgrind.out")" \
    "${acked:-0}"
}

# cg_run BUILD: prints "Ir_per_msg ACKED": the difference of the two runs'
# totals over the difference of their acknowledged messages.
cg_run() {
  local big small
  big=$(cg_total "$N" "$1")
  small=$(cg_total $((N / 10)) "$1")
  echo "$big $small" | awk '$2 > $4 { printf "%.0f %d\n", ($1 - $3) / ($2 - $4), $2; next } { print "nan 0" }'
}

median() { sort -g | awk 'NF { v[++n] = $1 } END { print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }

# measure_all: RUNS runs of each build and client, alternating base and
# build (and native and remoting) run by run, so a slow spell of the machine
# hits all of them; then each one's medians, and with --client both the
# remoting/native ratio of each build's medians.
measure_all() {
  local builds=() labels=() i k c r key
  [ -z "$BASE" ] || { builds+=("$BASE"); labels+=("base ($BASE)"); }
  builds+=("$BUILD"); labels+=("build ($BUILD)")
  local -A vals=() tpss=() med=()
  for ((i = 1; i <= RUNS; i++)); do
    for k in "${!builds[@]}"; do
      for c in $CLIENTS; do
        CLIENT=$c
        key="$k $c"
        if [ $CG = 1 ]; then
          r=$(cg_run "${builds[$k]}")
          printf '%s, %s, run %d: %s instructions (Ir) per message (%s acknowledged in the N run)\n' \
            "${labels[$k]}" "$c" "$i" "${r%% *}" "${r#* }"
        else
          r=$(cpu_run "${builds[$k]}")
          read -r us acked tps <<<"$r"
          printf '%s, %s, run %d: %s broker CPU-us per message, %s TPS (%s acknowledged)\n' "${labels[$k]}" "$c" \
            "$i" "$us" "$tps" "$acked"
          tpss[$key]+="$tps "
        fi
        vals[$key]+="${r%% *} "
      done
    done
  done
  local unit=CPU-us/msg
  [ $CG = 0 ] || unit=Ir/msg
  for k in "${!builds[@]}"; do
    for c in $CLIENTS; do
      key="$k $c"
      med[$key]=$(tr ' ' '\n' <<<"${vals[$key]}" | median)
      if [ $CG = 1 ] || [ "$c" != mqbench ]; then
        printf '%s, %s, median: %s %s\n' "${labels[$k]}" "$c" "${med[$key]}" "$unit"
      else
        printf '%s, %s, median: %s %s, %s TPS\n' "${labels[$k]}" "$c" "${med[$key]}" "$unit" \
          "$(tr ' ' '\n' <<<"${tpss[$key]}" | median)"
      fi
    done
    [[ " $CLIENTS " == *" mqbench "* ]] || continue
    for c in $CLIENTS; do
      [ "$c" != mqbench ] || continue
      awk -v l="${labels[$k]}" -v c="$c" -v j="${med[$k $c]}" -v n="${med[$k mqbench]}" -v u="$unit" \
        'BEGIN { if (n > 0) printf "%s: %s/native %s ratio %.2f\n", l, (c == "java" ? "remoting" : c), u, j / n }'
    done
  done
}

desc="-w $W -s $S"
[ "$B" = 1 ] || desc+=" -b $B"
[ $ASYNC = 0 ] || desc+=" --async"
bk_log "clients: $CLIENTS${JOPTS:+ ($JOPTS)}; $desc, $N messages, $FLUSH, $RUNS run(s) per build$([ $CG = 1 ] && echo ', callgrind')"
measure_all
echo "commands (\$TMP is a mktemp directory, \$RMQ_BUILD the build measured;" \
  "with --callgrind \$TMP/mqbroker-callgrind execs the valgrind line):"
sort -u "$BK_STAGE_DIR/commands.txt" | sed 's/^/  /'
