"""The study app's core: a private, local "NotebookLM" over the index — knowledge base,
grounded chat with citations and tools, saved conversations. No web code here; the web
adapter (:mod:`vaultseek.web`) calls :class:`Notebook`."""

from __future__ import annotations

from .chat import ChatRequest
from .notebook import Notebook

__all__ = ["ChatRequest", "Notebook"]
