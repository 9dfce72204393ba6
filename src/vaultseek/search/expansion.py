"""Query expansion: a chat model turns a question into sub-queries, and each is searched.

The configured chat model (``llm_url``, ``llm_model``) is asked, in the vault's language, for
JSON: a few keyword sub-queries (searched with BM25), a few rephrasings (searched by meaning)
and a short hypothetical answer passage (searched by meaning: an answer resembles the notes
that hold it more than the question does). The reply is read tolerantly
(``llm/structured.py``); a reply with nothing usable in it is a
:class:`~vaultseek.errors.ModelReplyError`, and the search answers without expansion.

Each sub-query's list joins the hybrid's fused ranking by weighted Reciprocal Rank Fusion
(:func:`merge_expansion`): the query's own ranking counts as much as all the sub-queries
together, and BM25's best section keeps its top-3 place (``rerank.keep_exact_match``).
What was searched is in the response (``SearchResponse.expansion``).

Expansions are cached per (query, model, language) in a small JSON file beside the index, so
asking again costs nothing. The query is scrubbed of credentials before it is sent or cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import ModelReplyError
from ..records import Expansion
from .fusion import Fused, rrf
from .rerank import keep_exact_match

MAX_SUBQUERIES = 3
"""Keyword sub-queries and rephrasings kept, each."""
MAX_SUBQUERY_CHARS = 200
MAX_PASSAGE_CHARS = 1_200
CACHE_ENTRIES = 2_000
"""The cache keeps this many expansions, the oldest dropped first."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "lexical": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_SUBQUERIES},
        "semantic": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_SUBQUERIES},
        "passage": {"type": "string"},
    },
    "required": ["lexical", "semantic", "passage"],
}
PROMPT = """You help search a personal collection of notes{language}.
Rewrite the user's query for the search engine: keyword queries a matching note would contain,
the query rephrased as full questions, and two or three sentences a note answering it could
contain. Reply with JSON only. For the query "how often should I water tomatoes" a good reply is:
{{"lexical": ["tomato watering", "water tomatoes schedule"],
 "semantic": ["How frequently do tomato plants need water?"],
 "passage": "Water tomatoes deeply two or three times a week, more often in hot weather."}}
Give at most {count} lexical and {count} semantic entries{write_in}."""
LANGUAGE_NAMES = {
    "german": "German", "spanish": "Spanish", "french": "French", "italian": "Italian",
    "portuguese": "Portuguese", "dutch": "Dutch",
}  # fmt: skip


def prompt(language: str | None) -> str:
    """The system prompt, asking for the vault's language when it is known."""
    named = LANGUAGE_NAMES.get(language or "")
    return PROMPT.format(
        language=f" written in {named}" if named else "",
        count=MAX_SUBQUERIES,
        write_in=f"; write them in {named}" if named else "",
    )


