import json
import os
import urllib.request

token = os.environ.get("DASHBOARD_TOKEN", "")
report = {"week": 12, "passed": 118, "failed": 2}
req = urllib.request.Request(
    "https://api.dashboard.example/v1/reports",
    data=json.dumps(report).encode(),
    headers={"Authorization": f"Bearer {token}"},
)
urllib.request.urlopen(req, timeout=10)
