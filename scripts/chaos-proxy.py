#!/usr/bin/env python3
"""scripts/chaos-proxy.py: the TCP relays scripts/chaos.sh --controller puts
between each broker and the name servers (which run the controllers), so a
fault can cut one broker off from the controllers, in one direction or both,
while its clients and its HA link stay up.

    chaos-proxy.py STATE_FILE NAME:LISTEN_PORT:TARGET_PORT...

Listens on 127.0.0.1:LISTEN_PORT and relays each connection to
127.0.0.1:TARGET_PORT. STATE_FILE (read every 100 ms; missing or empty: all
pass) holds lines "NAME up|down|both": NAME's relays stop moving bytes
broker->server (up), server->broker (down) or both. A stopped direction is
not read, so bytes wait in the socket buffers as they would behind a lost
link and flow again (or the peers' timeouts close the connection) once the
line is gone; a connection accepted while cut waits to reach its target
until the direction up passes. Runs until killed.
"""
import asyncio
import os
import sys

BUF = 65536


class Gates:
    """Per NAME, one asyncio.Event per direction: set while bytes may pass."""

    def __init__(self, names):
        self.ev = {n: {"up": asyncio.Event(), "down": asyncio.Event()} for n in names}
        for d in self.ev.values():
            d["up"].set()
            d["down"].set()

    def apply(self, cuts):
        """Opens every gate, then closes the ones cuts (NAME -> mode) names."""
        for name, d in self.ev.items():
            mode = cuts.get(name, "")
            for direction in ("up", "down"):
                if mode in (direction, "both"):
                    d[direction].clear()
                else:
                    d[direction].set()


def read_state(path):
    """The cuts the state file asks for, NAME -> up|down|both."""
    cuts = {}
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 2 and w[1] in ("up", "down", "both"):
                    cuts[w[0]] = w[1]
    except FileNotFoundError:
        pass
    return cuts


async def pump(gate, reader, writer):
    """Copies reader to writer while gate is open; half-closes at EOF."""
    try:
        while True:
            await gate.wait()
            data = await reader.read(BUF)
            if not data:
                break
            await gate.wait()
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def relay(gates, name, target):
    async def handle(creader, cwriter):
        await gates.ev[name]["up"].wait()
        try:
            sreader, swriter = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(pump(gates.ev[name]["up"], creader, swriter),
                             pump(gates.ev[name]["down"], sreader, cwriter))
    return handle


async def watch(gates, path):
    last = None
    while True:
        cuts = read_state(path)
        if cuts != last:
            gates.apply(cuts)
            last = cuts
        await asyncio.sleep(0.1)


async def main(argv):
    if len(argv) < 3:
        print("usage: chaos-proxy.py STATE_FILE NAME:LISTEN_PORT:TARGET_PORT...", file=sys.stderr)
        return 2
    specs = []
    for a in argv[2:]:
        name, lport, tport = a.rsplit(":", 2)
        specs.append((name, int(lport), int(tport)))
    gates = Gates({s[0] for s in specs})
    for name, lport, tport in specs:
        await asyncio.start_server(relay(gates, name, tport), "127.0.0.1", lport, reuse_address=True)
    print("chaos-proxy: listening on %d ports" % len(specs), flush=True)
    await watch(gates, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))
