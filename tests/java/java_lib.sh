# tests/java/java_lib.sh: what the Java-client test scripts share (sourced,
# not run): a temp dir with cleanup, the Maven build of tests/java (SKIP when
# java or mvn is missing or Maven Central cannot be reached; jars stay in
# ~/.m2 and the build in a cache under ~/.cache, never in the tree), and an
# rmq name server and broker on ephemeral loopback ports.
# shellcheck shell=bash

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${RMQ_BUILD_ROOT:-$src/build}
run=$(mktemp -d /tmp/rmq-test-java.XXXXXX)
pids=()
# The address the name server binds and the broker advertises (brokerIP1):
# RMQ_TEST_IP, default 127.0.0.1; ::1 runs the test over IPv6.
test_ip=${RMQ_TEST_IP:-127.0.0.1}

cleanup() {
  local p
  [ -z "${killable_pid:-}" ] || kill "$killable_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -z "${cluster_up:-}" ] || "$src/deploy/cluster.sh" down >/dev/null 2>&1 || true
  keep_failed_run
  rm -rf "$run"
}
# keep_failed_run: with RMQ_TEST_KEEP_DIR set, a run with a failed check
# leaves a copy of its directory (clients' output, brokers' logs and stores)
# there for diagnosis
keep_failed_run() {
  [ -n "${RMQ_TEST_KEEP_DIR:-}" ] && [ "${not_ok:-0}" -gt 0 ] || return 0
  mkdir -p "$RMQ_TEST_KEEP_DIR" && cp -a --sparse=always "$run" "$RMQ_TEST_KEEP_DIR/" &&
    echo "# kept $RMQ_TEST_KEEP_DIR/$(basename "$run")" || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# run_killable CMD...: CMD run in the background and waited for; its exit
# status. Bash runs a trap only after the foreground command ends, so a
# long CMD run this way lets a TERM or INT stop the test (and cleanup stop
# CMD) at once.
run_killable() {
  local rc
  "$@" &
  killable_pid=$!
  wait "$killable_pid"
  rc=$?
  killable_pid=
  return "$rc"
}

# shellcheck source=tests/skip_lib.sh
. "$src/tests/skip_lib.sh"

# java_build_key PROJECT PROFILE: a hash of PROJECT's pom.xml and src/ (names
# and contents) and of the Maven profile, naming its build in the cache.
java_build_key() {
  (cd "$1" && { echo "profile=$2"; find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; } |
    sha256sum | cut -c1-24)
}

# java_build_usable DIR: DIR holds a finished build whose classpath entries
# (jars in ~/.m2, the classes) all still exist.
java_build_usable() {
  local entry entries
  [ -f "$1/cp.txt" ] && [ -d "$1/target/classes" ] || return 1
  IFS=: read -r -a entries <"$1/cp.txt"
  for entry in "${entries[@]}"; do [ -e "$entry" ] || return 1; done
}

# java_build_into PLAN PROJECT DIR [-PPROFILE]: fetches PROJECT's dependencies
# and builds it offline in DIR (SKIP when Maven Central cannot be reached,
# "not ok 1" and exit when it does not build).
java_build_into() {
  local plan=$1 project=$2 dir=$3
  shift 3
  rm -rf "$dir" "$dir.tmp"
  mkdir -p "$dir.tmp"
  cp -r "$project/pom.xml" "$project/src" "$dir.tmp/"
  if ! (cd "$dir.tmp" && mvn -q -B "$@" dependency:go-offline >"$run/mvn-fetch.log" 2>&1); then
    tail -20 "$run/mvn-fetch.log" >&2
    rm -rf "$dir.tmp"
    skip_all "$plan" "cannot fetch the dependencies of ${project#"$src"/} from Maven Central"
  fi
  if ! (cd "$dir.tmp" && mvn -q -B -o "$@" package dependency:build-classpath -Dmdep.outputFile=cp.txt \
        >"$run/mvn-build.log" 2>&1); then
    tail -40 "$run/mvn-build.log" >&2
    rm -rf "$dir.tmp"
    echo "not ok 1 - ${project#"$src"/} builds offline"
    exit 1
  fi
  mv "$dir.tmp" "$dir"
}

# java_build PLAN [PROJECT [PROFILE]]: builds the Maven project PROJECT
# (default tests/java; with Maven profile PROFILE, e.g. rocketmq5 for the
# 5.x client) offline after fetching its dependencies; sets $cp (the
# classpath). The build is kept outside the tree under
# ${XDG_CACHE_HOME:-~/.cache}/rmq-java/, named by java_build_key, made once
# under a lock and reused by every test (both build directories) until the
# project or profile changes. Prints "not ok 1" and exits when it fails to build.
java_build() {
  local project=${2:-$here} profile=() cache dir lock
  [ -z "${3:-}" ] || profile=("-P$3")
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then skip_all "$1" "java or mvn not installed"; fi
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/rmq-java
  mkdir -p "$cache" || { echo "not ok 1 - java build cache $cache"; exit 1; }
  dir=$cache/$(java_build_key "$project" "${3:-}")
  exec {lock}>"$dir.lock"
  flock "$lock"
  java_build_usable "$dir" || java_build_into "$1" "$project" "$dir" "${profile[@]}"
  exec {lock}>&-
  cp=$(cat "$dir/cp.txt"):$dir/target/classes
}

# ready_port FILE KEY: waits for KEY=PORT in a ready file; prints the port
ready_port() {
  local file=$1 key=$2 i
  for i in $(seq 1 200); do
    if [ -f "$file" ] && grep -q "^$key=" "$file"; then
      sed -n "s/^$key=//p" "$file"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# start_namesrv: sets $ns (host:port; an IPv6 host as RocketMQ writes it,
# ::1:port). $ns_extra (property lines), when set, ends the properties.
start_namesrv() {
  printf 'listenPort=0\nbindAddress=%s\n%s\n' "$test_ip" "${ns_extra:-}" >"$run/ns.properties"
  "$bin/namesrv/mqnamesrv" -c "$run/ns.properties" --ready-file "$run/ns.ready" >"$run/ns.log" 2>&1 &
  pids+=("$!")
  local port
  port=$(ready_port "$run/ns.ready" listenPort) || { cat "$run/ns.log" >&2; exit 1; }
  ns=$test_ip:$port
}

# pick_vip_port: sets $bk_port to a free port P above 1024 whose P - 2 (the
# VIP channel RocketMQ's clients reach with vipChannelEnabled) is free too.
pick_vip_port() {
  bk_port=$(python3 - "$test_ip" <<'PY'
import socket, sys
host = sys.argv[1]
family = socket.AF_INET6 if ":" in host else socket.AF_INET
def free(port):
    s = socket.socket(family)
    try:
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    s = socket.socket(family)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    if port > 1026 and free(port - 2):
        print(port)
        break
PY
)
  [ -n "$bk_port" ] || { echo "# no free port pair for the VIP channel" >&2; exit 1; }
}

# start_broker CLUSTER NAME: a master registered with $ns; sets $bk_port and
# $bk_pid. $broker_extra (property lines), when set, ends the properties.
start_broker() {
  cat >"$run/broker.properties" <<PROPS
brokerClusterName=$1
brokerName=$2
brokerId=0
brokerRole=ASYNC_MASTER
listenPort=${bk_port:-0}
haListenPort=0
brokerIP1=$test_ip
storePathRootDir=$run/store
mapedFileSizeCommitLog=16777216
namesrvAddr=$ns
registerNameServerPeriod=1000
${broker_extra:-}
PROPS
  rm -f "$run/broker.ready"
  "$bin/broker/mqbroker" -c "$run/broker.properties" --ready-file "$run/broker.ready" >>"$run/broker.log" 2>&1 &
  bk_pid=$!
  pids+=("$bk_pid")
  bk_port=$(ready_port "$run/broker.ready" listenPort) || { cat "$run/broker.log" >&2; exit 1; }
}

# cluster_port_offset SCRIPT: the port offset (RMQ_PORT_OFFSET) of SCRIPT's
# cluster mode, one per script so that all of them can run at once. A
# cluster of offset O uses 9876+O (name server) and, per broker, VIP
# (listenPort-2), listenPort and haListenPort: 10909-10912+O, 10919-10922+O,
# 10929-10932+O, 10939-10942+O (no metrics or console port is set; gRPC
# shares listenPort). Offsets 6000-6500 and 6700-7200, 100 apart (whose
# port sets never meet), keep every port in 15876..18142; 6600 and 7300,
# controller-mode clusters (start_cluster_controller: name servers
# 9876-9877+O, etcd 9880-9885+O, brokers 10909-10972+O), in 16476..16485,
# 17509..17572, 17176..17185 and 18209..18272: below Linux's ephemeral range
# (32768 up, where the harness's hn_free_port, pick_vip_port and every
# client socket get theirs), below quickstart --check's offsets 11000-15900
# (20876 up), chaos.sh's 16000-20900 and the fixed 17000 (Node), 19000
# (examples), 20000 (failover), 21000 (deploy) and 21500
# (deploy_controller), and below rocketmq_lib.sh's free_port_run (20000 up).
# RMQ_TEST_CLUSTER_PORT_OFFSET overrides it.
cluster_port_offset() {
  local offset
  case $1 in
    recall) offset=6000 ;;
    trace) offset=6100 ;;
    request_reply) offset=6200 ;;
    sql92) offset=6300 ;;
    lite_pull) offset=6400 ;;
    grpc_failover) offset=6500 ;;
    grpc_failover_controller) offset=6600 ;;
    mqadmin) offset=6700 ;;
    mqadmin5) offset=6800 ;;
    mqadmin_acl) offset=6900 ;;
    mqadmin_acl5) offset=7000 ;;
    recall5) offset=7100 ;;
    grpc5) offset=7200 ;;
    grpc5_controller) offset=7300 ;;
    *) echo "# no port offset for $1" >&2; exit 1 ;;
  esac
  echo "${RMQ_TEST_CLUSTER_PORT_OFFSET:-$offset}"
}

