"""PDFs written byte by byte with :mod:`zlib`: one page whose Flate-compressed content stream
inflates to millions of text operators. PDFium parses every operator when the page is loaded
(about 300 bytes each) and builds its text page from every character (about 200 bytes each),
so a file of a few KB costs GBs to read. The stream is compressed as it is generated, so
building even a GB-class stream holds only a block of it in memory."""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterator
from pathlib import Path

WORDS = (b"hangar", b"mast", b"crew", b"beam", b"valve", b"ledger", b"cargo", b"crate")
_BLOCK = 10_000


def _operators(count: int, *, varied: bool, seed: int) -> Iterator[bytes]:
    """``count`` ``(word) Tj`` operators in one text object, a block at a time: the same word
    (compresses ~500:1) or words drawn at random (~20:1)."""
    rnd = random.Random(seed)
    yield b"BT /F1 1 Tf 10 700 Td\n"
    same = b"(word) Tj\n" * _BLOCK
    for start in range(0, count, _BLOCK):
        n = min(_BLOCK, count - start)
        if varied:
            yield b"".join(b"(" + rnd.choice(WORDS) + b") Tj\n" for _ in range(n))
        else:
            yield same if n == _BLOCK else b"(word) Tj\n" * n
    yield b"ET\n"


def _page_contents(texts: list[bytes]) -> bytes:
    """An ordinary page's content stream: each line of text shown 14 points below the last."""
    lines = b"".join(b"(" + t + b") Tj 0 -14 Td\n" for t in texts)
    return b"BT /F1 11 Tf 72 720 Td\n" + lines + b"ET\n"


def write_pdf(path: Path, streams: list[Iterator[bytes] | bytes]) -> Path:
    """A PDF with one page per content stream (each Flate-compressed), Helvetica for text."""
    objects: list[bytes] = []
    pages = len(streams)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages)
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, stream in enumerate(streams):
        compressor = zlib.compressobj(9)
        blocks = [stream] if isinstance(stream, bytes) else stream
        data = b"".join(compressor.compress(block) for block in blocks) + compressor.flush()
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def inflating_pdf(path: Path, operators: int, *, varied: bool = False, seed: int = 1) -> Path:
    """One page of ``operators`` text-showing operators (1,000,000 same-word operators: a
    20 KB file that takes PDFium about 1.1 GB to read)."""
    return write_pdf(path, [_operators(operators, varied=varied, seed=seed)])


def short_pages_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF of short pages, one line of ASCII text each."""
    return write_pdf(path, [_page_contents([p.encode("ascii")]) for p in pages])