def parse_expansion(text: str) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """Keyword sub-queries, rephrasings and the passage a reply holds; raises
    :class:`ModelReplyError` when it holds none of them. Entries that are not text, blank or
    repeated are dropped; each list is trimmed to :data:`MAX_SUBQUERIES`."""
    from ..llm.structured import load_value

    value, _problems = load_value(text)
    found = value if isinstance(value, dict) else {}

    def entries(*keys: str) -> tuple[str, ...]:
        out: list[str] = []
        for key in keys:
            raw = found.get(key)
            for entry in [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else ():
                if (
                    isinstance(entry, str)
                    and entry.strip()
                    and entry.strip().lower() not in {e.lower() for e in out}
                ):
                    out.append(" ".join(entry.split())[:MAX_SUBQUERY_CHARS])
        return tuple(out[:MAX_SUBQUERIES])

    lexical = entries("lexical", "keywords")
    semantic = entries("semantic", "questions")
    raw_passage = found.get("passage", found.get("answer"))
    passage = (
        " ".join(raw_passage.split())[:MAX_PASSAGE_CHARS]
        if isinstance(raw_passage, str) and raw_passage.strip()
        else None
    )
    if not lexical and not semantic and passage is None:
        raise ModelReplyError(
            f"the chat model's query expansion held no sub-queries ({text.strip()[:100]!r})",
            hint="a model that follows JSON instructions (e.g. qwen3:4b), or expand = false",
        )
    return lexical, semantic, passage


class ExpansionCache:
    """Expansions by (query, model, language) in one JSON file; a file that cannot be read
    or written is no cache (the expansion is asked for again), never an error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] | None = None

    @staticmethod
    def key(query: str, model: str, language: str | None) -> str:
        return hashlib.sha256(f"{model}\0{language or ''}\0{query}".encode()).hexdigest()

    def _loaded(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_text("utf-8"))
            except (OSError, ValueError):
                data = {}
            self._entries = data if isinstance(data, dict) else {}
        return self._entries

    def find(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._loaded().get(key)
            return found if isinstance(found, dict) else None

    def store(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            entries = self._loaded()
            entries.pop(key, None)
            entries[key] = value
            while len(entries) > CACHE_ENTRIES:
                entries.pop(next(iter(entries)))
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                temporary.write_text(json.dumps(entries, ensure_ascii=False), "utf-8")
                os.replace(temporary, self.path)
            except OSError:
                temporary.unlink(missing_ok=True)


Ask = Callable[[list[dict[str, str]], dict[str, Any]], str]
"""Sends chat messages with a JSON schema to the chat model and returns its whole reply."""


class Expander:
    """Query → :class:`Expansion`, from the cache or the chat model (``ask``)."""

    def __init__(self, ask: Ask, model: str, cache: ExpansionCache | None) -> None:
        self.ask = ask
        self.model = model
        self.cache = cache

    def __call__(self, query: str, languages: Sequence[str]) -> Expansion:
        """The expansion of ``query`` (already scrubbed). Raises the chat client's errors and
        :class:`ModelReplyError`; a failure is not cached."""
        language = languages[0] if languages else None
        started = time.perf_counter()
        key = ExpansionCache.key(query, self.model, language)
        found = self.cache.find(key) if self.cache is not None else None
        if found is not None:
            return replace(
                Expansion.from_dict(found), cached=True, ms=(time.perf_counter() - started) * 1000
            )
        messages = [
            {"role": "system", "content": prompt(language)},
            {"role": "user", "content": query},
        ]
        lexical, semantic, passage = parse_expansion(self.ask(messages, SCHEMA))
        expansion = Expansion(
            self.model,
            lexical,
            semantic,
            passage,
            language,
            False,
            (time.perf_counter() - started) * 1000,
        )
        if self.cache is not None:
            self.cache.store(key, expansion.to_dict())
        return expansion


SUBQUERY_WEIGHT = 1.0
"""The weight of all sub-query lists together in :func:`merge_expansion`, shared among them;
the query's own ranking weighs the same."""


def merge_expansion(
    fused: Sequence[Fused], lists: Mapping[str, Sequence[int]], *, k: int = 60
) -> list[Fused]:
    """The hybrid's ranking ``fused`` and the sub-queries' ``lists`` (name → chunk ids best
    first) fused by weighted RRF. Items keep their ranks in the hybrid's lists and carry
    ``signals["expansion"]``: the share of their new score the sub-queries gave. BM25's best
    item stays in the top 3 where the hybrid had it there."""
    used = {name: items for name, items in lists.items() if items}
    if not used:
        return list(fused)
    weights = {"query": SUBQUERY_WEIGHT} | {name: SUBQUERY_WEIGHT / len(used) for name in used}
    merged = rrf({"query": [f.item for f in fused], **used}, k=k, weights=weights)
    before = {f.item: f for f in fused}
    out = []
    for m in merged:
        own = before.get(m.item)
        from_query = weights["query"] / (k + m.ranks["query"]) if "query" in m.ranks else 0.0
        share = round(1 - from_query / m.score, 6) if m.score > 0 else 0.0
        ranks = own.ranks if own is not None else {}
        signals = {**(own.signals if own is not None else {}), "expansion": share}
        out.append(Fused(m.item, m.score, ranks, signals))
    return keep_exact_match(list(fused), out)
