#!/usr/bin/python3
"""grpc_front_probe.py: RocketMQ 5 RPCs of the broker's and the name
server's gRPC fronts, through gRPC core (Debian's python3-grpcio, an
independent client), for tests/cluster/test_grpc_front.c. The v2 messages
are written and read with pb_wire.py (field numbers from
proto/apache/rocketmq/v2/), so no generated code is needed.

Checks QueryRoute on both daemons (TOPIC: master queues with the broker's
address; an unknown topic: TOPIC_NOT_FOUND), bytes that are no request
(grpc-status INVALID_ARGUMENT), SendMessage without a client id, to an
unknown topic, to the read-only RO_TOPIC (FORBIDDEN) and with a delay past
a day (ILLEGAL_DELIVERY_TIME), a send that is stored, a body of the
Settings' max_body_size (maxMessageSize) stored and one a byte longer
refused (MESSAGE_BODY_TOO_LARGE naming both sizes, as the proxy), Heartbeat before and
after Telemetry Settings, a transactional send with EndTransaction, and an
EndTransaction naming no transaction. Prints one line per check; exit 0
when all passed.

With --acl, BROKER runs with access control on and an admin account
adm/adm-secret-1: an unsigned call, or one signed with a wrong secret,
gets UNAUTHORIZED from QueryRoute and SendMessage, an unsigned Telemetry
stream ends INVALID_ARGUMENT; calls signed as the 5.x clients sign
(HMAC-SHA1 of x-mq-date-time) are admitted.

With --hold, it opens a producer's Telemetry stream, prints "settings
CODE" and waits for the stream's end, printing "telemetry ended: STATUS"
(a broker's clean stop ends it with grpc-status 0).

With --types, every queue of TOPIC's route on HOST:PORT accepts exactly
the message types TYPES (v2 MessageType numbers, comma separated): the
route follows the topic's message.type attribute (test_topic_attrs.c).

usage: grpc_front_probe.py NS_HOST:PORT BROKER_HOST:PORT TOPIC RO_TOPIC
       grpc_front_probe.py --acl BROKER_HOST:PORT TOPIC
       grpc_front_probe.py --hold BROKER_HOST:PORT TOPIC
       grpc_front_probe.py --types HOST:PORT TOPIC TYPES
"""
import hmac
import queue
import sys
import time
import uuid

import grpc

from pb_wire import msg, one, parse, resource, seconds_nanos, status_of

SERVICE = "/apache.rocketmq.v2.MessagingService/"
OK, TOPIC_NOT_FOUND, FORBIDDEN, UNAUTHORIZED = 20000, 40402, 40300, 40100
MESSAGE_BODY_TOO_LARGE = 41301
CLIENT_ID_REQUIRED, UNRECOGNIZED_CLIENT_TYPE = 40017, 40015
ILLEGAL_DELIVERY_TIME, INVALID_TRANSACTION_ID = 40012, 40008
READ_WRITE, PRODUCER, NORMAL, TRANSACTION = 4, 1, 1, 4
COMMIT, SOURCE_CLIENT = 1, 1

def message(topic, body, mtype=NORMAL, delivery_ms=None):
    sysp = msg((3, "01" + uuid.uuid4().hex.upper()), (6, mtype), (7, seconds_nanos(int(time.time() * 1000))),
               (8, "probe-host"),
               (11, seconds_nanos(delivery_ms) if delivery_ms is not None else None))
    return msg((1, resource(topic)), (3, sysp), (4, body))


# ---- the checks ----------------------------------------------------------------

failed = 0


def check(cond, what):
    global failed
    print(("passed: " if cond else "FAILED: ") + what)
    if not cond:
        failed += 1


def signed(access_key, secret):
    """The metadata of a call signed as the 5.x clients sign."""
    date_time = time.strftime("%Y%m%dT%H%M%SZ")
    sig = hmac.new(secret.encode(), date_time.encode(), "sha1").hexdigest().upper()
    return [("x-mq-date-time", date_time),
            ("authorization", f"MQv2-HMAC-SHA1 Credential={access_key}, SignedHeaders=x-mq-date-time, Signature={sig}")]


class Client:
    def __init__(self, addr, client_id, auth=None):
        self.channel = grpc.insecure_channel(addr)
        self.meta = [("x-mq-client-id", client_id), ("x-mq-language", "PYTHON")] if client_id else []
        self.meta += auth or []

    def call(self, method, request):
        rpc = self.channel.unary_unary(SERVICE + method)
        return parse(rpc(request, timeout=10, metadata=self.meta))

    def close(self):
        self.channel.close()


