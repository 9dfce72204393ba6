"""Markdown's own link syntax, turned into :class:`~vaultseek.records.Link` s to local files:
inline links ``[text](other%20note.md#heading)`` and reference links ``[text][label]``,
``[label][]`` and ``[label]``, whose destination is a definition ``[label]: other%20note.md
"title"`` anywhere in the note.

Kept apart from :mod:`markdown`, which owns what is code and what is a comment and hands this
module a predicate saying which positions to leave alone, so the two link forms share one
destination rule (:func:`parse_markdown_link`) and one place.

Judgement calls (CommonMark, simplified where only a full block parser would do better):

* A destination is URL-decoded and loses its ``?query``; ``<angle brackets>`` allow spaces;
  anything with a scheme (``https:``, ``mailto:``, ``obsidian:``) or starting ``//`` is not a
  note link. A reference to a definition with such a destination is not a note link either.
* A definition is a line (indented at most three spaces) ``[label]:``, a destination on that
  line or the next, an optional title, and nothing else — so a footnote ``[^1]: text`` and a
  console transcript ``[Server01]: PS C:\\> dir`` define nothing. Labels starting ``^`` are
  footnotes, never definitions.
* A definition cannot interrupt a paragraph (CommonMark): ``[x]: y`` directly under a line of
  text continues that paragraph. It may follow a blank line, a heading, a rule, code, a
  comment (``%%`` or an ``<!-- -->`` block) or another definition — as in Obsidian's editor,
  whose parser (lezer-markdown) follows CommonMark here. Definitions inside list items and
  block quotes are not recognised: that needs the container parsing this module does without.
* Labels match case-insensitively with runs of whitespace collapsed (CommonMark's
  normalisation, with Unicode case folding); the first definition of a label wins.
* A reference whose label has no definition is not a link — ``[x]`` is just text, ``- [x]
  done`` a task — and ``[a][b]`` with ``b`` undefined leaves ``[b]`` free to be a link itself.
* Link text may not hold brackets (``[![badge](a.svg)][ref]`` is not recognised), as for
  inline links; a ``\\[`` escaped bracket opens no link.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable
from urllib.parse import unquote

from vaultseek.records import Link

__all__ = ["inline_links", "label_key", "parse_markdown_link", "reference_links"]

Span = tuple[int, int]
Excluded = Callable[[int], bool]
"""Whether a position lies in code, a comment, or another link, where no link starts."""

_INLINE = re.compile(
    r"\[(?P<label>[^\[\]\n]*)\]\("
    r"(?P<dest><[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"""
)
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")
# Starts with a literal "[" like every scanning pattern in markdown.py (see the note there);
# the line-start and paragraph checks are done in Python on the few candidates.
_DEFINITION = re.compile(
    r"\[(?P<label>[^\[\]\n]{1,999})\]:"
    r"[ \t]*\n?[ \t]*"
    r"(?P<dest><[^<>\n]*>|[^\s<]\S*)"
    r"(?P<rest>[^\n]*)"
)
_TITLE = re.compile(
    r"""[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\))[ \t]*"""  # a title closed on the line
    r"""|[ \t]+(?:"[^"\n]*|'[^'\n]*|\([^()\n]*)"""  # or one that goes on over the next lines
)
_REFERENCE = re.compile(r"\[(?P<text>[^\[\]\n]*)\](?:\[(?P<label>[^\[\]\n]*)\])?")
_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_RULE_CHARS = frozenset("-*_=")


def parse_markdown_link(text: str, dest: str, *, embed: bool) -> Link | None:
    """A markdown link to a local file (``[text](other%20note.md#heading)``), URL-decoded;
    None for web and mail links (anything with a scheme), and for an empty destination."""
    if dest.startswith("<"):
        dest = dest[1:-1]
    dest = dest.strip()
    if not dest or _URL_SCHEME.match(dest):
        return None
    path, hash_, fragment = dest.partition("#")
    path = unquote(path.partition("?")[0]).strip()
    heading = unquote(fragment).strip() if hash_ else ""
    if not path and not heading:
        return None
    alias = text.strip()
    return Link(path, heading or None, alias or None, embed, "markdown")


def inline_links(body: str, excluded: Excluded) -> tuple[list[tuple[int, Link]], list[Span]]:
    """The inline links in ``body`` that point at local files, by position, and the spans of
    every inline link outside ``excluded`` — web links too, whose ``[text]`` must not then be
    read as a reference."""
    found: list[tuple[int, Link]] = []
    spans: list[Span] = []
    if "](" not in body:
        return found, spans
    for m in _INLINE.finditer(body):
        start = m.start()
        if excluded(start):
            continue
        spans.append(m.span())
        link = parse_markdown_link(m.group("label"), m.group("dest"), embed=_is_embed(body, start))
        if link is not None:
            found.append((start, link))
    return found, spans


