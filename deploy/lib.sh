# shellcheck shell=bash
# deploy/lib.sh: what mqnamesrv.sh and mqbroker.sh share. Sourced, not run.
#
# A "piece" is one daemon started from one properties file; its name is the
# file's base name without .properties (namesrv, broker-a, broker-a-s, ...).
# Everything a piece writes lives under the run directory $RMQ_RUN_DIR:
#
#   conf/NAME.properties   the effective copy the daemon is started with
#   pid/NAME.pid           its pid
#   pid/NAME.ready         written by the daemon once it listens (listenPort=N),
#                          removed by it on a clean stop
#   logs/NAME.log          the daemon's stdout and stderr (appended)
#   store/...              broker stores (relative storePathRootDir)
#
# Relative paths in a properties file (storePathRootDir, storePathCommitLog,
# logPath, kvConfigPath) are relative to $RMQ_RUN_DIR: the effective copy has
# them made absolute, and the daemon also runs with $RMQ_RUN_DIR as its working
# directory (the systemd units do the same with WorkingDirectory=/var/lib/rmq).
#
# Environment:
#   RMQ_HOME          the checkout (default: the parent of deploy/)
#   RMQ_BIN           where the binaries are: a meson build directory
#                     (BIN/namesrv/mqnamesrv, BIN/broker/mqbroker, BIN/tools/mqadmin)
#                     or a flat directory (BIN/mqnamesrv ...); default $RMQ_HOME/build
#   RMQ_RUN_DIR       the run directory (default $RMQ_HOME/deploy/run)
#   RMQ_PORT_OFFSET   added to every port in the files: listenPort, haListenPort and
#                     the ports in namesrvAddr, haMasterAddress, controllerAddr and
#                     controllerEtcdEndpoints (default 0)
#   RMQ_PORT_BASE     the same, given as the name server's port: offset = BASE - 9876
#   RMQ_START_TIMEOUT seconds start waits for the port (default 30)
#   RMQ_STOP_TIMEOUT  seconds stop waits after SIGTERM before SIGKILL (default 30)

