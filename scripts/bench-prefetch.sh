#!/usr/bin/env bash
# What fetching legacy (v0.1) skills' files costs (the crawl's default; --no-prefetch-files
# turns it off): the same sites crawled with and without it, alternately, each into a fresh
# data directory, with no pause between requests. Prints requests, skills, bytes stored and
# wall time (the crawl and its index sync, as `skillscout crawl` runs them) per run.
#
#   scripts/bench-prefetch.sh [WEB] [ROUNDS]     # defaults: ../shared/corpus, 2 rounds
#
# WEB is served on loopback by `skillscout demo --web WEB` (one folder per site, as
# ../shared/corpus is laid out), and the crawls reach it through --resolve. Needs python3 to
# read the reports.
set -euo pipefail
cd "$(dirname "$0")/.."

WEB="${1:-../shared/corpus}"
ROUNDS="${2:-2}"

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

"$BIN" demo --web "$WEB" --addr 127.0.0.1:0 --data "$WORK/demo" >"$WORK/demo.out" 2>"$WORK/demo.err" &
SERVER=$!
for _ in $(seq 1 600); do
  grep -q "^open http" "$WORK/demo.out" && break
  sleep 0.5
done
grep -q "^open http" "$WORK/demo.out" || { cat "$WORK/demo.err" >&2; exit 1; }
SITES=$(grep -o 'site_addr=[0-9.:]*' "$WORK/demo.err" | head -n 1 | cut -d= -f2)

# Every site folder of WEB (a name with a dot) as a target.
for site in "$WEB"/*/; do
  name=$(basename "$site")
  case "$name" in *.*) echo "http://$name" ;; esac
done >"$WORK/seeds.txt"

echo "| run | files of legacy skills | domains | skills | requests | bytes stored | wall time |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for mode in without with; do
    flag=()
    [ "$mode" = without ] && flag=(--no-prefetch-files)
    data="$WORK/data-$mode-$round"
    start=$(date +%s.%N)
    "$BIN" --data "$data" crawl --seeds "$WORK/seeds.txt" --resolve "*.test=$SITES" \
      --host-delay-ms 0 --no-progress --report "$WORK/report.json" "${flag[@]}" >/dev/null 2>&1
    end=$(date +%s.%N)
    stored=$(du -sb "$data/blobs" | cut -f1)
    python3 - "$WORK/report.json" "$round" "$mode" "$start" "$end" "$stored" <<'EOF'
import json, sys
report, round_, mode, start, end, stored = sys.argv[1:]
totals = json.load(open(report))["totals"]
print(f"| {round_} | {mode} | {totals['domains']} | {totals['skills']} | {totals['requests']} "
      f"| {int(stored):,} | {float(end) - float(start):.2f} s |")
EOF
    rm -rf "$data"
  done
done
