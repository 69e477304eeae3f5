# shellcheck shell=bash disable=SC2153,SC2034 # PE_* options are set by bench.sh; BK_* arrays live in lib.sh
# scripts/bench/peers.sh: stage 9 of scripts/bench.sh (--peers), Apache Kafka
# and ActiveMQ Artemis beside rmq in the same run (issue 35 part 1). Sourced,
# not run; uses scripts/bench/lib.sh. The facts it follows (versions,
# settings, tool options) are in shared/design/PEERS-NOTES.md.
#
# Each system runs alone, replicated to a second broker, on 127.0.0.1 from
# BK_PORT_BASE+200 (Kafka) and +300 (Artemis), its files under BK_TMP:
#   Kafka 4.1.1 (KRaft): one controller + two brokers, 16 partitions RF 2,
#     min.insync.replicas 2; jars from Maven Central (scripts/bench/peers/pom.xml)
#   Artemis 2.40.0: a replicated primary/backup pair (artemis create), measured
#     once the backup is synchronized; the bin tar.gz from Maven Central
#   rmq: the 2m-2s cluster of bk_cluster_up, its SYNC_FLUSH masters with
#     deploy/2m-2s-sync's store settings (transientStorePoolEnable)
# Both peers are fetched once into RMQ_BENCH_PEERS_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/rmq-peers), never into the checkout. Every JVM
# is in BK_PIDS, so bk_down and the EXIT trap stop it by pid.
#
# Rows: durability class x size x shape. Classes: replica (acknowledged once
# the replica has it, no fsync), replica-fsync (and after an fsync, before the
# acknowledgement), leader (acknowledged by the leader alone). Shapes: sync
# (64 senders, each waiting for its send) and async (each tool's own async
# defaults). JVM peers are warmed PE_WARM seconds before each measured
# window (rmq 2 s). Per row: TPS, P99 where the tool gives it, server CPU per
# acknowledged message (utime+stime of every server process over the measured
# window, /proc/PID/stat) and the servers' RssAnon after it; rows.tsv, which
# report.py turns into the table with the rmq/peer ratios.

PE_CACHE=${RMQ_BENCH_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmq-peers}
PE_KAFKA_VERSION=4.1.1
PE_ARTEMIS_VERSION=2.40.0
PE_KAFKA_HOME=$PE_CACHE/kafka-$PE_KAFKA_VERSION
PE_ARTEMIS_HOME=$PE_CACHE/artemis-$PE_ARTEMIS_VERSION/apache-artemis-$PE_ARTEMIS_VERSION
PE_SENDERS=64
PE_KAFKA_SERVERS=(kafka-controller kafka-broker-2 kafka-broker-3)
PE_ARTEMIS_SERVERS=(artemis-primary artemis-backup)

# ---- fetching --------------------------------------------------------------------

# pe_fetch_kafka: Kafka's jars (mvn, once) and KafkaSyncSend.class in PE_KAFKA_HOME.
pe_fetch_kafka() {
  local src=$BK_ROOT/scripts/bench/peers
  mkdir -p "$PE_KAFKA_HOME/classes"
  if [ ! -f "$PE_KAFKA_HOME/lib/kafka_2.13-$PE_KAFKA_VERSION.jar" ]; then
    bk_log "kafka $PE_KAFKA_VERSION: fetching the jars from Maven Central into $PE_KAFKA_HOME/lib"
    mvn -q -B -f "$src/pom.xml" -Dkafka.version="$PE_KAFKA_VERSION" dependency:copy-dependencies \
      -DoutputDirectory="$PE_KAFKA_HOME/lib" >"$PE_KAFKA_HOME/mvn.log" 2>&1 ||
      { bk_log "kafka: mvn failed: $(grep ERROR "$PE_KAFKA_HOME/mvn.log" | head -2)"; return 1; }
  fi
  if [ ! "$PE_KAFKA_HOME/classes/KafkaSyncSend.class" -nt "$src/KafkaSyncSend.java" ]; then
    javac -nowarn -d "$PE_KAFKA_HOME/classes" -cp "$PE_KAFKA_HOME/lib/*" "$src/KafkaSyncSend.java" \
      >"$PE_KAFKA_HOME/javac.log" 2>&1 ||
      { bk_log "kafka: KafkaSyncSend.java does not compile: $(head -3 "$PE_KAFKA_HOME/javac.log")"; return 1; }
  fi
}

