#!/usr/bin/env python3
"""fdatasync.py FILE SECONDS: single-writer 4 KiB write + fdatasync rate of the
disk holding FILE, as one JSON line (the fallback when fio is missing)."""
import json
import os
import sys
import time


def main() -> int:
    path, secs = sys.argv[1], float(sys.argv[2])
    buf = b"x" * 4096
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    n = 0
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < secs:
            os.write(fd, buf)
            os.fdatasync(fd)
            n += 1
            if n % 16384 == 0:
                os.lseek(fd, 0, os.SEEK_SET)
    finally:
        os.close(fd)
        os.unlink(path)
    el = time.monotonic() - t0
    print(json.dumps({"tool": "python3", "writes": n, "seconds": round(el, 3),
                      "fdatasync_per_s": round(n / el, 1) if el > 0 else 0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
