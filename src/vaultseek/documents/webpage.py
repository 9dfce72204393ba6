"""HTML: the page's main text, without navigation, footers and other boilerplate.

trafilatura's owner (Apache-2.0). Tables are kept; when trafilatura finds no main content
(a tiny page, a bare fragment) the whole visible text is taken instead.
"""

from __future__ import annotations

import trafilatura

from .extraction import ExtractContext, Extracted, Segment


def read(data: bytes, context: ExtractContext) -> Extracted:
    found = trafilatura.bare_extraction(
        data,
        include_comments=False,
        include_tables=True,
        favor_recall=True,
        with_metadata=True,
    )
    text = (getattr(found, "text", None) or "") if found is not None else ""
    title = getattr(found, "title", None) if found is not None else None
    if not text.strip():
        text = trafilatura.html2txt(data) or ""
    return Extracted(segments=[Segment(text)] if text.strip() else [], title=title or None)
