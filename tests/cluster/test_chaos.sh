#!/bin/bash
# test_chaos.sh: a short scripts/chaos.sh run (about 45 s of faults) as a TAP
# cluster test: kill -9 / restart of random brokers, SIGSTOP of slaves and HA
# link cuts on the 2m-2s SYNC cluster under load; every acknowledged message
# must be consumed and no body may differ. RMQ_CHAOS_DURATION overrides 45.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
echo "1..1"
out=$(mktemp /tmp/rmq-test-chaos.XXXXXX)
RMQ_BIN=${RMQ_BIN:-${RMQ_BUILD_ROOT:?RMQ_BUILD_ROOT not set}} \
  "$here/../../scripts/chaos.sh" --duration "${RMQ_CHAOS_DURATION:-45}" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
rm -f "$out"
if [ $rc = 0 ]; then
  echo "ok 1 - chaos: every acknowledged message consumed, no body differs"
else
  echo "not ok 1 - chaos: scripts/chaos.sh exited $rc"
fi
exit 0
