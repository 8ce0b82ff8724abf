# Shared by the shell tests that drive real clients (tests/skills-cli.sh,
# tests/mcp-inspector.sh): Node tools from npm in a scratch folder, and processes started in
# the background. Sourced, not run; the caller sets `scratch` and the array `pids`.

# Installs Node 22 (the npm package `node@22`) and PACKAGE... into DIR unless DIR already has
# BIN and a working node, then puts DIR's tools first on PATH.
install_node_tools() {
  local dir=$1 bin=$2
  shift 2
  mkdir -p "$dir"
  if [ ! -x "$dir/node_modules/.bin/$bin" ] || ! "$dir/node_modules/.bin/node" --version >/dev/null 2>&1; then
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error node@22 "$@" >/dev/null)
    # npm 11 runs no install script it was not told to trust; `node` needs its own to unpack.
    if ! "$dir/node_modules/.bin/node" --version >/dev/null 2>&1; then
      (cd "$dir" && npm install-scripts approve node >/dev/null 2>&1 || true)
      (cd "$dir" && npm rebuild node >/dev/null)
    fi
  fi
  export PATH="$dir/node_modules/.bin:$PATH"
}

# Starts a command in the background and waits for a line with an http:// address on its
# stdout; sets `started_url` to the address. NAME names its output files in $scratch. Called
# in the test's own shell, never in `$(…)`: a subshell would record the pid in its own copy of
# `pids`, and the cleanup would never stop the process.
start() {
  local out=$scratch/$1.out
  shift
  "$@" >"$out" 2>"$scratch/$(basename "$out" .out).err" &
  pids+=($!)
  started_url=
  for _ in $(seq 1 300); do
    if grep -qo 'http://127\.0\.0\.1:[0-9]*' "$out" 2>/dev/null; then
      started_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$out" | tail -n 1)
      return
    fi
    sleep 0.1
  done
  echo "error: $* did not start" >&2
  cat "$scratch/$(basename "$out" .out).err" >&2
  exit 1
}

# Stops the processes `start` started and waits for them, so that none outlives the test.
stop_started() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
