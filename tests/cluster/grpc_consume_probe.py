#!/usr/bin/python3
"""grpc_consume_probe.py: RocketMQ 5's consumer RPCs against a broker, with
an independent gRPC client (Debian's python3-grpcio, gRPC core) and the v2
messages encoded here by hand (no generated code), for
tests/cluster/test_grpc_consume.c. Messages are sent with mqadmin
sendMessage (the remoting/native path), so what is read over gRPC was stored
by another protocol. Checks, each printed as one line:
  - QueryAssignment: one assignment of queue -1 for the master, with its
    endpoints; TOPIC_NOT_FOUND for an unknown topic;
  - bytes that do not decode: grpc-status INVALID_ARGUMENT;
  - ReceiveMessage of an unknown topic, an unknown group, a SQL92 filter,
    an invisible time under 10 s: TOPIC_NOT_FOUND, CONSUMER_GROUP_NOT_FOUND,
    UNSUPPORTED, ILLEGAL_INVISIBLE_TIME; an empty topic long-polls for the
    client's time and answers MESSAGE_NOT_FOUND, ending with
    delivery_timestamp;
  - AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue
    of a bad handle: INVALID_RECEIPT_HANDLE;
  - a receive cancelled mid long-poll takes nothing: the message sent after
    the cancel is received next with delivery attempt 1;
  - receive with a TAG filter: {status OK}, the messages, then
    {delivery_timestamp}; ack (twice: INVALID_RECEIPT_HANDLE), change of
    invisible time (the old handle is stale, the message comes again with
    delivery attempt 2), forward to the DLQ (its handle is finished);
  - a FIFO group (consumeMessageOrderly): QueryAssignment gives each read
    queue; a receive of one queue gets its messages in order, blocks another
    attempt while the batch is in flight, replays the batch to the same
    attempt id, moves on once it is acked, and gives an unacked message
    again in place with delivery attempt 2.
Exit 0 when every check passed.

usage: grpc_consume_probe.py BROKER_ADDR MQADMIN NAMESRV_ADDR TOPIC GROUP FIFO_TOPIC FIFO_GROUP
"""
import subprocess
import sys
import threading
import time

import grpc

from pb_wire import field, one, parse, resource, seconds_nanos, status_of

SERVICE = "/apache.rocketmq.v2.MessagingService/"
META = (("x-mq-client-id", "probe@1@0@consume"), ("x-mq-protocol", "v2"),
        ("x-mq-language", "PYTHON"))

OK = 20000
ILLEGAL_INVISIBLE_TIME, INVALID_RECEIPT_HANDLE = 40011, 40013
MESSAGE_NOT_FOUND, TOPIC_NOT_FOUND, GROUP_NOT_FOUND = 40401, 40402, 40403
UNSUPPORTED = 50500
TAG, SQL = 1, 2
READ_WRITE = 4

# ---- calls ----


