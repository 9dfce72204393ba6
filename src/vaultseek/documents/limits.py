"""What one document may cost: Office packages are checked before a library opens them, and the
text taken from any document is capped.

DOCX, PPTX and XLSX files are zip archives, and ``max_document_mb`` bounds only their
compressed size: a 1 MB DOCX can inflate to 300 MB of XML, which python-docx would parse into a
tree of several GB. :func:`check_package` reads the archive's central directory (its list of
members with their sizes; nothing is inflated) and refuses, with the reason, a package

* with more than :data:`MAX_MEMBERS` members, or a member compressed with anything but deflate
  (Office writes nothing else; bzip2 and LZMA inflate in unbounded steps);
* with a member over :data:`RATIO_MIN_BYTES` that inflates more than :data:`MAX_RATIO` to 1
  (deflate tops out near 1,000:1; Office XML compresses 5 to 40:1);
* that would take more than ``max_inflated_mb`` in memory once read: its parts inflated, the
  XML counted :data:`XML_WEIGHT` times over, since the library parses it whole into a tree
  that big (every XML part of a DOCX or PPTX; a workbook's shared strings, styles and the
  like). At the default 200 MB that is 25 MB of XML, or 200 MB of images, or a mix.

An XLSX's worksheets — the parts its ``[Content_Types].xml`` declares as worksheets, which is
how openpyxl finds them, whatever they are named — do not count: they are read row by row,
never whole, and reading stops at the text cap; the ratio still applies to them.

The sizes come from the archive itself, so a hostile one could understate them. It gains
nothing: the libraries read members through :mod:`zipfile`, which stops at the declared size
and then fails the member's CRC check, so such a file is reported as corrupt after at most its
declared bytes were inflated.

Every reader takes its text through a :class:`TextBudget` of ``max_document_text_mb``
characters and stops reading when it runs out; :func:`cap_text` applies the same cap to what
any reader returns, so the chunker, scrubber and tokenizer never see more.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import replace

from .extraction import MB, DocumentError, Extracted, Limits, Segment

MAX_MEMBERS = 10_000
"""A 1,000-slide deck with notes and media has about 4,000 parts."""
MAX_RATIO = 100
RATIO_MIN_BYTES = 4 * MB
"""Small members may compress further (a 400 KB styles part at 30:1 is normal); the ratio is
only held against members that could cost something."""
XML_WEIGHT = 8
"""Memory per byte of XML a library parses whole: python-docx and python-pptx measured 8 to
9.5 times (``python -m benchmarks.hostile``), openpyxl's shared strings under 3."""

_KIND_NAMES = {"docx": "DOCX", "pptx": "PPTX", "xlsx": "XLSX"}
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_CONTENT_TYPES = "[Content_Types].xml"
_MAX_MANIFEST = 1 * MB
_OVERRIDE = re.compile(r"<(?:\w+:)?Override\b[^>]*>")
_PART_NAME = re.compile(r"\bPartName\s*=\s*[\"']([^\"']*)[\"']")
_CONTENT_TYPE = re.compile(r"\bContentType\s*=\s*[\"']([^\"']*)[\"']")
_WORKSHEET_TYPES = {
    "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml",
    "application/vnd.ms-excel.worksheet",
}


def megabytes(size: float) -> str:
    """A size for a message: ``300 MB``, ``2.5 MB``, ``12 KB``."""
    if size < MB:
        return f"{size / 1024:,.0f} KB"
    return f"{size / MB:,.0f} MB" if size >= 10 * MB else f"{size / MB:,.1f} MB"


