# shellcheck shell=bash disable=SC2153 # THREADS etc. are set by bench.sh
# scripts/bench/stages.sh: stages 1 to 7 of scripts/bench.sh (8 is in
# rocketmq.sh). Sourced, not run; uses scripts/bench/lib.sh and the durations
# bench.sh sets (D_*, N_*, THREADS, EXTRA_THREADS, MODE). Each stage writes
# raw outputs to $BK_OUT/stageN/; scripts/bench/report.py turns them into tables.

# ---- 1: base test --------------------------------------------------------------

stage1() {
  local d
  bk_stage_begin 1 "Base test: one master (ASYNC_MASTER, ASYNC_FLUSH), 64 threads, 128 B"
  d=$BK_STAGE_DIR
  bk_single_up ASYNC_MASTER ASYNC_FLUSH
  bk_topic BenchBase
  bk_cpu_around "$d/base" broker-a bk_producer "$d/base" "$D_BASE" -t BenchBase -w 64 -s 128
  local acked
  acked=$(bk_json_num "$d/base.json" total)
  bk_consumer_bg "$d/drain" $((D_BASE * 4 + 30)) -t BenchBase -g bench_drain -f first
  bk_consume_until "$d/drain" "${acked:-0}" $((D_BASE * 4 + 20)) || bk_log "drain: not everything consumed"
  bk_consumer_stop
  [ "$MODE" != smoke ] || return 0

  bk_producer "$d/async" "$D_EXTRA" -t BenchBase -w 64 -s 128 --async
  bk_producer "$d/async-w4" "$D_EXTRA" -t BenchBase -w 4 -s 128 --async
  bk_producer "$d/autobatch" "$D_EXTRA" -t BenchBase -w 64 -s 128 --async --auto-batch 32
  bk_cpu_around "$d/batch" broker-a bk_producer "$d/batch" "$D_EXTRA" -t BenchBase -w 64 -s 128 -b 32
  bk_down
  bk_single_up ASYNC_MASTER SYNC_FLUSH
  bk_topic BenchBase
  bk_producer "$d/syncflush" "$D_EXTRA" -t BenchBase -w 64 -s 128
  bk_down
  # the same with transientStorePoolEnable (appends buffered, pwrite + fdatasync)
  BK_BROKER_EXTRA="transientStorePoolEnable=true"
  bk_single_up ASYNC_MASTER SYNC_FLUSH
  bk_topic BenchBase
  bk_producer "$d/syncflush-pool" "$D_EXTRA" -t BenchBase -w 64 -s 128
  bk_down
  BK_BROKER_EXTRA=
  fdatasync_rate "$d/fdatasync" "$D_EXTRA"
}

# fdatasync_rate PREFIX SECONDS: this disk's single-writer fdatasync rate
# (4 KiB writes, each followed by fdatasync) with fio, or with python3 when
# fio is missing and cannot be installed or does not run; PREFIX.fio.json or
# PREFIX.json.
fdatasync_rate() {
  local prefix=$1 secs=$2 f=$BK_TMP/fdatasync.dat
  ensure_pkg fio fio || true
  if command -v fio >/dev/null; then
    bk_cmd fio --name=fdatasync --filename="$f" --rw=write --bs=4k --size=64m --fdatasync=1 \
      --runtime="$secs" --time_based --output-format=json
    timeout $((secs + 60)) fio --name=fdatasync --filename="$f" --rw=write --bs=4k --size=64m \
      --fdatasync=1 --runtime="$secs" --time_based --output-format=json >"$prefix.fio.json" 2>&1 || true
  fi
  # fio missing, or installed but not running (e.g. a library missing): python3
  if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))["jobs"]' "$prefix.fio.json" 2>/dev/null; then
    rm -f "$prefix.fio.json"
    bk_cmd python3 "$BK_ROOT/scripts/bench/fdatasync.py" "$f" "$secs"
    python3 "$BK_ROOT/scripts/bench/fdatasync.py" "$f" "$secs" >"$prefix.json" || true
  fi
  rm -f "$f"
}

