#!/bin/bash
# test_chaos_netns.sh: a short scripts/chaos.sh --controller --netns run
# (about 50 s of faults, RMQ_CHAOS_DURATION overrides; RMQ_CHAOS_FAULTS the
# list) as a TAP cluster test: the controller-mode cluster deployed by
# deploy/cluster.sh -H over one network namespace per piece, under load, with
# packets dropped by nftables: a master/slave link cut one way until the
# slave left the in-sync set, then the master killed the moment the slave is
# back in it; the leading controller partitioned together with a master
# (from the other controller and etcd); a master killed while its links are
# lossy and then its promoted slave within 1 s of its first acknowledgement
# (heartbeat timeout 4 s so the short run sees several failovers); at the end
# every replica back in its in-sync set. scripts/chaos-check.py must find no acknowledged
# id missing, no double-master epoch, no late acknowledgement and nothing
# consumed that the final log lost. SKIP when not root, without network
# namespaces, nft or etcd. The run removes its namespaces and processes
# itself, also when killed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
echo "1..1"
skip() {
  echo "ok 1 # SKIP $*"
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v nft >/dev/null || skip "no nft (apt-get install nftables)"
command -v etcd >/dev/null || skip "etcd is not installed"
probe=rmqprobe$$
ip netns add "$probe" 2>/dev/null || skip "cannot make a network namespace"
nft_ok=0
ip netns exec "$probe" nft add table inet probe 2>/dev/null && nft_ok=1
ip netns del "$probe"
[ $nft_ok = 1 ] || skip "nft does not work in a network namespace"

out=$(mktemp /tmp/rmq-test-chaos-netns.XXXXXX)
trap 'rm -f "$out"' EXIT
RMQ_BIN=${RMQ_BIN:-${RMQ_BUILD_ROOT:?RMQ_BUILD_ROOT not set}} RMQ_CHAOS_HB_TIMEOUT=${RMQ_CHAOS_HB_TIMEOUT:-4000} \
  timeout -s INT 230 "$here/../../scripts/chaos.sh" --controller --netns --duration "${RMQ_CHAOS_DURATION:-50}" \
  --faults "${RMQ_CHAOS_FAULTS:-kill2,slavecut1,leaderpart}" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
if [ $rc = 0 ]; then
  echo "ok 1 - chaos --controller --netns: nothing acknowledged lost, one master per epoch, nothing seen truncated"
else
  echo "not ok 1 - chaos --controller --netns: scripts/chaos.sh exited $rc"
fi
exit 0
