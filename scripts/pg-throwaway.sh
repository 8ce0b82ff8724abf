#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store's tests: initdb into a fresh temporary folder,
# listening on a unix socket in that folder only (no TCP port), with one database. It prints
# the URL the tests read from SKILLSCOUT_TEST_POSTGRES.
#
#   scripts/pg-throwaway.sh COMMAND [ARG...]   # start, run COMMAND with the URL exported, stop
#   eval "$(scripts/pg-throwaway.sh start)"    # start; exports SKILLSCOUT_TEST_POSTGRES and
#                                              # SKILLSCOUT_TEST_POSTGRES_DIR
#   scripts/pg-throwaway.sh stop DIR           # stop the cluster in DIR and remove DIR
#
# With PG_TLS_PORT, PG_TLS_CERT and PG_TLS_KEY set, the cluster also listens on
# 127.0.0.1:PG_TLS_PORT with TLS on (that certificate and key), and refuses TCP connections
# without TLS: for the test of TLS connections to the store.
#
# e.g. `scripts/pg-throwaway.sh cargo test -p store`. Needs Debian's postgresql-15 (installed
# with apt-get when missing and run as root); PG_BIN names another server's bin folder. As
# root the server runs as the `postgres` user (initdb refuses root); otherwise as yourself.
# Durability is switched off (fsync, synchronous_commit): the data lives for one test run.
set -euo pipefail

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
DATABASE=skillscout_test

# Runs a command as the server's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start() {
  if [ ! -x "$PG_BIN/initdb" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get install -y -qq postgresql-15 >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq postgresql-15 >/dev/null; }
    else
      echo "error: $PG_BIN/initdb is missing (Debian: apt-get install -y postgresql-15)" >&2
      exit 1
    fi
  fi
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/skillscout-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
  fi
  as_owner "$PG_BIN/initdb" --pgdata="$dir/data" --username=postgres --auth=trust \
    --encoding=UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # Unix socket only, in the cluster's own folder; enough connections for parallel tests that
  # each hold a small pool.
  local listen="-c listen_addresses=''"
  if [ -n "${PG_TLS_PORT:-}" ]; then
    cp "${PG_TLS_CERT:?PG_TLS_CERT names the server certificate}" "$dir/data/server.crt"
    cp "${PG_TLS_KEY:?PG_TLS_KEY names the server key}" "$dir/data/server.key"
    chmod 600 "$dir/data/server.key"
    if [ "$(id -u)" = 0 ]; then
      chown postgres: "$dir/data/server.crt" "$dir/data/server.key"
    fi
    printf '%s\n' 'local all all trust' \
      'hostssl all all 127.0.0.1/32 trust' \
      'hostnossl all all 127.0.0.1/32 reject' >"$dir/data/pg_hba.conf"
    listen="-c listen_addresses=127.0.0.1 -p $PG_TLS_PORT -c ssl=on"
  fi
  as_owner "$PG_BIN/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --silent \
    -o "$listen -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$PG_BIN/createdb" --host="$dir" --port="${PG_TLS_PORT:-5432}" --username=postgres "$DATABASE"
  echo "export SKILLSCOUT_TEST_POSTGRES='postgres://postgres@/$DATABASE?host=$dir${PG_TLS_PORT:+&port=$PG_TLS_PORT}'"
  echo "export SKILLSCOUT_TEST_POSTGRES_DIR='$dir'"
}

stop() {
  local dir="$1"
  case "$dir" in
    */skillscout-pg.*) ;;
    *) echo "error: $dir is not a throwaway cluster folder" >&2; exit 2 ;;
  esac
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$PG_BIN/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait --silent stop >&2 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:?usage: $0 stop DIR}" ;;
  "") echo "usage: $0 start | stop DIR | COMMAND [ARG...]" >&2; exit 2 ;;
  *)
    eval "$(start)"
    trap 'stop "$SKILLSCOUT_TEST_POSTGRES_DIR"' EXIT
    "$@"
    ;;
esac
