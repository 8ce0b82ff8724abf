#!/usr/bin/env bash
# list issues with no activity for N days (default 60)
days=${1:-60}
since=$(date -u -d "-$days days" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -v-"$days"d +%Y-%m-%dT%H:%M:%SZ)
curl -s -H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json" \
  "https://api.github.com/repos/$GITHUB_REPOSITORY/issues?state=open&per_page=100" |
  jq -r --arg s "$since" '.[] | select(.updated_at < $s) | "\(.number)\t\(.title)"'
