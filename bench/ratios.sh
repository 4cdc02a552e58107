#!/usr/bin/env bash
# Measures the issue-15 ratios the way docs/performance.md reports them: the NumPy peer
# (bench/numpy_peer.py, Debian's python3 + python3-numpy) and tokendist's round
# benchmarks, interleaved R times (default 3) in one invocation on one machine, then the
# per-repetition ratios. Usage: bench/ratios.sh [R]   (from the repository root)
set -euo pipefail
R=${1:-3}
# The peer needs Debian's NumPy (the issue's instructions); install it once if missing.
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-numpy
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go test -c -o "$out/td.test" .
uptime
for i in $(seq "$R"); do
  /usr/bin/python3 bench/numpy_peer.py > "$out/peer.$i"
  "$out/td.test" -test.run XXX -test.count 1 \
    -test.bench 'BenchmarkRandomizedDiffusionRound/workers|BenchmarkThreshold1Round(BinaryTree|Floor)' > "$out/go.$i"
  uptime
done
/usr/bin/python3 - "$out" "$R" <<'PY'
import re, sys
d, R = sys.argv[1], int(sys.argv[2])
def ms(txt, name):
    m = re.search(r"^%s(?:-\d+)?\s+\d+\s+([\d.]+) ns/op" % re.escape(name), txt, re.M)
    return float(m.group(1)) / 1e6 if m else float("nan")
print("rep  peerT1 ms  T1/1c  T1/2c  steps  floor | T1 peer×(1c, 2c)  floor×(1c, 2c) | peerRD ms  RD/1w  RD/2w | RD peer×(1w, 2w)  2w/1w")
for i in range(1, R + 1):
    peer = open("%s/peer.%d" % (d, i)).read()
    go = open("%s/go.%d" % (d, i)).read()
    pt1 = float(re.search(r"numpy threshold1 round.*: ([\d.]+) s", peer).group(1)) * 1e3
    prd = float(re.search(r"numpy randomized diffusion round.*: ([\d.]+) s", peer).group(1)) * 1e3
    c1, c2 = ms(go, "BenchmarkThreshold1RoundBinaryTree/cores=1"), ms(go, "BenchmarkThreshold1RoundBinaryTree/cores=2")
    st, fl = ms(go, "BenchmarkThreshold1RoundBinaryTree/steps"), ms(go, "BenchmarkThreshold1RoundFloor")
    w1, w2 = ms(go, "BenchmarkRandomizedDiffusionRound/workers=1"), ms(go, "BenchmarkRandomizedDiffusionRound/workers=2")
    print("%3d  %8.2f  %5.2f  %5.2f  %5.2f  %5.2f | %6.1f %6.1f      %5.2f %5.2f   | %8.1f  %5.2f  %5.2f | %6.1f %6.1f   %5.2f" % (
        i, pt1, c1, c2, st, fl, pt1 / c1, pt1 / c2, c1 / fl, c2 / fl, prd, w1, w2, prd / w1, prd / w2, w1 / w2))
PY
