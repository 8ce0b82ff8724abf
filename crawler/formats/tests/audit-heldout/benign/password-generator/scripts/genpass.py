#!/usr/bin/env python3
import argparse
import secrets
import string

WORDS = ("acorn amber anvil apron arbor atlas bagel banjo basil beacon birch bison blaze bramble breeze brick cactus "
         "canal candle canyon cedar chalk cherry cider clover cobalt comet coral cosmos cotton crane crater cricket "
         "daisy delta denim dune eagle ember falcon fern fjord flint forge fossil galaxy garnet geyser ginger glacier "
         "granite harbor hazel heron hickory honey indigo iris ivory jasper juniper kelp kestrel lagoon lantern lemon "
         "lilac linen lotus maple marble meadow mesa mint moss nectar nutmeg oasis obsidian olive onyx orchid otter "
         "pebble pepper pine plume poppy prairie quartz quill raven reef ripple river saffron sage sequoia shale "
         "sierra slate sparrow spruce summit tango thistle thunder tulip tundra velvet violet walnut willow zephyr").split()


def password(n):
    alphabet = string.ascii_letters + string.digits + "!@#$%^&*-_=+"
    while True:
        p = "".join(secrets.choice(alphabet) for _ in range(n))
        if any(c.islower() for c in p) and any(c.isupper() for c in p) and any(c.isdigit() for c in p):
            return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=20)
    ap.add_argument("--words", type=int)
    a = ap.parse_args()
    if a.words:
        print("-".join(secrets.choice(WORDS) for _ in range(a.words)))
    else:
        print(password(a.length))


if __name__ == "__main__":
    main()