def _worksheets(archive: zipfile.ZipFile) -> set[str]:
    """The parts ``[Content_Types].xml`` declares as worksheets and as nothing else: openpyxl
    streams those (it finds each kind of part by its declared type, never by its name)."""
    try:
        with archive.open(_CONTENT_TYPES) as stream:
            manifest = stream.read(_MAX_MANIFEST + 1).decode("utf-8", "replace")
    except (KeyError, zipfile.BadZipFile, OSError, EOFError):
        return set()
    if len(manifest) > _MAX_MANIFEST:
        return set()
    kinds: dict[str, set[bool]] = {}
    for tag in _OVERRIDE.findall(manifest):
        name, declared = _PART_NAME.search(tag), _CONTENT_TYPE.search(tag)
        if name and declared:
            kinds.setdefault(name.group(1).lstrip("/"), set()).add(declared.group(1) in _WORKSHEET_TYPES)
    return {name for name, worksheet in kinds.items() if worksheet == {True}}


def check_member(member: zipfile.ZipInfo, label: str, odd_compression: str) -> None:
    """Refuse a zip part stored with a compression other than none or deflate
    (``odd_compression`` says what it is to the format), or inflating more than
    :data:`MAX_RATIO`:1 (a zip bomb): raises :class:`DocumentError` naming ``label``."""
    if member.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise DocumentError(f"{label} part {member.filename} uses {odd_compression} (method {member.compress_type})")
    size = member.file_size
    if size > RATIO_MIN_BYTES and size > MAX_RATIO * max(member.compress_size, 1):
        ratio = size / max(member.compress_size, 1)
        raise DocumentError(
            f"zip bomb: {label} part {member.filename} inflates {ratio:,.0f}:1 "
            f"({megabytes(member.compress_size)} → {megabytes(size)}; at most {MAX_RATIO}:1 is read)"
        )


def check_package(data: bytes, kind: str, limits: Limits) -> None:
    """Refuse a DOCX, PPTX or XLSX whose zip directory says it would cost too much to read:
    raises :class:`DocumentError` with the reason (see the module docstring)."""
    label = _KIND_NAMES.get(kind, kind.upper())
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise DocumentError(f"{label} holds {len(members):,} parts (at most {MAX_MEMBERS:,} are read)")
            streamed = _worksheets(archive) if kind == "xlsx" else set()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(f"corrupt {label} (not a readable zip archive: {exc})") from exc
    xml = other = 0
    for member in members:
        check_member(member, label, "a compression Office never writes")
        size = member.file_size
        if member.filename in streamed:
            continue
        if member.filename.endswith(_XML_SUFFIXES) or member.filename == _CONTENT_TYPES:
            xml += size
        else:
            other += size
    cost = XML_WEIGHT * xml + other
    if cost > limits.max_inflated_bytes:
        raise DocumentError(
            f"{label} too large to read: {megabytes(xml)} of XML, parsed into a tree about "
            f"{XML_WEIGHT} times its size, and {megabytes(other)} of other parts need about "
            f"{megabytes(cost)}, over max_inflated_mb ({megabytes(limits.max_inflated_bytes)})"
        )


class TextBudget:
    """The characters one document may still yield: a reader passes its text through
    :meth:`take` and stops reading once :attr:`spent` is true."""

    __slots__ = ("left", "truncated")

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.truncated = False

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def take(self, text: str) -> str:
        """``text``, cut to what is left of the budget (and that much spent)."""
        if len(text) > self.left:
            text = text[: max(self.left, 0)]
            self.truncated = True
        self.left -= len(text)
        return text


def truncation_notice(path: str, limit: int) -> str:
    return (
        f"{path}: only its first {megabytes(limit)} of text was indexed (max_document_text_mb); "
        "the rest was dropped"
    )


def cap_text(extracted: Extracted, path: str, limit: int) -> Extracted:
    """``extracted`` with its segments cut to ``limit`` characters in all, and a notice when
    anything was dropped, here or by the reader (``extracted.truncated``)."""
    budget = TextBudget(limit)
    kept: list[Segment] = []
    for segment in extracted.segments:
        text = budget.take(segment.text)
        if text:
            kept.append(segment if len(text) == len(segment.text) else replace(segment, text=text))
    if budget.truncated or extracted.truncated:
        extracted.segments = kept
        extracted.truncated = True
        notice = truncation_notice(path, limit)
        if notice not in extracted.notices:
            extracted.notices.append(notice)
    return extracted