# ensure_pkg COMMAND PACKAGES...: apt-get installs PACKAGES if COMMAND is
# missing (once; RMQ_BENCH_NO_INSTALL=1 skips it).
ensure_pkg() {
  local c=$1
  shift
  command -v "$c" >/dev/null && return 0
  [ "${RMQ_BENCH_NO_INSTALL:-0}" != 1 ] || return 1
  command -v apt-get >/dev/null || return 1
  bk_log "installing $* (apt-get)"
  if [ "$(id -u)" = 0 ]; then
    { apt-get install -y -q "$@" || { apt-get update -q && apt-get install -y -q "$@"; }; } \
      >"$BK_TMP/apt.log" 2>&1 || true
  else
    { sudo -n apt-get install -y -q "$@" || { sudo -n apt-get update -q && sudo -n apt-get install -y -q "$@"; }; } \
      >"$BK_TMP/apt.log" 2>&1 || true
  fi
  command -v "$c" >/dev/null
}

# ---- 2: capacity ---------------------------------------------------------------

stage2() {
  local d v size w
  bk_stage_begin 2 "Capacity: 2m-2s cluster, SYNC and ASYNC, thread gradient"
  d=$BK_STAGE_DIR
  for v in sync async; do
    bk_cluster_up "$v" "$BK_SYNC_FLUSH"
    bk_topic BenchCap
    for size in 128 1024; do
      for w in $THREADS; do
        bk_producer "$d/$v-s$size-w$w" "$D_STEP" -t BenchCap -w "$w" -s "$size"
      done
      if [ "$size" = 128 ]; then
        for w in $EXTRA_THREADS; do
          bk_producer "$d/$v-s$size-w$w" "$D_STEP" -t BenchCap -w "$w" -s "$size"
        done
      fi
    done
    bk_producer "$d/$v-s524288-w5" "$D_STEP" -t BenchCap -w 5 -s 524288
    sleep 1
    bk_replication_note "$v"
    bk_down
  done
}

# ---- 3: consumer path ----------------------------------------------------------

stage3() {
  local d threads=${RMQ_BENCH_CP_THREADS:-32} acked ppid
  bk_stage_begin 3 "Consumer path: one master, send ($threads threads, 128 B) and consume at once"
  d=$BK_STAGE_DIR
  bk_single_up ASYNC_MASTER ASYNC_FLUSH
  bk_topic BenchCP
  bk_consumer_bg "$d/consumer" $((D_CP + 90)) -t BenchCP -g bench_cp -f first
  local cons_bg=$BK_BG_PID cons_pid=$BK_CONS_PID
  sleep 2
  bk_producer_bg "$d/producer" "$D_CP" -t BenchCP -w "$threads" -s 128
  ppid=$BK_BG_PID
  bk_cmd "$MQADMIN" consumerProgress -n "$BK_NS" -g bench_cp -t BenchCP
  while kill -0 "$ppid" 2>/dev/null; do
    printf '%s\t%s\n' "$EPOCHREALTIME" \
      "$("$MQADMIN" consumerProgress -n "$BK_NS" -g bench_cp -t BenchCP 2>/dev/null |
        awk '/^Diff Total:/ { print $3 }')" >>"$d/backlog.tsv"
    sleep 1
  done
  wait "$ppid" || true
  acked=$(bk_json_num "$d/producer.json" total)
  BK_BG_PID=$cons_bg BK_CONS_PID=$cons_pid
  bk_consume_until "$d/consumer" "${acked:-0}" 60 || bk_log "consumer path: backlog left"
  bk_consumer_stop
  stage3_rated "$d" "$threads"
}

# ---- 4: latency ----------------------------------------------------------------

stage4() {
  local d w
  bk_stage_begin 4 "Latency: send percentiles at 64 and 256 threads, one master, 128 B"
  d=$BK_STAGE_DIR
  bk_single_up ASYNC_MASTER ASYNC_FLUSH
  bk_topic BenchLat
  for w in 64 256; do
    bk_producer "$d/w$w" "$D_LAT" -t BenchLat -w "$w" -s 128
  done
}

# ---- 5: stability --------------------------------------------------------------

