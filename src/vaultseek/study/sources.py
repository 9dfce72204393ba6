"""Retrieved chunks as numbered sources: what the model reads (``[1] path · p. 3``) and what
the UI shows as citation cards (path, section, page/slide, snippet, chunk id, relevance).

Only passages the search judges relevant become sources (:func:`relevant`): the fused search
score is normalised per query, so an unrelated question's best hit scores as high as a related
one's, but the calibrated probability of relevance each result carries
(``search/relevance.py``) does not. A question with nothing relevant gets no sources, and the
model is told so instead of being handed six unrelated notes to cite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..records import SearchResponse, SearchResult
from ..search.relevance import RELEVANT

CHARS_PER_TOKEN = 4
SOURCE_CHARS = 1_800
"""At most this much of a chunk goes into the prompt."""
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,400}>")


def plain_snippet(snippet: str) -> str:
    """A snippet with HTML tags taken out (a note's inline ``<span class='x'>`` is markup, not
    text to show); the UI inserts it as text either way."""
    return " ".join(_TAG.sub(" ", snippet).split()) if "<" in snippet else snippet


def relevant(response: SearchResponse) -> list[tuple[SearchResult, float | None]]:
    """The results of a search that are relevant enough to be sources, best first, each with
    its probability of relevance; none when the search found nothing that matches."""
    if response.no_match:
        return []
    return [
        (r, round(r.relevance, 3)) for r in response.results if r.relevance is not None and r.relevance >= RELEVANT
    ]


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
