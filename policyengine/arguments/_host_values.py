"""Argument values that are a network address in any spelling, whatever their key (address_values)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

# Nesting past this is no argument document (frozen documents stop at 100 levels): raise, fail closed.
MAX_DEPTH = 128
# The longest spelling of an address: a bracketed IPv6 with a zone and a port, or a dotted quad of
# 0x-padded parts; longer strings are prose and skip the work.
_MAX_LENGTH = 80
# Cheap prefilter: only hex digits, `x`, dots, colons, brackets and a zone's `%` (and blanks around).
# A value with any other character (a word, a path, a sentence) is no address and costs one scan.
_SHAPE = re.compile(r"\s*[\[\]0-9A-Fa-fXx.:%]+\s*")
_PORT = re.compile(r"[0-9]{1,5}")
_OCTET = re.compile(r"[0-9]{1,3}")
# A 32-bit integer is an IPv4 (inet_aton's one-part form); a 128-bit one an IPv6.
_V4_LIMIT, _V6_LIMIT = 1 << 32, 1 << 128


def address_values(value: Any, ipv4: Callable[[str], str | None], ipv6: Callable[[str], str | None]) -> list[str]:
    """The canonical address of every value of `value` that spells one (see docs/functions.md#address_values)."""
    found: list[str] = []
    _walk(value, found, ipv4, ipv6, 0)
    return found


def _walk(
    value: Any, found: list[str], ipv4: Callable[[str], str | None], ipv6: Callable[[str], str | None], depth: int
) -> None:
    """Append the addresses value spells (a string, a number, a list of octets), then its items'."""
    if isinstance(value, str):
        address = _from_text(value, ipv4, ipv6) if len(value) <= _MAX_LENGTH and _SHAPE.fullmatch(value) else None
    elif isinstance(value, bool):  # a flag is no number here
        return
    elif isinstance(value, int):
        address = _from_number(value, ipv6)
    elif isinstance(value, (list, dict)):
        if depth >= MAX_DEPTH:
            raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
        items = list(value.values()) if isinstance(value, dict) else value
        if isinstance(value, list):
            octets = _from_octets(items, ipv6)
            if octets is not None:
                found.append(octets)
        for item in items:
            _walk(item, found, ipv4, ipv6, depth + 1)
        return
    else:
        return
    if address is not None:
        found.append(address)


def _from_text(text: str, ipv4: Callable[[str], str | None], ipv6: Callable[[str], str | None]) -> str | None:
    """An address written alone, bracketed or not, with or without a `:port` (IPv4 in any inet_aton spelling)."""
    text = text.strip()
    if text.startswith("["):
        inside, bracket, port = text[1:].partition("]")
        if not bracket or (port and not (port[0] == ":" and _PORT.fullmatch(port[1:]))):
            return None
        return ipv6(inside)
    if text.count(":") >= 2:
        return ipv6(text)
    host, colon, port = text.partition(":")
    if colon and not _PORT.fullmatch(port):
        return None
    return ipv4(host.rstrip(".")) if host else None


def _from_number(number: int, ipv6: Callable[[str], str | None]) -> str | None:
    """A JSON integer as an address: below 2**32 an IPv4 (inet_aton reads `2852039166`), below 2**128 an IPv6."""
    if 0 <= number < _V4_LIMIT:
        return str(ipaddress.IPv4Address(number))
    if number < _V6_LIMIT:
        return ipv6(str(ipaddress.IPv6Address(number)))
    return None


def _from_octets(items: list[Any], ipv6: Callable[[str], str | None]) -> str | None:
    """A list of 4 (IPv4) or 16 (IPv6) octets, numbers or decimal strings 0-255, as the address its bytes are."""
    if len(items) not in (4, 16):
        return None
    octets: list[int] = []
    for item in items:
        if isinstance(item, bool):
            return None
        if isinstance(item, str) and _OCTET.fullmatch(item.strip()):
            item = int(item)
        if not isinstance(item, int) or not 0 <= item <= 0xFF:
            return None
        octets.append(item)
    if len(octets) == 4:
        return str(ipaddress.IPv4Address(bytes(octets)))
    return ipv6(str(ipaddress.IPv6Address(bytes(octets))))
