"""The tools the model may call while answering, bound to one request: its scope, its
numbered sources, its model. Results are short plain text the model reads; a tool that
fails returns the reason as text (the model can recover), never an exception."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import VaultseekError
from ..llm import ChatClient, Message, Text, ToolSpec
from ..records import SearchFilter
from .calculator import CalculatorError, calculate
from .library import KnowledgeBase
from .sources import SourceList

SPECS = [
    ToolSpec("search_knowledge_base", "Search the user's documents and notes (within the question's scope). "
             "Returns numbered sources to cite.",
             {"type": "object", "properties": {"query": {"type": "string", "description": "what to look for"},
                                               "k": {"type": "integer", "description": "how many results (1-8)"}},
              "required": ["query"]}),
    ToolSpec("list_documents", "List the documents in the knowledge base with type, size and category.",
             {"type": "object", "properties": {"category": {"type": "string", "description": "only this category"}}}),
    ToolSpec("summarise_document", "Summarise one document of the knowledge base.",
             {"type": "object", "properties": {"path": {"type": "string", "description": "the document's path"}},
              "required": ["path"]}),
    ToolSpec("compare_documents", "Compare two documents on a question.",
             {"type": "object", "properties": {"path_a": {"type": "string"}, "path_b": {"type": "string"},
                                               "question": {"type": "string"}},
              "required": ["path_a", "path_b", "question"]}),
    ToolSpec("calculator", "Evaluate an arithmetic expression, e.g. (12.5 * 4) / 3 or sqrt(2).",
             {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}),
    ToolSpec("current_time", "The current local date and time.", {"type": "object", "properties": {}}),
]  # fmt: skip
MAX_SUMMARY_CHARS = 12_000


@dataclass
class Toolbox:
    kb: KnowledgeBase
    scope: SearchFilter
    sources: SourceList
    client: ChatClient

    async def run(self, name: str, arguments: dict[str, Any]) -> str:
        handler = getattr(self, f"_tool_{name}", None)
        if handler is None or name not in {s.name for s in SPECS}:
            return f"error: there is no tool called {name!r}"
        try:
            return str(await handler(**arguments))
        except TypeError as exc:
            return f"error: wrong arguments for {name}: {exc}"
        except (VaultseekError, CalculatorError) as exc:
            return f"error: {exc}"

    async def _tool_search_knowledge_base(self, query: str, k: int = 5) -> str:
        k = max(1, min(int(k), 8))
        response = await asyncio.to_thread(self.kb.search, str(query), self.scope, view="chunks", k=k, syntax=False)
        found = [self.sources.add(r) for r in response.results]
        if not found:
            return "no results"
        return "\n\n".join(s.prompt_block()[:900] for s in found)

    async def _tool_list_documents(self, category: str | None = None) -> str:
        rows = await asyncio.to_thread(self.kb.documents)
        if category:
            rows = [r for r in rows if r.get("category") == category]
        lines = [f"{r['path']} ({r['kind']}, {r['chunks']} chunks{', ' + r['category'] if r.get('category') else ''})"
                 for r in rows if r["status"] == "indexed"][:60]  # fmt: skip
        return "\n".join(lines) or "the knowledge base is empty"

    async def _complete(self, prompt: str) -> str:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        parts = [e.text async for e in self.client.chat_stream(messages) if isinstance(e, Text)]
        return "".join(parts).strip()

    async def _tool_summarise_document(self, path: str) -> str:
        chunks = await asyncio.to_thread(self.kb.chunks, str(path))
        text = "\n\n".join(c["text"] for c in chunks)[:MAX_SUMMARY_CHARS]
        summary = await self._complete(f"Summarise this document ({path}) in a few sentences:\n\n{text}")
        return summary or "(the model returned no summary)"

    async def _tool_compare_documents(self, path_a: str, path_b: str, question: str) -> str:
        blocks = []
        for path in (str(path_a), str(path_b)):
            response = await asyncio.to_thread(self.kb.search, str(question), SearchFilter(paths=(path,)), view="chunks", k=3, syntax=False)
            if not response.results:
                return f"error: nothing in {path} matches the question (is the path right?)"
            blocks.append("\n\n".join(self.sources.add(r).prompt_block()[:1200] for r in response.results))
        return await self._complete(
            f"Compare the two documents on this question: {question}\n\nDocument A ({path_a}):\n{blocks[0]}"
            f"\n\nDocument B ({path_b}):\n{blocks[1]}\n\nCite the bracketed source numbers."
        )

    async def _tool_calculator(self, expression: str) -> str:
        return json.dumps({"expression": expression, "result": calculate(str(expression))})

    async def _tool_current_time(self) -> str:
        return datetime.now().astimezone().isoformat(timespec="seconds")
