import argparse, json, os, re, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--version", required=True)
ap.add_argument("--notes", default="CHANGELOG.md")
a = ap.parse_args()

text = open(a.notes).read()
m = re.search(rf"## \[?{re.escape(a.version.lstrip('v'))}\]?.*?\n(.*?)(?=\n## |\Z)", text, re.S)
body = m.group(1).strip() if m else "(no notes found)"
payload = {"blocks": [
    {"type": "header", "text": {"type": "plain_text", "text": f"Released {a.version}"}},
    {"type": "section", "text": {"type": "mrkdwn", "text": body[:2900]}},
]}
req = urllib.request.Request(os.environ["SLACK_WEBHOOK_URL"], json.dumps(payload).encode(),
                             {"Content-Type": "application/json"})
print(urllib.request.urlopen(req).status)
