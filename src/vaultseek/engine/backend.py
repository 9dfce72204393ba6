"""Where an index lives: its store opened on SQLite or PostgreSQL, the database's failures
named as vaultseek errors, its one-writer lock, its size and its description in ``status``.

The PostgreSQL backend's modules (and the driver), and the writer lock's (``fcntl``,
``shlex``), are imported only by an index that uses them: a fresh search of a SQLite index
loads neither.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from ..storage import db
from ..storage.migrations import migrate
from ..storage.store import Store

if TYPE_CHECKING:
    from ..storage.postgres.store import PgStore
    from ..storage.writer_lock import WriterLock


ErrorScope = Callable[[], AbstractContextManager[None]]
"""Makes a ``with`` block in which database failures become vaultseek errors naming the index
(an index's bound :func:`database_errors`)."""


class OpenStore(NamedTuple):
    """What :func:`open_store` opened."""

    store: Store
    schema_version: int
    read_only: bool
    """Open for reading only: asked for, or (SQLite) this user cannot write the file."""


def open_store(
    db_path: Path, *, database_url: str | None, collection: str, create: bool, read_only: bool
) -> OpenStore:
    """The index's store: in the PostgreSQL database at ``database_url`` (its ``collection``)
    when there is one, else the SQLite file ``db_path``, created if ``create``; migrated to
    the current schema unless opened read-only."""
    if database_url is not None:
        store = _open_postgres(database_url, collection, db_path, read_only=read_only)
        return OpenStore(store, store.schema_version, read_only)
    conn = db.open_connection(db_path, create=create, read_only=read_only)
    try:
        with database_errors(db_path, None):
            version = migrate(conn, read_only=db.is_read_only(conn))
    except BaseException:
        conn.close()
        raise
    return OpenStore(Store(conn), version, db.is_read_only(conn))


def _open_postgres(url: str, collection: str, db_path: Path, *, read_only: bool) -> PgStore:
    """The collection's store in the PostgreSQL database at ``url`` (created on first use,
    with the ``vector`` extension, unless ``read_only``)."""
    from ..storage.postgres.connection import connect, ensure_pgvector
    from ..storage.postgres.store import PgStore

    # The index lives in the database; local state beside db_path (the deep job's lock and
    # log, the study database) gets a private folder.
    db_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conn = connect(url, read_only=read_only)
    try:
        with database_errors(db_path, url):
            if not read_only:
                ensure_pgvector(conn)
            return PgStore(conn, collection, read_only=read_only)
    except BaseException:
        conn.close()
        raise


@contextmanager
def database_errors(db_path: Path, database_url: str | None) -> Iterator[None]:
    """Re-raise database failures (locked, read-only, damaged, a server gone, …) as vaultseek
    errors that name the index (the PostgreSQL database at ``database_url``, else the SQLite
    file ``db_path``); anything else passes through untouched."""
    try:
        yield
    except Exception as exc:
        if database_url is not None:
            from ..storage.postgres.connection import translate

            translated = translate(exc, database_url)
        else:
            translated = db.translate(exc, db_path)
        if translated is exc:
            raise
        raise translated from exc


def _on_postgres(store: Store) -> TypeGuard[PgStore]:
    """Whether ``store`` is the PostgreSQL backend's (checked by name, so that asking does not
    import that backend)."""
    return store.backend == "postgresql"


def writer_lock_of(store: Store, db_path: Path) -> WriterLock:
    """The index's one-writer lock: a backend on a database server provides its own (e.g. an
    advisory lock); a SQLite index's is a lock file beside ``db_path``, its module imported by
    the first sync that takes it rather than by every search."""
    if _on_postgres(store):
        return store.sync_lock

    def lock(**kwargs: Any) -> AbstractContextManager[bool]:
        from ..storage.writer_lock import file_writer_lock

        return file_writer_lock(db_path)(**kwargs)

    return lock


def stored_bytes(store: Store, db_path: Path) -> int:
    """How much room the index takes: its collection's tables and indexes on PostgreSQL, the
    SQLite file and its write-ahead log otherwise."""
    if _on_postgres(store):
        return sum(store.sizes().values())
    return sum(os.path.getsize(p) for p in (db_path, Path(f"{db_path}-wal")) if os.path.exists(p))


def describe_backend(store: Store, db_path: Path, database_url: str | None) -> dict[str, str]:
    """Where the index lives, for ``status``: the backend and, on PostgreSQL, the database
    (without its password), collection, server and pgvector versions, size and how vectors
    are searched."""
    if not _on_postgres(store) or database_url is None:
        return {"backend": "sqlite"}
    from ..storage.postgres.connection import display_url, server_info
    from ..storage.postgres.store import HNSW_MIN_CHUNKS

    with database_errors(db_path, database_url):
        server = server_info(store.pg)
        size = sum(store.sizes().values())
        hnsw = store.vector_index_exists()
    return {
        "backend": "postgresql",
        "database": display_url(database_url),
        "collection": store.collection,
        "server": server.version,
        "pgvector": server.pgvector or "not installed",
        "size": f"{size / 1e6:.1f} MB",
        "vectors": "HNSW index" if hnsw else f"exact, in memory (HNSW from {HNSW_MIN_CHUNKS:,} chunks)",
    }
