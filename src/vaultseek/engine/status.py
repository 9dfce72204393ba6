"""What ``status`` reports about an index: its counts, size, schema, skipped and failed
files, OCR totals, and its deep tier's status (``deep.py``).

The report types are imported here, when a status is asked for: a search builds none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..index.names import shown_path
from ..storage.store import Store
from .backend import stored_bytes
from .paths import shown_skip

if TYPE_CHECKING:
    from ..config import Config
    from ..reports import DeepStatus, IndexStatus


def index_status(
    store: Store, config: Config, *, db_path: Path, schema_version: int, deep: DeepStatus | None
) -> IndexStatus:
    """The status of the index in ``store`` (kept at ``db_path``, or beside it on PostgreSQL),
    with ``deep`` its deep tier's (None: the tier is off)."""
    from ..index.sources import is_external_symlink  # standard library only
    from ..reports import IndexStatus

    counts = store.counts()
    ocr_pages, ocr_pending, ocr_over_limit = store.ocr_totals()
    skipped = tuple(shown_skip(item) for item in store.skipped_files())
    return IndexStatus(
        vault=str(config.vault),
        db_path=str(db_path),
        files=counts["files"],
        chunks=counts["chunks"],
        vectors=counts["vectors"],
        db_bytes=stored_bytes(store, db_path),
        model=store.get_meta("model_name"),
        model_fingerprint=store.get_meta("model_fingerprint"),
        last_indexed=store.get_meta("last_indexed"),
        skipped=skipped,
        schema_version=schema_version,
        documents=store.document_counts(),
        failed_documents=tuple(shown_skip(item) for item in store.skipped_files(documents_only=True)),
        textless_documents=tuple(shown_path(path) for path in store.textless_documents()),
        ocr_pages=ocr_pages,
        ocr_pending=ocr_pending,
        ocr_over_limit=ocr_over_limit,
        ocr_max_pages=config.ocr_max_pages_per_document,
        deep=deep,
        external_symlinks=sum(1 for item in skipped if is_external_symlink(item.reason)),
        follow_external_symlinks=config.follow_external_symlinks,
    )
