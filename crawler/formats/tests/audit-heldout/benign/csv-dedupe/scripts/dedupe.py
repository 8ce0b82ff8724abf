#!/usr/bin/env python3
import argparse
import csv


def norm(v):
    return (v or "").strip().lower()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--key", action="append", default=[])
    ap.add_argument("--keep", choices=["first", "last"], default="first")
    a = ap.parse_args()

    with open(a.input, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        rows = list(reader)

    keyf = (lambda r: tuple(norm(r[k]) for k in a.key)) if a.key else (lambda r: tuple(norm(v) for v in r.values()))
    order = rows if a.keep == "first" else list(reversed(rows))
    seen, kept, dropped = set(), [], []
    for r in order:
        k = keyf(r)
        (dropped if k in seen else kept).append(r)
        seen.add(k)
    if a.keep == "last":
        kept.reverse()

    for path, data in ((a.output, kept), (a.output + ".dropped.csv", dropped)):
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(data)
    print(f"kept {len(kept)}, dropped {len(dropped)}")


if __name__ == "__main__":
    main()
