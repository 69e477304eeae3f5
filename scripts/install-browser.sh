#!/bin/bash
# install-browser.sh: installs Debian's chromium so the console_browser test
# (tests/cluster/test_metrics.c, "browser" mode) runs the web console in
# headless Chromium. scripts/test.sh calls it after bootstrap; without a
# browser that test is skipped, which counts as a failure when CI=true.
# Idempotent and quiet when chromium is already there.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-browser: chromium is missing; run as root or install it (apt-get install chromium)" >&2
  exit 1
fi
echo "install-browser: installing chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
