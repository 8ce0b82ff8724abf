#!/usr/bin/env bash
# An outside MCP client reads the directory: the official MCP Inspector (npm package
# `@modelcontextprotocol/inspector`, CLI mode) against `POST /mcp` of a running
# `skillscout serve`:
#   - `skills/list --verify` runs the Skills Extension's conformance and digest checks over
#     every skill listed, and the listing holds every agent skill that `/v1/search` finds;
#   - `skills/get --verify` of one skill by URI;
#   - `tools/list --strict` (the `search_skills` schema is portable) and a `tools/call`;
#   - a token from --token-file is accepted, a wrong one refused.
#
# The data directory is filled by `skillscout demo`, which crawls the fixture web (seeds/web)
# on loopback. Nothing here uses the internet except npm, to install the Inspector and Node 22
# (the Inspector needs Node 22.19 or newer) into a scratch folder; set MCP_INSPECTOR_TOOLS=DIR
# to reuse one.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
# shellcheck source=tests/common.sh
. tests/common.sh
inspector_version=2.12.0

scratch=$(mktemp -d)
pids=()
cleanup() {
  stop_started
  rm -rf "$scratch"
}
trap cleanup EXIT

# --- the client -------------------------------------------------------------------------
install_node_tools "${MCP_INSPECTOR_TOOLS:-$scratch/tools}" mcp-inspector "@modelcontextprotocol/inspector@$inspector_version"
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
  echo "error: the MCP Inspector needs Node 22.19 or newer; found $(node --version)" >&2
  exit 1
fi
export DO_NOT_TRACK=1 CI=1
echo "MCP Inspector $inspector_version on node $(node --version)"

# --- the directory ----------------------------------------------------------------------
cargo build --quiet --locked --bin skillscout
skillscout=$repo/target/debug/skillscout
data=$scratch/data

# Crawl the fixture web once (demo serves it on loopback), then stop.
start demo "$skillscout" demo --data "$data" --addr 127.0.0.1:0
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true

echo "inspector-token-1" >"$scratch/tokens.txt"
start serve "$skillscout" serve --data "$data" --addr 127.0.0.1:0 --token-file "$scratch/tokens.txt"
url=$started_url
mcp=$url/mcp

inspect() {
  mcp-inspector --cli "$mcp" --transport http "$@"
}

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Every agent skill the search API lists, as skill:// URIs, one per line, sorted.
node -e '
  fetch(process.argv[1]).then((r) => r.json()).then((body) => {
    const uris = body.hits.map((hit) => `skill://${hit.domain}/${hit.name}/SKILL.md`).sort();
    console.log(uris.join("\n"));
  });
' "$url/v1/search?format=agent-skills&limit=100" >"$scratch/expected"

# skills/list: every skill verified (exit 7 or 8 would mean a failed or unfinished check).
if inspect --method skills/list --verify >"$scratch/verify.json" 2>"$scratch/verify.err"; then
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
    const reports = lines.map((line) => JSON.parse(line));
    const bad = reports.filter((report) => !report.ok || report.outcome !== "verified");
    if (bad.length) { console.error(JSON.stringify(bad)); process.exit(1); }
    console.log(reports.map((report) => report.uri).sort().join("\n"));
  ' "$scratch/verify.json" >"$scratch/listed" || fail "a skill did not verify"
  if ! cmp -s "$scratch/expected" "$scratch/listed"; then
    fail "skills/list does not list the agent skills /v1/search finds"
    diff "$scratch/expected" "$scratch/listed" >&2 || true
  else
    echo "ok: skills/list verified $(wc -l <"$scratch/listed") skills, every agent skill of the directory"
  fi
else
  fail "skills/list --verify exited $?"
  cat "$scratch/verify.err" "$scratch/verify.json" >&2
fi

# skills/get of one skill by URI, with a token.
uri=$(head -n 1 "$scratch/expected")
if inspect --method skills/get --uri "$uri" --verify --header "Authorization: Bearer inspector-token-1" \
    >"$scratch/get.json" 2>"$scratch/get.err" && grep -q '"outcome":"verified"' "$scratch/get.json"; then
  echo "ok: skills/get $uri verified"
else
  fail "skills/get $uri"
  cat "$scratch/get.err" "$scratch/get.json" >&2
fi

# A wrong token is refused before anything is listed.
if inspect --method skills/list --header "Authorization: Bearer wrong" >/dev/null 2>&1; then
  fail "a wrong token was accepted"
else
  echo "ok: a wrong token is refused"
fi

# The search tool: a portable schema, and an answer to a task.
if inspect --method tools/list --strict >"$scratch/tools.json" 2>"$scratch/tools.err" \
    && grep -q '"search_skills"' "$scratch/tools.json"; then
  echo "ok: tools/list --strict lists search_skills"
else
  fail "tools/list --strict"
  cat "$scratch/tools.err" >&2
fi
inspect --method tools/call --tool-name search_skills --tool-arg 'query=fill in a pdf form' limit=3 \
  >"$scratch/call.json" 2>"$scratch/call.err" || true
if node -e '
  const answer = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const hits = answer.structuredContent.hits;
  process.exit(!answer.isError && hits.length > 0 && hits.length <= 3 && hits[0].uri ? 0 : 1);
' "$scratch/call.json"; then
  echo "ok: search_skills answers a task with skill URIs"
else
  fail "tools/call search_skills"
  cat "$scratch/call.err" "$scratch/call.json" >&2
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "the MCP Inspector listed, read and verified the directory's skills"
