# shellcheck shell=bash
# scripts/bench/lib.sh: what scripts/bench.sh's stages share. Sourced, not run.
#
# Processes: every daemon and benchmark this file starts listens on 127.0.0.1
# only, on ports from BK_PORT_BASE, keeps its files under BK_TMP (a mktemp
# directory) and is recorded in BK_PIDS, so bk_cleanup (the EXIT trap) stops
# exactly what was started, by pid.
#
# Output: every command line that produces a figure is appended to
# $BK_STAGE_DIR/commands.txt (the report prints them); mqbench's standard
# output is stored with a wall-clock time stamp ("EPOCH.SECONDS LINE") on each
# line, so per-second series of different processes can be aligned.
#
# Variables the caller sets: BK_ROOT (checkout), BK_BUILD (meson build dir),
# BK_TMP, BK_OUT (results dir), BK_PORT_BASE.

declare -A BK_PIDS=()   # name -> pid of the daemons up now
declare -A BK_CONF=()   # name -> properties file
BK_NS=''                # name server address once up
BK_STAGE_DIR=''         # where the current stage writes
BK_BROKER_EXTRA=''      # extra broker properties (space-separated key=value) for bk_broker_up

# bk_callgrind_wrapper WRAPPER OUT PROGRAM: writes WRAPPER, an executable
# that runs PROGRAM (with its arguments) under valgrind --tool=callgrind,
# its output in OUT.
bk_callgrind_wrapper() {
  printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s %s "$@"\n' "$2" "$3" >"$1"
  chmod +x "$1"
}

bk_log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
bk_die() {
  bk_log "error: $*"
  exit 1
}

bk_bin() {
  local b
  for b in "$BK_BUILD/$2/$1" "$BK_BUILD/$1"; do
    if [ -x "$b" ]; then
      echo "$b"
      return 0
    fi
  done
  bk_die "$1 not found under $BK_BUILD (set RMQ_BUILD to a meson build directory)"
}

bk_init_bins() {
  MQNAMESRV=$(bk_bin mqnamesrv namesrv)
  MQBROKER=$(bk_bin mqbroker broker)
  MQADMIN=$(bk_bin mqadmin tools)
  MQBENCH=$(bk_bin mqbench tools)
}

# bk_stage_begin N TITLE: makes the stage directory and records the title.
bk_stage_begin() {
  BK_STAGE_DIR=$BK_OUT/stage$1
  mkdir -p "$BK_STAGE_DIR"
  printf '%s\n' "$2" >"$BK_STAGE_DIR/title.txt"
  : >"$BK_STAGE_DIR/commands.txt"
  date +%s >"$BK_STAGE_DIR/started"
  cut -d' ' -f1-3 /proc/loadavg >"$BK_STAGE_DIR/loadavg"
  getconf CLK_TCK >"$BK_STAGE_DIR/clk_tck"   # the unit of bk_cpu_around's ticks
  bk_log "stage $1: $2"
}

# bk_java_ready: true when java and mvn are there (the JVM stages, 8 and 9,
# note java's version); otherwise notes the stage as skipped.
bk_java_ready() {
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    bk_note "skipped" "java or mvn missing"
    return 1
  fi
  bk_note "java" "$(java -version 2>&1 | head -1)"
}

bk_stage_end() {
  date +%s >"$BK_STAGE_DIR/finished"
}

# bk_note KEY VALUE: a fact the report shows (stageN/notes.tsv).
bk_note() {
  printf '%s\t%s\n' "$1" "$2" >>"$BK_STAGE_DIR/notes.tsv"
}

