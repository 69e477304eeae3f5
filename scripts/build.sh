#!/bin/bash
# Configures (once) and builds one build directory, for test.sh, quickstart.sh
# and bench.sh alike:
#   scripts/build.sh DIR [meson options...] [-- ninja targets...]
# Without targets everything is built (the tests too). Quiet unless it fails;
# then meson's or ninja's output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  opts+=("$1")
  shift
done
[ $# -eq 0 ] || shift
# quiet CMD...: runs CMD; on failure prints its output to stderr and exits.
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" >&2
    exit 1
  fi
}

if [ ! -f "$dir/build.ninja" ]; then
  quiet meson setup "$dir" "${opts[@]}"
fi
quiet ninja -C "$dir" "$@"