# pe_fetch_artemis: the Artemis distribution (mvn dependency:copy, once), unpacked.
pe_fetch_artemis() {
  local dir=$PE_CACHE/artemis-$PE_ARTEMIS_VERSION tgz
  tgz=$dir/apache-artemis-$PE_ARTEMIS_VERSION-bin.tar.gz
  [ ! -x "$PE_ARTEMIS_HOME/bin/artemis" ] || return 0
  mkdir -p "$dir"
  if [ ! -f "$tgz" ]; then
    bk_log "artemis $PE_ARTEMIS_VERSION: fetching the distribution from Maven Central into $dir"
    mvn -q -B dependency:copy -Dartifact="org.apache.activemq:apache-artemis:$PE_ARTEMIS_VERSION:tar.gz:bin" \
      -DoutputDirectory="$dir" >"$dir/mvn.log" 2>&1 ||
      { bk_log "artemis: mvn failed: $(grep ERROR "$dir/mvn.log" | head -2)"; return 1; }
  fi
  tar -xzf "$tgz" -C "$dir"
}

# ---- processes ---------------------------------------------------------------------

# pe_bg NAME CMD...: a server process in the background (its output in
# BK_TMP/run/NAME.log), recorded in BK_PIDS.
pe_bg() {
  local name=$1
  shift
  mkdir -p "$BK_TMP/run"
  bk_cmd "$@"
  "$@" >>"$BK_TMP/run/$name.log" 2>&1 &
  BK_PIDS[$name]=$!
  disown "${BK_PIDS[$name]}"
}

# pe_wait_log NAME REGEX SECONDS: waits until NAME's log matches REGEX.
pe_wait_log() {
  local i
  for ((i = 0; i < $3 * 2; i++)); do
    grep -q -E "$2" "$BK_TMP/run/$1.log" 2>/dev/null && return 0
    bk_alive "$1" || break
    sleep 0.5
  done
  tail -20 "$BK_TMP/run/$1.log" >&2
  bk_die "$1: no \"$2\" in its log after $3 s (log above)"
}

# ---- Kafka -----------------------------------------------------------------------

PE_KAFKA_BOOT=''

# pe_kafka_props NODE ROLE PORT CONTROLLER_PORT: one node's server.properties.
pe_kafka_props() {
  local node=$1 role=$2 port=$3 cport=$4
  echo "process.roles=$role"
  echo "node.id=$node"
  echo "controller.quorum.voters=1@127.0.0.1:$cport"
  echo "controller.listener.names=CONTROLLER"
  echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  echo "log.dirs=$BK_TMP/kafka/data-$node"
  if [ "$role" = controller ]; then
    echo "listeners=CONTROLLER://127.0.0.1:$cport"
    return 0
  fi
  echo "listeners=PLAINTEXT://127.0.0.1:$port"
  echo "advertised.listeners=PLAINTEXT://127.0.0.1:$port"
  echo "inter.broker.listener.name=PLAINTEXT"
  echo "min.insync.replicas=2"
  echo "offsets.topic.replication.factor=2"
  echo "transaction.state.log.replication.factor=2"
  echo "transaction.state.log.min.isr=1"
  echo "share.coordinator.state.topic.replication.factor=2"
  echo "share.coordinator.state.topic.min.isr=1"
  echo "group.initial.rebalance.delay.ms=0"
  echo "auto.create.topics.enable=false"
}

