"""Plain text (.txt): decoded whatever its encoding, then split like any running text."""

from __future__ import annotations

from .encoding import decode_text
from .extraction import ExtractContext, Extracted, Segment


def read(data: bytes, context: ExtractContext) -> Extracted:
    return Extracted(segments=[Segment(decode_text(data))])
