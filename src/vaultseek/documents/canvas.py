"""Obsidian canvases (``.canvas``, the open JSON Canvas 1.0 format): cards, groups, links.

A canvas is a JSON object with ``nodes`` and ``edges``. Each node has an ``id``, a position and
size (``x``, ``y``, ``width``, ``height``) and a ``type``:

* ``text``: a card of markdown. Each card becomes its own segment, cited as
  ``card: <its first line>``, cut at its headings like a note, with its wiki and markdown
  links rendered as a reader sees them and stored as the canvas's links;
* ``file``: a note, image or document placed on the canvas: stored as an embed of that file
  (``file`` is a vault-relative path, ``subpath`` an optional ``#heading``), so the file's
  backlinks list the canvas;
* ``link``: a web page (its ``url``);
* ``group``: a labelled frame. A card inside a group's rectangle has the group's label (and
  those of the groups around it) above its own heading.

Edges join two nodes and may carry a ``label``. Group labels, file cards, web links, labelled
edges and cards too short to stand alone go into one more segment, ``canvas overview``.

A malformed file (not JSON, not an object with lists of nodes and edges) is refused with the
reason; malformed nodes and edges are left out. A canvas over :data:`MAX_CANVAS_BYTES` is
refused (it is parsed whole); past :data:`MAX_NODES` nodes or :data:`MAX_EDGES` edges the rest
is left out with a notice, and groups are looked up for a card at most :data:`MAX_GROUP_DEPTH`
deep (among the first :data:`MAX_GROUPS` groups).
"""

from __future__ import annotations

import json
import math
import posixpath
from dataclasses import dataclass
from typing import Any

from ..notes.markdown import clean_heading, headings, parse_note, render_links
from ..records import Link
from .encoding import decode_text
from .extraction import MB, DocumentError, ExtractContext, Extracted, Segment
from .limits import TextBudget, megabytes

MAX_CANVAS_BYTES = 20 * MB
"""JSON is parsed whole (about ten times its size in memory); a large hand-made canvas is
well under 1 MB."""
MAX_NODES = 20_000
MAX_EDGES = 50_000
MAX_GROUP_DEPTH = 8
MAX_GROUPS = 200
"""Groups that frame cards: each card is checked against each group, so their product is
what costs (a canvas of 20,000 cards and 200 groups: about a second)."""
MAX_LABEL_CHARS = 60
"""A card's citation is its first line, cut to this many characters."""
SHORT_CARD_CHARS = 20
"""A card shorter than this ("Buy milk") is listed in the overview instead of standing alone:
a chunk that short says too little to be found by meaning."""
OVERVIEW = "canvas overview"


@dataclass(frozen=True, slots=True)
class _Node:
    id: str
    type: str
    box: tuple[float, float, float, float] | None
    """(left, top, right, bottom), or None when the node's geometry is unusable."""
    data: dict[str, Any]

    def name(self) -> str:
        """How the overview names the node: a card's first line, a file's path, a URL."""
        if self.type == "text":
            return _first_line(_text(self.data, "text")) or "(empty card)"
        if self.type == "file":
            return _text(self.data, "file")
        if self.type == "link":
            return _text(self.data, "url")
        return _text(self.data, "label") or "(unnamed group)"


