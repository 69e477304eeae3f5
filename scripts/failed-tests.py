#!/usr/bin/env python3
"""scripts/failed-tests.py: a short digest of the tests that failed in meson
build directories, read from each one's meson-logs/testlog.json: per failed
test its result and duration, its "not ok" TAP lines with the comment lines
just before each (or, with none, the last lines of its output: a timeout),
and the last lines of its stderr. scripts/test.sh prints
it last, so the reason for a failure is in the tail of a long CI log.

  scripts/failed-tests.py BUILD_DIR...
"""
import json
import os
import sys

PASSING = {"OK", "SKIP", "EXPECTEDFAIL"}
COMMENTS_BEFORE = 4
LINES_PER_TEST = 30
STDERR_TAIL = 5
STDOUT_TAIL = 10


def failing_tap_lines(stdout):
    """The "not ok" lines of stdout, each after up to COMMENTS_BEFORE comment lines before it."""
    lines = stdout.splitlines()
    picked = []
    for i, line in enumerate(lines):
        if not line.startswith("not ok"):
            continue
        start = i
        while start > 0 and i - start < COMMENTS_BEFORE and lines[start - 1].startswith("#"):
            start -= 1
        picked.extend(lines[start:i + 1])
    return picked


def digest(build_dir):
    """Prints the digest of build_dir's failed tests; returns how many there were."""
    path = os.path.join(build_dir, "meson-logs", "testlog.json")
    if not os.path.exists(path):
        return 0
    failed = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            test = json.loads(raw)
            if test.get("result") in PASSING:
                continue
            failed += 1
            print(f"== failed in {build_dir}: {test['name']} ({test.get('result')}, "
                  f"{test.get('duration', 0):.1f}s)")
            stdout = test.get("stdout") or ""
            lines = failing_tap_lines(stdout) or stdout.splitlines()[-STDOUT_TAIL:]
            stderr = (test.get("stderr") or "").splitlines()[-STDERR_TAIL:]
            lines += ["stderr: " + line for line in stderr]
            for line in lines[:LINES_PER_TEST]:
                print("   " + line)
    return failed


def main():
    for build_dir in sys.argv[1:]:
        digest(build_dir)


if __name__ == "__main__":
    main()
