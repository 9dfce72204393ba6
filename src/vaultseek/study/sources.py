"""Retrieved chunks as numbered sources: what the model reads (``[1] path · p. 3``) and what
the UI shows as citation cards (path, section, page/slide, snippet, chunk id, relevance).

Only passages similar enough to the question become sources (:func:`relevant`): the fused
search score is normalised per query, so an unrelated question's best hit scores as high as a
related one's, but the cosine similarity of a passage to the question does not. A question
with nothing relevant gets no sources, and the model is told so instead of being handed six
unrelated notes to cite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..records import SearchResult

if TYPE_CHECKING:
    from ..engine import Index

CHARS_PER_TOKEN = 4
SOURCE_CHARS = 1_800
"""At most this much of a chunk goes into the prompt."""
MIN_RELEVANCE = 0.45
"""The cosine similarity (static model) a passage needs to the question to be a source. Chosen
on the tune halves of five judged collections by ``python -m benchmarks.chatrelevance``
(docs/study.md has the table)."""
MIN_DEEP_RELEVANCE = 0.84
"""The same by the deep model, for passages that have a deep vector: the agent hook's
threshold (``benchmarks.deeprelevance``), whose cosines sit on the deep model's own scale."""
LEXICAL_FALLBACK = 3
"""With no vectors to judge by (model missing or changed), the passages whose words rank in the
lexical list's top 3 are kept."""
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,400}>")


def plain_snippet(snippet: str) -> str:
    """A snippet with HTML tags taken out (a note's inline ``<span class='x'>`` is markup, not
    text to show); the UI inserts it as text either way."""
    return " ".join(_TAG.sub(" ", snippet).split()) if "<" in snippet else snippet


def relevant(index: Index, question: str, results: list[SearchResult] | tuple[SearchResult, ...]) -> list[tuple[SearchResult, float | None]]:
    """The ``results`` similar enough to ``question`` to be sources, best first, each with its
    cosine to the question (None when kept by the lexical fallback)."""
    ids = [r.chunk_id for r in results]
    deep = index.deep_similarities(question, ids)
    static = index.similarities(question, [i for i in ids if i not in deep])
    if not deep and not static:
        return [(r, None) for r in results if r.bm25_rank is not None and r.bm25_rank <= LEXICAL_FALLBACK]
    kept: list[tuple[SearchResult, float | None]] = []
    for r in results:
        if r.chunk_id in deep:
            if deep[r.chunk_id] >= MIN_DEEP_RELEVANCE:
                kept.append((r, round(deep[r.chunk_id], 3)))
        elif static.get(r.chunk_id, -1.0) >= MIN_RELEVANCE:
            kept.append((r, round(static[r.chunk_id], 3)))
    return kept


@dataclass(frozen=True, slots=True)
class Source:
    number: int
    path: str
    section: str
    location: dict[str, Any] | None
    label: str
    snippet: str
    text: str
    chunk_id: int
    relevance: float | None = None

    def citation(self) -> dict[str, Any]:
        """The ``metadata`` envelope's shape of a source."""
        return {
            "n": self.number, "path": self.path, "section": self.section, "location": self.location,
            "page": (self.location or {}).get("page"), "slide": (self.location or {}).get("slide"),
            "label": self.label, "snippet": plain_snippet(self.snippet), "chunk_id": self.chunk_id,
            "relevance": self.relevance,
        }  # fmt: skip

    def prompt_block(self) -> str:
        where = f"{self.path} · {self.label}" if self.label else self.path
        return f"[{self.number}] {where}\n{self.text[:SOURCE_CHARS]}"


class SourceList:
    """Sources of one answer, numbered in the order found (tools add more later); a chunk
    found twice keeps its first number."""

    def __init__(self) -> None:
        self.items: list[Source] = []
        self._by_chunk: dict[int, Source] = {}

    def add(self, result: SearchResult, relevance: float | None = None) -> Source:
        if result.chunk_id in self._by_chunk:
            return self._by_chunk[result.chunk_id]
        label = result.location.label() if result.location else result.section
        source = Source(
            number=len(self.items) + 1, path=result.path, section=result.section,
            location=result.location.to_dict() if result.location else None, label=label,
            snippet=result.snippet, text=result.text or result.snippet, chunk_id=result.chunk_id,
            relevance=relevance,
        )  # fmt: skip
        self.items.append(source)
        self._by_chunk[result.chunk_id] = source
        return source

    def add_within(self, results: list[SearchResult] | tuple[SearchResult, ...], budget_tokens: int,
                   relevance: dict[int, float | None] | None = None) -> list[Source]:  # fmt: skip
        """Add results, best first, while their prompt text fits ``budget_tokens`` (the
        first always fits, shortened by the prompt cap); ``relevance`` gives each chunk's
        similarity to the question, shown with its citation."""
        added: list[Source] = []
        used = 0
        for result in results:
            cost = min(len(result.text or result.snippet), SOURCE_CHARS) // CHARS_PER_TOKEN + 20
            if added and used + cost > budget_tokens:
                break
            added.append(self.add(result, (relevance or {}).get(result.chunk_id)))
            used += cost
        return added

    def citations(self) -> list[dict[str, Any]]:
        return [s.citation() for s in self.items]


SYSTEM_PROMPT = """You are a careful study assistant. Answer the user's question using ONLY the \
numbered sources below, which come from the user's own documents and notes. Cite every claim \
with the source number in square brackets, like [1] or [2][3]. If the sources do not contain \
the answer, say so plainly instead of guessing.{tools}

Sources:
{sources}"""

TOOLS_HINT = """ You may call tools: search the knowledge base for more sources, list or \
summarise documents, compare two documents, calculate, or read the current time."""


def system_prompt(sources: list[Source], *, tools: bool) -> str:
    blocks = "\n\n".join(s.prompt_block() for s in sources) or (
        "(nothing in the user's documents is relevant to this question: say so, and answer only "
        "if it needs no sources, such as a greeting or a request to rephrase)"
    )
    return SYSTEM_PROMPT.format(sources=blocks, tools=TOOLS_HINT if tools else "")
