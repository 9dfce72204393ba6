"""The study app's one object: a knowledge base, a chat model and saved conversations over
one vault's index. The web app (and anything else) calls this, never the parts directly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..config import Config
from ..engine import Index
from ..llm import ChatClient, create_client
from .chat import Chat, ChatRequest
from .hub import StudyHub
from .library import KnowledgeBase
from .privacy import connection_report, deep_report, media_report, peers
from .storage import StudyStore, study_db_path


class Notebook:
    def __init__(self, config: Config, index_factory: Callable[[], Index], *, client: ChatClient | None = None) -> None:
        assert config.db is not None
        self.config = config
        self.store = StudyStore(study_db_path(config.db))
        self.kb = KnowledgeBase(config, index_factory, self.store)
        self.client = client or create_client(config)
        self.chat = Chat(config, self.kb, self.store, self.client)
        self.hub = StudyHub(config, self.kb, self.store, self.client)
        self.running: dict[str, asyncio.Event] = {}

    def close(self) -> None:
        self.kb.close()
        self.store.close()

    # -- chat ---------------------------------------------------------------------------
    def open(self, request: ChatRequest) -> str:
        """Check the request (a bad scope is a 400, not a broken stream) and pick its
        conversation. It reads the index and writes the study database: run it off the event
        loop, then :meth:`register` the answer's stop switch on it."""
        self.kb.scope_filter(request.scope)
        return self.chat.open_conversation(request)

    def register(self, conversation_id: str) -> asyncio.Event:
        """The conversation's stop switch, on the event loop; a running answer in the same
        conversation is stopped."""
        stop = asyncio.Event()
        previous = self.running.get(conversation_id)
        if previous is not None:
            previous.set()  # one answer at a time per conversation: a new question stops the old
        self.running[conversation_id] = stop
        return stop

    async def answer(self, request: ChatRequest, conversation_id: str, stop: asyncio.Event) -> AsyncIterator[dict[str, Any]]:
        try:
            async for item in self.chat.answer(request, conversation_id, stop):
                yield item
        finally:
            if self.running.get(conversation_id) is stop:
                del self.running[conversation_id]

    def stop(self, conversation_id: str) -> bool:
        event = self.running.get(conversation_id)
        if event is None:
            return False
        event.set()
        return True

    # -- privacy ------------------------------------------------------------------------
    def privacy(self, app_ports: set[int]) -> dict[str, Any]:
        status = self.kb.status()
        transport = getattr(self.client, "transport", None)
        host = getattr(transport, "host", "") or ""
        port = getattr(transport, "port", 0) or 0
        return {
            "documents": sum(status["documents"].values()),
            "notes": status["files"] - sum(status["documents"].values()),
            "chunks": status["chunks"],
            "llm": {"backend": self.client.backend, "url": self.client.url, "model": self.client.model},
            "network": connection_report(llm_host=host, llm_port=port, app_ports=app_ports, peers=peers(self.config)),
            "media": media_report(self.config, llm_url=self.client.url),
            "deep": deep_report(self.config),
            "telemetry": "none: vaultseek sends nothing anywhere; assets are served from this process",
        }