# pe_kafka_node NAME NODE ROLE PORT CONTROLLER_PORT HEAP: formats the node's
# log dir (StorageTool, the cluster id in PE_KAFKA_ID) and starts it with the
# G1 flags kafka-server-start.sh sets.
pe_kafka_node() {
  local name=$1 conf=$BK_TMP/conf/$1.properties cp=$PE_KAFKA_HOME/lib/*
  mkdir -p "$BK_TMP/conf" "$BK_TMP/kafka"
  pe_kafka_props "$2" "$3" "$4" "$5" >"$conf"
  bk_cmd java -cp "$cp" kafka.tools.StorageTool format -t "$PE_KAFKA_ID" -c "$conf"
  java -cp "$cp" kafka.tools.StorageTool format -t "$PE_KAFKA_ID" -c "$conf" >>"$BK_TMP/kafka/format.log" 2>&1 ||
    bk_die "kafka: formatting $name failed: $(tail -3 "$BK_TMP/kafka/format.log")"
  pe_bg "$name" java "-Xms$6" "-Xmx$6" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    "-Dkafka.logs.dir=$BK_TMP/kafka/logs-$2" -cp "$cp" kafka.Kafka "$conf"
}

# pe_kafka_up: the controller (node 1) and brokers 2 and 3; PE_KAFKA_BOOT.
pe_kafka_up() {
  local b=$((BK_PORT_BASE + 200))
  bk_port_open "$b" && bk_die "port $b is in use (set RMQ_BENCH_PORT_BASE)"
  PE_KAFKA_ID=$(python3 -c 'import base64, uuid; print(base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="))')
  pe_kafka_node kafka-controller 1 controller 0 "$b" 512m
  pe_kafka_node kafka-broker-2 2 broker $((b + 2)) "$b" 1g
  pe_kafka_node kafka-broker-3 3 broker $((b + 3)) "$b" 1g
  bk_wait_port kafka-broker-2 $((b + 2))
  bk_wait_port kafka-broker-3 $((b + 3))
  PE_KAFKA_BOOT=127.0.0.1:$((b + 2)),127.0.0.1:$((b + 3))
}

# pe_kafka_down: both brokers first (a broker whose controller is gone waits
# for it in its controlled shutdown), then the controller.
pe_kafka_down() {
  local n
  for n in kafka-broker-2 kafka-broker-3; do
    ! bk_alive "$n" || kill -TERM "${BK_PIDS[$n]}" 2>/dev/null || true
  done
  bk_stop kafka-broker-2
  bk_stop kafka-broker-3
  bk_down
}

pe_kafka_tool() {
  bk_cmd java -Xmx512m -cp "$PE_KAFKA_HOME/lib/*" "$@"
  java -Xmx512m -cp "$PE_KAFKA_HOME/lib/*" "$@"
}

# pe_kafka_topic TOPIC CONFIGS...: 16 partitions, replication factor 2.
pe_kafka_topic() {
  local t=$1 c=() i
  shift
  for i in "$@"; do c+=(--config "$i"); done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pe_kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$PE_KAFKA_BOOT" --create \
      --topic "$t" --partitions 16 --replication-factor 2 "${c[@]}" >"$BK_TMP/kafka/topic.log" 2>&1 && return 0
    sleep 2
  done
  bk_die "kafka: topic $t not created: $(tail -3 "$BK_TMP/kafka/topic.log")"
}

# pe_kafka_sync PREFIX TOPIC SIZE ACKS: 64 senders on one KafkaProducer.
pe_kafka_sync() {
  pe_measured "$1" "${PE_KAFKA_SERVERS[*]}" '^MEASURE ' "$PE_DUR" \
    java -Xms512m -Xmx512m -cp "$PE_KAFKA_HOME/lib/*:$PE_KAFKA_HOME/classes" KafkaSyncSend \
    "$PE_KAFKA_BOOT" "$2" "$PE_SENDERS" "$3" "$PE_WARM" "$PE_DUR" "$4" "$1.json"
}

# pe_kafka_async PREFIX TOPIC SIZE ACKS: ProducerPerformance at its defaults
# (linger, batch size, in-flight requests), unthrottled: a warm-up run for
# PE_WARM seconds (at least 12: it prints its rate every 5 s), then a
# measured run of the warm-up's last rate x PE_DUR records (it stops at a
# record count, not a time).
pe_kafka_async() {
  local prefix=$1 rate n warm=$((PE_WARM > 12 ? PE_WARM : 12))
  local perf=(org.apache.kafka.tools.ProducerPerformance --topic "$2" --record-size "$3"
    --throughput -1 --producer-props "bootstrap.servers=$PE_KAFKA_BOOT" "acks=$4")
  bk_cmd timeout "$warm" java -Xmx512m -cp "$PE_KAFKA_HOME/lib/*" "${perf[@]}" --num-records 1000000000
  timeout "$warm" java -Xmx512m -cp "$PE_KAFKA_HOME/lib/*" "${perf[@]}" --num-records 1000000000 \
    >"$prefix-warmup.out" 2>&1 || true
  rate=$(awk '/records sent,/ { r = $4 } END { printf "%d", r }' "$prefix-warmup.out")
  n=$(((${rate:-0} > 1000 ? rate : 1000) * PE_DUR))
  bk_cpu_around "$prefix" "${PE_KAFKA_SERVERS[*]}" pe_kafka_tool "${perf[@]}" --num-records "$n" \
    >"$prefix.out" 2>&1 || true
  # the summary line: "N records sent, R records/sec (...), ..., P ms 99th, ..."
  awk '/records sent,/ && / ms 99th/ { tps = $4; total = $1; p99 = $0; sub(/ ms 99th.*/, "", p99); sub(/.* /, "", p99) }
    END { printf "{\"tps\": %s, \"total\": %s, \"p99_ms\": %s}\n", tps + 0, total + 0, p99 + 0 }' \
    "$prefix.out" >"$prefix.json"
}

