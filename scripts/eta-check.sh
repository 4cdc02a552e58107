#!/usr/bin/env bash
# Measures the honesty of tokendist sweep's ETA (issue 35): runs a fresh sweep of FILE
# into a temporary database with a progress line every EVERY, timestamps each line, and
# after the sweep compares the ETA each line showed with the real time that remained
# (the time of the final "runs done" line minus the line's time).
#
#   scripts/eta-check.sh [options] FILE [sweep flags ...]
#
# Options (before FILE):
#   --seeds N        run a copy of FILE with its top-level `seeds:` set to N (long files)
#   --interrupt S    send SIGINT to the sweep after S seconds, then resume it (the same
#                    command again) and measure the resumed process's lines
#   --every D        interval of progress lines (default 2s)
#   --workers N      sweep --workers (default: all cores)
#
# It prints every line as: seconds since the (resumed) sweep process started, the ETA
# shown, the real remaining seconds and their ratio, then the worst ratios (lowest and
# highest) over the lines after 10 s and after 60 s, and the last time the ETA said
# "estimating". The ratio is max(ETA, 1 s) / max(real, 1 s): the ETA is shown in whole
# seconds, so within the last second a ratio says nothing. Run one at a time: the
# measurement needs the machine.
set -euo pipefail

seeds= interrupt= every=2s workers=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --interrupt) interrupt=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--seeds N] [--interrupt S] [--every D] [--workers N] FILE [sweep flags]" >&2; exit 2; }
file=$1; shift

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/tokendist" ./cmd/tokendist)
if [[ -n $seeds ]]; then
  sed -E "s/^seeds:.*/seeds: $seeds/" "$file" > "$tmp/$(basename "$file")"
  file=$tmp/$(basename "$file")
fi

# start LOG ARGS...: starts the sweep in the background (its pid in $pid), each stderr
# line prefixed by the epoch time in seconds; the log's first line is the start time.
start() {
  local log=$1; shift
  date +%s.%N > "$log"
  "$tmp/tokendist" sweep --db "$tmp/eta.db" --progress lines --every "$every" --workers "$workers" "$@" "$file" \
    2> >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >> "$log") >/dev/null &
  pid=$!
}

if [[ -n $interrupt ]]; then
  start "$tmp/first.log" "$@"
  sleep "$interrupt"
  kill -INT "$pid"
  wait "$pid" || true
  sleep 0.5
  echo "first process, interrupted after ${interrupt}s:"
  grep -E 'runs done' "$tmp/first.log" | cut -d' ' -f2- || true
fi
start "$tmp/run.log" "$@"
wait "$pid" || true
sleep 0.5

awk '
function secs(d,   s, n, u, v) { # a Go duration string (1h2m3s, 4.5s, 300ms) in seconds
  s = 0
  while (match(d, /^[0-9.]+(h|ms|m|s|µs|us|ns)/)) {
    v = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
    match(v, /[a-zµ]+$/); u = substr(v, RSTART); n = substr(v, 1, RSTART - 1) + 0
    s += n * (u == "h" ? 3600 : u == "m" ? 60 : u == "s" ? 1 : u == "ms" ? 0.001 : 0)
  }
  return s
}
NR == 1 { t0 = $1; next }
{ t[NR] = $1 - t0; l[NR] = $0 }
/runs done/ { tend = $1 - t0 }
/runs \(.*ETA / { n++; at[n] = $1 - t0; e[n] = $NF }
END {
  if (tend == "") { print "no final line: the sweep did not finish"; exit 1 }
  printf "%8s %12s %9s %7s\n", "t(s)", "ETA", "real(s)", "ratio"
  lo10 = lo60 = 1e9; hi10 = hi60 = 0; lastEst = -1
  for (i = 1; i <= n; i++) {
    real = tend - at[i]
    if (e[i] == "estimating" || e[i] == "?") { printf "%8.1f %12s %9.1f %7s\n", at[i], e[i], real, "-"; lastEst = at[i]; continue }
    eta = secs(e[i]); r = (eta > 1 ? eta : 1) / (real > 1 ? real : 1)
    printf "%8.1f %12s %9.1f %7.2f\n", at[i], e[i], real, r
    if (at[i] >= 10) { if (r < lo10) lo10 = r; if (r > hi10) hi10 = r; n10++ }
    if (at[i] >= 60) { if (r < lo60) lo60 = r; if (r > hi60) hi60 = r; n60++ }
  }
  printf "sweep wall %.1f s; lines %d; last \"estimating\" at %s\n", tend, n, lastEst < 0 ? "never" : sprintf("%.1f s", lastEst)
  if (n10) printf "after 10 s: %d lines, ratio %.2f .. %.2f\n", n10, lo10, hi10
  if (n60) printf "after 60 s: %d lines, ratio %.2f .. %.2f\n", n60, lo60, hi60
}' "$tmp/run.log"
