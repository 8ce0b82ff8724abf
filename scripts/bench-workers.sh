#!/usr/bin/env bash
# Beyond one machine, on one machine: crawl throughput of 1, 2 and 4 crawl workers sharing a
# PostgreSQL store against one process crawling into the embedded store; a replica's sync lag
# while workers crawl; search throughput of 1 and 2 replicas.
#
#   scripts/bench-workers.sh [HOSTS] [ROUNDS] [DELAYS]   # defaults: 2000 hosts, 3 rounds, "0 100"
#   scripts/bench-workers.sh 2000 1 ""                   # only the replica lag and search runs
#
# The web is the crawler benchmark's simulated one (`cargo bench -p crawler --bench crawl --
# --serve`: h{N}.bench.test, one host in ten publishes two skills), PostgreSQL a throwaway
# cluster (scripts/pg-throwaway.sh), search load wrk (Debian: apt-get install -y wrk;
# installed here when missing and possible). Every crawl starts from an empty store (a fresh
# data directory, a fresh PostgreSQL schema). Prints Markdown tables for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

HOSTS="${1:-2000}"
ROUNDS="${2:-3}"
DELAYS="${3-0 100}"
CONCURRENCY=64
SEARCH_SECONDS=10

# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
need_wrk

cargo build --release --quiet --bin skillscout
BIN="$PWD/target/release/skillscout"
WEB_BIN=$(cargo bench -p crawler --bench crawl --no-run 2>&1 | grep -o 'target/release/deps/crawl-[0-9a-f]*' | tail -1)
WEB_BIN="$PWD/$WEB_BIN"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${SKILLSCOUT_TEST_POSTGRES_DIR:-}" ]; then scripts/pg-throwaway.sh stop "$SKILLSCOUT_TEST_POSTGRES_DIR"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(scripts/pg-throwaway.sh start)"
SERVER_URL="$SKILLSCOUT_TEST_POSTGRES"
# Creates a fresh schema and prints the store URL that selects it (called in a subshell: the
# name comes from the clock, not from a counter).
fresh_store() {
  local name
  name="bench_$(date +%s%N)"
  psql "$SERVER_URL" --quiet --no-psqlrc -v ON_ERROR_STOP=1 -c "CREATE SCHEMA $name" >/dev/null || exit 1
  echo "$SERVER_URL&options=-c%20search_path%3D$name"
}

"$WEB_BIN" --serve >"$WORK/web.out" &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^PORT' "$WORK/web.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(awk '/^PORT/ {print $2}' "$WORK/web.out")
for i in $(seq 0 $((HOSTS - 1))); do echo "http://h$i.bench.test"; done >"$WORK/seeds.txt"

export RUST_LOG=warn
RUN=0
# Runs one crawl setup (`embedded` or a worker count) and prints its wall time in seconds.
# Each run talks to its own loopback address (127.0.0.2-17), so connections of one run
# lingering in TIME_WAIT do not slow the next.
crawl_run() {
  local workers="$1" delay="$2"
  RUN=$((RUN + 1))
  local address="127.0.0.$((2 + RUN % 16))"
  local args=(crawl --seeds "$WORK/seeds.txt" --resolve "*.bench.test=$address:$PORT"
    --host-delay-ms "$delay" --concurrency "$CONCURRENCY" --no-progress)
  local start end
  if [ "$workers" = embedded ]; then
    start=$(date +%s.%N)
    "$BIN" --data "$WORK/run-$RUN" "${args[@]}" >/dev/null
    end=$(date +%s.%N)
  else
    local store pids=()
    store=$(fresh_store) || exit 1
    "$BIN" --store "$store" migrate >/dev/null
    start=$(date +%s.%N)
    for w in $(seq "$workers"); do
      "$BIN" --data "$WORK/run-$RUN-$w" --store "$store" "${args[@]}" >/dev/null &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    end=$(date +%s.%N)
  fi
  rm -rf "$WORK"/run-"$RUN"*
  echo "$end - $start" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }

echo "## Crawl: $HOSTS hosts, $CONCURRENCY hosts at once per process, median of $ROUNDS rounds"
echo
echo "| host delay | setup | times (s) | median (s) | hosts/s | ratio to embedded |"
echo "| ---: | --- | --- | ---: | ---: | ---: |"
for delay in $DELAYS; do
  declare -A times=()
  for round in $(seq "$ROUNDS"); do
    for setup in embedded 1 2 4; do
      times[$setup]+="$(crawl_run "$setup" "$delay") "
    done
  done
  base=$(echo "${times[embedded]}" | tr ' ' '\n' | grep . | median)
  for setup in embedded 1 2 4; do
    m=$(echo "${times[$setup]}" | tr ' ' '\n' | grep . | median)
    label="$setup PostgreSQL workers"
    [ "$setup" = embedded ] && label="1 process, embedded store"
    [ "$setup" = 1 ] && label="1 PostgreSQL worker"
    list=$(echo "${times[$setup]}" | tr ' ' '\n' | grep . | xargs printf '%.2f ' )
    printf '| %s ms | %s | %s| %s | %.0f | %.2f |\n' "$delay" "$label" "$list" "$m" \
      "$(echo "$HOSTS / $m" | bc -l)" "$(echo "$base / $m" | bc -l)"
  done
  unset times