def query_route(addr, topic, broker_addr):
    c = Client(addr, "probe@route")
    resp = c.call("QueryRoute", msg((1, resource(topic))))
    code, text = status_of(resp)
    queues = [parse(q) for q in resp.get(2, [])]
    check(code == OK, f"QueryRoute {topic} on {addr}: {code} {text!r}")
    ids = sorted(one(q, 2, 0) for q in queues)
    check(len(queues) > 0 and ids == list(range(len(queues))), f"  queue ids {ids}")
    for q in queues[:1]:
        broker = parse(one(q, 4, b""))
        ep = parse(one(broker, 3, b""))
        ad = parse(one(ep, 2, b""))
        got = f"{one(ad, 1, b'').decode()}:{one(ad, 2, 0)}"
        check(got == broker_addr and one(broker, 2, 0) == 0,
              f"  endpoint {got} (want the master {broker_addr}), broker id {one(broker, 2, 0)}")
        check(one(q, 3, 0) == READ_WRITE, f"  permission {one(q, 3, 0)} (READ_WRITE)")
        types = one(q, 5, b"")
        check(isinstance(types, bytes) and sorted(types) == [1, 2, 3, 4], f"  accept_message_types {types!r}")
    resp = c.call("QueryRoute", msg((1, resource("NoSuchTopicProbe"))))
    code, text = status_of(resp)
    check(code == TOPIC_NOT_FOUND, f"QueryRoute of an unknown topic on {addr}: {code} {text!r}")
    try:
        c.call("QueryRoute", b"\xff\xff\xff")
        check(False, f"QueryRoute of bad bytes on {addr}: answered")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"QueryRoute of bad bytes on {addr}: {e.code().name} "
              f"{e.details()!r}")
    c.close()


def send(c, topic, body, **kw):
    resp = c.call("SendMessage", msg((1, message(topic, body, **kw))))
    entries = [parse(e) for e in resp.get(2, [])]
    return status_of(resp), entries


def settings(c, addr, topic):
    """Telemetry with a producer's Settings: (the server's status code, max_body_size), stream kept open."""
    out = queue.Queue()
    publishing = msg((1, resource(topic)))
    ua = msg((1, 1), (2, "5.0.8"), (4, "probe-host"))
    s = msg((1, PRODUCER), (5, publishing), (7, ua))
    out.put(msg((2, s)))
    rpc = c.channel.stream_stream(SERVICE + "Telemetry")
    stream = rpc(iter(out.get, None), timeout=30, metadata=c.meta)
    reply = parse(next(stream))
    code, _ = status_of(reply)
    srv = parse(one(reply, 2, b""))
    pub = parse(one(srv, 5, b""))
    return code, one(pub, 2, 0), (out, stream)


def producer_checks(broker_addr, topic, ro_topic):
    anon = Client(broker_addr, None)
    (code, text), _ = send(anon, topic, b"x")
    check(code == CLIENT_ID_REQUIRED, f"SendMessage without x-mq-client-id: {code} {text!r}")
    anon.close()

    c = Client(broker_addr, "probe@" + uuid.uuid4().hex[:8])
    code, text = status_of(c.call("Heartbeat", msg((2, PRODUCER))))
    check(code == UNRECOGNIZED_CLIENT_TYPE, f"Heartbeat before any Settings: {code} {text!r}")
    code, max_body, tel = settings(c, broker_addr, topic)
    check(code == OK and max_body > 0, f"Telemetry Settings answered: {code}, max_body_size {max_body}")
    code, text = status_of(c.call("Heartbeat", msg((2, PRODUCER))))
    check(code == OK, f"Heartbeat after Settings: {code} {text!r}")

    (code, text), entries = send(c, topic, b"hello grpc")
    ids = [one(e, 2, b"").decode() for e in entries]
    check(code == OK and len(entries) == 1 and ids[0].startswith("01"),
          f"SendMessage to {topic}: {code} {text!r}, message id {ids}")
    (code, text), _ = send(c, topic, b"m" * max_body)
    check(code == OK, f"SendMessage of a body of max_body_size ({max_body}) bytes: {code} {text!r}")
    (code, text), _ = send(c, topic, b"m" * (max_body + 1))
    check(code == MESSAGE_BODY_TOO_LARGE and str(max_body + 1) in text and str(max_body) in text,
          f"SendMessage of a body one byte over max_body_size: {code} {text!r}")
    (code, text), entries = send(c, "NoSuchTopicProbe", b"x")
    check(code == TOPIC_NOT_FOUND and len(entries) == 1, f"SendMessage to an unknown topic: {code} {text!r}")
    (code, text), _ = send(c, ro_topic, b"x")
    check(code == FORBIDDEN, f"SendMessage to read-only {ro_topic}: {code} {text!r}")
    far = int(time.time() * 1000) + 2 * 86400 * 1000
    (code, text), _ = send(c, topic, b"x", delivery_ms=far)
    check(code == ILLEGAL_DELIVERY_TIME, f"SendMessage delayed two days: {code} {text!r}")
    try:
        c.call("SendMessage", b"\x0a\x05\xff")
        check(False, "SendMessage of bad bytes: answered")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"SendMessage of bad bytes: {e.code().name}")

    (code, text), entries = send(c, topic, b"tx body", mtype=TRANSACTION)
    tx_id = one(entries[0], 3, b"").decode() if entries else ""
    check(code == OK and tx_id != "", f"transactional SendMessage: {code} {text!r}, transaction_id {tx_id!r}")
    msg_id = one(entries[0], 2, b"").decode() if entries else ""
    end = msg((1, resource(topic)), (2, msg_id), (3, tx_id), (4, COMMIT), (5, SOURCE_CLIENT))
    code, text = status_of(c.call("EndTransaction", end))
    check(code == OK, f"EndTransaction COMMIT: {code} {text!r}")
    bogus = msg((1, resource(topic)), (2, msg_id), (3, "not-a-transaction"), (4, COMMIT), (5, SOURCE_CLIENT))
    code, text = status_of(c.call("EndTransaction", bogus))
    check(code == INVALID_TRANSACTION_ID, f"EndTransaction naming no transaction: {code} {text!r}")

    code, text = status_of(c.call("NotifyClientTermination", b""))
    check(code == OK, f"NotifyClientTermination: {code} {text!r}")
    tel[0].put(None)                 # half-close Telemetry: the server ends it with status 0
    rest = list(tel[1])
    check(rest == [] and tel[1].code() == grpc.StatusCode.OK, f"Telemetry half-closed: {tel[1].code().name}")
    c.close()


