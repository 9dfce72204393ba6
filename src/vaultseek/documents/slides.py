"""PowerPoint (.pptx): one segment per slide — title, body text, tables, speaker notes.

python-pptx's owner. A slide is kept whole as one chunk where it can be: it is the unit a
reader navigates by, and the citation (``slide 4``) points at it. Reading stops at the text cap.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from pptx import Presentation

from ..records import Location
from .extraction import ExtractContext, Extracted, Segment
from .limits import TextBudget


def read(data: bytes, context: ExtractContext) -> Extracted:
    presentation = Presentation(io.BytesIO(data))
    segments = []
    budget = TextBudget(context.limits.max_text_chars)
    for number, slide in enumerate(presentation.slides, start=1):
        if budget.spent:
            break
        title_shape = slide.shapes.title
        title = _frame_text(title_shape) if title_shape is not None else ""
        title_id = title_shape.shape_id if title_shape is not None else None
        body = [
            text
            for shape in _shapes(slide.shapes)
            if getattr(shape, "shape_id", None) != title_id
            for text in [_shape_text(shape)]
            if text
        ]
        notes = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
        parts = [p for p in (title, "\n".join(body)) if p]
        if notes:
            parts.append(f"Speaker notes: {notes}")
        segments.append(
            Segment(
                budget.take("\n\n".join(parts)),
                Location(slide=number),
                heading=(title,) if title else (),
                structured=True,
                whole=True,
            )
        )
    return Extracted(segments=segments, pages=len(segments), truncated=budget.truncated)


def _shapes(shapes: Any) -> Iterator[Any]:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _frame_text(shape: Any) -> str:
    return shape.text_frame.text.strip() if getattr(shape, "has_text_frame", False) else ""


def _shape_text(shape: Any) -> str:
    if getattr(shape, "has_table", False):
        return "\n".join(
            " | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in shape.table.rows
        )
    return _frame_text(shape)
