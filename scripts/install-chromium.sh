#!/usr/bin/env bash
# Installs Debian's chromium package (headless Chromium at /usr/bin/chromium), which the
# HTML report test (experiment: TestHTMLReportInChromium) opens the report in. .ci/run
# calls it when CI=true; run it by hand (as root, on Debian or Ubuntu) to run the test
# locally. It does nothing when /usr/bin/chromium is already there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium
/usr/bin/chromium --version
