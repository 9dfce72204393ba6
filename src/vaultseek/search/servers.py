"""The model servers a search may ask, built from the settings: the reranker (``rerank``,
``rerank_url``) and query expansion's chat model (``expand``, ``llm_url``, ``llm_model``).

The HTTP clients (``llm/``) are imported here, on the first search that needs one, so a
search that asks no model loads no HTTP library; installed without it, the builder raises
:class:`~vaultseek.errors.MissingExtraError`, which the search turns into a notice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Config
from .expansion import Expander, ExpansionCache
from .rerank import RerankerLike

CACHE_SUFFIX = ".expansions.json"
"""The expansion cache sits beside the index: ``<index file>.expansions.json``."""


def open_reranker(config: Config) -> RerankerLike:
    """The reranker ``config.rerank`` names (not "off"), called synchronously with
    ``model_timeout`` as its limit."""
    from ..llm import create_client
    from ..llm.rerankers import Blocking, ChatReranker, Reranker, RerankServer

    kind, _, model = config.rerank.partition(":")
    chosen: Reranker
    if kind == "chat":
        chosen = ChatReranker(create_client(config))
    else:
        chosen = RerankServer(
            kind, url=config.rerank_url, model=model.strip() or None, timeout=config.model_timeout
        )
    return Blocking(chosen, timeout=config.model_timeout)


def open_expander(config: Config, index_path: Path | None) -> Expander:
    """Query expansion through the configured chat model, cached beside ``index_path`` (None:
    no cache)."""
    from ..llm import create_client
    from ..llm.bridge import reply_text, run_sync

    client = create_client(config)

    def ask(messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
        what = f"the chat model {client.model} at {client.url}"
        return run_sync(
            reply_text(client, messages, format=schema), timeout=config.model_timeout, what=what
        )

    cache = (
        ExpansionCache(index_path.with_name(index_path.name + CACHE_SUFFIX))
        if index_path is not None
        else None
    )
    return Expander(ask, f"{client.backend}:{client.model}", cache)
