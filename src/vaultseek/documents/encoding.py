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
_STEP = 1 << 20


def decode_text(data: bytes) -> str:
    """The whole of ``data`` as text (see the module docstring for how the codec is chosen)."""
    return decode_head(data, None)[0]


def decode_head(data: bytes, limit: int | None) -> tuple[str, bool]:
    """The first ``limit`` characters of ``data`` decoded as :func:`decode_text` would (all of
    it for None), and whether there was more. With a limit, the bytes are decoded 1 MB at a
    time and decoding stops at the limit, so a 99 MB file never becomes a 99 MB string."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return _decode(data, codec, limit)
            except UnicodeDecodeError as exc:
                raise DocumentError(f"invalid {codec.upper()} at byte {exc.start}") from exc
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise DocumentError("binary file (contains NUL bytes), not text")
    try:
        return _decode(data, "utf-8", limit)
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
                return _decode(data, codec, limit)
            except (UnicodeDecodeError, LookupError):
                pass
    return _decode(data, _WESTERN, limit, errors="replace")


def _decode(data: bytes, codec: str, limit: int | None, *, errors: str = "strict") -> tuple[str, bool]:
    """``data`` decoded with ``codec`` up to ``limit`` characters, and whether there was more.
    A decoding error's ``start`` counts from the beginning of ``data``."""
    if limit is None:
        return data.decode(codec, errors), False
    decoder = codecs.getincrementaldecoder(codec)(errors)
    view = memoryview(data)
    pieces: list[str] = []
    length = 0
    for start in range(0, len(data), _STEP):
        try:
            piece = decoder.decode(view[start : start + _STEP], final=start + _STEP >= len(data))
        except UnicodeDecodeError as exc:
            exc.start += start
            raise
        if length + len(piece) >= limit:
            pieces.append(piece[: limit - length])
            more = len(piece) > limit - length or start + _STEP < len(data)
            return "".join(pieces), more
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces), False
