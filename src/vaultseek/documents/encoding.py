"""Decoding text (notes, TXT, CSV, JSON, YAML) whatever the editor saved it as.

A byte-order mark decides first (UTF-8, UTF-16, UTF-32); then strict UTF-8, which almost
never decodes text that is not UTF-8; only then is the charset guessed (charset-normalizer,
the one owner of that library, imported only then), with cp1252 as the last resort since every
byte is defined in it apart from five, and Windows exports are the usual non-UTF-8 case.

For the same reason cp1252 wins a tie: on Western text charset-normalizer rates many
single-byte code pages as equally clean (no chaos), and its first pick among them is often
the wrong one — "café" as cp1006, "crème brûlée" as cp1250 ("crčme brűlée"), German as
mac_iceland. When cp1252 is among the cleanest candidates it is taken; text that only
another code page reads cleanly (Polish cp1250, Cyrillic cp1251, Greek, Shift-JIS, GBK)
keeps that code page.
"""

from __future__ import annotations

import codecs

from .extraction import DocumentError

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SNIFF_BYTES = 8192
_WESTERN = "cp1252"


def decode_text(data: bytes) -> str:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as exc:
                raise DocumentError(f"invalid {codec.upper()} at byte {exc.start}") from exc
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise DocumentError("binary file (contains NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data[: 1 << 20]))
    if matches:
        cleanest = min(match.chaos for match in matches)
        tied = [match for match in matches if match.chaos <= cleanest]
        codecs_to_try = [match.encoding for match in matches[:1] if match.encoding]
        if any(_WESTERN in match.could_be_from_charset for match in tied):
            codecs_to_try.insert(0, _WESTERN)
        for codec in codecs_to_try:
            try:
                return data.decode(codec)
            except (UnicodeDecodeError, LookupError):
                pass
    return data.decode(_WESTERN, errors="replace")
