"""pb_wire.py: the small protobuf wire codec the gRPC probes share
(grpc_front_probe.py, grpc_consume_probe.py): v2 messages written and read
by field number (numbers from proto/apache/rocketmq/v2/), so no generated
code is needed. Imported from the probes' own directory."""


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, value):
    """One field: an int is a varint, str/bytes are length-delimited."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def msg(*fields):
    """A message of (number, value) pairs; a None value is left out."""
    return b"".join(field(n, v) for n, v in fields if v is not None)


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def parse(data):
    """field number -> list of values (ints for varints, bytes otherwise)."""
    out, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(data, i)
        elif wire == 2:
            n, i = read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(num, []).append(v)
    return out


def one(d, num, default=None):
    return d.get(num, [default])[0]


def status_of(resp):
    """(code, message) of a parsed response's Status (field 1)."""
    st = parse(one(resp, 1, b""))
    return one(st, 1, 0), one(st, 2, b"").decode(errors="replace")


def resource(name):
    return msg((2, name))


def seconds_nanos(ms):
    """A google.protobuf Timestamp or Duration of ms milliseconds."""
    return msg((1, ms // 1000), (2, (ms % 1000) * 1000000))
