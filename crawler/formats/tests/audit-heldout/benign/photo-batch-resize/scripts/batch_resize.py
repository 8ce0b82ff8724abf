#!/usr/bin/env python3
import argparse
from pathlib import Path

from PIL import Image, ImageOps

EXTS = {".jpg", ".jpeg", ".png", ".webp"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--out", required=True)
    ap.add_argument("--max", type=int, default=2048)
    ap.add_argument("--quality", type=int, default=85)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(Path(a.src).iterdir()):
        if f.suffix.lower() not in EXTS:
            continue
        with Image.open(f) as im:
            im = ImageOps.exif_transpose(im)
            im.thumbnail((a.max, a.max), Image.LANCZOS)
            dest = out / f.name
            params = {"quality": a.quality, "optimize": True} if f.suffix.lower() in {".jpg", ".jpeg", ".webp"} else {"optimize": True}
            im.save(dest, **params)  # no exif= argument: metadata is dropped
        saved = f.stat().st_size - dest.stat().st_size
        print(f"{f.name}: saved {saved // 1024} KiB")


if __name__ == "__main__":
    main()