# start_cluster_sync SCRIPT EXTRA: the 2-master/2-slave SYNC cluster of
# deploy/cluster.sh up sync (cluster DefaultCluster; every port moved by
# SCRIPT's cluster_port_offset) with EXTRA (printf %b) added to each
# broker's properties and $ns_extra (property lines), when set, to the name
# server's, its files in $run; sets $ns; stopped by cleanup.
start_cluster_sync() {
  local offset
  offset=$(cluster_port_offset "$1") || exit 1
  export RMQ_BIN=$bin RMQ_RUN_DIR=$run/cluster RMQ_PORT_OFFSET=$offset RMQ_START_TIMEOUT=30 RMQ_STOP_TIMEOUT=30
  export RMQ_CONF_DIR=$run/conf
  unset RMQ_PORT_BASE RMQ_SSH
  mkdir -p "$RMQ_CONF_DIR" "$RMQ_RUN_DIR"
  cp "$src"/deploy/2m-2s-sync/*.properties "$RMQ_CONF_DIR/"
  [ -z "${ns_extra:-}" ] || printf '\n%s\n' "$ns_extra" >>"$RMQ_CONF_DIR/namesrv.properties"
  ns=127.0.0.1:$((9876 + offset))
  cluster_up=1
  guard_cluster
  up_cluster_sync "$2"
}

# cluster_addr PIECE: the address broker PIECE (broker-a, broker-a-s, ...
# of start_cluster_sync's cluster, broker-a-1, ... of
# start_cluster_controller's) listens on, from the ready file deploy/lib.sh
# writes once it does.
cluster_addr() {
  echo "127.0.0.1:$(ready_port "$RMQ_RUN_DIR/pid/$1.ready" listenPort)"
}

# guard_cluster: a watcher in its own session that, once this script is
# gone, brings the cluster of $RMQ_RUN_DIR down and removes $run, should the
# script die before its cleanup did (meson kills a timed-out test's process
# group 0.5 s after its TERM; the daemons, in sessions of their own, would
# outlive it). Its output goes to /dev/null, so meson does not wait for it.
guard_cluster() {
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; "$2" down; rm -rf "$3"' guard "$$" \
    "$src/deploy/cluster.sh" "$run" </dev/null >/dev/null 2>&1 &
}

# up_cluster_sync EXTRA: EXTRA (printf %b; {piece} in it replaced by the
# broker's name, e.g. broker-a-s) added to each broker's properties in
# $RMQ_CONF_DIR, then deploy/cluster.sh up sync; "not ok 1" and exit when
# it fails.
up_cluster_sync() {
  local f piece
  for f in "$RMQ_CONF_DIR"/broker-*.properties; do
    piece=$(basename "$f" .properties)
    printf '\n%b' "${1//\{piece\}/$piece}" >>"$f"
  done
  "$src/deploy/cluster.sh" up sync >"$run/up.log" 2>&1 ||
    { sed 's/^/# /' "$run/up.log"; echo "not ok 1 - deploy/cluster.sh up sync"; exit 1; }
}

# restart_cluster_sync EXTRA: the cluster of start_cluster_sync stopped and
# started again on its stores with EXTRA added to each broker's properties.
restart_cluster_sync() {
  "$src/deploy/cluster.sh" down >"$run/down.log" 2>&1 ||
    { sed 's/^/# /' "$run/down.log"; echo "not ok 1 - deploy/cluster.sh down"; exit 1; }
  up_cluster_sync "$1"
}

# start_cluster_controller SCRIPT [EXTRA]: the controller-mode cluster of
# deploy/cluster.sh up controller (etcd x3, two name servers running the
# controller, groups broker-a and broker-b of 2 replicas, broker-c of 3;
# every port moved by SCRIPT's cluster_port_offset) with EXTRA (printf %b)
# added to each broker's properties, its files in $run; sets $ns (the first
# name server); stopped by cleanup.
start_cluster_controller() {
  local offset f
  offset=$(cluster_port_offset "$1") || exit 1
  export RMQ_BIN=$bin RMQ_RUN_DIR=$run/cluster RMQ_PORT_OFFSET=$offset RMQ_START_TIMEOUT=60 RMQ_STOP_TIMEOUT=30
  export RMQ_CONF_DIR=$run/conf
  unset RMQ_PORT_BASE RMQ_SSH
  mkdir -p "$RMQ_CONF_DIR" "$RMQ_RUN_DIR"
  cp "$src"/deploy/controller/*.properties "$RMQ_CONF_DIR/"
  for f in "$RMQ_CONF_DIR"/broker-*.properties; do printf '\n%b' "${2:-}" >>"$f"; done
  ns=127.0.0.1:$((9876 + offset))
  cluster_up=1
  guard_cluster
  "$src/deploy/cluster.sh" up controller >"$run/up.log" 2>&1 ||
    { sed 's/^/# /' "$run/up.log"; echo "not ok 1 - deploy/cluster.sh up controller"; exit 1; }
}

# ctl_master_of GROUP: the replica id of GROUP's master in the cluster of
# start_cluster_controller (mqadmin getSyncStateSet: column 1 the group, 2
# its master's id); its piece is GROUP-ID.
ctl_master_of() {
  "$bin/tools/mqadmin" getSyncStateSet -n "$ns" -b "$1" 2>/dev/null | awk -v g="$1" '$1 == g { print $2; exit }'
}

# admin_args: mqadmin's --client-config of $admin_config (the account it
# signs as) when that is set, as words for an array.
admin_args() {
  [ -z "${admin_config:-}" ] || echo "--client-config $admin_config"
}

# create_topic_both TOPIC [GROUPS]: TOPIC on every master of DefaultCluster,
# waiting until the name server routes it to GROUPS of them (default 2).
# mqadmin signs as the account of $admin_config when set. A master not yet
# registered at the name server fails the create: it is retried for up to
# 30 s (deploy/cluster.sh up controller waits for the masters' routes; up
# sync only for the brokers' ports, and its name server may want signed
# requests).
create_topic_both() {
  local cfg i
  read -r -a cfg <<<"$(admin_args)"
  for i in $(seq 1 30); do
    "$bin/tools/mqadmin" updateTopic -n "$ns" -c DefaultCluster -t "$1" -r 4 -w 4 "${cfg[@]}" >"$run/mqadmin.log" 2>&1 &&
      break
    [ "$i" -lt 30 ] || { cat "$run/mqadmin.log" >&2; exit 1; }
    sleep 1
  done
  wait_route_both "$1" "${2:-2}"
}

# wait_route_both TOPIC [GROUPS]: waits up to 30 s until the name server
# routes TOPIC to both masters (to GROUPS of them).
wait_route_both() {
  local cfg
  read -r -a cfg <<<"$(admin_args)"
  for _ in $(seq 1 150); do
    [ "$("$bin/tools/mqadmin" topicRoute -n "$ns" -t "$1" "${cfg[@]}" 2>/dev/null | grep -c broker-)" -ge "${2:-2}" ] && return 0
    sleep 0.2
  done
}

# start_mode MODE SCRIPT CLUSTER BROKER TOPIC EXTRA: with MODE "cluster" the
# cluster of start_cluster_sync SCRIPT EXTRA and TOPIC on both its masters,
# else a name server and the master BROKER of CLUSTER with EXTRA (printf %b)
# and TOPIC on it; sets $ns and $brokers (the names of the brokers holding
# TOPIC, comma-separated).
start_mode() {
  if [ "$1" = cluster ]; then
    start_cluster_sync "$2" "$6"
    create_topic_both "$5"
    brokers=broker-a,broker-b
  else
    start_namesrv
    broker_extra=$(printf '%b' "$6")
    start_broker "$3" "$4"
    create_topic "$3" "$5"
    brokers=$4
  fi
}

# create_topic CLUSTER TOPIC: 4 queues, waits until the name server routes it.
# mqadmin signs as the account of $admin_config (a --client-config file) when set.
create_topic() {
  local i cfg
  read -r -a cfg <<<"$(admin_args)"
  "$bin/tools/mqadmin" updateTopic -n "$ns" -c "$1" -t "$2" -r 4 -w 4 "${cfg[@]}" >"$run/mqadmin.log" 2>&1 \
    || { cat "$run/mqadmin.log" >&2; exit 1; }
  for i in $(seq 1 100); do
    "$bin/tools/mqadmin" topicRoute -n "$ns" -t "$2" "${cfg[@]}" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
}

# mqadmin_home [NAME AK SK]: a ROCKETMQ_HOME in $run/NAME (default home)
# for RocketMQ's MQAdminStartup, whose logging set-up (4.9's
# logback_tools.xml, 5.x's rmq.tools.logback.xml) keeps the tool's log in
# $run/tools-NAME.log; with AK and SK, its conf/tools.yml signs every
# command as account AK. adm (below) runs the tool with it.
mqadmin_home() {
  local name=${1:-home} conf
  mkdir -p "$run/$name/conf"
  for conf in logback_tools.xml rmq.tools.logback.xml; do
    cat >"$run/$name/conf/$conf" <<XML
<configuration>
  <appender name="F" class="ch.qos.logback.core.FileAppender">
    <file>$run/tools-$name.log</file>
    <encoder><pattern>%d %p %c - %m%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="F"/></root>
</configuration>
XML
  done
  [ -z "${2:-}" ] || printf 'accessKey: %s\nsecretKey: %s\n' "$2" "$3" >"$run/$name/conf/tools.yml"
}

# adm NAME CMD ARGS...: RocketMQ's mqadmin ($cp) CMD against $ns, run with
# the ROCKETMQ_HOME $run/$adm_as (default home; see mqadmin_home); its
# output in $run/NAME.out (stderr in .err). One JVM per home runs every
# command of a script (AdminBatch.java, started by the first call; ARGS
# hold no spaces), in $run: consumerStatus writes each client's running
# info under the working directory.
declare -A adm_w adm_r
adm() {
  local name=$1 as=${adm_as:-home} line=""
  shift
  [ -n "${adm_w[$as]:-}" ] || adm_start "$as"
  echo "$name $* -n $ns" >&"${adm_w[$as]}"
  while read -r -t 120 line <&"${adm_r[$as]}"; do [ "$line" = "DONE $name" ] && break; done
  echo "# mqadmin $* printed:"
  head -40 "$run/$name.out" | awk '{print "#   " $0}'   # awk ends even an unterminated last line
  grep -m3 -E 'Exception|CODE:' "$run/$name.err" | awk '{print "#   stderr: " $0}'
}

# adm_start HOME: AdminBatch with ROCKETMQ_HOME $run/HOME in the background,
# fed and read through the FIFOs $run/adm-HOME.in and $run/adm-HOME.res
# (descriptors ${adm_w[HOME]} and ${adm_r[HOME]}).
adm_start() {
  local w r
  mkfifo "$run/adm-$1.in" "$run/adm-$1.res"
  (cd "$run" && exec timeout 900 java -Drocketmq.home.dir="$run/$1" -cp "$cp" rmqtest.AdminBatch "$run") \
    <"$run/adm-$1.in" >"$run/adm-$1.res" 2>"$run/adm-$1.stderr" &
  pids+=("$!")
  exec {w}>"$run/adm-$1.in" {r}<"$run/adm-$1.res"
  adm_w[$1]=$w
  adm_r[$1]=$r
}

# TAP checks of commands whose output a script keeps in $run/NAME.out and
# $run/NAME.err (the mqadmin and Node tests).
n=0
# ok WHAT COND...: one TAP line, ok when the command COND... succeeds
ok() {
  local what=$1
  shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; not_ok=$((${not_ok:-0} + 1)); fi
}
# has NAME ERE: the output of NAME has a line matching ERE
has() { grep -Eq -- "$2" "$run/$1.out"; }
# count NAME ERE: how many lines of NAME's output match ERE
count() { grep -Ec -- "$2" "$run/$1.out"; }
# clean NAME: the command raised no exception
clean() { ! grep -Eq 'Exception|CODE:' "$run/$1.err" "$run/$1.out"; }

# TAP checks of Java (or Node) programs that print "OK CHECK detail" or
# "FAIL CHECK detail" per check.
# java_check CHECK WHAT FILE...: one TAP line, ok when the first line of
# FILE... for CHECK says OK; that line (or its absence) as a comment.
java_check() {
  local check=$1 what=$2 line
  shift 2
  n=$((n + 1))
  line=$(cat "$@" 2>/dev/null | grep -E "^(OK|FAIL) $check " | head -1)
  echo "# ${line:-no output for $check}"
  if [[ $line == OK* ]]; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}
# broker_log_clean [ERE [EXCEPT]]: one TAP line, ok when no line of the
# broker's log matches ERE (default ERROR), leaving out those that match
# the ERE EXCEPT (an error the test provoked); the first five that do as comments.
broker_log_clean() {
  local ere=${1:-ERROR} except=${2:-} errs logs=("$run/broker.log")
  [ -z "${cluster_up:-}" ] || logs=("$RMQ_RUN_DIR"/logs/*)
  n=$((n + 1))
  errs=$(cat "${logs[@]}" | grep -E "$ere" | { [ -n "$except" ] && grep -Ev "$except" || cat; })
  [ -z "$errs" ] || head -5 <<<"$errs" | sed 's/^/# broker: /'
  if [ -z "$errs" ]; then echo "ok $n - the broker logged no error"; else echo "not ok $n - the broker logged $(wc -l <<<"$errs") errors"; fi
}