done

# A replica following the store while two workers crawl (host delay 100 ms): its sync lag
# sampled every 100 ms, and how long after the crawl ended the replica held every change.
echo
echo "## Replica sync lag while 2 workers crawl $HOSTS hosts (host delay 100 ms, --sync-every 1s)"
STORE=$(fresh_store) || exit 1
"$BIN" --store "$STORE" migrate >/dev/null
API1=18531
API2=18532
"$BIN" --data "$WORK/replica-1" --store "$STORE" serve --addr "127.0.0.1:$API1" --sync-every 1s >/dev/null &
PIDS+=($!)
wait_for() { for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "no server on $1" >&2; exit 1; }
wait_for "$API1"
pids=()
for w in 1 2; do
  "$BIN" --data "$WORK/lag-$w" --store "$STORE" crawl --seeds "$WORK/seeds.txt" \
    --resolve "*.bench.test=127.0.0.1:$PORT" --host-delay-ms 100 --concurrency "$CONCURRENCY" --no-progress >/dev/null &
  pids+=($!)
done
: >"$WORK/lag.txt"
# The lag is the store's latest change (read from PostgreSQL) less the replica's index change
# number (`/healthz`), beside the `sync_lag` the replica reports (read every 250 ms).
: >"$WORK/healthz-lag.txt"
while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
  read -r health_lag index_seq <<<"$(curl -fsS "http://127.0.0.1:$API1/healthz" | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h["sync_lag"], h["index_seq"])')"
  store_now=$(psql "$STORE" --no-psqlrc -tA -c "SELECT last_seq FROM change_counter")
  echo "$((store_now - index_seq))" >>"$WORK/lag.txt"
  echo "$health_lag" >>"$WORK/healthz-lag.txt"
  sleep 0.1
done
crawl_end=$(date +%s.%N)
for pid in "${pids[@]}"; do wait "$pid"; done
while :; do
  lag=$(curl -fsS "http://127.0.0.1:$API1/healthz" | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h["sync_lag"], h["index_seq"], h["store_seq"])')
  read -r lag_now index_seq store_seq <<<"$lag"
  if [ "$lag_now" = 0 ] && [ "$index_seq" = "$store_seq" ] && [ "$(echo "$(date +%s.%N) - $crawl_end > 1.5" | bc)" = 1 ]; then break; fi
  sleep 0.1
done
caught=$(echo "$(date +%s.%N) - $crawl_end" | bc -l)
samples=$(wc -l <"$WORK/lag.txt")
max_lag=$(sort -g "$WORK/lag.txt" | tail -1)
median_lag=$(median <"$WORK/lag.txt")
max_health=$(sort -g "$WORK/healthz-lag.txt" | tail -1)
echo
echo "| samples | median lag (changes) | max lag | max /healthz sync_lag | changes in all | caught up after the crawl ended |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
printf '| %s | %s | %s | %s | %s | within %.1f s (checked from 1.5 s on) |\n' "$samples" "$median_lag" "$max_lag" "$max_health" "$store_seq" "$caught"

# Search throughput: wrk against one replica, then against two at once (one wrk each, as a
# round-robin balancer would spread them), over the store the lag run filled.
echo
echo "## Search: wrk, ${SEARCH_SECONDS} s, 2 threads and 32 connections per replica, q=convert"
"$BIN" --data "$WORK/replica-2" --store "$STORE" serve --addr "127.0.0.1:$API2" --sync-every 1s >/dev/null &
PIDS+=($!)
wait_for "$API2"
sleep 3
rps() { awk '/^Requests\/sec/ {print $2}' "$1"; }
wrk -t2 -c32 -d"${SEARCH_SECONDS}s" "http://127.0.0.1:$API1/v1/search?q=convert" >"$WORK/one.txt"
wrk -t2 -c32 -d"${SEARCH_SECONDS}s" "http://127.0.0.1:$API1/v1/search?q=convert" >"$WORK/two-a.txt" &
WRK_A=$!
wrk -t2 -c32 -d"${SEARCH_SECONDS}s" "http://127.0.0.1:$API2/v1/search?q=convert" >"$WORK/two-b.txt"
wait "$WRK_A"
one=$(rps "$WORK/one.txt")
two=$(echo "$(rps "$WORK/two-a.txt") + $(rps "$WORK/two-b.txt")" | bc -l)
echo
echo "| replicas | requests/s | ratio |"
echo "| ---: | ---: | ---: |"
printf '| 1 | %.0f | 1.00 |\n' "$one"
printf '| 2 | %.0f | %.2f |\n' "$two" "$(echo "$two / $one" | bc -l)"