class Probe:
    def __init__(self, channel, topic, group):
        self.ch, self.topic, self.group = channel, topic, group
        self.failed = 0

    def check(self, what, ok, detail=""):
        print(f"# {'passed' if ok else 'FAILED'}: {what} {detail}".rstrip())
        if not ok:
            self.failed += 1

    def unary(self, method, req):
        return self.ch.unary_unary(SERVICE + method)(req, timeout=10, metadata=META)

    def query_assignment(self, topic, group=None):
        """(code, [(queue id, permission, broker name, [(host, port)])])."""
        resp = self.unary("QueryAssignment", field(1, resource(topic)) + field(2, resource(group or self.group)))
        out = []
        for a in parse(resp).get(2, []):
            mq = parse(one(parse(a), 1, b""))
            br = parse(one(mq, 4, b""))
            eps = parse(one(br, 3, b""))
            addrs = [(one(parse(x), 1, b"").decode(), one(parse(x), 2, 0)) for x in eps.get(2, [])]
            qid = one(mq, 2, 0)             # a negative int32 is a 10-byte varint
            out.append((qid - (1 << 64) if qid >= 1 << 63 else qid, one(mq, 3, 0), one(br, 1, b"").decode(),
                        addrs))
        return status_of(parse(resp))[0], out

    def receive_req(self, topic=None, group=None, batch=16, invisible_ms=10000, poll_ms=2000,
                    ftype=TAG, expr="*", queue=0, attempt=None):
        mq = field(1, resource(topic or self.topic)) + field(2, queue)
        req = (field(1, resource(group or self.group)) + field(2, mq) +
               field(3, field(1, ftype) + field(2, expr)) + field(4, batch))
        if invisible_ms is not None:
            req += field(5, seconds_nanos(invisible_ms))
        req += field(7, seconds_nanos(poll_ms))
        return req + field(8, attempt) if attempt else req

    def receive(self, req, timeout=10):
        """[(kind, value)]: ('status', (code, msg)), ('message', fields), ('delivery_timestamp', b)."""
        out = []
        for resp in self.ch.unary_stream(SERVICE + "ReceiveMessage")(req, timeout=timeout, metadata=META):
            f = parse(resp)
            if 1 in f:
                st = parse(f[1][0])
                out.append(("status", (one(st, 1, 0), one(st, 2, b"").decode(errors="replace"))))
            elif 2 in f:
                out.append(("message", parse(f[2][0])))
            elif 3 in f:
                out.append(("delivery_timestamp", f[3][0]))
        return out

    def receive_status(self, req):
        got = self.receive(req)
        return got[0][1][0] if got and got[0][0] == "status" else None, got

    def ack(self, handles, group=None):
        entries = b"".join(field(3, field(1, "id") + field(2, h)) for h in handles)
        resp = self.unary("AckMessage", field(1, resource(group or self.group)) + field(2, resource(self.topic)) +
                          entries)
        codes = [one(parse(one(parse(e), 3, b"")), 1, 0) for e in parse(resp).get(2, [])]
        return status_of(parse(resp))[0], codes

    def change_invisible(self, handle, ms, group=None):
        resp = self.unary("ChangeInvisibleDuration", field(1, resource(group or self.group)) +
                          field(2, resource(self.topic)) + field(3, handle) + field(4, seconds_nanos(ms)) +
                          field(5, "id"))
        return status_of(parse(resp))[0], one(parse(resp), 2, b"").decode()

    def forward_dlq(self, handle):
        resp = self.unary("ForwardMessageToDeadLetterQueue", field(1, resource(self.group)) +
                          field(2, resource(self.topic)) + field(3, handle) + field(4, "id") +
                          field(5, 1) + field(6, 16))
        return status_of(parse(resp))[0]


def message_view(m):
    """(body, tag, receipt handle, delivery attempt, topic) of a Message's fields."""
    sp = parse(one(m, 3, b""))
    return (one(m, 4, b"").decode(errors="replace"), one(sp, 1, b"").decode(), one(sp, 12, b"").decode(),
            one(sp, 16, 0), one(parse(one(m, 1, b"")), 2, b"").decode())


def receive_until(p, want, req, seconds=15):
    """Receives until want messages came (or seconds passed): their views."""
    got, until = [], time.time() + seconds
    while len(got) < want and time.time() < until:
        got += [message_view(v) for k, v in p.receive(req) if k == "message"]
    return got

# ---- checks ----


def assignments(p, broker_addr):
    host, port = broker_addr.rsplit(":", 1)
    want = [(-1, READ_WRITE, "broker-a", [(host, int(port))])]
    until, got = time.time() + 15, None
    while time.time() < until:
        got = p.query_assignment(p.topic)
        if got[0] == OK:
            break
        time.sleep(0.5)
    p.check("QueryAssignment: one queue -1 assignment per master, its endpoints", got == (OK, want), str(got))
    code, _ = p.query_assignment("NoSuchTopicProbe")
    p.check("QueryAssignment of an unknown topic: TOPIC_NOT_FOUND", code == TOPIC_NOT_FOUND, str(code))


