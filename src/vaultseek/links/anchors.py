"""Whether a link's heading exists in the note it points at.

``[[note#Heading]]``, ``[[#Heading]]`` and ``[text](note.md#heading)`` resolve to the note
whether or not the heading is there (a heading never changes the file: see
:mod:`linking`); :func:`check_headings` says whether it is, for ``Index.links`` and every
surface that renders its result (``heading_found``: true, false, or None when not checked).

**Where the headings come from: the target file, read again.** The chunks are no substitute:
``section`` and ``heading_context`` name only the headings a chunk starts at, so a ``####``
heading, a ``###`` inside a section that fits one chunk, a section too short to be a chunk and
the Related / See also / Links / References sections the chunker skips never appear there —
checking against them would call live headings missing, and links to a "See also" heading are
common. The stored chunk text keeps heading lines, but not those of skipped or dropped pieces.
Reading the targets again is exact and cheap: only the notes that links *with a heading* point
at, each once per call, read, scrubbed (the link's heading was read from scrubbed text, so both
sides compare alike) and scanned for headings — 1.8 ms a note on the PowerShell reference's
10–70 KB pages, 4.5 ms for the largest. It also answers for the file as it is now, which is
what someone fixing links wants. (On that reference all 245 heading links between its pages
are found: no false alarm.)

**Matching.** When unsure, a heading counts: a false "not found" sends someone hunting for a
problem that is not there.

* Wiki links compare heading text as Obsidian does: case-insensitively, ignoring ASCII
  punctuation other than ``-``, ``_`` and ``'`` (Obsidian drops ``:``, ``#``, ``|``, ``^`` and
  the like when it writes a heading into a link: ``## Step 1: Set up`` is linked as
  ``[[note#Step 1 Set up]]``). ``[[note#A#B]]`` names B under A: each part must be found, in
  order.
* Markdown ``#anchors`` compare against GitHub's slugs (lower case, spaces to ``-``,
  punctuation dropped, ``-1``, ``-2`` … for repeats); the same with runs of ``-`` collapsed
  (MkDocs, Hugo), an empty one being ``section`` (DocFX: Microsoft's docs link ``### `$$` ``
  as ``#section``); the ``id`` or ``name`` of an HTML element (``<a id="ex3"></a>``); and the
  heading text as for wiki links (Obsidian writes ``[t](note.md#Heading%20text)``).
* Headings are ATX headings outside code and comments (as the chunker sees them) and setext
  headings (a line of text over ``===`` or ``---``); a link in a heading also counts as its text.
* Not checked (None): no heading, an unresolved link, a block reference (``#^id``), a link to a
  document (a PDF's ``#page=3``), a target that can no longer be read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..documents import kind_of
from ..index.credentials import scrub
from ..index.sources import SourceError, SourceFile, read_source
from ..notes.markdown import fence_spans, headings, in_spans, parse_note, render_links
from ..records import NoteLinks

_IGNORED = re.compile(r"""[!"#$%&()*+,./:;<=>?@\[\\\]^`{|}~]+""")
_SETEXT = re.compile(r"\n {0,3}(?:=+|-+)[ \t]*(?=\n|\Z)")
_NOT_PARAGRAPH = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|$)|>|[-*+][ \t]|\d{1,9}[.)][ \t]|```|~~~)")
_HYPHENS = re.compile(r"-{2,}")
_HTML_ID = re.compile(r"""<[A-Za-z][^<>]*?\s(?:id|name)\s*=\s*["']([^"'<>]+)["']""")


def heading_key(text: str) -> str:
    """Heading text as a wiki link's heading is compared with it: NFC, case-folded, ASCII
    punctuation other than ``-``, ``_`` and ``'`` ignored, whitespace collapsed."""
    spaced = _IGNORED.sub(" ", unicodedata.normalize("NFC", text))
    return " ".join(spaced.split()).casefold()


def github_slug(text: str) -> str:
    """GitHub's anchor for a heading (github-slugger, before de-duplication): lower case;
    letters, digits, marks, ``-`` and ``_`` kept; each space a ``-``; the rest dropped."""
    out = []
    for char in unicodedata.normalize("NFC", text).lower():
        if char == " ":
            out.append("-")
        elif char == "-" or unicodedata.category(char)[0] in "LNM" or unicodedata.category(char) == "Pc":
            out.append(char)
    return "".join(out)


def note_headings(text: str) -> list[str]:
    """A note's headings (from its whole file text), in order, as a reader sees them."""
    body = parse_note(text, path="").body  # frontmatter and %% comments gone
    found = [(h.start, h.text) for h in headings(body)]
    found.extend(_setext_headings(body))
    return [heading for _start, heading in sorted(found)]


def _setext_headings(body: str) -> list[tuple[int, str]]:
    """(position, text) of each paragraph over a ``===`` or ``---`` line, outside code."""
    fences = fence_spans(body)
    found = []
    for m in _SETEXT.finditer(body):
        end = m.start()
        if in_spans(fences, end + 1):
            continue
        lines: list[str] = []
        start = end
        while end > 0:
            start = body.rfind("\n", 0, end) + 1
            line = body[start:end]
            if not line.strip() or _NOT_PARAGRAPH.match(line) or in_spans(fences, start):
                break
            lines.insert(0, line.strip())
            end = start - 1
        if lines:
            found.append((start, " ".join(lines)))
    return found


class NoteHeadings:
    """The headings of one note, ready to answer for a link's ``#heading``."""

    def __init__(self, texts: Iterable[str], anchors: Iterable[str] = ()) -> None:
        self.keys: list[set[str]] = []
        """Per heading, in order: its text as wiki links compare it, raw and with links read
        as their text (``## See [[Other|the other]]``)."""
        self.slugs: set[str] = {anchor.lower() for anchor in anchors}
        github: dict[str, int] = {}
        docfx: dict[str, int] = {}
        for text in texts:
            shown = render_links(text) if "[" in text else text
            self.keys.append({heading_key(text), heading_key(shown)})
            slug = github_slug(shown)  # GitHub slugs the text a reader sees
            self.slugs.add(_numbered(slug, github))
            self.slugs.add(_numbered(_HYPHENS.sub("-", slug).strip("-") or "section", docfx))

    @classmethod
    def from_text(cls, text: str) -> NoteHeadings:
        """From a note's whole file text: its headings, and the ``id``/``name`` of its HTML
        elements (``<a id="ex3"></a>``), which anchors reach as well."""
        return cls(note_headings(text), _HTML_ID.findall(text) if "<" in text else ())

    def has(self, heading: str, syntax: str = "wiki") -> bool | None:
        """Whether ``heading`` (as the link writes it, after ``#``) names a heading here;
        None for a block reference, which is not a heading."""
        parts = [part.strip() for part in heading.split("#") if part.strip()]
        if not parts or any(part.startswith("^") for part in parts):
            return None
        if syntax == "markdown" and len(parts) == 1:
            anchor = unicodedata.normalize("NFC", parts[0]).lower()
            if anchor in self.slugs or _HYPHENS.sub("-", anchor).strip("-") in self.slugs:
                return True
        at = 0
        for part in parts:  # `A#B`: B under A, so each part after the one before
            key = heading_key(part)
            at = next((i + 1 for i in range(at, len(self.keys)) if key in self.keys[i]), -1)
            if at < 0:
                return False
        return True


