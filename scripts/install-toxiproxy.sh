#!/usr/bin/env bash
# Builds Shopify's toxiproxy server (github.com/Shopify/toxiproxy/v2, the version pinned
# below) from the Go module proxy into a cache directory outside the work tree, and
# prints the binary's path. The fleet's chaos test (fleet: TestChaos, scripts/chaos.sh)
# routes every link of its node processes through it. .ci/run calls it; run it by hand
# to run the chaos test locally. It does nothing when the pinned binary is already built.
set -euo pipefail
VERSION=v2.5.0
BIN="${TOKENDIST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/tokendist/tools}/toxiproxy-$VERSION"
if [ ! -x "$BIN/toxiproxy-server" ]; then
  mkdir -p "$BIN"
  # -buildvcs=false: the module cache has no VCS; GOFLAGS from the caller could say otherwise.
  GOFLAGS=-buildvcs=false GOBIN="$BIN" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$VERSION" >&2
  mv "$BIN/server" "$BIN/toxiproxy-server"
fi
echo "$BIN/toxiproxy-server"