# ---- Artemis -----------------------------------------------------------------------

PE_ARTEMIS_URL='' PE_ARTEMIS_JOURNAL=''

# pe_artemis_create NAME OFFSET PEER_PORT EXTRA...: one replicated instance.
pe_artemis_create() {
  local name=$1 off=$2 peer=$3
  shift 3
  local cmd=("$PE_ARTEMIS_HOME/bin/artemis" create "$BK_TMP/artemis/$name" --clustered --replicated
    --staticCluster "tcp://127.0.0.1:$peer" --cluster-user bench --cluster-password bench
    --host 127.0.0.1 --default-port $((BK_PORT_BASE + 300)) --port-offset "$off" --name "$name" --no-web
    --no-amqp-acceptor --no-mqtt-acceptor --no-stomp-acceptor --no-hornetq-acceptor --java-memory 1G
    --silent --allow-anonymous --user bench --password bench --queues PeerBench "$@")
  mkdir -p "$BK_TMP/artemis"
  bk_cmd "${cmd[@]}"
  "${cmd[@]}" >"$BK_TMP/artemis/create-$name.log" 2>&1 ||
    bk_die "artemis create $name failed: $(tail -3 "$BK_TMP/artemis/create-$name.log")"
}

# pe_artemis_up EXTRA...: primary and backup (create EXTRA, e.g. --no-fsync);
# returns once the backup says it is synchronized; PE_ARTEMIS_URL, and
# PE_ARTEMIS_JOURNAL the journal type the primary runs (create chooses it:
# ASYNCIO needs libaio).
pe_artemis_up() {
  local p=$((BK_PORT_BASE + 300)) b=$((BK_PORT_BASE + 301))
  bk_port_open "$p" && bk_die "port $p is in use (set RMQ_BENCH_PORT_BASE)"
  rm -rf "$BK_TMP/artemis"
  pe_artemis_create artemis-primary 0 "$b" "$@"
  pe_artemis_create artemis-backup 1 "$p" --backup "$@"
  pe_bg artemis-primary "$BK_TMP/artemis/artemis-primary/bin/artemis" run
  bk_wait_port artemis-primary "$p"
  pe_bg artemis-backup "$BK_TMP/artemis/artemis-backup/bin/artemis" run
  pe_wait_log artemis-backup 'synchronized' 180
  PE_ARTEMIS_URL=tcp://127.0.0.1:$p
  PE_ARTEMIS_JOURNAL=$(sed -n 's/.*Using \([A-Za-z]*\) Journal.*/\1/p' "$BK_TMP/run/artemis-primary.log" | head -1)
}