def _numbered(slug: str, seen: dict[str, int]) -> str:
    """``slug`` made unique as github-slugger does: the second "notes" is "notes-1"."""
    unique = slug
    if unique in seen:
        seen[slug] += 1
        unique = f"{slug}-{seen[slug]}"
        while unique in seen:
            seen[slug] += 1
            unique = f"{slug}-{seen[slug]}"
    seen.setdefault(unique, 0)
    return unique


def load_headings(vault: Path, path: str) -> NoteHeadings | None:
    """The headings of the note at ``path`` as it is on disk now, scrubbed as the index reads
    it; None when it cannot be read (gone since the last index, unreadable)."""
    try:
        loaded = read_source(SourceFile(path, vault / path, 0, 0))
    except SourceError:
        return None
    return NoteHeadings.from_text(scrub(loaded.text).text)


def check_headings(found: NoteLinks, vault: Path) -> NoteLinks:
    """``found`` with ``heading_found`` set on every outgoing link whose heading can be
    checked: the link resolves to a note, and the heading is not a block reference. Each
    target note is read once."""
    notes: dict[str, NoteHeadings | None] = {}
    outgoing = []
    for link in found.outgoing:
        verdict = None
        if link.heading and link.path is not None and kind_of(link.path) is None:
            if link.path not in notes:
                notes[link.path] = load_headings(vault, link.path)
            known = notes[link.path]
            verdict = known.has(link.heading, link.syntax) if known is not None else None
        outgoing.append(link if verdict is None else replace(link, heading_found=verdict))
    return replace(found, outgoing=tuple(outgoing))
