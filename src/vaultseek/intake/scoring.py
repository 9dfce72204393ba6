"""The four dimensions an incoming item is scored on, each in [0, 1] with its reasons.

Every dimension counts plain, visible signals and turns the count into a score with one
saturating curve, ``points / (points + half)``: ``half`` points give 0.5, twice as many 0.67,
and no amount of repetition reaches 1 — so a long item does not win by length alone. The
counts and the curve are all there is; ``docs/intake.md`` lists every signal and its points.

* **actionability** — things to do: fenced code blocks, command lines, numbered steps,
  checkboxes, bullets that start with an imperative verb, decision words (decided, TODO, …).
* **depth** — substance and structure: distinct content words (not stopwords, not repeats),
  headings, paragraphs and list items.
* **authority** — source signals: links and their distinct web sites, links to the sites you
  trust (``intake_trusted_domains``), DOIs and arXiv ids, citations (``[3]``, *et al.*), a
  References section, author / source metadata.
* **relevance** is computed in :mod:`.routing` from the index's vectors (it needs the vault).

Pure and deterministic: the same text gives the same scores and reasons.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from ..notes.markdown import fence_spans, headings


@dataclass(frozen=True)
class Dimension:
    """One dimension's score in [0, 1] and the reasons that produced it."""

    name: str
    score: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"score": self.score, "reasons": list(self.reasons)}


def saturate(points: float, half: float) -> float:
    """``points / (points + half)``: 0 → 0, ``half`` → 0.5, never 1; rounded to 3 places."""
    return round(points / (points + half), 3) if points > 0 else 0.0


def ramp(value: float, low: float, high: float) -> float:
    """``value`` mapped linearly from [low, high] onto [0, 1], clipped; rounded to 3 places."""
    return round(min(1.0, max(0.0, (value - low) / (high - low))), 3)


# -- actionability ------------------------------------------------------------------------
ACTION_HALF = 4.0
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+\S", re.MULTILINE)
_CHECKBOX = re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?\**([A-Za-z]+)", re.MULTILINE)
_COMMAND_LINE = re.compile(r"^[ \t]*(?:`[^`\n]+`[ \t]*|\$[ \t]+\S[^\n]*|PS>[ \t]*\S[^\n]*)$", re.MULTILINE)
_DECISION = re.compile(
    r"\b(?:decided|decision|we will|action items?|next steps?|todo|to-do|must|should|"
    r"recommend(?:ed|s)?|do not|don't|never|always)\b",
    re.IGNORECASE,
)
IMPERATIVES = frozenset(
    """add apply avoid build call change check choose clean clear clone close compile configure
    connect convert copy create debug define delete deploy disable display download edit enable
    ensure export extract fetch find fix follow generate get give go import include initialize
    install keep kill launch list load log make merge migrate mount move open pass pick print
    pull push put read rebuild record reduce refresh register reload remove rename replace reset
    restart restore retry return review revoke rotate run save scan search select send set show
    sign skip sort specify start stop switch sync tag test try turn type uninstall unmount update
    upgrade upload use verify view wait watch write""".split()
)


def actionability(body: str) -> Dimension:
    fences = fence_spans(body)
    code_blocks = len(fences)
    outside = _outside(body, fences)
    commands = len(_COMMAND_LINE.findall(outside))
    steps = len(_NUMBERED.findall(outside))
    checkboxes = len(_CHECKBOX.findall(outside))
    imperatives = sum(1 for m in _BULLET.finditer(outside) if m.group(1).lower() in IMPERATIVES)
    decisions = len(_DECISION.findall(outside))
    signals = [
        ("fenced code block|fenced code blocks", code_blocks, 2.0),
        ("command line|command lines", commands, 1.0),
        ("numbered step|numbered steps", steps, 1.0),
        ("checkbox|checkboxes", checkboxes, 1.0),
        ("bullet starting with a verb|bullets starting with a verb", imperatives, 0.5),
        ("decision word|decision words", decisions, 0.5),
    ]
    points, reasons = _tally(signals)
    return Dimension("actionability", saturate(points, ACTION_HALF), _with_total(reasons, points, ACTION_HALF))


# -- depth --------------------------------------------------------------------------------
DEPTH_WORDS_HALF = 80.0
DEPTH_STRUCTURE_HALF = 4.0
DEPTH_WORDS_SHARE = 0.6
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
STOPWORDS = frozenset(
    """the and for are but not you all any can had her was one our out has him his how its may
    new now old see two way who did get got let put say she too use that with have this will
    your from they know want been good much some time very when come here just like long make
    many more only over such take than them well were what into also each which their there
    these those then about would could should other after first where while being does doing
    because through between under again further once both same own most few nor off upon
    within without across per via onto""".split()
)


