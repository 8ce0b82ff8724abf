# Shared by the benchmark scripts (sourced, not run): what they need before they measure.

# Makes sure wrk is installed: from Debian's packages when running as root, else exit 2.
need_wrk() {
  command -v wrk >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -qq wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
  else
    echo "wrk is not installed (Debian: apt-get install -y wrk)" >&2
    exit 2
  fi
}
