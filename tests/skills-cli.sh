#!/usr/bin/env bash
# A real agent client installs from skillscout: the vercel `skills` CLI (npm package `skills`)
# lists and installs skills from
#   (a) a `skillscout export --layout well-known` tree served as static files on loopback, and
#   (b) the `/mirror/{domain}/` of a running `skillscout serve`,
# and the installed files are compared byte for byte with what the directory exported.
#
# The data directory is filled by `skillscout demo`, which crawls the fixture web (seeds/web)
# on loopback. Nothing here uses the internet except npm, to install the CLI and Node 22 (the
# CLI needs Node 22 or newer) into a scratch folder; set SKILLS_CLI_TOOLS=DIR to reuse one.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
# shellcheck source=tests/common.sh
. tests/common.sh

scratch=$(mktemp -d)
pids=()
cleanup() {
  stop_started
  rm -rf "$scratch"
}
trap cleanup EXIT

# --- the client -------------------------------------------------------------------------
install_node_tools "${SKILLS_CLI_TOOLS:-$scratch/tools}" skills skills
major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
if [ "$major" -lt 22 ]; then
  echo "error: the skills CLI needs Node 22 or newer; found $(node --version)" >&2
  exit 1
fi
export DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 CI=1
echo "skills CLI $(skills --version 2>/dev/null | tail -n 1) on node $(node --version)"

# --- the directory ----------------------------------------------------------------------
cargo build --quiet --locked --bin skillscout
skillscout=$repo/target/debug/skillscout
data=$scratch/data

# Crawl the fixture web once (demo serves it on loopback), then stop.
start demo "$skillscout" demo --data "$data" --addr 127.0.0.1:0
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true

# What the directory exports: a skills folder (the reference bytes) and a well-known tree.
"$skillscout" export --data "$data" --out "$scratch/skills"
"$skillscout" export --data "$data" --layout well-known --out "$scratch/web"

# (a) the exported tree, served as static files by Node.
cat >"$scratch/static.mjs" <<'JS'
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join, normalize } from "node:path";
const root = process.argv[2];
const server = createServer(async (request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
  if (path.includes("..")) { response.writeHead(400).end(); return; }
  try {
    const body = await readFile(join(root, path));
    const type = path.endsWith(".json") ? "application/json"
      : path.endsWith(".tar.gz") ? "application/gzip"
      : path.endsWith(".zip") ? "application/zip" : "text/markdown";
    response.writeHead(200, { "content-type": type }).end(body);
  } catch {
    response.writeHead(404).end();
  }
});
server.listen(0, "127.0.0.1", () => console.log(`serving http://127.0.0.1:${server.address().port}`));
JS
start static node "$scratch/static.mjs" "$scratch/web/pdfworks.test"
static_url=$started_url

# (b) the directory's mirror.
start serve "$skillscout" serve --data "$data" --addr 127.0.0.1:0
directory_url=$started_url

failures=0
# Lists the skills at $1, installs $2 into a fresh project, and compares the installed files
# with the exported skills folder.
install_and_compare() {
  local source=$1 skill=$2 project
  project=$(mktemp -d "$scratch/project.XXXX")
  echo "--- $source: $skill"
  (cd "$project" && skills add "$source" --list) >"$project.list" 2>&1 || true
  if ! grep -q "$skill" "$project.list"; then
    echo "FAIL: $source does not list $skill" >&2
    cat "$project.list" >&2
    failures=$((failures + 1))
    return
  fi
  (cd "$project" && skills add "$source" --skill "$skill" --agent claude-code --copy -y) >"$project.install" 2>&1 || true
  local installed=$project/.claude/skills/$skill
  if [ ! -f "$installed/SKILL.md" ]; then
    echo "FAIL: $skill was not installed from $source" >&2
    cat "$project.install" >&2
    failures=$((failures + 1))
    return
  fi
  local file
  for file in $(cd "$scratch/skills/$skill" && find . -type f | sed 's|^\./||'); do
    if ! cmp -s "$scratch/skills/$skill/$file" "$installed/$file"; then
      echo "FAIL: $skill/$file installed from $source differs from the export" >&2
      failures=$((failures + 1))
    fi
  done
  echo "ok: $skill installed from $source, its files identical to the export"
}

install_and_compare "$static_url" pdf-text-extraction
install_and_compare "$static_url" pdf-form-filling
install_and_compare "$directory_url/mirror/pdfworks.test" pdf-text-extraction
install_and_compare "$directory_url/mirror/pdfworks.test" pdf-merge
install_and_compare "$directory_url/mirror/legacy-tools.test" csv-cleanup

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "the skills CLI installed every skill from the export and the mirror"
