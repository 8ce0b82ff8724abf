#!/usr/bin/env bash
# Load benchmark of the directory server: wrk against /v1/search on loopback, first with the
# server idle, then while `serve --crawl` crawls a synthetic web again and again (each crawl
# changes every SKILL.md, so each one stores records and syncs the index while wrk runs).
#
#   scripts/bench-serve.sh [SITES] [SECONDS]      # defaults: 250 sites (1,000 skills), 20 s
#
# Needs wrk (Debian: apt-get install -y wrk; installed here when missing and possible) and
# python3 (the synthetic web's server). Everything listens on 127.0.0.1 only. Prints wrk's
# reports and a summary table for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SITES="${1:-250}"
SECONDS_PER_RUN="${2:-20}"
CONNECTIONS=32
THREADS=2
WEB_PORT=18431
API_PORT=18432

# shellcheck source=scripts/bench-common.sh
. scripts/bench-common.sh
need_wrk

cargo build --release --quiet --bin skillscout
BIN="$PWD/target/release/skillscout"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The synthetic web: SITES v0.1 sites of 4 skills each, served by Host header. Every SKILL.md
# carries the time of the request, so every crawl finds every skill changed.
python3 - "$WORK" "$SITES" "$WEB_PORT" <<'PY' &
import http.server, json, random, sys, time
root, sites, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = ("pdf csv invoice translate merge split extract table chart image resize audio video "
         "transcribe summary report email calendar schedule deploy docker kubernetes test lint "
         "format review security audit payroll tax contract search index crawl backup restore "
         "database query migrate encrypt sign verify compress archive upload download").split()
rng = random.Random(7)
skills = {}
with open(f"{root}/seeds.txt", "w") as seeds:
    for site in range(sites):
        host = f"site-{site}.bench"
        seeds.write(f"http://{host}\n")
        entries = []
        for n in range(4):
            picked = rng.sample(words, 5)
            name = f"{picked[0]}-{picked[1]}-{n}"
            description = f"{picked[0].capitalize()} {picked[1]} with {picked[2]} and {picked[3]}; use for {picked[4]} work."
            entries.append({"name": name, "description": description, "files": ["SKILL.md"]})
            skills[(host, name)] = (description, " ".join(rng.sample(words, 30)))
        skills[(host, "index")] = json.dumps({"skills": entries}).encode()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        host = self.headers.get("Host", "").split(":")[0]
        body = None
        if self.path == "/.well-known/skills/index.json":
            body = skills.get((host, "index"))
        elif self.path.startswith("/.well-known/skills/") and self.path.endswith("/SKILL.md"):
            name = self.path.split("/")[3]
            found = skills.get((host, name))
            if found:
                description, text = found
                body = (f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n"
                        f"{text}\n\nServed at {time.time()}.\n").encode()
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if self.path.endswith(".json") else "text/markdown")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
PY
PIDS+=($!)
for _ in $(seq 50); do [ -f "$WORK/seeds.txt" ] && break; sleep 0.1; done
sleep 0.5

export RUST_LOG=warn
DATA="$WORK/data"
RESOLVE="*.bench=127.0.0.1:$WEB_PORT"
"$BIN" crawl --data "$DATA" --seeds "$WORK/seeds.txt" --resolve "$RESOLVE" --host-delay-ms 0 --no-progress

# Queries rotate through a list, so the benchmark is not one cached lookup.
cat > "$WORK/queries.lua" <<'LUA'
local queries = { "pdf", "merge pdf", "translate", "invoice extract", "csv table",
                  "docker deploy", "security audit", "q=((((", "summary report", "" }
local filters = { "", "&limit=50", "&type=skill", "&offset=20" }
local n = 0
request = function()
  n = n + 1
  local q = queries[(n % #queries) + 1]
  local f = filters[(n % #filters) + 1]
  return wrk.format("GET", "/v1/search?q=" .. q:gsub(" ", "+") .. f)
end
LUA

wait_for_server() {
  for _ in $(seq 100); do
    if curl -fsS "http://127.0.0.1:$API_PORT/healthz" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "the server did not start" >&2
  exit 1
}

run_wrk() {
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency -s "$WORK/queries.lua" \
    "http://127.0.0.1:$API_PORT" | tee "$WORK/$1.txt"
}

echo "== idle server: $((SITES * 4)) skills"
"$BIN" serve --data "$DATA" --addr "127.0.0.1:$API_PORT" >/dev/null &
SERVER=$!
PIDS+=($SERVER)
wait_for_server
run_wrk idle
kill -TERM "$SERVER"; wait "$SERVER" || true

echo "== while crawling $SITES sites again and again"
"$BIN" serve --data "$DATA" --addr "127.0.0.1:$API_PORT" --crawl --seeds "$WORK/seeds.txt" \
  --crawl-every 1s --resolve "$RESOLVE" --host-delay-ms 0 >/dev/null &
SERVER=$!
PIDS+=($SERVER)
wait_for_server
sleep 1
run_wrk crawling
CRAWLS=$(curl -fsS "http://127.0.0.1:$API_PORT/metrics" | awk '/^skillscout_crawl_runs_total/ {print $2}')
SYNCS=$(curl -fsS "http://127.0.0.1:$API_PORT/metrics" | awk '/^skillscout_index_syncs_total/ {print $2}')
kill -TERM "$SERVER"; wait "$SERVER" || true

summary() {
  local file="$WORK/$1.txt"
  local rps p50 p99
  rps=$(awk '/^Requests\/sec/ {print $2}' "$file")
  p50=$(awk '$1 == "50%" {print $2}' "$file")
  p99=$(awk '$1 == "99%" {print $2}' "$file")
  echo "| $2 | $rps | $p50 | $p99 |"
}
echo
echo "| run | requests/s | p50 | p99 |"
echo "| --- | --- | --- | --- |"
summary idle "idle"
summary crawling "background crawl ($CRAWLS crawls, $SYNCS index syncs during the run)"
