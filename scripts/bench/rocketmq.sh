# shellcheck shell=bash disable=SC2153,SC2034,SC2004 # D_RQ etc. are set by bench.sh; BK_* arrays live in lib.sh
# scripts/bench/rocketmq.sh: stage 8 of scripts/bench.sh, Apache RocketMQ
# itself beside rmq in the same run (issue 19). Sourced, not run; uses
# scripts/bench/lib.sh.
#
# RocketMQ's name server and brokers run from the Maven Central jars
# (scripts/bench/rocketmq/pom.xml, fetched once per version with mvn
# dependency:copy-dependencies into RMQ_BENCH_ROCKETMQ_CACHE, default
# ~/.cache/rmq-bench/rocketmq-VERSION, never into the checkout) with java -cp,
# in the 2m-2s layouts bk_cluster_up starts for rmq (same roles, flush types,
# 8 queues a master), on 127.0.0.1 at ports from BK_PORT_BASE+100 (a broker
# takes listenPort-2, listenPort and listenPort+1). Every JVM is in BK_PIDS,
# so bk_down and the EXIT trap stop it by pid; stores and user.home (logs)
# are under BK_TMP.
#
# The load is scripts/bench/rocketmq/Bench.java on the official
# rocketmq-client (rocketmq-example's benchmark.Producer, which the published
# reports run, is not on Maven Central): the same per-second lines and
# mqbench's --json keys. For each version the same Bench.java on that
# version's client drives RocketMQ and rmq's cluster (rmq's name server and
# brokers speak RocketMQ's remoting protocol on their ports), so the ratios
# compare like with like; mqbench drives rmq too (native protocol only: it
# cannot drive RocketMQ). Per row: send TPS, P50/P99/P999, broker CPU time
# per acknowledged message (bk_cpu_around: utime+stime of every broker
# process before and after the measured run) and each broker's VmRSS after it.
#
# Environment: RMQ_BENCH_ROCKETMQ_VERSIONS (default "4.9.7 5.5.0"),
# RMQ_BENCH_ROCKETMQ_HEAP (broker heap, default 1g; name server 256m, client
# 512m), RMQ_BENCH_ROCKETMQ_DIRECT (broker -XX:MaxDirectMemorySize, default
# 1g), RMQ_BENCH_ROCKETMQ_CACHE.

RQ_CACHE=${RMQ_BENCH_ROCKETMQ_CACHE:-$HOME/.cache/rmq-bench}
RQ_HEAP=${RMQ_BENCH_ROCKETMQ_HEAP:-1g}
RQ_DIRECT=${RMQ_BENCH_ROCKETMQ_DIRECT:-1g}
# Java 17: RocketMQ 4.9's store unmaps with jdk.internal.ref.Cleaner and its
# remoting reflects into java.nio / sun.nio.ch; 5.x's hessian into java.lang.
RQ_OPENS=(--add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED)
RQ_HOME=''   # $RQ_CACHE/rocketmq-VERSION of the version up now
RQ_NS=''

# rq_fetch VERSION: the jars (mvn, once), the logback files and Bench.class
# in RQ_CACHE/rocketmq-VERSION; sets RQ_HOME. Fails when Maven cannot serve it.
rq_fetch() {
  local v=$1 src=$BK_ROOT/scripts/bench/rocketmq n
  RQ_HOME=$RQ_CACHE/rocketmq-$v
  mkdir -p "$RQ_HOME/conf" "$RQ_HOME/classes"
  if ! ls "$RQ_HOME/lib/rocketmq-broker-$v.jar" >/dev/null 2>&1; then
    bk_log "rocketmq $v: fetching the jars from Maven Central into $RQ_HOME/lib"
    mvn -q -B -f "$src/pom.xml" -Drocketmq.version="$v" dependency:copy-dependencies \
      -DoutputDirectory="$RQ_HOME/lib" >"$RQ_HOME/mvn.log" 2>&1 || {
      bk_log "rocketmq $v: mvn failed: $(grep ERROR "$RQ_HOME/mvn.log" | head -2)"
      return 1
    }
  fi
  for n in namesrv broker tools; do
    cp "$src/logback.xml" "$RQ_HOME/conf/logback_$n.xml"
  done
  if [ ! "$RQ_HOME/classes/Bench.class" -nt "$src/Bench.java" ]; then
    javac -nowarn -d "$RQ_HOME/classes" -cp "$RQ_HOME/lib/*" "$src/Bench.java" >"$RQ_HOME/javac.log" 2>&1 || {
      bk_log "rocketmq $v: Bench.java does not compile: $(head -3 "$RQ_HOME/javac.log")"
      return 1
    }
  fi
}

