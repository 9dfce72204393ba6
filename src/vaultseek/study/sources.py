"""Retrieved chunks as numbered sources: what the model reads (``[1] path · p. 3``) and what
the UI shows as citation cards (path, section, page/slide, snippet, chunk id)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..records import SearchResult

CHARS_PER_TOKEN = 4
SOURCE_CHARS = 1_800
"""At most this much of a chunk goes into the prompt."""


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

    def citation(self) -> dict[str, Any]:
        """The ``metadata`` envelope's shape of a source."""
        return {
            "n": self.number, "path": self.path, "section": self.section, "location": self.location,
            "page": (self.location or {}).get("page"), "slide": (self.location or {}).get("slide"),
            "label": self.label, "snippet": self.snippet, "chunk_id": self.chunk_id,
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

    def add(self, result: SearchResult) -> Source:
        if result.chunk_id in self._by_chunk:
            return self._by_chunk[result.chunk_id]
        label = result.location.label() if result.location else result.section
        source = Source(
            number=len(self.items) + 1, path=result.path, section=result.section,
            location=result.location.to_dict() if result.location else None, label=label,
            snippet=result.snippet, text=result.text or result.snippet, chunk_id=result.chunk_id,
        )  # fmt: skip
        self.items.append(source)
        self._by_chunk[result.chunk_id] = source
        return source

    def add_within(self, results: list[SearchResult] | tuple[SearchResult, ...], budget_tokens: int) -> list[Source]:
        """Add results, best first, while their prompt text fits ``budget_tokens`` (the
        first always fits, shortened by the prompt cap)."""
        added: list[Source] = []
        used = 0
        for result in results:
            cost = min(len(result.text or result.snippet), SOURCE_CHARS) // CHARS_PER_TOKEN + 20
            if added and used + cost > budget_tokens:
                break
            added.append(self.add(result))
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
    blocks = "\n\n".join(s.prompt_block() for s in sources) or "(no matching sources were found)"
    return SYSTEM_PROMPT.format(sources=blocks, tools=TOOLS_HINT if tools else "")
