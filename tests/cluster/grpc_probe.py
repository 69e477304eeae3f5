#!/usr/bin/python3
"""grpc_probe.py: an independent gRPC client (Debian's python3-grpcio, gRPC
core) for tests/cluster/test_grpc_transport.c. Calls RocketMQ 5's
QueryOffset and a server-streaming PullMessage (RPCs rmq does not serve:
no shipped client calls them) on ADDR, over h2c and,
with a CA file, over TLS (ALPN h2, as gRPC core always offers), and checks
that each ends with grpc-status UNIMPLEMENTED. Prints one line per call;
exit 0 when every call came back as expected.

usage: grpc_probe.py HOST:PORT [CA.pem]
"""
import sys

import grpc

SERVICE = "/apache.rocketmq.v2.MessagingService/"


def probe(channel, label):
    ok = True
    unary = channel.unary_unary(SERVICE + "QueryOffset")
    stream = channel.unary_stream(SERVICE + "PullMessage")
    try:
        unary(b"\x0a\x00", timeout=5)
        print(f"{label} QueryOffset: answered, want UNIMPLEMENTED")
        ok = False
    except grpc.RpcError as e:
        print(f"{label} QueryOffset: {e.code().name} {e.details()!r}")
        ok = ok and e.code() == grpc.StatusCode.UNIMPLEMENTED
    try:
        got = list(stream(b"", timeout=5))
        print(f"{label} PullMessage: {len(got)} messages, want UNIMPLEMENTED")
        ok = False
    except grpc.RpcError as e:
        print(f"{label} PullMessage: {e.code().name} {e.details()!r}")
        ok = ok and e.code() == grpc.StatusCode.UNIMPLEMENTED
    return ok


def main():
    addr = sys.argv[1]
    ok = True
    with grpc.insecure_channel(addr) as ch:
        ok = probe(ch, "h2c") and ok
    if len(sys.argv) > 2:
        with open(sys.argv[2], "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        with grpc.secure_channel(addr, creds) as ch:
            ok = probe(ch, "tls") and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
