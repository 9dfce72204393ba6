"""HTML: the page's main text, without navigation, footers and other boilerplate.

trafilatura's owner (Apache-2.0). Tables are kept; when trafilatura finds no main content
(a tiny page, a bare fragment) the whole visible text is taken instead.

Only the first :data:`MAX_HTML_BYTES` of a page are parsed (cut before a tag, with a notice):
trafilatura's tree and passes take about 50 times the HTML's size in memory.
"""

from __future__ import annotations

import trafilatura

from .extraction import MB, ExtractContext, Extracted, Segment
from .limits import megabytes

MAX_HTML_BYTES = 5 * MB


def read(data: bytes, context: ExtractContext) -> Extracted:
    notices = []
    if len(data) > MAX_HTML_BYTES:
        cut = data.rfind(b"<", 0, MAX_HTML_BYTES)
        data = data[: cut if cut > 0 else MAX_HTML_BYTES]
        notices.append(
            f"{context.path}: only the first {megabytes(MAX_HTML_BYTES)} of the page's HTML was "
            "read; the rest was dropped"
        )
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
    return Extracted(segments=[Segment(text)] if text.strip() else [], title=title or None, notices=notices)
