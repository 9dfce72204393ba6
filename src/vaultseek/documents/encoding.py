"""Decoding text documents (TXT, CSV, JSON, YAML) whatever the editor saved them as.

A byte-order mark decides first (UTF-8, UTF-16, UTF-32); then strict UTF-8, which almost
never decodes text that is not UTF-8; only then is the charset guessed (charset-normalizer,
the one owner of that library, imported only then), with cp1252 as the last resort since every
byte is defined in it apart from five, and Windows exports are the usual non-UTF-8 case.
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

    best = from_bytes(data[: 1 << 20]).best()
    if best is not None and best.encoding:
        try:
            return data.decode(best.encoding)
        except (UnicodeDecodeError, LookupError):
            pass
    return data.decode("cp1252", errors="replace")
