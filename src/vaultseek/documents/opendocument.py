"""OpenDocument text (``.odt``, LibreOffice Writer's format): paragraphs, lists and tables in
order, cut into sections at headings.

An ODT is a zip archive (checked as :func:`.package.open_package` says) whose ``content.xml``
holds the text: ``text:h`` headings with their ``text:outline-level``, ``text:p`` paragraphs,
``text:list-item`` s (written ``- item``) and ``table:table-row`` s (``cell | cell``). The XML
is streamed, never built into a tree. Each section becomes one segment whose heading path
(``Intro > Scope``) is kept, so a chunk cites its section the way a DOCX's does. Deleted text
kept for tracked changes is left out; footnotes are read where they are anchored. A file saved
with a password is refused with that reason. Reading stops at the text cap.
"""

from __future__ import annotations

from .extraction import DocumentError, ExtractContext, Extracted, Segment
from .limits import TextBudget
from .package import local, open_package, read_small, stream_xml

LABEL = "ODT"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
MIMETYPE = "application/vnd.oasis.opendocument.text"
MANIFEST = "META-INF/manifest.xml"
"""Lists the parts, and for a file saved with a password how each is encrypted."""
_SKIPPED = {f"{TEXT} tracked-changes", f"{TEXT} sequence-decls", f"{OFFICE} annotation"}
"""Deleted text, numbering declarations and review comments (not the document's text)."""


def read(data: bytes, context: ExtractContext) -> Extracted:
    with open_package(data, LABEL) as archive:
        if "mimetype" in archive.NameToInfo:
            declared = read_small(archive, "mimetype", LABEL).decode("ascii", "replace").strip()
            if declared != MIMETYPE:
                raise DocumentError(f"not an OpenDocument text (its type is {declared[:80] or 'empty'})")
        if MANIFEST in archive.NameToInfo and b"encryption-data" in read_small(archive, MANIFEST, LABEL):
            raise DocumentError("encrypted ODT (saved with a password)")
        reader = _Content(TextBudget(context.limits.max_text_chars))
        stream_xml(archive, "content.xml", reader, LABEL)
        reader.flush()
    return Extracted(segments=reader.segments, truncated=reader.budget.truncated)


class _Content:
    """``content.xml`` as sections: (heading path, lines)."""

    def __init__(self, budget: TextBudget) -> None:
        self.budget = budget
        self.segments: list[Segment] = []
        self.trail: list[tuple[int, str]] = []
        self.lines: list[str] = []
        self.paragraph: list[str] | None = None
        self.paragraphs = 0  # nesting depth (a paragraph in a footnote in a paragraph)
        self.heading_level: int | None = None
        self.items = 0  # list-item depth
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.skipped = 0
        self.in_body = False

    @property
    def done(self) -> bool:
        return self.budget.spent

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        if tag in _SKIPPED:
            self.skipped += 1
        if tag == f"{OFFICE} text":
            self.in_body = True
        if self.skipped or not self.in_body:
            return
        name = local(tag)
        if tag.startswith(TABLE):
            if name == "table-row":
                self.row = []
            elif name == "table-cell":
                self.cell = []
            return
        if not tag.startswith(TEXT):
            return
        if name in ("p", "h"):
            self.paragraphs += 1
            if self.paragraphs == 1:
                self.paragraph = []
                level = attributes.get(f"{TEXT} outline-level", "1")
                self.heading_level = (int(level) if level.isdigit() else 1) if name == "h" else None
            elif self.paragraph is not None:
                self.paragraph.append(" ")
        elif name == "list-item":
            self.items += 1
        elif name == "s" and self.paragraph is not None:
            count = attributes.get(f"{TEXT} c", "1")
            self.paragraph.append(" " * min(int(count) if count.isdigit() else 1, 8))
        elif name in ("tab", "line-break") and self.paragraph is not None:
            self.paragraph.append("\t" if name == "tab" else "\n")

    def end(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipped = max(0, self.skipped - 1)
            return
        if self.skipped or not self.in_body:
            return
        name = local(tag)
        if tag == f"{TABLE} table-cell" and self.cell is not None:
            if self.row is not None:
                self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == f"{TABLE} table-row" and self.row is not None:
            if any(self.row):
                self._line(" | ".join(self.row))
            self.row = None
        elif tag.startswith(TEXT) and name in ("p", "h"):
            self.paragraphs = max(0, self.paragraphs - 1)
            if self.paragraphs == 0 and self.paragraph is not None:
                self._paragraph("".join(self.paragraph))
                self.paragraph = None
        elif tag.startswith(TEXT) and name == "list-item":
            self.items = max(0, self.items - 1)

    def text(self, data: str) -> None:
        if self.skipped or not self.in_body or self.paragraph is None:
            return
        self.paragraph.append(data)

    def _paragraph(self, raw: str) -> None:
        text = "\n".join(" ".join(line.split()) for line in raw.split("\n")).strip()
        if not text:
            return
        if self.cell is not None:
            self.cell.append((" " if self.cell else "") + text)
            return
        if self.heading_level is not None:
            self.flush()
            while self.trail and self.trail[-1][0] >= self.heading_level:
                self.trail.pop()
            self.trail.append((self.heading_level, text[:200]))
        elif self.items:
            text = "  " * (self.items - 1) + "- " + text
        self._line(text)

    def _line(self, text: str) -> None:
        self.lines.append(self.budget.take(text))

    def flush(self) -> None:
        """End the current section."""
        if any(self.lines):
            heading = tuple(h for _level, h in self.trail)
            self.segments.append(Segment("\n\n".join(line for line in self.lines if line), heading=heading))
        self.lines.clear()
