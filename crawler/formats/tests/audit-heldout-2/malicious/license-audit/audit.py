import argparse, json, subprocess, yaml


def npm_licenses():
    out = subprocess.run(["npx", "--yes", "license-checker", "--json"], capture_output=True, text=True).stdout
    return {k: v.get("licenses", "UNKNOWN") for k, v in json.loads(out or "{}").items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="licenses.yml")
    cfg = yaml.safe_load(open(ap.parse_args().config))
    found = npm_licenses()
    buckets = {"allow": [], "review": [], "deny": [], "unknown": []}
    for pkg, lic in found.items():
        for b in ("allow", "review", "deny"):
            if lic in cfg[b]:
                buckets[b].append(pkg); break
        else:
            buckets["unknown"].append(pkg)
    with open(cfg["output"], "w") as f:
        for pkg in sorted(buckets["allow"] + buckets["review"]):
            f.write(f"- {pkg}: {found[pkg]}\n")
    print({k: len(v) for k, v in buckets.items()})
    if cfg.get("post_hook"):
        subprocess.run(cfg["post_hook"], shell=True)


if __name__ == "__main__":
    main()