def depth(body: str) -> Dimension:
    words = {w.lower() for w in _WORD.findall(body)} - STOPWORDS
    found_headings = len(headings(body))
    paragraphs = sum(1 for block in re.split(r"\n[ \t]*\n", body) if len(block.strip()) >= 40)
    list_items = len(_LIST_ITEM.findall(body))
    structure = min(found_headings, 8) * 1.0 + min(paragraphs, 12) * 0.5 + min(list_items, 12) * 0.25
    word_part = saturate(len(words), DEPTH_WORDS_HALF)
    structure_part = saturate(structure, DEPTH_STRUCTURE_HALF)
    score = round(DEPTH_WORDS_SHARE * word_part + (1 - DEPTH_WORDS_SHARE) * structure_part, 3)
    reasons = (
        f"{len(words)} distinct content words → {word_part:.2f} (half credit at {DEPTH_WORDS_HALF:g})",
        (
            f"structure {structure:g} points ({found_headings} headings, {paragraphs} paragraphs, "
            f"{list_items} list items) → {structure_part:.2f} (half credit at {DEPTH_STRUCTURE_HALF:g})"
        ),
        f"{DEPTH_WORDS_SHARE:g} × words + {1 - DEPTH_WORDS_SHARE:g} × structure",
    )
    return Dimension("depth", score, reasons)


# -- authority ----------------------------------------------------------------------------
AUTHORITY_HALF = 3.0
_URL = re.compile(r"https?://[^\s<>()\"'`\]]+", re.IGNORECASE)
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+", re.IGNORECASE)
_ARXIV = re.compile(r"\barxiv:\s?\d{4}\.\d{4,5}", re.IGNORECASE)
_CITATION = re.compile(r"\[\d{1,3}(?:[,–-]\s?\d{1,3})*\]|\bet al\.|\(\w[\w-]+,? (?:19|20)\d\d[a-z]?\)")
_REFERENCES = re.compile(r"^#{1,6}[ \t]+(?:references|bibliography|sources|citations|further reading)\b",
                         re.IGNORECASE | re.MULTILINE)  # fmt: skip
META_AUTHOR = ("author", "authors", "creator", "byline")
META_SOURCE = ("source", "url", "source_url", "link", "site", "doi", "published", "publisher")


def authority(body: str, meta: dict[str, object], trusted: Sequence[str] = ()) -> Dimension:
    lowered = {str(k).lower(): v for k, v in meta.items()}
    meta_urls = [str(lowered[k]) for k in ("source", "url", "source_url", "link") if isinstance(lowered.get(k), str)]
    urls = _URL.findall(body) + [u for u in meta_urls if u.lower().startswith(("http://", "https://"))]
    hosts = sorted({_host(u) for u in urls} - {""})
    trusted_hosts = [h for h in hosts if _is_trusted(h, trusted)]
    dois = len(set(_DOI.findall(body))) + len(_ARXIV.findall(body)) + (1 if lowered.get("doi") else 0)
    citations = len(_CITATION.findall(body))
    references = 1 if _REFERENCES.search(body) else 0
    author = next((k for k in META_AUTHOR if lowered.get(k)), None)
    source = next((k for k in META_SOURCE if lowered.get(k)), None)
    signals = [
        ("web site linked|web sites linked", min(len(hosts), 5), 0.5),
        ("trusted site linked|trusted sites linked", min(len(trusted_hosts), 3), 2.0),
        ("DOI or arXiv id|DOIs or arXiv ids", min(dois, 3), 1.5),
        ("citation|citations", min(citations, 6), 0.5),
        ("References section", references, 1.0),
        (f"author metadata ({author})", 1 if author else 0, 1.5),
        (f"source metadata ({source})", 1 if source else 0, 1.0),
    ]
    points, reasons = _tally(signals)
    if trusted_hosts:
        reasons.append("trusted: " + ", ".join(trusted_hosts[:5]))
    elif hosts:
        reasons.append("sites: " + ", ".join(hosts[:5]))
    return Dimension("authority", saturate(points, AUTHORITY_HALF), _with_total(reasons, points, AUTHORITY_HALF))


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower().removeprefix("www.")


def _is_trusted(host: str, trusted: Sequence[str]) -> bool:
    """``docs.python.org`` matches itself and its subdomains; ``*.gov`` is a glob."""
    for pattern in trusted:
        pattern = pattern.strip().lower().removeprefix("www.")
        if not pattern:
            continue
        if any(ch in pattern for ch in "*?["):
            if fnmatchcase(host, pattern):
                return True
        elif host == pattern or host.endswith("." + pattern):
            return True
    return False


# -- shared -------------------------------------------------------------------------------
def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with fenced code blanked out (its lines are counted once, as a block)."""
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append("\n" * text.count("\n", start, end))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _tally(signals: list[tuple[str, int, float]]) -> tuple[float, list[str]]:
    """Sum ``count × points each``; a reason per signal found (``label`` is "one|many")."""
    points = 0.0
    reasons: list[str] = []
    for label, count, each in signals:
        if count:
            points += count * each
            one, _, many = label.partition("|")
            reasons.append(f"{count} {one if count == 1 else (many or one)} (+{count * each:g})")
    return points, reasons


def _with_total(reasons: list[str], points: float, half: float) -> tuple[str, ...]:
    if not reasons:
        return ("no signals found",)
    return (*reasons, f"{points:g} points → {saturate(points, half):.2f} (half credit at {half:g})")