stage5() {
  local d ppid start next acked
  bk_stage_begin 5 "Stability: 2m-2s ASYNC cluster, 64 threads, 128 B, send and consume for $((D_STAB / 60)) min $((D_STAB % 60)) s"
  d=$BK_STAGE_DIR
  bk_cluster_up async
  bk_topic BenchStab
  bk_consumer_bg "$d/consumer" $((D_STAB + 120)) -t BenchStab -g bench_stab -f first
  local cons_bg=$BK_BG_PID cons_pid=$BK_CONS_PID
  sleep 2
  start=$SECONDS
  bk_rss_sample "$d/rss.tsv" 0
  bk_producer_bg "$d/producer" "$D_STAB" -t BenchStab -w 64 -s 128
  ppid=$BK_BG_PID
  next=$STAB_EVERY
  while kill -0 "$ppid" 2>/dev/null; do
    if [ $((SECONDS - start)) -ge "$next" ]; then
      bk_rss_sample "$d/rss.tsv" "$next"
      next=$((next + STAB_EVERY))
    fi
    sleep 0.5
  done
  wait "$ppid" || true
  bk_rss_sample "$d/rss.tsv" $((SECONDS - start))
  acked=$(bk_json_num "$d/producer.json" total)
  BK_BG_PID=$cons_bg BK_CONS_PID=$cons_pid
  bk_consume_until "$d/consumer" "${acked:-0}" 60 || bk_log "stability: backlog left"
  bk_consumer_stop
  bk_replication_note end
}

# ---- 6: exception --------------------------------------------------------------

stage6() {
  local d ppid acked half
  bk_stage_begin 6 "Exception: 2m-2s SYNC cluster, 20 threads, 128 B, kill -9 broker-a half-way"
  d=$BK_STAGE_DIR
  bk_cluster_up sync
  bk_topic BenchExc
  local ids=0 usage
  usage=$("$MQBENCH" -h 2>&1 || true)       # usage exits 2
  if grep -q -- '--ids-file' <<<"$usage"; then
    ids=1
  fi
  bk_note "mqbench --ids-file" "$([ $ids = 1 ] && echo available || echo missing)"
  local cons_ids=() prod_ids=()
  if [ $ids = 1 ]; then
    cons_ids=(--ids-file "$d/consumed.ids")
    prod_ids=(--ids-file "$d/acked.ids")
  fi
  bk_consumer_bg "$d/consumer" $((D_EXC + 180)) -t BenchExc -g bench_exc -f first "${cons_ids[@]}"
  local cons_bg=$BK_BG_PID cons_pid=$BK_CONS_PID
  sleep 2
  bk_producer_bg "$d/producer" "$D_EXC" -t BenchExc -w 20 -s 128 "${prod_ids[@]}"
  ppid=$BK_BG_PID
  half=$((D_EXC / 2))
  sleep "$half"
  bk_replication_note before-kill
  bk_note "kill time" "$EPOCHREALTIME"
  bk_cmd kill -9 "${BK_PIDS[broker-a]}"
  bk_stop broker-a KILL
  bk_log "killed broker-a (kill -9) at ${half}s"
  wait "$ppid" || true
  bk_replication_note after-send
  acked=$(bk_json_num "$d/producer.json" total)
  bk_note "acknowledged" "${acked:-0}"
  BK_BG_PID=$cons_bg BK_CONS_PID=$cons_pid
  if bk_consume_until "$d/consumer" "${acked:-0}" 20; then
    bk_note "consumed with broker-a down" "$(bk_consumed "$d/consumer")"
    bk_note "broker-a restarted" no
  else
    bk_note "consumed with broker-a down" "$(bk_consumed "$d/consumer")"
    bk_log "not all acknowledged messages reachable with broker-a down: restarting it"
    bk_note "restart time" "$EPOCHREALTIME"
    bk_broker_up broker-a broker-a 0 SYNC_MASTER SYNC_FLUSH 11
    bk_note "broker-a restarted" yes
    bk_consume_until "$d/consumer" "${acked:-0}" 45 || bk_log "exception: still short after the restart"
  fi
  bk_consumer_stop
  bk_cmd "$MQADMIN" topicStatus -n "$BK_NS" -t BenchExc
  "$MQADMIN" topicStatus -n "$BK_NS" -t BenchExc >"$d/topicStatus.txt" 2>&1 || true
  if [ $ids = 1 ] && [ -f "$d/acked.ids" ] && [ -f "$d/consumed.ids" ]; then
    sort -u "$d/acked.ids" >"$BK_TMP/a.ids"
    sort -u "$d/consumed.ids" >"$BK_TMP/c.ids"
    comm -23 "$BK_TMP/a.ids" "$BK_TMP/c.ids" >"$d/lost.ids"
    bk_note "acknowledged ids not consumed" "$(wc -l <"$d/lost.ids")"
  fi
}