# rq_java NAME HEAP CLASS ARGS...: a JVM in the background (logs to
# BK_TMP/run/NAME.log, user.home BK_TMP/rq-home/NAME), recorded in BK_PIDS.
rq_java() {
  local name=$1 heap=$2 cls=$3 dir=$BK_TMP/run
  shift 3
  mkdir -p "$dir" "$BK_TMP/rq-home/$name"
  local cmd=(java "-Xms$heap" "-Xmx$heap" "-XX:MaxDirectMemorySize=$RQ_DIRECT" "${RQ_OPENS[@]}"
    "-Duser.home=$BK_TMP/rq-home/$name" -cp "$RQ_HOME/lib/*:$RQ_HOME/classes" "$cls" "$@")
  bk_cmd env ROCKETMQ_HOME="$RQ_HOME" "${cmd[@]}"
  ROCKETMQ_HOME=$RQ_HOME "${cmd[@]}" >>"$dir/$name.log" 2>&1 &
  BK_PIDS[$name]=$!
  disown "${BK_PIDS[$name]}"
}

# rq_broker_up NAME BROKERNAME ID ROLE FLUSH PORT [MASTER_HA_PORT]
rq_broker_up() {
  local name=$1 port=$6 conf=$BK_TMP/conf/$1.properties
  bk_port_open "$port" && bk_die "port $port is in use (set RMQ_BENCH_PORT_BASE)"
  mkdir -p "$BK_TMP/conf"
  {
    echo "brokerClusterName=BenchCluster"
    echo "brokerName=$2"
    echo "brokerId=$3"
    echo "brokerRole=$4"
    echo "flushDiskType=$5"
    echo "listenPort=$port"
    echo "haListenPort=$((port + 1))"
    echo "brokerIP1=127.0.0.1"
    echo "namesrvAddr=$RQ_NS"
    echo "storePathRootDir=$BK_TMP/store/$name"
    echo "storePathCommitLog=$BK_TMP/store/$name/commitlog"
    echo "mapedFileSizeCommitLog=${RMQ_BENCH_MAPPED_SIZE:-1073741824}"
    echo "maxMessageSize=4194304"
    echo "autoCreateTopicEnable=true"
    if [ -n "${7:-}" ] && [ "${RMQ_BENCH_PIN_HA:-1}" = 1 ]; then
      echo "haMasterAddress=127.0.0.1:$7"
    fi
  } >"$conf"
  BK_CONF[$name]=$conf
  rq_java "$name" "$RQ_HEAP" org.apache.rocketmq.broker.BrokerStartup -c "$conf"
}

