#!/usr/bin/env bash
# Freshness benchmark: how long from a publisher's ping to its change being searchable.
# PUBLISHERS loopback sites (one skill each, files fresh for an hour by Cache-Control, with an
# ETag) are crawled by `serve --crawl --crawl-every 1h --host-delay-ms DELAY`; then every site
# changes its SKILL.md and pings /indexnow at once, and the script polls /v1/search for each
# change. Two rounds: the first pings with keys the directory has not verified yet (the key
# file is read first), the second with keys it remembers. Then SUBMISSIONS new sites are
# submitted at once (POST /v1/domains), timed from the submission to their skill being
# searchable. robots.txt is cached by the first crawl, as in a running directory. The
# per-client rate limit is off: the script's own searches, which time the changes, come from
# one address and would spend it.
#
#   scripts/bench-freshness.sh [PUBLISHERS] [DELAY_MS] [SUBMISSIONS]   # defaults: 100 1000 20
#
# BIN=path/to/skillscout uses that binary instead of building a release one. Needs python3.
# Everything listens on 127.0.0.1 only. Prints p50, p99 and max of each round.
set -euo pipefail
cd "$(dirname "$0")/.."

PUBLISHERS="${1:-100}"
DELAY_MS="${2:-1000}"
SUBMISSIONS="${3:-20}"
WEB_PORT=18531
API_PORT=18532

if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin skillscout
  BIN="$PWD/target/release/skillscout"
fi
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

KEY="5f1c0d2e-9a8b-4c7d-b6e5-f40312a9c8d7"

# The web: files under $WORK/web/<host>/, served by Host header, fresh for an hour, with an
# ETag (a 304 for a matching If-None-Match).
python3 - "$WORK/web" "$WEB_PORT" <<'PY' &
import hashlib, http.server, os, sys
root, port = sys.argv[1], int(sys.argv[2])
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        host = self.headers.get("Host", "").split(":")[0]
        path = os.path.normpath(self.path.split("?")[0]).lstrip("/")
        file = os.path.join(root, host, path)
        if ".." in path or not os.path.isfile(file):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = open(file, "rb").read()
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        if self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Cache-Control", "max-age=3600")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", "max-age=3600")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
PY
PIDS+=($!)

python3 - "$WORK" "$PUBLISHERS" "$SUBMISSIONS" "$KEY" <<'PY'
import json, os, sys
work, publishers, submissions, key = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def site(host, text):
    skills = os.path.join(work, "web", host, ".well-known/skills")
    os.makedirs(os.path.join(skills, "tool"), exist_ok=True)
    open(os.path.join(skills, "tool", "SKILL.md"), "w").write(
        "---\nname: tool\ndescription: %s\n---\n# tool\n\n%s\n" % (text, text))
    open(os.path.join(skills, "index.json"), "w").write(json.dumps(
        {"skills": [{"name": "tool", "description": "A tool.", "files": ["SKILL.md"]}]}))
    open(os.path.join(work, "web", host, key + ".txt"), "w").write(key)
with open(os.path.join(work, "seeds.txt"), "w") as seeds:
    for n in range(publishers):
        site("p%03d.test" % n, "Publisher %d first version." % n)
        seeds.write("http://p%03d.test\n" % n)
def letters(n, width=3):
    out = ""
    for _ in range(width):
        out = "abcdefghijklmnopqrstuvwxyz"[n % 26] + out
        n //= 26
    return out
for n in range(submissions):
    site("s%03d.test" % n, "Submitted site %d, a marmot." % n)
PY

"$BIN" --data "$WORK/data" serve --addr "127.0.0.1:$API_PORT" --crawl --seeds "$WORK/seeds.txt" \
  --crawl-every 1h --resolve "*.test=127.0.0.1:$WEB_PORT" --host-delay-ms "$DELAY_MS" \
  --ping-budget 1000 --rate-limit off \
  >"$WORK/serve.out" 2>"$WORK/serve.err" &
PIDS+=($!)