def read(data: bytes, context: ExtractContext) -> Extracted:
    if len(data) > MAX_CANVAS_BYTES:
        raise DocumentError(
            f"canvas too large to parse ({megabytes(len(data))}, over {megabytes(MAX_CANVAS_BYTES)}); "
            "a canvas is parsed whole, so it is not read in part"
        )
    try:
        canvas = json.loads(decode_text(data))
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not a valid canvas: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    if not isinstance(canvas, dict):
        raise DocumentError("not a valid canvas: the file is not a JSON object with nodes and edges")
    raw_nodes, raw_edges = canvas.get("nodes", []), canvas.get("edges", [])
    if not isinstance(raw_nodes, list) or not isinstance(raw_edges, list):
        raise DocumentError("not a valid canvas: 'nodes' and 'edges' must be lists")
    notices = []
    if len(raw_nodes) > MAX_NODES or len(raw_edges) > MAX_EDGES:
        notices.append(
            f"{context.path}: only its first {MAX_NODES:,} cards and {MAX_EDGES:,} connections were "
            "read; the rest were left out"
        )
    nodes = [node for node in map(_node, raw_nodes[:MAX_NODES]) if node is not None]
    groups = [node for node in nodes if node.type == "group" and node.box is not None][:MAX_GROUPS]
    budget = TextBudget(context.limits.max_text_chars)
    segments: list[Segment] = []
    links: list[Link] = []
    overview: list[str] = []
    for node in nodes:
        if budget.spent:
            break
        frames = _frames(node, groups)
        where = f" (in {' > '.join(frames)})" if frames else ""
        if node.type == "text":
            _card(node, frames, context.path, budget, segments, links, overview)
        elif node.type == "file" and _text(node.data, "file"):
            target = _text(node.data, "file")
            subpath = _text(node.data, "subpath").lstrip("#") or None
            links.append(Link(target, heading=subpath, embed=True, syntax="wiki"))
            shown = posixpath.splitext(target)[0] + (f" > {subpath}" if subpath else "")
            overview.append(budget.take(f"file: {shown}{where}"))
        elif node.type == "link" and _text(node.data, "url"):
            overview.append(budget.take(f"link: {_text(node.data, 'url')}{where}"))
        elif node.type == "group" and _text(node.data, "label"):
            overview.append(budget.take(f"group: {_text(node.data, 'label')}{where}"))
    by_id = {node.id: node for node in nodes}
    for edge in raw_edges[:MAX_EDGES]:
        if budget.spent:
            break
        if not isinstance(edge, dict) or not _text(edge, "label"):
            continue
        start, end = by_id.get(_text(edge, "fromNode")), by_id.get(_text(edge, "toNode"))
        if start is not None and end is not None:
            overview.append(budget.take(f"{start.name()} → {end.name()}: {_text(edge, 'label')}"))
    lines = [line for line in overview if line]
    if lines:
        segments.append(Segment("\n".join(lines), heading=(OVERVIEW,), structured=True))
    return Extracted(segments=segments, notices=notices, truncated=budget.truncated,
                     links=list(dict.fromkeys(links)))  # fmt: skip


def _card(node: _Node, frames: list[str], path: str, budget: TextBudget,
          segments: list[Segment], links: list[Link], overview: list[str]) -> None:  # fmt: skip
    """A text card's segments (one per heading section), its links, or — for a very short card
    — one line of the overview."""
    note = parse_note(_text(node.data, "text"), path=path)
    links.extend(note.links)
    body = note.body.strip()
    if not body:
        return
    label = f"card: {_first_line(body)}"
    if len(render_links(body)) < SHORT_CARD_CHARS:
        where = f" (in {' > '.join(frames)})" if frames else ""
        overview.append(budget.take(f"{label}{where}"))
        return
    found = headings(body)
    starts = [0, *(h.start for h in found)]
    ends = [*(h.start for h in found), len(body)]
    trail: list[tuple[int, str]] = []  # (level, heading) above the section
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if index:
            heading = found[index - 1]
            while trail and trail[-1][0] >= heading.level:
                trail.pop()
            trail.append((heading.level, heading.text))
        section = render_links(body[start:end]).strip()
        inner = [text for _level, text in trail]
        if inner and f"card: {inner[0]}" == label:
            inner = inner[1:]  # the card opens with its title: cited once
        if section:
            segments.append(
                Segment(budget.take(section), heading=(*frames, label, *inner), structured=True, whole=True)
            )


def _node(raw: Any) -> _Node | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        return None
    box = None
    numbers = [raw.get(key) for key in ("x", "y", "width", "height")]
    if all(isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in numbers):
        x, y, width, height = (float(n) for n in numbers)  # type: ignore[arg-type]
        box = (x, y, x + max(width, 0.0), y + max(height, 0.0))
    return _Node(_text(raw, "id"), raw["type"], box, raw)


def _frames(node: _Node, groups: list[_Node]) -> list[str]:
    """The labels of the groups whose rectangles hold the node, outermost first."""
    if node.box is None:
        return []
    left, top, right, bottom = node.box
    around = [
        group
        for group in groups
        if group is not node and group.box is not None
        and group.box[0] <= left and group.box[1] <= top and right <= group.box[2] and bottom <= group.box[3]
    ]  # fmt: skip
    around.sort(key=lambda g: (g.box[2] - g.box[0]) * (g.box[3] - g.box[1]) if g.box else 0.0, reverse=True)
    return [label for group in around[-MAX_GROUP_DEPTH:] if (label := _text(group.data, "label"))]


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = clean_heading(render_links(line.strip().lstrip("#").strip()))
        line = line.lstrip("-*+> ").strip()
        if line:
            return line if len(line) <= MAX_LABEL_CHARS else line[: MAX_LABEL_CHARS - 1].rstrip() + "…"
    return ""
