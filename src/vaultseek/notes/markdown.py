"""Turning one Obsidian markdown file into a :class:`~vaultseek.records.Note`.

This module owns markdown *syntax*: frontmatter (it is the only importer of PyYAML), inline
``#tags``, ``%% comments %%``, wiki links, fenced code and headings; markdown's own link forms
(inline and reference links) are read by :mod:`markdown_links`, told here what is code and what
a comment. The chunker asks this module
for fences and headings (:func:`fence_spans`, :func:`headings`) so both layers agree on what is
code and what is a heading.

Speed matters (the indexer runs this over ~17,000 files): see the note above the patterns.

Judgement calls (kept deliberately simple and documented here):

* Code is fenced code (```` ``` ```` / ``~~~``, any indentation so fences nested in lists
  count, closing fence of the same character and at least the same length, an unclosed fence
  runs to the end) and single-line inline code spans. Four-space indented code blocks are not
  recognised as code, because telling them apart from list continuations needs a full parser.
* An unclosed ``%%`` is left as text (Obsidian hides the rest of the note; for search, keeping
  text is the safer failure). A comment may span a fenced block and then hides it, as in
  Obsidian; ``%%`` inside code never opens or closes a comment.
* A frontmatter ``aliases`` string is split at commas (Obsidian's legacy format); ``tags`` strings
  are split at commas and whitespace. Tags without a letter (``#2024``, ``#2024-01``) are
  dropped everywhere, as Obsidian requires a non-numeric character.
* ``Note.links`` drops exact duplicates only (another heading or alias is another Link), and
  keeps document order, frontmatter first: a wiki link in a frontmatter value
  (``up: "[[Projects MOC]]"``) is a link, as in Obsidian's properties. Markdown links count when
  they point at a local file — inline (``[text](other%20note.md#heading)``, ``![alt](img/a.png)``)
  or by reference (``[text][ref]`` with ``[ref]: other%20note.md``): see :mod:`markdown_links`.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from bisect import bisect_right
from collections.abc import Callable
from typing import Any, NamedTuple

import yaml

from vaultseek.notes.markdown_links import inline_links, reference_links
from vaultseek.records import Link, Note

__all__ = [
    "Heading",
    "clean_heading",
    "fence_spans",
    "headings",
    "in_spans",
    "load_yaml_documents",
    "normalize_text",
    "parse_note",
    "render_frontmatter",
    "render_links",
    "split_frontmatter",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Every scanning pattern starts with a literal character or "\n" so the regex engine can jump
# between candidates with a fast character search; patterns that start with a lookbehind, an
# optional character or a multi-branch alternation are tried at every position and were
# measured 10-30x slower. Context checks (line starts, preceding whitespace, code) are then done
# in Python on the few candidates.
_FENCE_LINE = re.compile(r"\n[ \t]*(`{3,}|~{3,})([^\n]*)")
_FIRST_FENCE_LINE = re.compile(r"[ \t]*(`{3,}|~{3,})([^\n]*)")
_HEADING_LINE = re.compile(r"\n {0,3}(#{1,6})[ \t]+([^\n]*)")
_FIRST_HEADING_LINE = re.compile(r" {0,3}(#{1,6})[ \t]+([^\n]*)")
_CODE_SPAN = re.compile(r"(`++)[^\n]*?(?<!`)\1(?!`)")
_TAG = re.compile(r"#([\w/-]+)")
_WIKILINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")
_ANY_LINK = re.compile(
    r"\[(?:\[(?P<inner>[^\[\]\n]*)\]\]"
    r"|(?P<label>[^\[\]\n]*)\]\("
    r"(?:<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\))"""
)
_FRONTMATTER = re.compile(
    r"\A---[ \t]*\n(?P<yaml>(?s:.*?))^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.MULTILINE
)
_TAG_SPLIT = re.compile(r"[,\s]+")
_HAS_LETTER = re.compile(r"[^\W\d]")
_FILE_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_IMAGE_SIZE = re.compile(r"\s*\d+(?:\s*x\s*\d+)?\s*")
_EMPHASIS = re.compile(
    r"\*\*(?=\S)(.+?)(?<=\S)\*\*"
    r"|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"
    r"|\*(?=\S)(.+?)(?<=\S)\*"
    r"|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"
    r"|~~(.+?)~~"
    r"|==(.+?)=="
    r"|`+([^`]+)`+"
)
_WHITESPACE = re.compile(r"\s+")
_MAX_FRONTMATTER_NODES = 10_000

