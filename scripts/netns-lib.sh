# shellcheck shell=bash
# scripts/netns-lib.sh: network namespaces as the hosts of a cluster on this
# machine (sourced, not run; needs root and iproute2). Each host is a
# namespace with a veth pair whose other end sits on one bridge, its address
# NET.K/24 inside the namespace only: the bridge has no address, so nothing
# reaches the host's network and the host does not reach the namespaces.
# Used by tests/cluster/test_netns.sh and scripts/chaos.sh --controller
# --netns (tests/cluster/test_chaos_netns.sh).
#
#   netns_init ID NET      names from ID (a number below 10000): namespaces
#                          rmqID-HOST, bridge rqbrID, veths rqIDHOST(p);
#                          removes what a killed run of the same ID left
#   netns_add HOST K       namespace for HOST, address NET.K; 1 on failure
#   netns_name HOST        prints HOST's namespace name
#   netns_ip HOST          prints HOST's address
#   netns_on HOST CMD...   runs CMD in HOST's namespace
#   netns_cleanup          kills what runs in the namespaces, removes them,
#                          the veths and the bridge (safe to call twice)
# HOST names are short (at most 6 characters: interface names have 15).

NETNS_HOSTS=()
NETNS_BR_MADE=0

# netns_init ID NET: sets the names; NET is the first three octets (a.b.c).
netns_init() {
  NETNS_ID=$1
  NETNS_NET=$2
  NETNS_BR=rqbr$1
  NETNS_HOSTS=()
  NETNS_BR_MADE=0
  declare -gA NETNS_IP=()
  netns_sweep
}

# netns_sweep: removes the namespaces of NETNS_ID (killing what runs in them)
# and its bridge, which a run killed with SIGKILL leaves behind; a new run
# of the same ID could not create them again.
netns_sweep() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk -v p="rmq$NETNS_ID-" 'index($1, p) == 1 {print $1}'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      kill -9 "$pid" 2>/dev/null || true
    done
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$NETNS_BR" 2>/dev/null || true
}

netns_name() { echo "rmq$NETNS_ID-$1"; }
netns_ip() { echo "${NETNS_IP[$1]}"; }

netns_on() {
  local h=$1
  shift
  ip netns exec "rmq$NETNS_ID-$h" "$@"
}

# netns_add HOST K: creates HOST's namespace (lo up, eth0 with NET.K/24 on
# the bridge, which the first call creates); prints why and returns 1 on
# failure (what was made is still removed by netns_cleanup).
netns_add() {
  local h=$1 ns veth=rq$NETNS_ID$1 err
  ns=$(netns_name "$h")
  if ! err=$(ip netns add "$ns" 2>&1); then
    echo "ip netns add $ns: $err"
    return 1
  fi
  NETNS_HOSTS+=("$h")
  if [ "$NETNS_BR_MADE" = 0 ]; then
    ip link add "$NETNS_BR" type bridge && ip link set "$NETNS_BR" up || { echo "cannot create bridge $NETNS_BR"; return 1; }
    NETNS_BR_MADE=1
  fi
  if ! { ip link add "$veth" type veth peer name "${veth}p" &&
    ip link set "$veth" master "$NETNS_BR" up &&
    ip link set "${veth}p" netns "$ns" &&
    ip -n "$ns" link set "${veth}p" name eth0 &&
    ip -n "$ns" addr add "$NETNS_NET.$2/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up; }; then
    echo "cannot wire namespace $ns"
    return 1
  fi
  NETNS_IP[$h]=$NETNS_NET.$2
}

netns_cleanup() {
  local h pid
  for h in "${NETNS_HOSTS[@]}"; do
    for pid in $(ip netns pids "$(netns_name "$h")" 2>/dev/null); do
      kill -9 "$pid" 2>/dev/null || true
    done
  done
  for h in "${NETNS_HOSTS[@]}"; do
    ip netns del "$(netns_name "$h")" 2>/dev/null || true
    ip link del "rq$NETNS_ID$h" 2>/dev/null || true
  done
  NETNS_HOSTS=()
  [ "$NETNS_BR_MADE" = 0 ] || ip link del "$NETNS_BR" 2>/dev/null || true
  NETNS_BR_MADE=0
  return 0
}
