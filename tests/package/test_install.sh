#!/bin/bash
# tests/package/test_install.sh [BUILD_DIR]: `meson install` of BUILD_DIR
# (default build/, configured and built) into a temporary DESTDIR. Checks
# that the install holds exactly the files an install ships (the four
# binaries, librmq shared with its soname links and static, the public
# headers, rmq.pc, the 2m-2s example configs, the systemd units with the
# install's bindir in ExecStart) and nothing else (no test binary, no
# fuzzer); then builds tests/package/rmq_pkgcheck.c against the installed
# librmq with pkg-config only, once shared (run with LD_LIBRARY_PATH into the
# DESTDIR) and once static (pkg-config --static, a -static executable), and
# runs both. Prints TAP; exit 0 when every check passed. Removes its
# temporary directory on every exit.
# functions run through check() look unreachable to shellcheck
# shellcheck disable=SC2317
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd) || { echo "Bail out! no build directory ${1:-$src/build}"; exit 1; }
tmp=$(mktemp -d /tmp/rmq-test-install.XXXXXX)
dest=$tmp/dest
out=$tmp/out.txt
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

. "$here/../tap.sh"

# opt NAME: the value of one of the build directory's meson options
opt() {
  meson introspect --buildoptions "$build" |
    python3 -c 'import json, sys; print(*[o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]])' "$1"
}

prefix=$(opt prefix)
bindir=$prefix/$(opt bindir)
libdir=$prefix/$(opt libdir)
incdir=$prefix/$(opt includedir)
datadir=$prefix/$(opt datadir)
unitdir=$(opt systemdunitdir)
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
version=$(meson introspect --projectinfo "$build" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
soversion=${version%%.*}

# expected_files: every file (and symlink) the install must hold, sorted
expected_files() {
  local b v f
  for b in mqnamesrv mqbroker mqadmin mqbench; do echo "$bindir/$b"; done
  echo "$libdir/librmq.a"
  echo "$libdir/librmq.so"
  echo "$libdir/librmq.so.$soversion"
  echo "$libdir/librmq.so.$version"
  echo "$libdir/pkgconfig/rmq.pc"
  echo "$incdir/rmq/rmq.h"
  echo "$incdir/rmq/rmq_err.h"
  for v in 2m-2s-sync 2m-2s-async controller; do
    for f in "$src/deploy/$v"/*.properties; do
      echo "$datadir/doc/rmq/examples/$v/${f##*/}"
    done
  done
  echo "$unitdir/mqnamesrv.service"
  echo "$unitdir/mqbroker@.service"
}

installed_matches() {
  expected_files | sort >"$tmp/expected"
  (cd "$dest" && find . ! -type d | sed 's|^\.||' | sort) >"$tmp/installed"
  diff -u "$tmp/expected" "$tmp/installed"
}

soname_is_versioned() {
  objdump -p "$dest$libdir/librmq.so.$version" | grep -E "SONAME +librmq\.so\.$soversion\$" &&
    [ "$(readlink "$dest$libdir/librmq.so")" = "librmq.so.$soversion" ] &&
    [ "$(readlink "$dest$libdir/librmq.so.$soversion")" = "librmq.so.$version" ]
}

units_use_bindir() {
  grep -Fx "ExecStart=$bindir/mqnamesrv -c /etc/rmq/namesrv.properties" "$dest$unitdir/mqnamesrv.service" &&
    grep -Fx "ExecStart=$bindir/mqbroker -c /etc/rmq/%i.properties" "$dest$unitdir/mqbroker@.service" &&
    ! grep -n '@[A-Z]*@' "$dest$unitdir"/*.service
}

binaries_run() {
  local b
  for b in mqnamesrv mqbroker mqadmin; do
    "$dest$bindir/$b" -h >/dev/null || { echo "$b -h failed"; return 1; }
  done
  # mqbench without a command prints its usage and exits 2
  grep -q '^usage: mqbench' <<<"$("$dest$bindir/mqbench" 2>&1)"
}

# pkgconf: pkg-config run against the DESTDIR only for rmq (the libraries
# it requires come from the system)
pkgconf() {
  PKG_CONFIG_PATH=$dest$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest pkg-config "$@"
}

build_shared() {
  # shellcheck disable=SC2046 # pkg-config prints several words
  cc -Wall -Wextra -Werror -o "$tmp/pkgcheck-shared" "$here/rmq_pkgcheck.c" \
    $(pkgconf --cflags --libs rmq) &&
    readelf -d "$tmp/pkgcheck-shared" | grep -F "[librmq.so.$soversion]"
}

run_shared() {
  LD_LIBRARY_PATH=$dest$libdir "$tmp/pkgcheck-shared" &&
    LD_LIBRARY_PATH=$dest$libdir ldd "$tmp/pkgcheck-shared" | grep -F "$dest$libdir/librmq.so.$soversion"
}

build_static() {
  # shellcheck disable=SC2046 # pkg-config prints several words
  cc -static -Wall -Wextra -Werror -o "$tmp/pkgcheck-static" "$here/rmq_pkgcheck.c" \
    $(pkgconf --static --cflags --libs rmq) &&
    ! readelf -d "$tmp/pkgcheck-static" | grep -F NEEDED
}

echo "1..9"
for b in namesrv/mqnamesrv broker/mqbroker tools/mqadmin tools/mqbench; do
  if [ ! -x "$build/$b" ]; then
    echo "Bail out! $build/$b not built"
    exit 1
  fi
done

check "meson install --destdir" meson install -C "$build" --destdir "$dest"
check "installed files are exactly the expected ones" installed_matches
check "librmq.so.$version has soname librmq.so.$soversion and the dev links" soname_is_versioned
check "systemd units run $bindir binaries, no placeholder left" units_use_bindir
check "installed binaries run" binaries_run
check "pkg-config --modversion rmq is $version" test "$(pkgconf --modversion rmq)" = "$version"
check "a program builds against the installed librmq.so with pkg-config" build_shared
check "it runs against the installed librmq.so" run_shared
if build_static >"$out" 2>&1; then
  check "a -static program built with pkg-config --static runs" "$tmp/pkgcheck-static"
else
  not_ok "a -static program builds with pkg-config --static"
fi

[ "$failed" -eq 0 ]