def acl_checks(broker_addr, topic):
    c = Client(broker_addr, "probe@acl")
    code, text = status_of(c.call("QueryRoute", msg((1, resource(topic)))))
    check(code == UNAUTHORIZED, f"unsigned QueryRoute with access control on: {code} {text!r}")
    (code, text), _ = send(c, topic, b"x")
    check(code == UNAUTHORIZED, f"unsigned SendMessage with access control on: {code} {text!r}")
    try:
        settings(c, broker_addr, topic)
        check(False, "unsigned Telemetry with access control on: answered")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              f"unsigned Telemetry with access control on: {e.code().name} {e.details()!r}")
    code, text = status_of(c.call("Heartbeat", msg((2, PRODUCER))))
    check(code == UNRECOGNIZED_CLIENT_TYPE, f"Heartbeat after the refused Settings: {code} {text!r}")
    c.close()
    bad = Client(broker_addr, "probe@acl-bad", signed("adm", "wrong-secret"))
    code, text = status_of(bad.call("QueryRoute", msg((1, resource(topic)))))
    check(code == UNAUTHORIZED, f"QueryRoute signed with a wrong secret: {code} {text!r}")
    bad.close()
    good = Client(broker_addr, "probe@acl-good", signed("adm", "adm-secret-1"))
    code, text = status_of(good.call("QueryRoute", msg((1, resource(topic)))))
    check(code == TOPIC_NOT_FOUND, f"signed QueryRoute of a topic nobody made: {code} {text!r}")
    code, _, tel = settings(good, broker_addr, topic)
    check(code == OK, f"signed Telemetry Settings answered: {code}")
    code, text = status_of(good.call("Heartbeat", msg((2, PRODUCER))))
    check(code == OK, f"signed Heartbeat after Settings: {code} {text!r}")
    tel[0].put(None)
    list(tel[1])
    good.close()


def hold_telemetry(broker_addr, topic):
    c = Client(broker_addr, "probe@hold")
    code, _, tel = settings(c, broker_addr, topic)
    print(f"settings {code}", flush=True)
    try:
        rest = list(tel[1])
        print(f"telemetry ended: {tel[1].code().name} {len(rest)} more commands", flush=True)
    except grpc.RpcError as e:
        print(f"telemetry ended: {e.code().name} {e.details()!r}", flush=True)
    return 0


def accept_types(addr, topic, want):
    """Every queue of topic's route on addr accepts exactly the message types want (numbers)."""
    c = Client(addr, "probe@types")
    resp = c.call("QueryRoute", msg((1, resource(topic))))
    code, text = status_of(resp)
    check(code == OK, f"QueryRoute {topic} on {addr}: {code} {text!r}")
    for q in [parse(q) for q in resp.get(2, [])]:
        types = one(q, 5, b"")
        check(isinstance(types, bytes) and sorted(types) == want, f"  accept_message_types {types!r}, want {want}")
    c.close()


def main():
    if sys.argv[1] == "--types":
        accept_types(sys.argv[2], sys.argv[3], [int(t) for t in sys.argv[4].split(",")])
        print(f"{failed} failed")
        return 1 if failed else 0
    if sys.argv[1] == "--hold":
        return hold_telemetry(sys.argv[2], sys.argv[3])
    if sys.argv[1] == "--acl":
        acl_checks(sys.argv[2], sys.argv[3])
        print(f"{failed} failed")
        return 1 if failed else 0
    ns_addr, broker_addr, topic, ro_topic = sys.argv[1:5]
    query_route(ns_addr, topic, broker_addr)
    query_route(broker_addr, topic, broker_addr)
    producer_checks(broker_addr, topic, ro_topic)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
