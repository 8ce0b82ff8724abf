#!/usr/bin/env bash
d=${1:?usage: audit.sh DOMAIN [dkim-selector...]}
shift
q() { dig +short "$@" 2>/dev/null; }

echo "== SPF";   q "$d" TXT | grep -i 'v=spf1' || echo "(none)"
echo "== DMARC"; q "_dmarc.$d" TXT || echo "(none)"
for s in "${@:-default}"; do
  echo "== DKIM $s"; q "$s._domainkey.$d" TXT || echo "(none)"
done
echo "== CAA";   q "$d" CAA || echo "(none)"
echo "== MX";    q "$d" MX
echo "== www CNAME"; q "www.$d" CNAME