# rq_cluster_up sync|async: RocketMQ's name server and 2m-2s cluster, as
# bk_cluster_up lays out rmq's (sync: SYNC_MASTER + BK_SYNC_FLUSH).
rq_cluster_up() {
  local role=ASYNC_MASTER flush=ASYNC_FLUSH b=$((BK_PORT_BASE + 100)) n
  [ "$1" != sync ] || role=SYNC_MASTER flush=$BK_SYNC_FLUSH
  bk_port_open "$b" && bk_die "port $b is in use (set RMQ_BENCH_PORT_BASE)"
  mkdir -p "$BK_TMP/conf"
  printf 'listenPort=%s\n' "$b" >"$BK_TMP/conf/rq-namesrv.properties"
  rq_java rq-namesrv 256m org.apache.rocketmq.namesrv.NamesrvStartup -c "$BK_TMP/conf/rq-namesrv.properties"
  RQ_NS=127.0.0.1:$b
  bk_wait_port rq-namesrv "$b"
  rq_broker_up rq-broker-a broker-a 0 "$role" "$flush" $((b + 11))
  rq_broker_up rq-broker-b broker-b 0 "$role" "$flush" $((b + 31))
  rq_broker_up rq-broker-a-s broker-a 1 SLAVE ASYNC_FLUSH $((b + 21)) $((b + 12))
  rq_broker_up rq-broker-b-s broker-b 1 SLAVE ASYNC_FLUSH $((b + 41)) $((b + 32))
  for n in a:11 b:31 a-s:21 b-s:41; do
    bk_wait_port "rq-broker-${n%%:*}" $((b + ${n#*:}))
  done
}

# rq_topic TOPIC: 8 read and write queues on every master (RocketMQ's mqadmin).
rq_topic() {
  local i
  for i in 1 2 3 4 5; do
    rq_admin updateTopic -n "$RQ_NS" -c BenchCluster -t "$1" -r 8 -w 8 >"$BK_TMP/rq-topic.out" 2>&1 &&
      [ "$(grep -c 'create topic to .* success' "$BK_TMP/rq-topic.out")" -ge 2 ] && return 0
    sleep 2
  done
  bk_log "rocketmq: topic $1 not on both masters: $(tail -2 "$BK_TMP/rq-topic.out")"
}

rq_admin() {
  bk_cmd env ROCKETMQ_HOME="$RQ_HOME" java -Xmx256m "${RQ_OPENS[@]}" -cp "$RQ_HOME/lib/*" \
    org.apache.rocketmq.tools.command.MQAdminStartup "$@"
  ROCKETMQ_HOME=$RQ_HOME timeout 120 java -Xmx256m "${RQ_OPENS[@]}" "-Duser.home=$BK_TMP/rq-home" \
    -cp "$RQ_HOME/lib/*" org.apache.rocketmq.tools.command.MQAdminStartup "$@"
}

# rq_bench PREFIX SECONDS ARGS...: Bench.java like bk_producer runs mqbench
# (PREFIX.out stamped, PREFIX.json, PREFIX.err, PREFIX.rc).
rq_bench() {
  local prefix=$1 secs=$2 rc
  shift 2
  local cmd=(java -Xms512m -Xmx512m "${RQ_OPENS[@]}" "-Duser.home=$BK_TMP/rq-home"
    -cp "$RQ_HOME/lib/*:$RQ_HOME/classes" Bench -n "$RQ_NS" -d "$secs" "$@" --json "$prefix.json")
  bk_cmd "${cmd[@]}"
  set +e
  timeout --kill-after=10 $((secs + 120)) "${cmd[@]}" 2>"$prefix.err" | bk_stamp >"$prefix.out"
  rc=${PIPESTATUS[0]}
  set -e
  echo "$rc" >"$prefix.rc"
  [ "$rc" = 0 ] || bk_log "Bench.java $prefix exited $rc: $(tail -2 "$prefix.err" | tr '\n' ' ')"
}

# rq_measure PREFIX RUNNER SECONDS BROKERS...: a warm-up run, then the measured
# one with every broker's CPU ticks before and after (bk_cpu_around:
# PREFIX.cpu) and VmRSS after (PREFIX.rss).
rq_measure() {
  local prefix=$1 runner=$2 secs=$3
  shift 3
  "$runner" "$prefix-warmup" "$D_RQ_WARM" -t BenchRq -w 64 -s 128
  bk_cpu_around "$prefix" "$*" "$runner" "$prefix" "$secs" -t BenchRq -w 64 -s 128
  : >"$prefix.rss"
  bk_rss_sample "$prefix.rss" "$secs"
}

# rq_down: SIGTERM to every RocketMQ broker at once (each takes seconds to
# shut down), then bk_down waits for them (KILL after 15 s) and the rest.
rq_down() {
  local n
  for n in rq-broker-a rq-broker-b rq-broker-a-s rq-broker-b-s; do
    ! bk_alive "$n" || kill -TERM "${BK_PIDS[$n]}" 2>/dev/null || true
  done
  bk_down
}

stage8() {
  local d v layout ok=() rmq=(broker-a broker-b broker-a-s broker-b-s)
  bk_stage_begin 8 "RocketMQ beside rmq: 2m-2s SYNC and ASYNC, 64 threads, 128 B sync sends"
  d=$BK_STAGE_DIR
  bk_java_ready || return 0
  bk_note "RocketMQ JVMs" "broker -Xms$RQ_HEAP -Xmx$RQ_HEAP -XX:MaxDirectMemorySize=$RQ_DIRECT, name server -Xmx256m, Bench.java -Xmx512m"
  bk_note "rows" "${D_RQ_WARM} s warm-up run (JIT, slaves connecting), then ${D_RQ} s measured, each on a fresh cluster"
  bk_note "load tool" "scripts/bench/rocketmq/Bench.java on rocketmq-client VERSION (rocketmq-example is not on Maven Central) drives RocketMQ VERSION and rmq (remoting on rmq's ports); mqbench drives rmq once more (native protocol)"
  for v in ${RMQ_BENCH_ROCKETMQ_VERSIONS:-4.9.7 5.5.0}; do
    if rq_fetch "$v"; then ok+=("$v"); else bk_note "rocketmq $v" "not available (mvn or javac failed)"; fi
  done
  for layout in sync async; do
    bk_cluster_up "$layout" "$BK_SYNC_FLUSH"
    bk_topic BenchRq
    rq_measure "$d/$layout-rmq" bk_producer "$D_RQ" "${rmq[@]}"
    bk_down
    for v in "${ok[@]}"; do
      rq_fetch "$v"
      bk_cluster_up "$layout" "$BK_SYNC_FLUSH"
      bk_topic BenchRq
      RQ_NS=$BK_NS
      rq_measure "$d/$layout-rmq-java-$v" rq_bench "$D_RQ" "${rmq[@]}"
      bk_down
      rq_cluster_up "$layout"
      rq_topic BenchRq
      rq_measure "$d/$layout-rocketmq-$v" rq_bench "$D_RQ" rq-broker-a rq-broker-b rq-broker-a-s rq-broker-b-s
      rq_down
    done
  done
}