Span = tuple[int, int]


class Heading(NamedTuple):
    """An ATX heading line outside fenced code."""

    start: int  # offset of the heading line's first character
    level: int
    text: str  # readable text, see clean_heading()


def normalize_text(text: str) -> str:
    """Drop a BOM and turn CRLF/CR into LF, so every pattern can assume ``\\n`` lines."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parse_note(text: str, *, path: str) -> Note:
    """Parse a note's full file text; ``path`` is vault-relative with forward slashes.

    Never raises on bad input: a broken frontmatter is reported in ``frontmatter_error`` and the
    rest of the note is still parsed, because one sloppy file must not block indexing a vault.
    """
    text = normalize_text(text)
    meta: dict[str, Any] = {}
    error: str | None = None
    body = text
    m = _FRONTMATTER.match(text)
    if m is not None:
        body = text[m.end() :]
        meta, error = _load_frontmatter(m.group("yaml"))
    elif text.startswith("---") and text[3:].split("\n", 1)[0].strip() == "":
        error = "unterminated frontmatter (no closing '---')"

    body, links, inline_tags = _scan_body(body)
    if meta:
        links = list(dict.fromkeys([*_frontmatter_links(meta), *links]))
    lowered = _first_by_lower_key(meta)
    tags = _dedupe([*_frontmatter_tags(lowered), *inline_tags])
    aliases = _dedupe(_frontmatter_aliases(lowered.get("aliases", lowered.get("alias"))))
    title = _scalar_text(lowered.get("title")) or _path_stem(path)
    return Note(
        title=title,
        body=body,
        tags=tuple(tags),
        aliases=tuple(aliases),
        type=_scalar_text(lowered.get("type")),
        links=tuple(links),
        frontmatter=meta,
        frontmatter_error=error,
    )


def render_links(text: str) -> str:
    """Make links readable for search and display, leaving code untouched.

    ``[[t|alias]]`` → ``alias``; ``[[t#h]]`` → ``t > h``; ``[[t]]`` → ``t``; ``![[img.png]]`` →
    ``img``; ``[text](url)`` and ``![alt](url)`` → ``text``/``alt``. Embedding models and BM25
    should see the words a reader sees, not link syntax or URLs.
    """
    if "[" not in text:
        return text
    matches = list(_ANY_LINK.finditer(text))
    if not matches:
        return text
    fences = fence_spans(text)
    code = _CodeSpans(text)
    pieces: list[str] = []
    pos = 0
    for m in matches:
        start = m.start()
        if in_spans(fences, start) or code.covers(start):
            continue
        embed = start > 0 and text[start - 1] == "!"
        inner = m.group("inner")
        if inner is not None:
            link = _parse_wikilink(inner, embed=embed)
            rendered = "" if link is None else _link_text(link)
        else:
            rendered = m.group("label")
        pieces.append(text[pos : start - 1 if embed else start])
        pieces.append(rendered)
        pos = m.end()
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def fence_spans(text: str) -> list[Span]:
    """``(start, end)`` of every fenced code block, opening line start to closing line end.

    ``end`` includes the closing line's newline; an unclosed fence runs to ``len(text)``. The
    list is sorted and non-overlapping, ready for :func:`in_spans`.
    """
    if "```" not in text and "~~~" not in text:
        return []
    first = _FIRST_FENCE_LINE.match(text)
    # (line start, fence run, the rest of the line, line end)
    lines: list[tuple[int, str, str, int]] = [(0, first[1], first[2], first.end())] if first is not None else []
    lines.extend((m.start() + 1, m[1], m[2], m.end()) for m in _FENCE_LINE.finditer(text))
    spans: list[Span] = []
    open_start = -1
    open_run = ""
    for start, run, rest, line_end in lines:
        if open_start < 0:
            if run[0] == "`" and "`" in rest:
                continue  # an info string with a backtick: not a fence (CommonMark)
            open_start, open_run = start, run
        elif run[0] == open_run[0] and len(run) >= len(open_run) and not rest.strip():
            spans.append((open_start, min(line_end + 1, len(text))))
            open_start = -1
    if open_start >= 0:
        spans.append((open_start, len(text)))
    return spans


def in_spans(spans: list[Span], pos: int) -> bool:
    """Whether ``pos`` falls inside one of the sorted, non-overlapping ``spans``."""
    if not spans:
        return False
    i = bisect_right(spans, (pos, math.inf)) - 1
    return i >= 0 and pos < spans[i][1]


def headings(text: str, fences: list[Span] | None = None) -> list[Heading]:
    """ATX headings outside fenced code, in order; headings with no text are ignored.

    ``fences`` may be passed when the caller already has :func:`fence_spans` of ``text``.
    """
    if "#" not in text:
        return []
    if fences is None:
        fences = fence_spans(text)
    first = _FIRST_HEADING_LINE.match(text)
    found: list[tuple[int, str, str]] = [(0, first[1], first[2])] if first is not None else []
    found.extend((m.start() + 1, m[1], m[2]) for m in _HEADING_LINE.finditer(text))
    out: list[Heading] = []
    for start, hashes, raw in found:
        if in_spans(fences, start):
            continue
        name = clean_heading(_strip_closing_hashes(raw))
        if name:
            out.append(Heading(start, len(hashes), name))
    return out


def clean_heading(text: str) -> str:
    """Heading text as a reader sees it: emphasis, code ticks and extra spaces removed."""
    if any(c in text for c in "*_~=`"):
        previous = None
        while previous != text:
            previous = text
            text = _EMPHASIS.sub(_emphasis_inner, text)
    return _WHITESPACE.sub(" ", text).strip()


# --------------------------------------------------------------------------- frontmatter


def load_yaml_documents(text: str) -> list[Any]:
    """Every document in a YAML stream, with the safe loader (for YAML data files).
    Raises ValueError with a short reason when the text is not valid YAML."""
    try:
        return list(yaml.load_all(text, Loader=_Loader))  # _Loader is a SafeLoader
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        mark = getattr(exc, "problem_mark", None)
        raise ValueError(f"{problem} at line {mark.line + 1}" if mark is not None else problem) from exc
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. a date such as 2024-13-45
        raise ValueError(type(exc).__name__) from exc


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """A note's frontmatter (``{}`` if none or broken) and its body exactly as written, for
    tools that rewrite a note's metadata and keep its text (intake)."""
    text = normalize_text(text)
    m = _FRONTMATTER.match(text)
    if m is None:
        return {}, text
    meta, error = _load_frontmatter(m.group("yaml"))
    return (meta if error is None else {}), text[m.end() :]


def render_frontmatter(meta: dict[str, Any]) -> str:
    """``meta`` as a YAML frontmatter block (``---`` lines included), keys in the given
    order, Unicode kept readable."""
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    return f"---\n{dumped}---\n"


def _load_frontmatter(source: str) -> tuple[dict[str, Any], str | None]:
    """YAML → JSON-safe dict, or ``({}, reason)``; the caller keeps going either way."""
    try:
        data = yaml.load(source, Loader=_Loader)  # _Loader is a SafeLoader
    except yaml.YAMLError as exc:
        return {}, _yaml_reason(exc)
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:
        # e.g. an impossible date such as 2024-13-45 fails inside the timestamp constructor.
        return {}, f"invalid YAML: {type(exc).__name__}"
    if not isinstance(data, dict):
        if data is None:
            return {}, None
        return {}, f"frontmatter is not a mapping (got {type(data).__name__})"
    try:
        return _json_safe(data, [_MAX_FRONTMATTER_NODES]), None
    except (_TooLarge, RecursionError):
        return {}, "frontmatter too large or too deeply nested"


def _yaml_reason(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or type(exc).__name__
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 2})" if mark is not None else ""  # +1 for '---', +1 1-based
    return f"invalid YAML{where}: {problem}"


class _TooLarge(Exception):
    """YAML aliases would expand into an unreasonable structure ("billion laughs")."""


def _json_safe(value: Any, budget: list[int]) -> Any:
    """Convert YAML values to what ``json.dumps`` accepts, so the store never chokes on them."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {
            k if isinstance(k, str) else str(_json_safe(k, budget)): _json_safe(v, budget)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v, budget) for v in value]
    if isinstance(value, (_dt.date, _dt.time)):  # datetime is a date subclass
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _first_by_lower_key(meta: dict[str, Any]) -> dict[str, Any]:
    """Case-insensitive key lookup (``Tags:`` and ``tags:`` both occur in real vaults)."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        out.setdefault(key.strip().lower(), value)
    return out


def _flatten(value: Any) -> list[Any]:
    """Scalars of a value that may be a scalar or (nested) list; mappings and None give none."""
    if isinstance(value, list):
        return [leaf for item in value for leaf in _flatten(item)]
    return [] if value is None or isinstance(value, dict) else [value]


def _frontmatter_tags(lowered: dict[str, Any]) -> list[str]:
    raw = _flatten(lowered.get("tags")) + _flatten(lowered.get("tag"))
    parts = (p for item in raw if not isinstance(item, bool) for p in _TAG_SPLIT.split(str(item)))
    return [tag for tag in map(_clean_tag, parts) if tag]


def _clean_tag(raw: str) -> str | None:
    tag = raw.strip().lstrip("#").rstrip("/")
    if not tag or not _HAS_LETTER.search(tag):
        return None
    return tag


def _frontmatter_links(meta: dict[str, Any]) -> list[Link]:
    """Wiki links in frontmatter values (``up: "[[Projects MOC]]"``), which Obsidian's
    properties treat as links too."""
    found = []
    for value in _flatten(list(meta.values())):
        if isinstance(value, str) and "[[" in value:
            for m in _WIKILINK.finditer(value):
                link = _parse_wikilink(m.group(1), embed=False)
                if link is not None:
                    found.append(link)
    return found


def _frontmatter_aliases(value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else _flatten(value)
    aliases = (_scalar_text(item) for item in items)
    return [alias for alias in aliases if alias]


def _scalar_text(value: Any) -> str | None:
    """A title/type value as one line of text, or None when absent/empty/not a scalar."""
    if value is None or isinstance(value, (bool, dict, list)):
        return None
    text = _WHITESPACE.sub(" ", str(value)).strip()
    return text or None


def _path_stem(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, _ext = name.rpartition(".")
    return (stem if dot and stem else name) or path


def _dedupe(items: list[str]) -> list[str]:
    """Case-insensitive de-duplication keeping the first spelling, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# --------------------------------------------------------------------------- body


def _scan_body(body: str) -> tuple[str, list[Link], list[str]]:
    """Strip comments and collect links and inline tags, all outside code.

    Candidates are found by fast literal searches, then filtered by position: inside a fenced
    block, inside an inline code span on the same line, or inside a removed comment.
    """
    has_comment = "%%" in body
    if not has_comment and "[[" not in body and "#" not in body and "](" not in body and "]:" not in body:
        return body, [], []
    fences = fence_spans(body)
    code = _CodeSpans(body)

    def is_code(pos: int) -> bool:
        return in_spans(fences, pos) or code.covers(pos)

    comments = _comment_spans(body, fences, is_code) if has_comment else []

    def hidden(pos: int) -> bool:
        return is_code(pos) or in_spans(comments, pos)

    link_spans: list[Span] = []
    found: list[tuple[int, Link]] = []
    if "[[" in body:
        for m in _WIKILINK.finditer(body):
            start = m.start()
            if hidden(start):
                continue
            embed = start > 0 and body[start - 1] == "!"
            link_spans.append(m.span())
            link = _parse_wikilink(m.group(1), embed=embed)
            if link is not None:
                found.append((start, link))
    inline, inline_spans = inline_links(body, lambda pos: hidden(pos) or in_spans(link_spans, pos))
    found.extend(inline)
    if "]:" in body:  # every reference needs a definition
        found.extend(reference_links(body, hidden, sorted([*link_spans, *inline_spans])))
    found.sort(key=lambda item: item[0])
    links = list(dict.fromkeys(link for _start, link in found))
    tags: list[str] = []
    if "#" in body:
        for m in _TAG.finditer(body):
            start = m.start()
            if start > 0 and not body[start - 1].isspace():
                continue  # `a#b`, `http://x/#frag`, `&#123;`, `##`
            if is_code(start) or in_spans(comments, start) or in_spans(link_spans, start):
                continue
            tag = _clean_tag(m.group(1))
            if tag:
                tags.append(tag)
    if comments:
        starts = [0, *(end for _, end in comments)]
        ends = [*(start for start, _ in comments), len(body)]
        body = "".join(body[start:end] for start, end in zip(starts, ends, strict=True))
    return body, links, tags


def _comment_spans(body: str, fences: list[Span], is_code: Callable[[int], bool]) -> list[Span]:
    """Pair ``%%`` markers outside code into comment spans; an unpaired opener is ignored."""
    spans: list[Span] = []
    pos = body.find("%%")
    while pos >= 0:
        if is_code(pos):
            pos = body.find("%%", pos + 2)
            continue
        close = body.find("%%", pos + 2)
        while close >= 0 and in_spans(fences, close):
            close = body.find("%%", close + 2)
        if close < 0:
            break
        spans.append((pos, close + 2))
        pos = body.find("%%", close + 2)
    return spans


class _CodeSpans:
    """Inline code spans, computed lazily per line: only lines holding a candidate need them.

    Code spans cannot cross lines here, so a candidate's own line is all that decides whether
    it sits inside one; scanning every line of a 50 MB vault for backticks would cost more than
    the rest of parsing.
    """

    __slots__ = ("_lines", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: dict[int, list[Span]] = {}

    def covers(self, pos: int) -> bool:
        text = self._text
        line_start = text.rfind("\n", 0, pos) + 1
        if text.find("`", line_start, pos) < 0:
            return False
        spans = self._lines.get(line_start)
        if spans is None:
            line_end = text.find("\n", pos)
            if line_end < 0:
                line_end = len(text)
            spans = [m.span() for m in _CODE_SPAN.finditer(text, line_start, line_end)]
            self._lines[line_start] = spans
        return in_spans(spans, pos)


def _strip_closing_hashes(raw: str) -> str:
    """``Title ##`` → ``Title``, but ``C#`` stays (the closing run needs a space before it)."""
    text = raw.rstrip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        return bare.rstrip()
    return text


def _parse_wikilink(inner: str, *, embed: bool) -> Link | None:
    target_part, bar, alias = inner.partition("|")
    target_part = target_part.rstrip("\\")  # `[[a\|b]]` is the table-escaped form of `[[a|b]]`
    target, hash_, heading = target_part.partition("#")
    target = target.strip()
    heading_text = heading.strip() if hash_ else ""
    if not target and not heading_text:
        return None
    alias_text = alias.strip() if bar else ""
    return Link(target, heading_text or None, alias_text or None, embed)


def _link_text(link: Link) -> str:
    if link.alias and not (link.embed and _IMAGE_SIZE.fullmatch(link.alias)):
        return link.alias
    target = link.target
    if target.lower().endswith(".md"):
        target = target[:-3]
    elif link.embed and _FILE_EXTENSION.search(target):  # an image/PDF/...: its bare name
        target = _FILE_EXTENSION.sub("", target.rsplit("/", 1)[-1]) or target
    heading = link.heading
    if heading:
        parts = (p.strip() for p in heading.split("#"))
        heading = " > ".join(p for p in parts if p and not p.startswith("^"))
    if target and heading:
        return f"{target} > {heading}"
    return target or heading or ""


def _emphasis_inner(m: re.Match[str]) -> str:
    """The text inside whichever emphasis form matched."""
    return next(g for g in m.groups() if g is not None)
