"""Turning what a user typed into an FTS5 query that cannot fail, and choosing snippets.

FTS5's query language gives meaning to ``"``, ``*``, ``-``, ``:``, ``^``, ``(``, ``AND``,
``OR``, ``NOT``, ``NEAR``. Users type ``C++``, ``"unbalanced``, ``-flag`` and ``§3 Absatz 2``
and mean none of it. So we never pass their text through: each whitespace-separated piece is
reduced to the word tokens FTS5's ``unicode61`` tokenizer would see, and emitted as a quoted
phrase (``_rrf_fuse`` → ``"rrf fuse"``, matching the same adjacent tokens in the index). The
only syntax kept is a trailing ``*`` for prefix search (``auth*``). The result contains
nothing but quoted phrases, ``*`` and ``AND``/``OR``, so it always parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CJK_RANGES = (
    (0x1100, 0x11FF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F),
)  # fmt: skip
"""Han, Hiragana, Katakana (incl. half-width), Hangul, as inclusive code point ranges: scripts
written without spaces between words (Korean has spaces, but particles cling to the words)."""
_CJK_RUN = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in CJK_RANGES) + "]+")


def index_text(text: str) -> str:
    """What the full-text index receives for ``text`` (queries go through it too).

    FTS5's ``unicode61`` tokenizer takes a whole run of CJK characters as one token, so a
    two-character word inside a sentence could never be found. Each run is rewritten as its
    overlapping character pairs plus its last character (``東京大学`` → ``東京 京大 大学 学``):
    any word of two or more characters is then the phrase of its pairs, and a single
    character is a prefix of a pair or the final single. ``ß`` becomes ``ss``, so *Straße*
    finds *Strasse* (the tokenizer already folds ä/ö/ü to a/o/u)."""
    if "ß" in text or "ẞ" in text:
        text = text.replace("ß", "ss").replace("ẞ", "SS")
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(_split_run, text)


def _split_run(match: re.Match[str]) -> str:
    run = match.group()
    pairs = [run[i : i + 2] for i in range(len(run) - 1)]
    return " " + " ".join([*pairs, run[-1]]) + " "


WORD = re.compile(r"[^\W_]+")
"""A word as FTS5's ``unicode61`` tokenizer sees one: it splits on everything that is not a
letter, number or private-use character, and underscore is punctuation to it, so it is a
separator here too. Every module that splits text into words the way the index does uses it."""
MAX_TERMS = 64
"""Longer queries keep their first 64 distinct non-stopword pieces: a whole 60-word prompt
from an agent hook fits, and a 10 KB paste still costs a bounded amount of work."""


STOPWORDS = frozenset(
    """a an and are as at be but by can do does for from how i if in into is it its me my
    no not of on or our so that the their then there these this to was we what when where
    which who why will with you your der die das und ist nicht ein eine zu den mit von""".split()
)
"""Words dropped from a query that has other words: they match most chunks, so they add
nothing to the ranking but make FTS5 read huge posting lists (a 60 ms query becomes 2 ms)."""


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """The pieces of a query, ready to render as an FTS5 expression."""

    phrases: tuple[str, ...]
    """Each piece as a quoted FTS5 phrase, possibly with a trailing prefix ``*``; stopwords
    are left out unless the query has nothing else."""
    terms: tuple[str, ...]
    """Lower-cased word tokens, for choosing snippets."""

    @property
    def empty(self) -> bool:
        return not self.phrases

    def match_all(self) -> str:
        return " AND ".join(self.phrases)

    def match_any(self) -> str:
        return " OR ".join(self.phrases)


def _query_tokens(piece: str) -> list[str]:
    """Word tokens of an ``index_text``-ed piece; a CJK run's trailing single is dropped from
    a multi-character word, so the phrase is just its pairs (found anywhere in a run)."""
    tokens = WORD.findall(piece)
    out: list[str] = []
    for i, token in enumerate(tokens):
        follows_pair = i > 0 and len(tokens[i - 1]) == 2 and tokens[i - 1][1] == token
        if _is_single_cjk(token) and follows_pair:
            continue
        out.append(token)
    return out


def _is_single_cjk(token: str) -> bool:
    return len(token) == 1 and bool(_CJK_RUN.match(token))


def parse_query(text: str, *, max_terms: int = MAX_TERMS) -> LexicalQuery:
    """Split user text into safe FTS5 phrases; never raises."""
    phrases: list[str] = []
    stop_phrases: list[str] = []
    terms: list[str] = []
    seen: set[str] = set()
    for raw in text.split():
        piece = index_text(raw)
        tokens = _query_tokens(piece)
        if not tokens:
            continue
        prefix = raw.endswith("*") or (len(tokens) == 1 and _is_single_cjk(tokens[0]))
        phrase = '"' + " ".join(tokens) + '"' + (" *" if prefix else "")
        key = phrase.lower()
        if key in seen:
            continue
        seen.add(key)
        if not prefix and len(tokens) == 1 and key.strip('"') in STOPWORDS:
            stop_phrases.append(phrase)
            continue
        phrases.append(phrase)
        terms.extend(t.lower() for t in tokens)
        if len(phrases) >= max_terms:
            break
    if not phrases:  # "to be or not to be": all stopwords, so they are the query
        phrases = stop_phrases[:max_terms]
        terms = [p.strip('"').lower() for p in phrases]
    return LexicalQuery(tuple(phrases), tuple(dict.fromkeys(terms)))


SNIPPET_CHARS = 240
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)


def _stems(terms: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({t[: max(3, len(t) - 2)] for t in terms if t})


def _word_starts(flat: str, stems: tuple[str, ...]) -> list[int]:
    """Offsets where a word starting with one of ``stems`` begins (case-insensitive).

    ``str.find`` per stem over a lower-cased copy: a C-level scan, where testing every word
    in Python made snippets 90% of a 100-result search."""
    low = flat.lower()
    if len(low) != len(flat):  # a rare character changed length when lower-cased
        low = "".join(ch.lower()[:1] or ch for ch in flat)
    found = set()
    for stem in stems:
        at = low.find(stem)
        while at >= 0:
            if at == 0 or not low[at - 1].isalnum():
                found.add(at)
            at = low.find(stem, at + 1)
    return sorted(found)


def make_snippet(text: str, terms: tuple[str, ...], *, width: int = SNIPPET_CHARS) -> str:
    """The ``width``-character window of ``text`` holding the most query-term matches.

    Terms match by prefix of a word (``rotat`` for ``rotate`` also hits ``rotating``), a cheap
    stand-in for the stemmer. Headings are dropped when there is body text to show instead.
    """
    body = _HEADING_LINE.sub(" ", text) if "#" in text else text
    flat = " ".join((body if body.strip() else text).split())  # str.split: 5× a regex here
    if len(flat) <= width:
        return flat
    hits = _word_starts(flat, _stems(terms))
    start = 0
    if hits:
        best, best_count, right = hits[0], 0, 0
        for left, pos in enumerate(hits):
            while right < len(hits) and hits[right] < pos + width - 40:
                right += 1
            if right - left > best_count:
                best, best_count = pos, right - left
        start = max(0, best - 40)
        if start:
            space = flat.find(" ", start)
            start = space + 1 if 0 <= space < best else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space > 0 else end
    return ("…" if start else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