# ---- 7: peers ------------------------------------------------------------------

# redis_up NAME PORT ARGS...: a redis-server on 127.0.0.1:PORT in BK_TMP.
redis_up() {
  local name=$1 port=$2 i
  shift 2
  mkdir -p "$BK_TMP/$name"
  bk_cmd redis-server --port "$port" --bind 127.0.0.1 --dir "$BK_TMP/$name" --save '' "$@"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$BK_TMP/$name" --save '' \
    --protected-mode no --daemonize no "$@" >"$BK_TMP/$name.log" 2>&1 &
  BK_EXTRA_PIDS+=($!)
  for i in $(seq 50); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  bk_die "redis $name did not start: $(tail -5 "$BK_TMP/$name.log")"
}

# redis_bench PREFIX ARGS...: redis-benchmark --csv, bounded in time.
redis_bench() {
  local prefix=$1
  shift
  bk_cmd redis-benchmark "$@" --csv
  timeout 300 redis-benchmark "$@" --csv >"$prefix.csv" 2>"$prefix.err" || bk_log "redis-benchmark $prefix failed"
}

stage7() {
  local d p1 p2 size n i lag pl
  bk_stage_begin 7 "Peers: redis-benchmark PING_INLINE and a Redis stream (XADD) with a replica, 64 clients"
  d=$BK_STAGE_DIR
  ensure_pkg redis-server redis-server redis-tools || bk_die "redis-server missing and not installable"
  ensure_pkg redis-benchmark redis-tools || bk_die "redis-benchmark missing and not installable"
  bk_note "redis version" "$(redis-server --version | awk '{ print $3 }')"
  p1=$(bk_free_port $((BK_PORT_BASE + 60)))
  redis_up redis-primary "$p1" --appendonly yes --appendfsync everysec
  p2=$(bk_free_port $((p1 + 1)))
  redis_up redis-replica "$p2" --appendonly yes --appendfsync everysec --replicaof 127.0.0.1 "$p1"
  for i in $(seq 100); do
    redis-cli -p "$p2" info replication 2>/dev/null | grep 'master_link_status:up' >/dev/null && break
    sleep 0.1
  done
  bk_note "replica link" "$(redis-cli -p "$p2" info replication | awk -F: '/master_link_status/ { print $2 }' | tr -d '\r')"
  redis_bench "$d/ping" -h 127.0.0.1 -p "$p1" -t ping_inline -c 64 -n "$N_PING"
  for size in 128 1024 524288; do
    n=$N_XADD
    [ "$size" -lt 100000 ] || n=$N_XADD_BIG
    pl=$BK_TMP/payload-$size
    head -c "$size" /dev/zero | tr '\0' x >"$pl"
    redis-cli -p "$p1" del bench >/dev/null
    bk_cmd redis-benchmark -h 127.0.0.1 -p "$p1" -c 64 -n "$n" --csv -x XADD bench '*' f "<$size-byte payload on stdin>"
    timeout 300 redis-benchmark -h 127.0.0.1 -p "$p1" -c 64 -n "$n" --csv -x XADD bench '*' f \
      <"$pl" >"$d/xadd-s$size.csv" 2>"$d/xadd-s$size.err" || bk_log "redis-benchmark XADD $size failed"
    # the replica's lag right after the run, bytes
    lag=$(($(redis-cli -p "$p1" info replication | awk -F: '/^master_repl_offset/ { print $2 }' | tr -d '\r') - \
      $(redis-cli -p "$p2" info replication | awk -F: '/^slave_repl_offset/ { print $2 }' | tr -d '\r')))
    bk_note "xadd $size replica lag after run (bytes)" "$lag"
    bk_note "xadd $size stream length" "$(redis-cli -p "$p1" xlen bench)"
  done
  redis-cli -p "$p1" del bench >/dev/null
  for i in "${BK_EXTRA_PIDS[@]}"; do
    kill -TERM "$i" 2>/dev/null || true
    wait "$i" 2>/dev/null || true
  done
  BK_EXTRA_PIDS=()
}
