#!/bin/bash
# Installs what rmq needs to build and test on Debian 12 (bookworm) and 13
# (trixie), with apt-get. Idempotent and quiet when everything is already there.
set -euo pipefail

# The compiler-rt package (sanitizer and libFuzzer runtimes) of the clang on
# PATH: libclang-rt-14-dev on Debian 12, libclang-rt-19-dev on Debian 13. With
# no clang yet, libclang-rt-dev: the one that goes with Debian's default clang.
clang_rt_package() {
  local v
  v=$(clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
  if [ -n "$v" ]; then
    echo "libclang-rt-$v-dev"
  else
    echo libclang-rt-dev
  fi
}

packages=(
  gcc pkg-config meson ninja-build
  libevent-dev protobuf-c-compiler libprotobuf-c-dev libssl-dev zlib1g-dev openssl check
  # the gRPC transport (common/rmq_codec_grpc.c): HTTP/2 framing, HPACK, flow control
  libnghttp2-dev
  # tests/cluster/grpc_probe.py and grpc_front_probe.py: gRPC core as an
  # independent client
  python3-grpcio
  # google/protobuf/{timestamp,duration}.proto for the RocketMQ 5 (gRPC)
  # messages; protoc checks them against apache/rocketmq-apis
  # (tests/proto/check_v2_wire.sh)
  libprotobuf-dev protobuf-compiler
  clang "$(clang_rt_package)"
  procps iproute2
  # tests/cluster/test_chaos_netns.sh and scripts/chaos.sh --controller --netns
  # drop packets per peer and direction inside network namespaces
  nftables
  # static libraries pkg-config --static names for openssl on Debian 13
  # (tests/package/test_install.sh links a -static program against librmq.a)
  zlib1g-dev libzstd-dev
  # controller mode keeps its consensus in etcd; the controller tests start
  # private members (tests/cluster/etcdproc.c), etcdctl helps when debugging
  etcd-server etcd-client
)
# tests/node runs the ali-ons client, which the test fetches with npm (a
# nodejs from elsewhere, e.g. NodeSource's, brings its own npm)
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "bootstrap: missing packages: ${missing[*]}; run as root or install them" >&2
  exit 1
fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
