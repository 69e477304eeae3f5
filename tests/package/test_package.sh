#!/bin/bash
# tests/package/test_package.sh: the Debian packages, built and used as an
# administrator would. As root: installs the build dependencies (apt-get
# build-dep of debian/control), builds rmq, librmq0 and librmq-dev with
# `dpkg-buildpackage -us -uc -b` in a temporary copy of the tree (no build
# artefact lands in the checkout), installs them with apt-get, and checks
# the system user rmq, /var/lib/rmq owned by it, the conffiles in /etc/rmq,
# the systemd units (`systemd-analyze verify` when it can run). Then starts
# the name server and broker-a exactly as the installed units' ExecStart,
# User= and WorkingDirectory= say (no systemd runs here: setpriv), on free
# loopback ports written into /etc/rmq, sends a message with the installed
# mqadmin and one with a program built against librmq-dev with pkg-config,
# reads both back with mqadmin consumeMessage, stops both daemons with
# SIGTERM (exit 0 wanted), and purges the packages: /var/lib/rmq and
# /etc/rmq must be gone, the rmq user stays (Debian keeps system users).
# Prints TAP; exit 0 when every check passed. On every exit it kills what it
# started, purges what it installed, removes the rmq user if it created it
# and deletes its temporary directory. Refuses to run where an rmq package
# is already installed.
# functions run through check() look unreachable to shellcheck
# shellcheck disable=SC2317
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
packages=(rmq librmq0 librmq-dev)
topic=PkgTestTopic
mqadmin=/usr/bin/mqadmin

if [ "$(id -u)" -ne 0 ]; then
  echo "1..0 # SKIP needs root (apt-get, dpkg, a system user)"
  exit 0
fi
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed'; then
    echo "Bail out! package $p is already on this machine; not touching it"
    exit 1
  fi
done

tmp=$(mktemp -d /tmp/rmq-test-package.XXXXXX)
out=$tmp/out.txt
user_was_there=0
getent passwd rmq >/dev/null && user_was_there=1
installed=0
pids=()

cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -9 "$pid" 2>/dev/null
  done
  if [ "$installed" = 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1
  fi
  if [ "$user_was_there" = 0 ] && getent passwd rmq >/dev/null; then
    deluser --system --quiet rmq >/dev/null 2>&1
    getent group rmq >/dev/null && delgroup --system --quiet rmq >/dev/null 2>&1
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$here/../tap.sh"
# bail DESC: the checks after this one cannot run
bail() {
  echo "Bail out! $1"
  sed 's/^/# /' "$out"
  exit 1
}

# copy_tree: the checkout's tracked and untracked-but-not-ignored files
# (what a commit of it would hold) into $tmp/src
copy_tree() {
  mkdir -p "$tmp/src" &&
    git -C "$src" ls-files -co --exclude-standard -z |
    (cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$tmp/src"
}

# install_build_deps: what debian/control's Build-Depends names, with
# apt-get only when something is missing
install_build_deps() {
  export DEBIAN_FRONTEND=noninteractive
  if command -v dpkg-checkbuilddeps >/dev/null && (cd "$tmp/src" && dpkg-checkbuilddeps); then
    echo "build dependencies already installed"
    return 0
  fi
  apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends dpkg-dev &&
    apt-get build-dep -y -qq --no-install-recommends "$tmp/src"
}

versions_agree() {
  local deb meson_v
  deb=$(cd "$tmp/src" && dpkg-parsechangelog -S Version)
  meson_v=$(meson introspect --projectinfo "$tmp/src/meson.build" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
  echo "debian/changelog $deb, meson.build $meson_v"
  [ "${deb%%-*}" = "$meson_v" ]
}

build_packages() {
  (cd "$tmp/src" && dpkg-buildpackage -us -uc -b -Jauto) >"$tmp/build.log" 2>&1 || {
    tail -40 "$tmp/build.log"
    return 1
  }
  ls "$tmp"/*.deb
}

install_packages() {
  local p debs=()
  for p in "${packages[@]}"; do
    debs+=("$tmp/${p}_"*.deb)
  done
  installed=1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}"
}

user_is_system() {
  local uid shell
  uid=$(getent passwd rmq | cut -d: -f3)
  shell=$(getent passwd rmq | cut -d: -f7)
  getent group rmq && [ "$uid" -lt 1000 ] && [ "$shell" = /usr/sbin/nologin ]
}

state_dir_owned() {
  stat -c '%U:%G %a' /var/lib/rmq
  [ "$(stat -c '%U:%G' /var/lib/rmq)" = rmq:rmq ]
}

conffiles_listed() {
  local conf f
  conf=$(dpkg-query -W -f='${Conffiles}' rmq)
  for f in namesrv broker-a broker-a-s broker-b broker-b-s; do
    grep -q " /etc/rmq/$f.properties " <<<"$conf" || { echo "/etc/rmq/$f.properties not a conffile"; return 1; }
  done
}

# unit NAME: the installed path of unit NAME of package rmq
unit() {
  dpkg -L rmq | grep -E "/systemd/system/$1\$"
}

units_installed() {
  unit mqnamesrv.service && unit 'mqbroker@.service' && [ ! -e /etc/systemd/system/multi-user.target.wants/mqnamesrv.service ]
}

# systemd-analyze verify of both units (the template as instance
# broker-a); 77 when systemd-analyze cannot run here
units_verify() {
  command -v systemd-analyze >/dev/null || return 77
  mkdir -p "$tmp/units" &&
    cp "$(unit mqnamesrv.service)" "$tmp/units/" &&
    cp "$(unit 'mqbroker@.service')" "$tmp/units/mqbroker@broker-a.service" &&
    SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no \
      "$tmp/units/mqnamesrv.service" "$tmp/units/mqbroker@broker-a.service"
}

# unit_key UNIT KEY: the value of KEY= in the [Service] section of UNIT
unit_key() {
  sed -n "s/^$2=//p" "$(unit "$1")"
}

# port_busy PORT: something listens on 127.0.0.1:PORT (or any address)
port_busy() {
  [ -n "$(ss -Htln "sport = :$1")" ]
}

# pick_ports: ns_port, bk_port, ha_port = bk_port+1, all free; from
# 17000-19999, between the quickstart's/bench's (20000-) and the clients'
pick_ports() {
  local i base
  for ((i = 0; i < 50; i++)); do
    base=$((17000 + RANDOM % 2990))
    if ! port_busy "$base" && ! port_busy $((base + 1)) && ! port_busy $((base + 2)); then
      ns_port=$base bk_port=$((base + 1)) ha_port=$((base + 2))
      return 0
    fi
  done
  return 1
}

# set_prop FILE KEY VALUE: KEY=VALUE in FILE (replacing the line of KEY)
set_prop() {
  grep -q "^$2=" "$1" && sed -i "s|^$2=.*|$2=$3|" "$1"
}

configure_ports() {
  set_prop /etc/rmq/namesrv.properties listenPort "$ns_port" &&
    set_prop /etc/rmq/namesrv.properties bindAddress 127.0.0.1 &&
    set_prop /etc/rmq/broker-a.properties listenPort "$bk_port" &&
    set_prop /etc/rmq/broker-a.properties haListenPort "$ha_port" &&
    set_prop /etc/rmq/broker-a.properties namesrvAddr "127.0.0.1:$ns_port"
}

# start_unit UNIT INSTANCE LOG: runs the unit's ExecStart (%i = INSTANCE) as
# its User= and Group= in its WorkingDirectory=, in the background; the
# daemon's pid is appended to pids (setpriv execs, so it is the daemon)
start_unit() {
  local exec wd user group
  exec=$(unit_key "$1" ExecStart)
  exec=${exec//%i/$2}
  wd=$(unit_key "$1" WorkingDirectory)
  user=$(unit_key "$1" User)
  group=$(unit_key "$1" Group)
  echo "$1: cd $wd; as $user:$group: $exec"
  [ -n "$exec" ] && [ -n "$wd" ] && [ -n "$user" ] || return 1
  # shellcheck disable=SC2086 # the ExecStart line is split into words, as systemd does here
  (cd "$wd" && exec setpriv --reuid="$user" --regid="$group" --init-groups -- $exec) >"$3" 2>&1 &
  pids+=($!)
}

# wait_for SECONDS CMD...: retries CMD every 0.2 s until it succeeds
wait_for() {
  local i limit=$(($1 * 5))
  shift
  for ((i = 0; i < limit; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  "$@"
}

broker_registered() {
  "$mqadmin" clusterList -n "127.0.0.1:$ns_port" 2>&1 | grep -q broker-a
}

start_daemons() {
  if start_unit mqnamesrv.service "" "$tmp/namesrv.log" &&
    wait_for 30 port_busy "$ns_port" &&
    start_unit 'mqbroker@.service' broker-a "$tmp/broker-a.log" &&
    wait_for 60 broker_registered; then
    return 0
  fi
  tail -20 "$tmp/namesrv.log" "$tmp/broker-a.log"
  return 1
}

daemons_run_as_rmq() {
  local pid
  for pid in "${pids[@]}"; do
    ps -o user=,args= -p "$pid"
    [ "$(ps -o user= -p "$pid")" = rmq ] || return 1
  done
  stat -c '%U %n' /var/lib/rmq/store/broker-a
  [ "$(stat -c '%U' /var/lib/rmq/store/broker-a)" = rmq ]
}

send_with_mqadmin() {
  wait_for 30 "$mqadmin" updateTopic -n "127.0.0.1:$ns_port" -c DefaultCluster -t "$topic" &&
    "$mqadmin" sendMessage -n "127.0.0.1:$ns_port" -t "$topic" -p "sent-by-mqadmin-$$"
}

build_against_dev() {
  # shellcheck disable=SC2046 # pkg-config prints several words
  cc -Wall -Wextra -Werror -o "$tmp/pkgcheck" "$here/rmq_pkgcheck.c" $(pkg-config --cflags --libs rmq) &&
    ldd "$tmp/pkgcheck" | grep -F "/librmq.so.0 "
}

consume_sees_both() {
  "$mqadmin" consumeMessage -n "127.0.0.1:$ns_port" -t "$topic" &&
    "$mqadmin" consumeMessage -n "127.0.0.1:$ns_port" -t "$topic" | grep -q "sent-by-mqadmin-$$" &&
    "$mqadmin" consumeMessage -n "127.0.0.1:$ns_port" -t "$topic" | grep -q "sent-by-librmq-$$"
}

# stop PID: SIGTERM, then its exit status must be 0 within 60 s
stop() {
  local rc
  kill -TERM "$1" || return 1
  timeout 60 tail --pid="$1" -f /dev/null
  wait "$1"
  rc=$?
  echo "exit $rc"
  [ "$rc" -eq 0 ]
}

purge_packages() {
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" && installed=0
}

purged_clean() {
  local gone=1 p
  for p in /var/lib/rmq /etc/rmq /usr/bin/mqbroker /usr/include/rmq; do
    if [ -e "$p" ]; then echo "$p still there"; gone=0; fi
  done
  if ls /lib/systemd/system/mqnamesrv.service /usr/lib/systemd/system/mqnamesrv.service 2>/dev/null; then
    gone=0
  fi
  getent passwd rmq || { echo "the rmq user is gone (Debian keeps system users)"; gone=0; }
  [ "$gone" = 1 ]
}

echo "1..19"
copy_tree >"$out" 2>&1 || bail "cannot copy the tree into $tmp/src"
check "build dependencies installed (apt-get build-dep)" install_build_deps
check "debian/changelog's version is meson.build's" versions_agree
check "dpkg-buildpackage -us -uc -b" build_packages || bail "no package to test"
check "apt-get install ${packages[*]}" install_packages || bail "packages do not install"
check "system user and group rmq, no login shell" user_is_system
check "/var/lib/rmq is owned by rmq" state_dir_owned
check "/etc/rmq/*.properties are conffiles" conffiles_listed
check "units installed, mqnamesrv not enabled" units_installed
units_verify >"$out" 2>&1
case $? in
  0) ok "systemd-analyze verify passes on both units" ;;
  77) ok "systemd-analyze verify # SKIP systemd-analyze not installed" ;;
  *) not_ok "systemd-analyze verify passes on both units" ;;
esac
pick_ports >"$out" 2>&1 || bail "no free loopback ports in 17000-19999"
check "/etc/rmq configs moved to free ports ($ns_port, $bk_port, $ha_port)" configure_ports
check "name server and broker-a start as the units' ExecStart says" start_daemons ||
  bail "daemons did not start"
check "both run as rmq and the store is rmq's" daemons_run_as_rmq
check "mqadmin updateTopic + sendMessage" send_with_mqadmin
check "a program builds against librmq-dev with pkg-config" build_against_dev
check "it sends through the installed librmq" "$tmp/pkgcheck" "127.0.0.1:$ns_port" "$topic" "sent-by-librmq-$$"
check "mqadmin consumeMessage reads both messages" consume_sees_both
check "SIGTERM stops broker-a with exit 0" stop "${pids[1]}"
check "SIGTERM stops the name server with exit 0" stop "${pids[0]}"
pids=()
check "apt-get purge removes /var/lib/rmq, /etc/rmq, the files; the user stays" \
  eval 'purge_packages && purged_clean'

[ "$failed" -eq 0 ]
