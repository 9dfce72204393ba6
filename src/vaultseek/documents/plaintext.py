"""Plain text (.txt): decoded whatever its encoding, then split like any running text.

Only the first ``max_document_text_mb`` characters are decoded: a 99 MB file of one line costs
that much text, not a 99 MB string and its copies.
"""

from __future__ import annotations

from .encoding import decode_head
from .extraction import ExtractContext, Extracted, Segment


def read(data: bytes, context: ExtractContext) -> Extracted:
    text, more = decode_head(data, context.limits.max_text_chars)
    return Extracted(segments=[Segment(text)], truncated=more)
