#!/bin/bash
# scripts/cpu-per-msg-remoting.sh: the broker's CPU (or, --callgrind,
# instructions) per acknowledged message when the unmodified RocketMQ 4.9
# Java producer sends over the remoting protocol: scripts/cpu-per-msg.sh
# --client java with the same options (--build, --base, -n, -w, -s, --runs,
# --callgrind, --annotate, --binary). `--client both` in cpu-per-msg.sh
# measures native and remoting alternately and prints their ratio.
exec "$(dirname "$0")/cpu-per-msg.sh" --client java "$@"