# bk_cmd ARGS...: records the command line (with the build dir shortened).
bk_cmd() {
  local line
  line=$(printf '%q ' "$@")
  line=${line% }
  line=${line//"$BK_BUILD"/\$RMQ_BUILD}
  line=${line//"$BK_TMP"/\$TMP}
  line=${line//"$BK_OUT"/\$OUT}
  printf '%s\n' "$line" >>"$BK_STAGE_DIR/commands.txt"
}

# bk_stamp: copies standard input to standard output with the wall-clock time
# in front of every line.
bk_stamp() {
  local l
  while IFS= read -r l; do
    printf '%s %s\n' "$EPOCHREALTIME" "$l"
  done
}

bk_port_open() {
  # shellcheck disable=SC2016 # $1 expands in the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# bk_free_port FROM: prints the first port >= FROM nothing listens on.
bk_free_port() {
  local p=$1
  while bk_port_open "$p"; do
    p=$((p + 1))
  done
  echo "$p"
}

# bk_wait_file FILE SECONDS
bk_wait_file() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ -f "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# bk_alive NAME: true if the daemon NAME runs.
bk_alive() {
  local pid=${BK_PIDS[$1]:-}
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# bk_daemon NAME BIN CONF ARGS...: starts a daemon with --ready-file, waits
# for it (BK_READY_SECS, default 20 s), records its pid.
bk_daemon() {
  local name=$1 bin=$2 conf=$3 dir=$BK_TMP/run
  shift 3
  mkdir -p "$dir"
  rm -f "$dir/$name.ready"
  bk_cmd "$bin" -c "$conf" "$@" --ready-file "$dir/$name.ready"
  "$bin" -c "$conf" "$@" --ready-file "$dir/$name.ready" >>"$dir/$name.log" 2>&1 &
  BK_PIDS[$name]=$!
  BK_CONF[$name]=$conf
  # out of the job table: no "Killed" notice when stage 6 kills it (bash
  # still reaps it; bk_stop polls with kill -0)
  disown "${BK_PIDS[$name]}"
  if ! bk_wait_file "$dir/$name.ready" "${BK_READY_SECS:-20}" || ! bk_alive "$name"; then
    tail -20 "$dir/$name.log" >&2
    bk_die "$name did not start (log above)"
  fi
}

# bk_wait_port NAME PORT: waits until the daemon NAME listens on PORT (120 s:
# JVMs start slowly on a loaded machine); dies with its log when it exits
# or the time is up.
bk_wait_port() {
  local i
  for ((i = 0; i < 240; i++)); do
    bk_port_open "$2" && return 0
    bk_alive "$1" || break
    sleep 0.5
  done
  tail -20 "$BK_TMP/run/$1.log" >&2
  bk_die "$1 did not open port $2 (log above)"
}

# bk_stop NAME [SIGNAL]: stops one daemon (TERM, then KILL after 15 s).
bk_stop() {
  local name=$1 sig=${2:-TERM} pid=${BK_PIDS[$1]:-} i
  [ -n "$pid" ] || return 0
  kill "-$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    bk_log "$name (pid $pid) ignored SIG$sig for 15 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "BK_PIDS[$name]"
}

# bk_namesrv_up: the name server on BK_PORT_BASE.
bk_namesrv_up() {
  local port=$BK_PORT_BASE conf=$BK_TMP/conf/namesrv.properties
  bk_port_open "$port" && bk_die "port $port is in use (set RMQ_BENCH_PORT_BASE)"
  mkdir -p "$BK_TMP/conf"
  printf 'listenPort=%s\nbindAddress=127.0.0.1\nkvConfigPath=%s\n' "$port" \
    "$BK_TMP/namesrv-kv.json" >"$conf"
  bk_daemon namesrv "$MQNAMESRV" "$conf"
  BK_NS=127.0.0.1:$port
}

# bk_broker_up NAME BROKERNAME ID ROLE FLUSH PORT_OFFSET [MASTER_HA_PORT]:
# one broker from its generated properties (listenPort = base + offset, HA
# port one above); a slave gets haMasterAddress pinned to its master unless
# RMQ_BENCH_PIN_HA=0 (then it learns it from the name server).
bk_broker_up() {
  local name=$1 bname=$2 id=$3 role=$4 flush=$5 off=$6 mha=${7:-}
  local port=$((BK_PORT_BASE + off)) conf=$BK_TMP/conf/$1.properties
  bk_port_open "$port" && bk_die "port $port is in use (set RMQ_BENCH_PORT_BASE)"
  {
    echo "brokerClusterName=BenchCluster"
    echo "brokerName=$bname"
    echo "brokerId=$id"
    echo "brokerRole=$role"
    echo "flushDiskType=$flush"
    echo "listenPort=$port"
    echo "haListenPort=$((port + 1))"
    echo "brokerIP1=127.0.0.1"
    echo "storePathRootDir=$BK_TMP/store/$name"
    echo "mapedFileSizeCommitLog=${RMQ_BENCH_MAPPED_SIZE:-1073741824}"
    echo "maxMessageSize=4194304"
    echo "autoCreateTopicEnable=true"
    [ -z "${BK_BROKER_EXTRA:-}" ] || printf '%s\n' $BK_BROKER_EXTRA
    if [ -n "$mha" ] && [ "${RMQ_BENCH_PIN_HA:-1}" = 1 ]; then
      echo "haMasterAddress=127.0.0.1:$mha"
    fi
  } >"$conf"
  bk_daemon "$name" "$MQBROKER" "$conf" -n "$BK_NS"
}

bk_broker_addr() {
  echo "127.0.0.1:$(awk -F= '$1 == "listenPort" { print $2 }' "${BK_CONF[$1]}")"
}

# bk_topic TOPIC: creates TOPIC (8 queues) on every master and waits until the
# name server routes it.
bk_topic() {
  local i
  bk_cmd "$MQADMIN" updateTopic -n "$BK_NS" -t "$1" -c BenchCluster -r 8 -w 8
  for i in 1 2 3 4 5 6 7 8 9 10; do
    "$MQADMIN" updateTopic -n "$BK_NS" -t "$1" -c BenchCluster -r 8 -w 8 >/dev/null 2>&1 && break
    sleep 1
  done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    "$MQADMIN" topicRoute -n "$BK_NS" -t "$1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  bk_log "topic $1 has no route yet"
}

# bk_single_up ROLE FLUSH: name server and one master broker-a.
bk_single_up() {
  bk_namesrv_up
  bk_broker_up broker-a broker-a 0 "$1" "$2" 11
  sleep 1
}

# bk_cluster_up sync|async [FLUSH]: name server, masters broker-a and broker-b,
# slaves broker-a-s and broker-b-s (what deploy/2m-2s-VARIANT describes: sync is
# SYNC_MASTER + SYNC_FLUSH unless FLUSH says otherwise, async ASYNC_MASTER +
# ASYNC_FLUSH, slaves ASYNC_FLUSH).
bk_cluster_up() {
  local role=ASYNC_MASTER flush=ASYNC_FLUSH
  if [ "$1" = sync ]; then
    role=SYNC_MASTER flush=${2:-SYNC_FLUSH}
  fi
  bk_namesrv_up
  bk_broker_up broker-a broker-a 0 "$role" "$flush" 11
  bk_broker_up broker-b broker-b 0 "$role" "$flush" 31
  bk_broker_up broker-a-s broker-a 1 SLAVE ASYNC_FLUSH 21 $((BK_PORT_BASE + 12))
  bk_broker_up broker-b-s broker-b 1 SLAVE ASYNC_FLUSH 41 $((BK_PORT_BASE + 32))
  sleep 2
}

# bk_down: stops every daemon (brokers first) and deletes the stores.
bk_down() {
  local n
  for n in broker-a-s broker-b-s broker-a broker-b "${!BK_PIDS[@]}"; do
    [ "$n" = namesrv ] || bk_stop "$n"
  done
  bk_stop namesrv
  if [ -n "$BK_STAGE_DIR" ] && [ -d "$BK_TMP/run" ]; then
    mkdir -p "$BK_STAGE_DIR/logs"
    cp "$BK_TMP"/run/*.log "$BK_STAGE_DIR/logs/" 2>/dev/null || true
    rm -f "$BK_TMP"/run/*.log
    mkdir -p "$BK_STAGE_DIR/conf"
    cp "$BK_TMP"/conf/*.properties "$BK_STAGE_DIR/conf/" 2>/dev/null || true
  fi
  rm -rf "$BK_TMP/store" "$BK_TMP/conf"
  BK_NS=''
}

# bk_broker_status NAME OUT: mqadmin brokerStatus of one broker into OUT.
bk_broker_status() {
  "$MQADMIN" brokerStatus -n "$BK_NS" -b "$(bk_broker_addr "$1")" >"$2" 2>&1 || true
}

# bk_status_value FILE KEY: one value of a brokerStatus output.
bk_status_value() {
  awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null
}

# bk_replication_note: notes each master's and slave's commitLogMaxOffset and
# the master's haSlaveCount (is replication running at all?).
bk_replication_note() {
  local tag=$1 n f
  for n in broker-a broker-b broker-a-s broker-b-s; do
    bk_alive "$n" || continue
    f=$BK_STAGE_DIR/status-$tag-$n.txt
    bk_broker_status "$n" "$f"
    bk_note "$tag $n commitLogMaxOffset" "$(bk_status_value "$f" commitLogMaxOffset)"
    case $n in *-s) ;; *) bk_note "$tag $n haSlaveCount" "$(bk_status_value "$f" haSlaveCount)" ;; esac
  done
}

# bk_perf_start PREFIX SECONDS: with RMQ_BENCH_PERF=1 and PREFIX's base name
# in RMQ_BENCH_PERF_RUNS, perf-records broker-a for SECONDS in the background
# (PREFIX.perf.data, summarized by bk_perf_finish into PREFIX.perf.txt).
BK_PERF_PID=''
bk_perf_start() {
  local runs=" ${RMQ_BENCH_PERF_RUNS:-base syncflush sync-s128-w64 async-s128-w64} "
  BK_PERF_PID=''
  [ "${RMQ_BENCH_PERF:-0}" = 1 ] && bk_alive broker-a || return 0
  [[ $runs == *" $(basename "$1") "* ]] || return 0
  command -v perf >/dev/null || return 0
  bk_cmd perf record -F 499 -g -p "${BK_PIDS[broker-a]}" -o "$1.perf.data" -- sleep "$2"
  perf record -F 499 -g -p "${BK_PIDS[broker-a]}" -o "$1.perf.data" -- sleep "$2" \
    >/dev/null 2>&1 &
  BK_PERF_PID=$!
}

bk_perf_finish() {
  [ -n "$BK_PERF_PID" ] || return 0
  wait "$BK_PERF_PID" 2>/dev/null || true
  BK_PERF_PID=''
  perf report -i "$1.perf.data" --stdio --no-children --sort symbol 2>/dev/null |
    grep -E '^ +[0-9.]+%' | sed 's/[ -]*$//' | head -30 >"$1.perf.txt" || true
  rm -f "$1.perf.data"
}

# bk_producer PREFIX SECONDS ARGS...: mqbench producer for SECONDS (-d) with
# ARGS; PREFIX.out (stamped lines), PREFIX.json, PREFIX.err. Never fails the
# script: its exit status goes to PREFIX.rc.
bk_producer() {
  local prefix=$1 secs=$2 rc
  shift 2
  bk_cmd "$MQBENCH" producer -n "$BK_NS" -d "$secs" "$@" --json "$prefix.json"
  bk_perf_start "$prefix" "$secs"
  set +e
  timeout --kill-after=10 $((secs + 60)) "$MQBENCH" producer -n "$BK_NS" -d "$secs" "$@" \
    --json "$prefix.json" 2>"$prefix.err" | bk_stamp >"$prefix.out"
  rc=${PIPESTATUS[0]}
  set -e
  bk_perf_finish "$prefix"
  echo "$rc" >"$prefix.rc"
  [ "$rc" = 0 ] || bk_log "producer $prefix exited $rc: $(tail -2 "$prefix.err" | tr '\n' ' ')"
}

# bk_producer_bg PREFIX SECONDS ARGS...: the same in the background; sets
# BK_BG_PID (the pipeline's subshell; wait for it).
bk_producer_bg() {
  local prefix=$1 secs=$2
  shift 2
  bk_cmd "$MQBENCH" producer -n "$BK_NS" -d "$secs" "$@" --json "$prefix.json"
  (
    set +e
    timeout --kill-after=10 $((secs + 60)) "$MQBENCH" producer -n "$BK_NS" -d "$secs" "$@" \
      --json "$prefix.json" 2>"$prefix.err" | bk_stamp >"$prefix.out"
    echo "${PIPESTATUS[0]}" >"$prefix.rc"
  ) &
  BK_BG_PID=$!
}

# bk_consumer_bg PREFIX SECONDS ARGS...: mqbench consumer in the background for
# at most SECONDS; sets BK_CONS_PID (mqbench itself, to signal) and
# BK_BG_PID (the pipeline, to wait for).
bk_consumer_bg() {
  local prefix=$1 secs=$2
  shift 2
  bk_cmd "$MQBENCH" consumer -n "$BK_NS" -d "$secs" "$@" --json "$prefix.json"
  rm -f "$prefix.pid"
  (
    set +e
    { timeout --kill-after=10 $((secs + 30)) "$MQBENCH" consumer -n "$BK_NS" -d "$secs" "$@" \
      --json "$prefix.json" 2>"$prefix.err" & echo $! >"$prefix.pid"; wait $!; } | bk_stamp >"$prefix.out"
    echo "${PIPESTATUS[0]}" >"$prefix.rc"
  ) &
  BK_BG_PID=$!
  bk_wait_file "$prefix.pid" 5 || true
  BK_CONS_PID=$(cat "$prefix.pid" 2>/dev/null || true)
}

# bk_consumed PREFIX: messages consumed so far, from the per-second lines:
# each line's TPS times the time since the previous line (mqbench divides by
# the window's real length, which is a little over a second; 1 s when the
# previous line's stamp is no guide: a header flushed with the first line).
bk_consumed() {
  awk '$2 == "TPS:" { dt = prev ? $1 - prev : 1; s += $3 * (dt >= 0.9 && dt <= 3 ? dt : 1) }
       { prev = $1 }
       END { printf "%d\n", s + 0.5 }' "$1.out" 2>/dev/null || echo 0
}

# bk_consume_until PREFIX COUNT SECONDS: waits until the running consumer
# (bk_consumer_bg PREFIX) has consumed COUNT messages or has been idle 3 s
# after consuming at least 98% of them, or SECONDS passed; returns 0 if COUNT
# was reached. Does not stop the consumer.
bk_consume_until() {
  local prefix=$1 want=$2 end=$((SECONDS + $3)) got idle=0 last=-1
  while [ $SECONDS -lt $end ] && kill -0 "$BK_BG_PID" 2>/dev/null; do
    got=$(bk_consumed "$prefix")
    [ "$got" -ge "$want" ] && return 0
    if [ "$got" = "$last" ]; then
      idle=$((idle + 1))
    else
      idle=0
    fi
    last=$got
    [ $idle -ge 6 ] && [ $((got * 100)) -ge $((want * 98)) ] && return 0
    sleep 0.5
  done
  return 1
}

# bk_consumer_stop: SIGTERM to the consumer (it prints its totals) and wait.
bk_consumer_stop() {
  sleep 1.5   # let the last per-second line and offsets out
  [ -z "${BK_CONS_PID:-}" ] || kill -TERM "$BK_CONS_PID" 2>/dev/null || true
  wait "$BK_BG_PID" 2>/dev/null || true
  BK_CONS_PID=''
}

# bk_json_num FILE KEY: a number from mqbench's one-line JSON.
bk_json_num() {
  sed -n "s/.*\"$2\": \\([0-9.]*\\).*/\\1/p" "$1" 2>/dev/null | head -1
}

# bk_pid_ticks PID: utime+stime of the process (every thread), clock ticks
# (CLK_TCK); the command name (field 2) may hold spaces: count from its ')'.
bk_pid_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# bk_cpu_ticks NAMES...: "name ticks" (bk_pid_ticks) of each daemon up.
bk_cpu_ticks() {
  local n
  for n in "$@"; do
    ! bk_alive "$n" || printf '%s %s\n' "$n" "$(bk_pid_ticks "${BK_PIDS[$n]}")"
  done
}

# bk_cpu_around PREFIX "NAMES" COMMAND...: runs COMMAND and writes
# PREFIX.cpu, "name before after" (clock ticks) of each daemon in NAMES up at
# both ends; report.py's broker_cpu divides it by the messages acknowledged.
bk_cpu_around() {
  local prefix=$1 names
  read -r -a names <<<"$2"
  shift 2
  bk_cpu_ticks "${names[@]}" >"$prefix.cpu0"
  "$@"
  bk_cpu_ticks "${names[@]}" |
    awk 'NR == FNR { b[$1] = $2; next } $1 in b { print $1, b[$1], $2 }' "$prefix.cpu0" - >"$prefix.cpu"
  rm -f "$prefix.cpu0"
}

# bk_rss_sample FILE ELAPSED: appends "elapsed name pid VmRSS RssAnon RssFile"
# (kB) for every daemon up.
bk_rss_sample() {
  local n pid
  for n in "${!BK_PIDS[@]}"; do
    pid=${BK_PIDS[$n]}
    [ -r "/proc/$pid/status" ] || continue
    awk -v e="$2" -v n="$n" -v p="$pid" '
      $1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 } $1 == "RssFile:" { f = $2 }
      END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", e, n, p, r, a, f }' "/proc/$pid/status" >>"$1"
  done
}

# bk_cleanup: the EXIT trap: stops whatever still runs, removes BK_TMP.
bk_cleanup() {
  local n
  trap - EXIT INT TERM
  for n in "${!BK_PIDS[@]}"; do
    kill -KILL "${BK_PIDS[$n]}" 2>/dev/null || true
  done
  [ -z "${BK_CONS_PID:-}" ] || kill -TERM "$BK_CONS_PID" 2>/dev/null || true
  for n in "${BK_EXTRA_PIDS[@]}"; do
    kill -KILL "$n" 2>/dev/null || true
  done
  # background benchmark pipelines: their timeout processes forward TERM
  for n in $(jobs -p); do
    pkill -TERM -P "$n" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  [ -z "${BK_TMP:-}" ] || rm -rf "$BK_TMP"
}
BK_EXTRA_PIDS=()
