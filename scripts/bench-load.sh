#!/usr/bin/env bash
# Load and overload of the directory server: wrk against /v1/search on loopback at a normal
# load and at 1,000 connections, while /healthz is probed once every 100 ms; then the share
# of 503 `overloaded` answers, the health probe's latency and the server's peak RSS.
#
#   scripts/bench-load.sh [SECONDS] [WEB]     # defaults: 15 s per run, ../shared/corpus
#
# The server is `skillscout demo` over WEB (one folder per site, as ../shared/corpus is laid
# out: 399 real skills), so it crawls the sites from loopback first. Needs wrk (Debian:
# apt-get install -y wrk; installed here when missing and possible) and curl. Everything
# listens on 127.0.0.1 only. Prints wrk's reports and a table for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_RUN="${1:-15}"
WEB="${2:-../shared/corpus}"
PORT=18441
QUERY='/v1/search?q=extract+text+from+a+scanned+pdf'

# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
need_wrk
# 1,000 connections need as many descriptors on both sides.
ulimit -n 65536 2>/dev/null || ulimit -n 4096

cargo build --release --quiet --bin skillscout
BIN="$PWD/target/release/skillscout"
WORK="$(mktemp -d)"
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" demo --web "$WEB" --addr "127.0.0.1:$PORT" --data "$WORK/data" >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 600); do
  grep -q "^open http" "$WORK/server.log" && break
  sleep 0.5
done
grep -q "^open http" "$WORK/server.log" || { cat "$WORK/server.log" >&2; exit 1; }
grep "crawled" "$WORK/server.log" | tail -n 1

# Probes /healthz every 100 ms until told to stop; writes one latency (ms) per line.
probe_health() {
  local out="$1"
  while [ ! -e "$WORK/stop" ]; do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "http://127.0.0.1:$PORT/healthz" >>"$out" || true
    sleep 0.1
  done
}

run() {
  local connections="$1" out="$WORK/wrk-$1.txt" health="$WORK/health-$1.txt"
  rm -f "$WORK/stop"
  probe_health "$health" &
  local prober=$!
  wrk -t2 -c"$connections" -d"${SECONDS_PER_RUN}s" --timeout 10s --latency "http://127.0.0.1:$PORT$QUERY" >"$out" 2>&1 || true
  touch "$WORK/stop"
  wait "$prober" || true
  cat "$out" >&2
  local rps p50 p99 total non2xx
  rps=$(awk '/^Requests\/sec/ {print $2}' "$out")
  p50=$(awk '$1 == "50%" {print $2}' "$out")
  p99=$(awk '$1 == "99%" {print $2}' "$out")
  total=$(awk '/requests in/ {print $1}' "$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' "$out")
  non2xx="${non2xx:-0}"
  local health_ok health_p50 health_max
  health_ok=$(awk '$1 == 200' "$health" | wc -l)
  health_p50=$(awk '$1 == 200 {print $2 * 1000}' "$health" | sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.1f", a[int((NR+1)/2)]}')
  health_max=$(awk '$1 == 200 {print $2 * 1000}' "$health" | sort -n | tail -n 1)
  local share
  share=$(awk -v n="$non2xx" -v t="$total" 'BEGIN {if (t > 0) printf "%.1f%%", 100 * n / t; else print "-"}')
  echo "| $connections | $rps | $p50 | $p99 | $share | $health_ok/$(wc -l <"$health") ok, p50 ${health_p50:-?} ms, max ${health_max:-?} ms |"
}

ROWS=()
for connections in 32 1000; do
  ROWS+=("$(run "$connections")")
done
RSS=$(awk '/VmHWM/ {printf "%.0f MiB", $2 / 1024}' "/proc/$SERVER/status")

echo
echo "| connections | requests/s | p50 | p99 | 503 overloaded | /healthz during the run |"
echo "| --- | --- | --- | --- | --- | --- |"
for row in "${ROWS[@]}"; do echo "$row"; done
echo
echo "server peak RSS (VmHWM): $RSS"