def label_key(label: str) -> str:
    """A reference label as CommonMark compares it: whitespace runs collapsed, case-folded."""
    return " ".join(label.split()).casefold()


def reference_links(body: str, excluded: Excluded, links: list[Span]) -> list[tuple[int, Link]]:
    """The reference links in ``body`` whose definition points at a local file, by position.
    ``excluded`` covers code and comments; ``links`` are the sorted spans of the other links
    (wiki and inline), inside which no reference starts."""
    if "]:" not in body:
        return []
    definitions, taken = _definitions(body, excluded)
    if not definitions:
        return []
    taken = _merged([*taken, *links])
    found: list[tuple[int, Link]] = []
    pos = 0
    while (m := _REFERENCE.search(body, pos)) is not None:
        start = m.start()
        pos = m.end()
        if excluded(start) or _in_spans(taken, start) or (start and body[start - 1] == "\\"):
            pos = start + 1
            continue
        text, label = m.group("text"), m.group("label")
        key = label_key(label if label else text)
        dest = definitions.get(key) if key else None
        if dest is None:
            if label:  # `[a][b]` with `b` undefined: `[b]` may still be a link of its own
                pos = m.start("label") - 1
            continue
        link = parse_markdown_link(text, dest, embed=_is_embed(body, start))
        if link is not None:
            found.append((start, link))
    return found


def _definitions(body: str, excluded: Excluded) -> tuple[dict[str, str], list[Span]]:
    """Label key → raw destination of every definition (the first of each label), and the
    spans of the definition lines, which are not references themselves."""
    definitions: dict[str, str] = {}
    spans: list[Span] = []
    ends: set[int] = set()  # where each definition's last line ends, for the paragraph rule
    pos = 0
    while (m := _DEFINITION.search(body, pos)) is not None:
        start = m.start()
        pos = start + 1  # a candidate that is no definition must not hide the next line's
        line_start = body.rfind("\n", 0, start) + 1
        if start - line_start > 3 or body[line_start:start].strip(" ") or excluded(start):
            continue
        label, rest = m.group("label"), m.group("rest")
        if label.lstrip().startswith("^") or not label.strip():
            continue
        if rest and not _TITLE.fullmatch(rest):
            continue
        if line_start and not _may_follow(body, line_start, ends, excluded):
            continue
        pos = m.end()
        spans.append(m.span())
        ends.add(m.end())
        definitions.setdefault(label_key(label), m.group("dest"))
    return definitions, spans


def _may_follow(body: str, line_start: int, ends: set[int], excluded: Excluded) -> bool:
    """Whether a definition may start at ``line_start`` given the line above it: anything
    but paragraph text, which a definition cannot interrupt."""
    above_end = line_start - 1
    above_start = body.rfind("\n", 0, above_end) + 1
    above = body[above_start:above_end]
    stripped = above.strip()
    return (
        not stripped
        or above_end in ends
        or excluded(above_start + len(above) - len(above.lstrip()))
        or _ATX_HEADING.match(above) is not None
        or (len(set(stripped.replace(" ", "").replace("\t", ""))) == 1 and stripped[0] in _RULE_CHARS)
        or (stripped.endswith("-->") and _opens_comment_block(body, above_end))
    )


def _opens_comment_block(body: str, end: int) -> bool:
    """Whether the ``<!--`` closed just before ``end`` starts a line: an HTML block, which
    ends on its ``-->`` line, so what follows is no paragraph (Microsoft's docs put
    ``<!-- link references -->`` right above their definitions)."""
    opened = body.rfind("<!--", 0, end)
    if opened < 0:
        return False
    line_start = body.rfind("\n", 0, opened) + 1
    return opened - line_start <= 3 and not body[line_start:opened].strip(" ")


def _is_embed(body: str, start: int) -> bool:
    return start > 0 and body[start - 1] == "!"


def _merged(spans: list[Span]) -> list[Span]:
    """``spans`` sorted, overlapping ones joined (a definition line may hold an inline link)."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _in_spans(spans: list[Span], pos: int) -> bool:
    """Whether ``pos`` falls inside one of the sorted, non-overlapping ``spans``."""
    i = bisect_right(spans, (pos, math.inf)) - 1
    return i >= 0 and pos < spans[i][1]
