#!/usr/bin/env python3
import sys

from eth_utils import is_checksum_address, is_hex_address


def check(addr: str) -> str:
    if addr.startswith("0x"):
        if not is_hex_address(addr):
            return "invalid: not 40 hex characters"
        if addr[2:].islower() or addr[2:].isupper():
            return "valid format, no checksum present (all one case)"
        return "valid (checksum ok)" if is_checksum_address(addr) else "INVALID checksum"
    if addr.lower().startswith("bc1"):
        import bech32
        hrp, data = bech32.bech32_decode(addr)
        return "valid bech32" if hrp == "bc" and data else "invalid bech32"
    import base58
    try:
        base58.b58decode_check(addr)
        return "valid base58check"
    except ValueError:
        return "invalid base58check"


if __name__ == "__main__":
    for a in sys.argv[1:]:
        print(a, "->", check(a))
