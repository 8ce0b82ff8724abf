#!/usr/bin/env python3
import argparse
import sys
import unicodedata

INVISIBLE = {0x200B, 0x2060, 0xFEFF, 0x00AD}
BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
TAGS = range(0xE0000, 0xE0080)
SPACES = {0x00A0: " ", 0x202F: " ", 0x2009: " "}
QUOTES = {0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"'}


def clean(text, strict=False, ascii_quotes=False, compat=False):
    out, changes = [], 0
    for ch in unicodedata.normalize("NFKC" if compat else "NFC", text):
        cp = ord(ch)
        if cp in INVISIBLE or cp in BIDI or cp in TAGS:
            changes += 1
            continue
        if strict and cp in (0x200C, 0x200D, 0x200E, 0x200F):
            changes += 1
            continue
        if cp in SPACES:
            ch = SPACES[cp]
            changes += 1
        elif ascii_quotes and cp in QUOTES:
            ch = QUOTES[cp]
            changes += 1
        out.append(ch)
    return "".join(out), changes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--ascii-quotes", action="store_true")
    ap.add_argument("--compat", action="store_true")
    a = ap.parse_args()
    text = open(a.file, encoding="utf-8").read()
    cleaned, n = clean(text, a.strict, a.ascii_quotes, a.compat)
    if a.report:
        print(f"{n} character(s) would change", file=sys.stderr)
    else:
        sys.stdout.write(cleaned)


if __name__ == "__main__":
    main()