python3 - "$WORK" "$PUBLISHERS" "$SUBMISSIONS" "$KEY" "$API_PORT" "$DELAY_MS" <<'PY' || { tail -5 "$WORK/serve.err" >&2; exit 1; }
import concurrent.futures, json, os, sys, time, urllib.error, urllib.request
work, publishers, submissions, key, port, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
api = "http://127.0.0.1:%d" % port

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(api + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None
    except (urllib.error.URLError, ConnectionError):
        return 0, None

def letters(n, width=3):
    # Tokens of letters only: the search tokenizer splits letters from digits.
    out = ""
    for _ in range(width):
        out = "abcdefghijklmnopqrstuvwxyz"[n % 26] + out
        n //= 26
    return out

def total(query, domain=None):
    path = "/v1/search?q=" + query + "&limit=1"
    if domain:
        path += "&domain=" + domain
    status, answer = call("GET", path)
    return answer["total"] if status == 200 else -1

# The first crawl: until every publisher is searchable, or nothing changed for 20 s (a
# site whose first crawl failed waits for its backoff; the rounds leave it out).
deadline = time.time() + 600
last, since = -1, time.time()
while True:
    found = total("publisher")
    if found != last:
        last, since = found, time.time()
    if found >= publishers or time.time() - since > 20:
        break
    if time.time() > deadline:
        sys.exit("the first crawl did not finish in 10 minutes")
    time.sleep(0.5)
live = [n for n in range(publishers) if total("publisher", "p%03d.test" % n) >= 1]
print("first crawl done: %d of %d publishers searchable, host delay %s ms" % (len(live), publishers, delay))

def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * len(values) + 0.5)) - 1))]

def measure(label, starts, tokens, host):
    done = {}
    pending = set(tokens)
    limit = time.time() + 120
    while pending and time.time() < limit:
        for n in list(pending):
            # Not started yet (submissions are timed while they are still being sent).
            if n not in starts:
                continue
            if total(tokens[n], host % n) >= 1:
                done[n] = time.time() - starts[n]
                pending.discard(n)
        time.sleep(0.05)
    times = list(done.values())
    if not times:
        print("%-34s none searchable within 120 s" % label)
        return
    print("%-34s n=%d p50=%.2f s p99=%.2f s max=%.2f s%s" % (
        label, len(times), percentile(times, 50), percentile(times, 99), max(times),
        "" if not pending else " (%d never within 120 s)" % len(pending)))

def ping_round(label, round_no):
    tokens = {}
    for n in live:
        # A word no earlier version of the site holds, searched within the site's domain
        # (the search forgives typos, so near tokens of other sites would match).
        token = ["walrus", "pelican", "narwhal"][round_no - 1]
        tokens[n] = token
        path = os.path.join(work, "web", "p%03d.test" % n, ".well-known/skills/tool/SKILL.md")
        open(path, "w").write("---\nname: tool\ndescription: Publisher %d changed %s.\n---\n# tool\n\nChanged %s.\n" % (n, token, token))
    starts = {}
    statuses = {}
    shed = [0]
    def ping(n):
        url = "http://p%03d.test/.well-known/skills/tool/SKILL.md" % n
        starts[n] = time.time()
        # A 503 is the server shedding load past --max-in-flight: tried again after its
        # Retry-After (1 s), timed from the first try.
        while True:
            statuses[n] = call("GET", "/indexnow?url=%s&key=%s" % (url, key))[0]
            if statuses[n] != 503:
                return
            shed[0] += 1
            time.sleep(1)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(live)) as pool:
        list(pool.map(ping, live))
    answered = {}
    for status in statuses.values():
        answered[status] = answered.get(status, 0) + 1
    print("%s: ping answers %s, %d shed (503) and retried" % (label, answered, shed[0]))
    measure(label + ", ping to searchable", starts, tokens, "p%03d.test")

ping_round("round 1 (keys not yet verified)", 1)
time.sleep(2)
ping_round("round 2 (keys remembered)", 2)

# A submission is answered once its probe ends (or after a few seconds): the searches run
# meanwhile, so that a change searchable before the answer counts when it was.
import threading
starts, tokens = {}, {n: "marmot" for n in range(submissions)}
timer = threading.Thread(target=measure, args=("submission to searchable", starts, tokens, "s%03d.test"))
timer.start()
def submit(n):
    starts[n] = time.time()
    while True:
        status = call("POST", "/v1/domains", {"domain": "http://s%03d.test" % n})[0]
        if status != 503:
            return status
        time.sleep(1)
with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, submissions)) as pool:
    answers = list(pool.map(submit, range(submissions)))
print("submissions: answers %s" % {s: answers.count(s) for s in set(answers)})
timer.join()
PY
