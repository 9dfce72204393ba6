"""vaultseek: local-first hybrid search over note vaults and documents.

The public face: open an index, sync it, search it. Everything else is an implementation
module and may change. Names are resolved on first use (PEP 562) so that light entry points
(``vaultseek --help``, agent hooks) do not pay for numpy and the database layer at import.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not `from typing import …`: an agent hook would pay for typing

__version__ = "0.1.0"

_EXPORTS = {
    "Config": "config",
    "ConfigError": "errors",
    "Index": "engine",
    "IndexBusyError": "errors",
    "IndexCorruptError": "errors",
    "IndexNotFoundError": "errors",
    "IndexStatus": "records",
    "ModelError": "errors",
    "NoteResult": "records",
    "Progress": "records",
    "QueryError": "errors",
    "SearchRequest": "contract",
    "SearchResponse": "records",
    "SearchResult": "records",
    "SkippedFile": "records",
    "SyncReport": "records",
    "VaultNotFoundError": "errors",
    "VaultseekError": "errors",
    "load_config": "config",
    "open_index": "engine",
}

__all__ = [  # spelled out for the tools that read it; test_layout keeps it equal to _EXPORTS
    "Config",
    "ConfigError",
    "Index",
    "IndexBusyError",
    "IndexCorruptError",
    "IndexNotFoundError",
    "IndexStatus",
    "ModelError",
    "NoteResult",
    "Progress",
    "QueryError",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "SkippedFile",
    "SyncReport",
    "VaultNotFoundError",
    "VaultseekError",
    "__version__",
    "load_config",
    "open_index",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'vaultseek' has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)


if TYPE_CHECKING:
    from .config import Config, load_config
    from .contract import SearchRequest
    from .engine import Index, open_index
    from .errors import (
        ConfigError,
        IndexBusyError,
        IndexCorruptError,
        IndexNotFoundError,
        ModelError,
        QueryError,
        VaultNotFoundError,
        VaultseekError,
    )
    from .records import (
        IndexStatus,
        NoteResult,
        Progress,
        SearchResponse,
        SearchResult,
        SkippedFile,
        SyncReport,
    )
