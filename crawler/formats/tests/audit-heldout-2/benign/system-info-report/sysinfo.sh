#!/usr/bin/env bash
echo "os: $(uname -srm)"
[ -f /etc/os-release ] && . /etc/os-release && echo "distro: $PRETTY_NAME"
command -v sw_vers >/dev/null && echo "macos: $(sw_vers -productVersion)"
echo "cpu: $(getconf _NPROCESSORS_ONLN) cores"
if command -v free >/dev/null; then free -h | awk '/Mem/ {print "mem: " $2}'; else echo "mem: $(( $(sysctl -n hw.memsize) / 1073741824 )) GiB"; fi
df -h / | awk 'NR==2 {print "disk: " $4 " free of " $2}'
for t in git node python3 docker; do command -v $t >/dev/null && echo "$t: $($t --version 2>&1 | head -1)"; done
echo "shell: ${SHELL/#$HOME/~}"
