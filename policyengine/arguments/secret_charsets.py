"""Wide and EBCDIC character sets inside encoded payloads (round fourteen, set M).

The decoder reads base64 and hex as UTF-8, or as UTF-16 of ASCII (a NUL beside every character).
Text in another character set reads as binary there, and its secret went out unread:

- UTF-16 with a byte-order mark (PowerShell's and Windows' "Unicode"): the mark breaks the NUL pattern;
- UTF-32, with or without its mark (iconv -t UTF-32): three NULs beside every character;
- EBCDIC (IBM 037 and 500, a mainframe's export): letters at 0x81-0xE9, digits at 0xF0-0xF9.

Each is decoded to UTF-8 when its bytes read as text there (strict decoding, and nine characters in ten
printable), so the scanner reads the payload as it reads any other; bytes that read as none of them
stay binary. EBCDIC is tried only on bytes that are no UTF-8 and hold no ASCII control bytes but line
breaks: random bytes pass nine-in-ten printable once in many billions.
"""

from __future__ import annotations

import codecs
from typing import Final

_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF8, "utf-8"),
)
_MIN_BYTES: Final = 8
_TEXT_SHARE: Final = 0.9
_EBCDIC: Final = ("cp037", "cp500")
# EBCDIC has its controls below 0x40 too: only NL (0x15), LF (0x25), CR (0x0D) and HT (0x05) are text.
_EBCDIC_CONTROLS: Final = bytes(b for b in range(0x40) if b not in (0x05, 0x0D, 0x15, 0x25))


def _printable(text: str) -> bool:
    """True when nine characters in ten are printable or line breaks and tabs."""
    good = sum(1 for c in text if c.isprintable() or c in "\t\r\n")
    return bool(text) and good >= len(text) * _TEXT_SHARE


def _decoded(data: bytes, encoding: str) -> bytes | None:
    """The data decoded strictly from an encoding and written as UTF-8, when it reads as text."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None
    return text.encode("utf-8", "surrogatepass") if _printable(text) else None


def unwrapped(data: bytes) -> bytes:
    """UTF-8 of UTF-16 or UTF-32 text with a byte-order mark, or of UTF-32 without one; else the data itself."""
    if len(data) < _MIN_BYTES:
        return data
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            out = _decoded(body, encoding) if encoding != "utf-8" else body
            return data if out is None else out
    if not len(data) % 4 and (data[2::4] + data[3::4]).strip(b"\0") == b"" and data[1::4].strip(b"\0") == b"":
        return _decoded(data, "utf-32-le") or data  # UTF-32 LE of ASCII: three NULs after every character
    if not len(data) % 4 and (data[0::4] + data[1::4] + data[2::4]).strip(b"\0") == b"":
        return _decoded(data, "utf-32-be") or data
    return data


def ebcdic(data: bytes) -> bytes | None:
    """UTF-8 of EBCDIC text (IBM 037 or 500) when the bytes read as text there, else None."""
    if len(data) < _MIN_BYTES or len(data.translate(None, _EBCDIC_CONTROLS)) < len(data):
        return None
    for encoding in _EBCDIC:
        text = data.decode(encoding)
        if text.isascii() or encoding == _EBCDIC[-1]:
            ascii_share = sum(1 for c in text if c.isascii() and (c.isprintable() or c in "\t\r\n"))
            if ascii_share >= len(text) * _TEXT_SHARE:
                return text.encode("utf-8")
    return None