RMQ_HOME=${RMQ_HOME:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RMQ_BIN=${RMQ_BIN:-$RMQ_HOME/build}
RMQ_RUN_DIR=${RMQ_RUN_DIR:-$RMQ_HOME/deploy/run}
RMQ_START_TIMEOUT=${RMQ_START_TIMEOUT:-30}
RMQ_STOP_TIMEOUT=${RMQ_STOP_TIMEOUT:-30}

rmq_die() {
  echo "$RMQ_PROG: $*" >&2
  exit 1
}

# rmq_port_offset: prints the port offset from RMQ_PORT_BASE / RMQ_PORT_OFFSET.
rmq_port_offset() {
  if [ -n "${RMQ_PORT_BASE:-}" ]; then
    echo $((RMQ_PORT_BASE - 9876))
  else
    echo $((${RMQ_PORT_OFFSET:-0}))
  fi
}

# rmq_find_bin NAME SUBDIR: prints the path of binary NAME under RMQ_BIN.
rmq_find_bin() {
  local b
  for b in "$RMQ_BIN/$2/$1" "$RMQ_BIN/$1"; do
    if [ -x "$b" ]; then
      echo "$b"
      return 0
    fi
  done
  rmq_die "$1 not found in $RMQ_BIN (set RMQ_BIN to a build directory or the directory holding it)"
}

# rmq_abspath FILE: prints FILE made absolute (it must exist).
rmq_abspath() {
  [ -f "$1" ] || rmq_die "$1: no such file"
  echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}

# rmq_gen_conf SRC DST [KEY=VALUE...]: writes the effective copy of SRC to
# DST: relative paths made absolute under RMQ_RUN_DIR, ports moved by the
# offset, and each KEY given (e.g. namesrvAddr, brokerIP1, bindAddress) set to
# its VALUE instead of the file's, taken as is (the offset does not apply).
# Only key=value and key:value lines are understood (no continuation lines).
rmq_gen_conf() {
  local src=$1 dst=$2 off overrides
  shift 2
  off=$(rmq_port_offset)
  overrides=$(printf '%s\n' "$@")
  awk -v run="$RMQ_RUN_DIR" -v off="$off" -v overrides="$overrides" -v src="$src" '
    function trim(s) { gsub(/^[ \t]+|[ \t\r]+$/, "", s); return s }
    function shift_addrs(list, sep,    n, parts, i, out, c, host, port) {
      n = split(list, parts, sep)
      out = ""
      for (i = 1; i <= n; i++) {
        c = match(parts[i], /:[0-9]+$/)
        if (c > 0) {
          host = substr(parts[i], 1, c - 1)
          port = substr(parts[i], c + 1) + off
          parts[i] = host ":" port
        }
        out = out (i > 1 ? sep : "") parts[i]
      }
      return out
    }
    BEGIN {
      print "# generated from " src " by deploy/lib.sh: do not edit, edit the source"
      n_over = split(overrides, lines, "\n")
      for (i = 1; i <= n_over; i++) {
        c = index(lines[i], "=")
        if (c > 0) { k = substr(lines[i], 1, c - 1); order[++n_keys] = k; over[k] = substr(lines[i], c + 1) }
      }
    }
    /^[ \t]*([#!]|$)/ { next }
    {
      line = $0
      c = match(line, /[=:]/)
      if (c == 0) { print line; next }
      key = trim(substr(line, 1, c - 1))
      val = trim(substr(line, c + 1))
      if (key in over) next
      if (key == "storePathRootDir" || key == "storePathCommitLog" || key == "logPath" || key == "kvConfigPath") {
        if (val != "" && substr(val, 1, 1) != "/") val = run "/" val
      } else if (key == "listenPort" || key == "haListenPort") {
        if (val + 0 != 0) val = val + off
      } else if (key == "namesrvAddr" || key == "haMasterAddress" || key == "controllerAddr") {
        val = shift_addrs(val, ";")
      } else if (key == "controllerEtcdEndpoints") {
        val = shift_addrs(val, ",")
      }
      print key "=" val
    }
    END { for (i = 1; i <= n_keys; i++) print order[i] "=" over[order[i]] }' "$src" >"$dst.tmp" && mv "$dst.tmp" "$dst"
}

# rmq_conf_get FILE KEY: prints KEY's value from a key=value file (last wins).
rmq_conf_get() {
  awk -v k="$2" 'index($0, k "=") == 1 { v = substr($0, length(k) + 2) } END { print v }' "$1" 2>/dev/null
}

# rmq_exists PID: true if PID exists and is not a zombie (a daemon whose
# starter is gone is reaped by init, which may take a while).
rmq_exists() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# rmq_alive PID CONF: true if PID runs and its command line names CONF
# (so a recycled pid is not mistaken for the daemon).
rmq_alive() {
  local pid=$1 conf=$2 cmd
  [ -n "$pid" ] && rmq_exists "$pid" || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  case "$cmd" in
    *"$conf"*) return 0 ;;
    *) return 1 ;;
  esac
}

# rmq_port_open HOST PORT: true if a TCP connect to HOST:PORT succeeds.
rmq_port_open() {
  # shellcheck disable=SC2016 # $1 and $2 expand in the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# rmq_piece_init NAME: sets the per-piece paths.
rmq_piece_init() {
  PIECE=$1
  CONF=$RMQ_RUN_DIR/conf/$PIECE.properties
  PIDFILE=$RMQ_RUN_DIR/pid/$PIECE.pid
  READY=$RMQ_RUN_DIR/pid/$PIECE.ready
  LOG=$RMQ_RUN_DIR/logs/$PIECE.log
}

# rmq_pid: prints the pid from the pid file (empty if none).
rmq_pid() {
  cat "$PIDFILE" 2>/dev/null || true
}

# rmq_tail_log: the last lines of the piece's log, to stderr.
rmq_tail_log() {
  local f
  for f in "$LOG" "$(rmq_conf_get "$CONF" logPath)"; do
    if [ -n "$f" ] && [ -s "$f" ]; then
      echo "--- last lines of $f:" >&2
      tail -n "${RMQ_TAIL_LINES:-20}" "$f" >&2
    fi
  done
}

# rmq_start BIN ROLE CHECKHOST EXTRA_ARGS...: starts the piece from $CONF and
# waits until it wrote its ready file and its port answers.
rmq_start() {
  local bin=$1 role=$2 host=$3 pid port waited=0 limit f
  shift 3
  pid=$(rmq_pid)
  if rmq_alive "$pid" "$CONF"; then
    echo "$PIECE already running pid=$pid port=$(rmq_conf_get "$READY" listenPort) role=$role"
    return 0
  fi
  rm -f "$PIDFILE" "$READY"
  port=$(rmq_conf_get "$CONF" listenPort)
  if [ -n "$port" ] && [ "$port" != 0 ] && rmq_port_open "$host" "$port"; then
    rmq_die "$PIECE: port $port is already in use (another process listens on it)"
  fi
  mkdir -p "$RMQ_RUN_DIR/logs"
  # the daemons do not create the directories of their files
  for f in "$(rmq_conf_get "$CONF" logPath)" "$(rmq_conf_get "$CONF" kvConfigPath)"; do
    [ -z "$f" ] || mkdir -p "$(dirname "$f")"
  done
  echo "=== $(date '+%F %T') start: $bin -c $CONF $*" >>"$LOG"
  # setsid: own session, so the daemon outlives the shell or ssh session that
  # started it; in a non-interactive shell the background job is not a group
  # leader, so setsid execs in place and $! is the daemon's pid.
  (cd "$RMQ_RUN_DIR" && exec setsid "$bin" -c "$CONF" --ready-file "$READY" "$@" </dev/null >>"$LOG" 2>&1) &
  pid=$!
  echo "$pid" >"$PIDFILE"
  limit=$((RMQ_START_TIMEOUT * 10))
  while :; do
    if ! rmq_exists "$pid"; then
      rm -f "$PIDFILE"
      echo "$RMQ_PROG: $PIECE exited during start" >&2
      rmq_tail_log
      return 1
    fi
    if [ -s "$READY" ]; then
      port=$(rmq_conf_get "$READY" listenPort)
      if rmq_port_open "$host" "$port"; then
        break
      fi
    fi
    if [ "$waited" -ge "$limit" ]; then
      echo "$RMQ_PROG: $PIECE did not answer on port ${port:-?} within ${RMQ_START_TIMEOUT}s; stopping it" >&2
      rmq_tail_log
      rmq_stop >/dev/null 2>&1 || true
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  echo "$PIECE started pid=$pid port=$port role=$role"
}

# rmq_stop: SIGTERM, then wait up to RMQ_STOP_TIMEOUT for the exit; SIGKILL
# after that. Returns 0 on a clean stop (or nothing running), 1 otherwise.
rmq_stop() {
  local pid waited=0 limit
  pid=$(rmq_pid)
  if ! rmq_alive "$pid" "$CONF"; then
    rm -f "$PIDFILE"
    echo "$PIECE not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  limit=$((RMQ_STOP_TIMEOUT * 10))
  while rmq_exists "$pid"; do
    if [ "$waited" -ge "$limit" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      rm -f "$PIDFILE" "$READY"
      echo "$RMQ_PROG: $PIECE pid $pid did not stop within ${RMQ_STOP_TIMEOUT}s of SIGTERM: sent SIGKILL" >&2
      rmq_tail_log
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "$PIDFILE"
  # Clean stop: mqnamesrv removes its ready file; mqbroker (for now) only logs
  # "stopped cleanly". Neither: warn (e.g. logLevel above info hides the line).
  if [ -e "$READY" ] && ! rmq_log_since_start | grep -qE 'stopped cleanly|name server stopped'; then
    rm -f "$READY"
    echo "$RMQ_PROG: $PIECE pid $pid exited, but no clean stop was seen (ready file left, no clean-stop line in $LOG)" >&2
    rmq_tail_log
    echo "$PIECE stopped pid=$pid (unconfirmed)"
    return 0
  fi
  rm -f "$READY"
  echo "$PIECE stopped pid=$pid"
}

# rmq_log_since_start: the piece's log from the last start marker on.
rmq_log_since_start() {
  awk '/^=== .* start: / { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$LOG" 2>/dev/null || true
}

# rmq_status ROLE: prints "NAME running pid=N port=P role=R" (returns 0) or
# "NAME stopped" (returns 3).
rmq_status() {
  local role=$1 pid port
  pid=$(rmq_pid)
  if rmq_alive "$pid" "$CONF"; then
    port=$(rmq_conf_get "$READY" listenPort)
    [ -n "$port" ] || port=$(rmq_conf_get "$CONF" listenPort)
    echo "$PIECE running pid=$pid port=$port role=$role"
    return 0
  fi
  if [ -n "$pid" ]; then
    echo "$PIECE stopped (stale pid file, pid $pid is gone)"
  else
    echo "$PIECE stopped"
  fi
  return 3
}
