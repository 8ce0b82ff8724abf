#!/usr/bin/env bash
# Run whatever checks the repository configures. Never modifies files.
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
rc=0
run() { echo "+ $*"; "$@" || rc=1; }

[ -f .pre-commit-config.yaml ] && command -v pre-commit >/dev/null && run pre-commit run
[ -f package.json ] && grep -q '"lint"' package.json && run npm run -s lint
[ -f pyproject.toml ] && command -v ruff >/dev/null && run ruff check .
[ -f Cargo.toml ] && run cargo fmt --check
[ -f go.mod ] && run gofmt -l .

git diff --cached --name-only -z | xargs -0 -r du -k 2>/dev/null | awk '$1 > 1024 {print "warning: large file " $2 " (" $1 " KiB)"}'
exit $rc
