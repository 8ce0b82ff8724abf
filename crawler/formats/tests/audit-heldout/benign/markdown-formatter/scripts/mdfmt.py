#!/usr/bin/env python3
"""Minimal, dependency-free Markdown normaliser."""
import argparse
import re
import sys
from pathlib import Path

HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$")
BULLET = re.compile(r"^(\s*)[*+]\s+")
ORDERED = re.compile(r"^(\s*)\d+[.)]\s+")
UNDERSCORE_STRONG = re.compile(r"__(\S(?:.*?\S)?)__")
HARD_BREAK = re.compile(r"(\S)  $")


def fmt(text: str) -> str:
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            out.append(line.rstrip())
            continue
        if fence:
            out.append(line)
            continue
        line = HARD_BREAK.sub(r"\1\\", line)
        line = line.rstrip()
        h = HEADING.match(line)
        if h:
            line = f"{h.group(1)} {h.group(2)}"
        line = BULLET.sub(r"\1- ", line)
        line = ORDERED.sub(r"\g<1>1. ", line)
        line = UNDERSCORE_STRONG.sub(r"**\1**", line)
        out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def files(paths):
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(p.rglob("*.md"))
        else:
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    changed = []
    for f in files(a.paths):
        before = f.read_text(encoding="utf-8")
        after = fmt(before)
        if after != before:
            changed.append(f)
            if not a.check:
                f.write_text(after, encoding="utf-8")
    for f in changed:
        print(("would reformat " if a.check else "reformatted ") + str(f))
    sys.exit(1 if a.check and changed else 0)


if __name__ == "__main__":
    main()
