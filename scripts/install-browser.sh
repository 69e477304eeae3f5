#!/bin/sh
# install-browser.sh: optional. Installs Debian's chromium so the
# console_browser test (tests/cluster/test_metrics.c, "browser" mode) runs
# the web console in headless Chromium instead of skipping. Not part of
# bootstrap: CI does not need a browser.
set -eu
if command -v chromium >/dev/null 2>&1; then
    echo "chromium already installed: $(command -v chromium)"
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
chromium --version