def errors(p):
    for method in ("ReceiveMessage", "AckMessage", "ChangeInvisibleDuration", "ForwardMessageToDeadLetterQueue"):
        try:
            if method == "ReceiveMessage":
                got = p.receive(b"\xff\xff\xff")
            else:
                got = p.unary(method, b"\xff\xff\xff")
            p.check(f"{method} of bytes that do not decode: INVALID_ARGUMENT", False, f"answered {got!r}")
        except grpc.RpcError as e:
            p.check(f"{method} of bytes that do not decode: INVALID_ARGUMENT",
                    e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{e.code().name} {e.details()!r}")
    for what, req, want in (
            ("unknown topic", p.receive_req(topic="NoSuchTopicProbe"), TOPIC_NOT_FOUND),
            ("unknown group", p.receive_req(group="no_such_group_probe"), GROUP_NOT_FOUND),
            ("SQL92 filter", p.receive_req(ftype=SQL, expr="a > 5"), UNSUPPORTED),
            ("invisible time 1 s", p.receive_req(invisible_ms=1000), ILLEGAL_INVISIBLE_TIME)):
        code, got = p.receive_status(req)
        p.check(f"ReceiveMessage, {what}: {want}", code == want and got[-1][0] == "delivery_timestamp",
                str(got))
    bad = "1 2 3"
    p.check("AckMessage of a bad handle: INVALID_RECEIPT_HANDLE", p.ack([bad]) == (INVALID_RECEIPT_HANDLE,
                                                                                   [INVALID_RECEIPT_HANDLE]))
    p.check("ChangeInvisibleDuration of a bad handle: INVALID_RECEIPT_HANDLE",
            p.change_invisible(bad, 5000)[0] == INVALID_RECEIPT_HANDLE)
    p.check("ForwardMessageToDeadLetterQueue of a bad handle: INVALID_RECEIPT_HANDLE",
            p.forward_dlq(bad) == INVALID_RECEIPT_HANDLE)
    start = time.time()
    code, got = p.receive_status(p.receive_req(poll_ms=2000))
    took = time.time() - start
    p.check("an empty receive long-polls 2 s, then MESSAGE_NOT_FOUND",
            code == MESSAGE_NOT_FOUND and 1.5 <= took <= 5 and got[-1][0] == "delivery_timestamp",
            f"{took:.1f} s {got}")


def send(mqadmin, namesrv, topic, body, tag):
    subprocess.run([mqadmin, "sendMessage", "-n", namesrv, "-t", topic, "-p", body, "-c", tag],
                   check=True, stdout=subprocess.DEVNULL, timeout=30)


def drain(call):
    try:
        for _ in call:
            pass
    except grpc.RpcError:
        pass


def cancelled_poll(p, mqadmin, namesrv):
    call = p.ch.unary_stream(SERVICE + "ReceiveMessage")(p.receive_req(poll_ms=10000), timeout=15,
                                                          metadata=META)
    drained = threading.Thread(target=drain, args=(call,))
    drained.start()
    time.sleep(1)
    call.cancel()
    drained.join()
    time.sleep(0.5)
    send(mqadmin, namesrv, p.topic, "after-cancel", "TagA")
    got = receive_until(p, 1, p.receive_req(poll_ms=3000), seconds=8)
    p.check("a receive cancelled mid long-poll takes nothing: the next gets the message, attempt 1",
            len(got) == 1 and got[0][0] == "after-cancel" and got[0][3] == 1, str(got))
    if got:
        p.ack([got[0][2]])


def consume(p, mqadmin, namesrv):
    for body, tag in (("m1", "TagA"), ("m2", "TagA"), ("skip", "TagC"), ("m3", "TagA")):
        send(mqadmin, namesrv, p.topic, body, tag)
    req = p.receive_req(expr="TagA || TagB", poll_ms=3000)
    raw = p.receive(req)
    p.check("a receive's stream: {status OK}, the messages, {delivery_timestamp}",
            raw and raw[0] == ("status", (OK, "OK")) and raw[-1][0] == "delivery_timestamp" and
            all(k == "message" for k, _ in raw[1:-1]), str([k for k, _ in raw]))
    got = [message_view(v) for k, v in raw if k == "message"]
    got += receive_until(p, 3 - len(got), req)
    bodies = sorted(g[0] for g in got)
    p.check("TAG filter: m1 m2 m3 with attempt 1 and the topic's name",
            bodies == ["m1", "m2", "m3"] and all(g[3] == 1 and g[1] == "TagA" and g[4] == p.topic for g in got),
            str(got))
    if bodies != ["m1", "m2", "m3"]:
        return
    by = {g[0]: g for g in got}
    p.check("AckMessage of two: OK, each OK", p.ack([by["m1"][2], by["m2"][2]]) == (OK, [OK, OK]))
    p.check("AckMessage again: INVALID_RECEIPT_HANDLE", p.ack([by["m1"][2]]) == (INVALID_RECEIPT_HANDLE,
                                                                                [INVALID_RECEIPT_HANDLE]))
    code, handle = p.change_invisible(by["m3"][2], 1000)
    p.check("ChangeInvisibleDuration 1 s: OK with a new handle", code == OK and handle and handle != by["m3"][2],
            handle)
    p.check("AckMessage with the handle before the change: INVALID_RECEIPT_HANDLE",
            p.ack([by["m3"][2]])[0] == INVALID_RECEIPT_HANDLE)
    again = receive_until(p, 1, p.receive_req(expr="TagA", poll_ms=3000))
    p.check("after the invisible time: m3 again, delivery attempt 2, a new handle",
            len(again) == 1 and again[0][0] == "m3" and again[0][3] == 2 and again[0][2] != handle, str(again))
    if again:
        p.check("the redelivered m3 acked: OK", p.ack([again[0][2]]) == (OK, [OK]))
    send(mqadmin, namesrv, p.topic, "poison", "TagA")
    dead = receive_until(p, 1, p.receive_req(poll_ms=3000))
    p.check("poison received", len(dead) == 1 and dead[0][0] == "poison", str(dead))
    if dead:
        p.check("ForwardMessageToDeadLetterQueue: OK", p.forward_dlq(dead[0][2]) == OK)
        time.sleep(0.3)
        p.check("its handle is finished: AckMessage INVALID_RECEIPT_HANDLE",
                p.ack([dead[0][2]])[0] == INVALID_RECEIPT_HANDLE)


def send_to(mqadmin, namesrv, topic, body, queue):
    subprocess.run([mqadmin, "sendMessage", "-n", namesrv, "-t", topic, "-p", body, "-c", "TagA", "-b", "broker-a",
                    "-q", str(queue)], check=True, stdout=subprocess.DEVNULL, timeout=30)


def fifo(ch, mqadmin, namesrv, topic, group):
    """The FIFO checks on topic for group; how many failed."""
    p = Probe(ch, topic, group)
    code, got = p.query_assignment(p.topic, group)
    p.check("QueryAssignment of an orderly group: each read queue", code == OK and
            [(q, b) for q, _, b, _ in got] == [(0, "broker-a"), (1, "broker-a")], str(got))
    for body in ("f1", "f2", "f3"):
        send_to(mqadmin, namesrv, p.topic, body, 1)

    def fifo_receive(attempt, poll_ms=3000):
        req = p.receive_req(group=group, batch=2, poll_ms=poll_ms, queue=1, attempt=attempt)
        return [message_view(v) for k, v in p.receive(req) if k == "message"]
    first = []
    until = time.time() + 10
    while not first and time.time() < until:
        first = fifo_receive("a1")
    p.check("FIFO receive of queue 1: f1 f2 in order", [g[0] for g in first] == ["f1", "f2"], str(first))
    p.check("FIFO: the queue is blocked for another attempt", fifo_receive("a2", 1000) == [])
    again = fifo_receive("a1")
    p.check("FIFO: the same attempt id gets the same batch", [g[0] for g in again] == ["f1", "f2"], str(again))
    acked = p.ack([g[2] for g in again], group)
    p.check("FIFO: the batch acked", acked == (OK, [OK, OK]), str(acked))
    third = fifo_receive("a3")
    p.check("FIFO: then f3", [g[0] for g in third] == ["f3"], str(third))
    if third:
        p.change_invisible(third[0][2], 1000, group)
        time.sleep(1.5)
        redo = fifo_receive("a4")
        p.check("FIFO: f3 again in place after its invisible time, delivery attempt 2",
                [(g[0], g[3]) for g in redo] == [("f3", 2)], str(redo))
        if redo:
            p.ack([redo[0][2]], group)
    return p.failed


def main():
    addr, mqadmin, namesrv, topic, group, fifo_topic, fifo_group = sys.argv[1:8]
    with grpc.insecure_channel(addr) as ch:
        p = Probe(ch, topic, group)
        assignments(p, addr)
        errors(p)
        cancelled_poll(p, mqadmin, namesrv)
        consume(p, mqadmin, namesrv)
        p.failed += fifo(ch, mqadmin, namesrv, fifo_topic, fifo_group)
    print(f"# {p.failed} checks failed")
    return 1 if p.failed else 0


if __name__ == "__main__":
    sys.exit(main())