# pe_artemis_perf PREFIX SIZE PRODUCERS MAX_PENDING: artemis perf producer,
# PE_WARM seconds of warm-up then PE_DUR measured, the servers' CPU ticks
# sampled every 0.25 s meanwhile (PREFIX.ticks): its output reaches the file
# seconds late, so the window comes from its --json interval times
# (artemis_perf_json.py writes PREFIX.json and PREFIX.cpu).
pe_artemis_perf() {
  local prefix=$1 pid
  local cmd=("$PE_ARTEMIS_HOME/bin/artemis" perf producer --url "$PE_ARTEMIS_URL" --user bench --password bench
    --persistent --message-size "$2" --producers "$3" --threads 2 --max-pending "$4"
    --warmup "$PE_WARM" --duration $((PE_WARM + PE_DUR)) --json "$prefix.perf.json" queue://PeerBench)
  bk_cmd "${cmd[@]}"
  timeout --kill-after=10 $((PE_WARM + PE_DUR + 120)) "${cmd[@]}" >"$prefix.out" 2>&1 &
  pid=$!
  : >"$prefix.ticks"
  while kill -0 "$pid" 2>/dev/null; do
    bk_cpu_ticks "${PE_ARTEMIS_SERVERS[@]}" | awk -v t="$EPOCHREALTIME" '{ print t, $0 }' >>"$prefix.ticks"
    sleep 0.25
  done
  wait "$pid" || bk_log "$prefix: exited $?: $(tail -2 "$prefix.out" | tr '\n' ' ')"
  python3 "$BK_ROOT/scripts/bench/peers/artemis_perf_json.py" "$prefix"
}

# ---- rmq ---------------------------------------------------------------------------

# pe_rmq_run PREFIX SIZE SHAPE: mqbench on the cluster up (2 s warm-up).
pe_rmq_run() {
  local shape=(-w "$PE_SENDERS")
  [ "$3" = sync ] || shape=(-w 4 --async)
  bk_producer "$1-warmup" 2 -t PeerBench -s "$2" "${shape[@]}"
  bk_cpu_around "$1" "${!BK_PIDS[*]}" bk_producer "$1" "$PE_DUR" -t PeerBench -s "$2" "${shape[@]}"
}

# ---- measuring ---------------------------------------------------------------------

# pe_measured PREFIX "NAMES" MARK_REGEX SECONDS CMD...: runs CMD (output
# PREFIX.out); the measured window opens when its output matches MARK_REGEX
# (or after PE_WARM + 30 s) and lasts SECONDS, not until CMD has exited (a
# JVM tool's shutdown is no part of it): PREFIX.cpu gets each server's ticks
# at both ends (bk_cpu_around's format), PREFIX.window the two times (epoch
# seconds).
pe_measured() {
  local prefix=$1 names mark=$3 secs=$4 pid i
  read -r -a names <<<"$2"
  shift 4
  bk_cmd "$@"
  timeout --kill-after=10 $((PE_WARM + PE_DUR + 120)) "$@" >"$prefix.out" 2>&1 &
  pid=$!
  for ((i = 0; i < (PE_WARM + 30) * 10; i++)); do
    grep -q -E "$mark" "$prefix.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  bk_cpu_ticks "${names[@]}" >"$prefix.cpu0"
  printf '%s ' "$EPOCHREALTIME" >"$prefix.window"
  sleep "$secs"
  echo "$EPOCHREALTIME" >>"$prefix.window"
  bk_cpu_ticks "${names[@]}" |
    awk 'NR == FNR { b[$1] = $2; next } $1 in b { print $1, b[$1], $2 }' "$prefix.cpu0" - >"$prefix.cpu"
  rm -f "$prefix.cpu0"
  wait "$pid" || bk_log "$prefix: exited $?: $(tail -2 "$prefix.out" | tr '\n' ' ')"
}

# pe_row SYSTEM CLASS SETTING SIZE SHAPE PREFIX: appends the measured row
# (PREFIX.json, PREFIX.cpu, the servers' RssAnon now) to rows.tsv.
pe_row() {
  local prefix=$6 tps total p99 cpu_us rss
  tps=$(bk_json_num "$prefix.json" tps)
  total=$(bk_json_num "$prefix.json" total)
  p99=$(bk_json_num "$prefix.json" p99_ms)
  : >"$prefix.rss"
  bk_rss_sample "$prefix.rss" "$PE_DUR"
  rss=$(awk -F'\t' '{ s += $5 } END { printf "%.0f", s / 1024 }' "$prefix.rss")
  cpu_us=$(awk -v n="${total:-0}" -v t="$(getconf CLK_TCK)" '{ s += $3 - $2 }
    END { if (n > 0) printf "%.1f", s * 1e6 / t / n; else print "" }' "$prefix.cpu")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${tps:-}" "${p99:-}" \
    "$cpu_us" "$rss" >>"$BK_STAGE_DIR/rows.tsv"
  bk_log "$1 $2 $4 B $5: ${tps:-?} msg/s, P99 ${p99:-–} ms, ${cpu_us:-?} us CPU/msg, RssAnon $rss MB"
}

pe_wants() { [[ ",$PE_ONLY," == *",$1,"* ]]; }

# ---- the stage -----------------------------------------------------------------------

# pe_each SYSTEM CLASS SETTING RUNNER ARGS...: RUNNER PREFIX SIZE SHAPE ARGS
# for every size and shape, each a row.
pe_each() {
  local sys=$1 class=$2 setting=$3 runner=$4 size shape prefix
  shift 4
  for size in $PE_SIZES; do
    for shape in $PE_SHAPES; do
      prefix=$BK_STAGE_DIR/$sys-$class-s$size-$shape
      "$runner" "$prefix" "$size" "$shape" "$@"
      pe_row "$sys" "$class" "$setting" "$size" "$shape" "$prefix"
    done
  done
}

pe_kafka_runner() {
  if [ "$3" = sync ]; then pe_kafka_sync "$1" "$4" "$2" "$5"; else pe_kafka_async "$1" "$4" "$2" "$5"; fi
}

pe_artemis_runner() {
  if [ "$3" = sync ]; then pe_artemis_perf "$1" "$2" "$PE_SENDERS" 1; else pe_artemis_perf "$1" "$2" 1 1000; fi
}

pe_stage_kafka() {
  pe_fetch_kafka || { bk_note "kafka" "not available (mvn or javac failed)"; return 0; }
  pe_kafka_up
  pe_kafka_topic peer-replica
  pe_kafka_topic peer-fsync flush.messages=1
  pe_each kafka replica "acks=all, min.insync.replicas=2, no flush (flush.messages/flush.ms never)" \
    pe_kafka_runner peer-replica all
  pe_each kafka replica-fsync "acks=all, min.insync.replicas=2, topic flush.messages=1 (fsync per append, leader and follower)" \
    pe_kafka_runner peer-fsync all
  pe_each kafka leader "acks=1, no flush" pe_kafka_runner peer-replica 1
  pe_kafka_down
}

pe_stage_artemis() {
  pe_fetch_artemis || { bk_note "artemis" "not available (mvn failed)"; return 0; }
  pe_artemis_up --no-fsync
  pe_each artemis replica "replicated pair, create --no-fsync (journal-datasync=false), $PE_ARTEMIS_JOURNAL journal" \
    pe_artemis_runner
  bk_down
  pe_artemis_up
  pe_each artemis replica-fsync "replicated pair, default journal-datasync=true (fdatasync, group commit every journal-buffer-timeout), $PE_ARTEMIS_JOURNAL journal" \
    pe_artemis_runner
  bk_down
  bk_note "artemis leader" "no row: a replicated Artemis primary always waits for its backup"
}

pe_stage_rmq() {
  local class flush layout setting
  for class in replica replica-fsync leader; do
    case $class in
      replica) layout=sync flush=ASYNC_FLUSH setting="2m-2s, SYNC_MASTER + ASYNC_FLUSH" ;;
      replica-fsync) layout=sync flush=SYNC_FLUSH
        setting="2m-2s, SYNC_MASTER + SYNC_FLUSH, transientStorePoolEnable (write + fdatasync, as deploy/2m-2s-sync ships)" ;;
      leader) layout=async flush=ASYNC_FLUSH setting="2m-2s, ASYNC_MASTER + ASYNC_FLUSH" ;;
    esac
    # the shipped SYNC_FLUSH masters' store settings (deploy/2m-2s-sync)
    [ "$flush" != SYNC_FLUSH ] || BK_BROKER_EXTRA="transientStorePoolEnable=true transientStorePoolSize=2"
    bk_cluster_up "$layout" "$flush"
    BK_BROKER_EXTRA=
    bk_topic PeerBench
    pe_each rmq "$class" "$setting" pe_rmq_run
    bk_down
  done
}

stage9() {
  local sys
  bk_stage_begin 9 "Peers: Kafka $PE_KAFKA_VERSION and Artemis $PE_ARTEMIS_VERSION beside rmq, replicated, by durability class"
  if pe_wants kafka || pe_wants artemis; then
    bk_java_ready || return 0
  fi
  bk_note "rows" "JVM peers: ${PE_WARM} s warm-up, then ${PE_DUR} s measured; rmq: 2 s warm-up run, then ${PE_DUR} s; sizes $PE_SIZES B; shapes $PE_SHAPES"
  bk_note "sync shape" "$PE_SENDERS senders each waiting for its send: mqbench -w $PE_SENDERS; KafkaSyncSend ($PE_SENDERS threads on one KafkaProducer, send().get(), linger.ms=0); artemis perf producer --producers $PE_SENDERS --threads 2 --max-pending 1"
  bk_note "async shape" "each tool's async defaults: mqbench -w 4 --async (unbatched); Kafka ProducerPerformance (linger.ms=5, batch.size=16384, max.in.flight=5); artemis perf producer --max-pending 1000"
  for sys in kafka artemis rmq; do
    ! pe_wants "$sys" || "pe_stage_$sys"
  done
}
