"""The index schema, built by numbered migrations recorded in ``PRAGMA user_version``.

Append a new ``mNNN_*`` function to ``MIGRATIONS`` to change the schema; never edit one that
has shipped. Pending migrations run in one write transaction, so a crash leaves the database
at the version it had.

Three stores must agree at all times: ``chunks`` (the rows), ``chunks_fts`` (a contentless
FTS5 index: it holds what is *searched*, which for Chinese, Japanese and Korean text differs
from what is shown — see ``lexical.index_text`` — so the store writes its rows next to each
chunk in the same transaction, and the trigger below removes them with the chunk) and
``vectors`` (removed with their chunk by ``ON DELETE CASCADE``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import IndexAccessError, IndexCorruptError
from .db import FTS_TOKENIZER, Connection


def m001_initial(conn: Connection) -> None:
    conn.execute(
        f"""
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE files (
            id           INTEGER PRIMARY KEY,
            path         TEXT NOT NULL UNIQUE,   -- relative to the vault, '/' separated
            size         INTEGER NOT NULL,
            mtime_ns     INTEGER NOT NULL,
            content_hash TEXT,                   -- sha256 of the bytes; NULL if never read
            status       TEXT NOT NULL CHECK (status IN ('indexed', 'skipped')),
            error        TEXT,                   -- why it was skipped
            title        TEXT,
            type         TEXT,
            tags         TEXT NOT NULL DEFAULT '[]',     -- JSON list
            aliases      TEXT NOT NULL DEFAULT '[]',     -- JSON list
            indexed_at   TEXT NOT NULL
        );
        CREATE TABLE chunks (
            id              INTEGER PRIMARY KEY,
            file_id         INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            position        INTEGER NOT NULL,
            section         TEXT NOT NULL,
            heading_context TEXT NOT NULL,
            text            TEXT NOT NULL,
            embed_hash      BLOB NOT NULL        -- hash of what was embedded, to reuse vectors
        );
        CREATE INDEX chunks_by_file ON chunks(file_id, position);
        CREATE INDEX chunks_by_embed_hash ON chunks(embed_hash);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            text, section, heading_context,
            content='', contentless_delete=1,
            tokenize='{FTS_TOKENIZER}'
        );
        CREATE TRIGGER chunks_after_delete AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_fts WHERE rowid = old.id;
        END;
        CREATE TABLE vectors (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            vector   BLOB NOT NULL               -- int8 codes + float32 scale (store.py)
        );
        CREATE TABLE links (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            target  TEXT NOT NULL,
            heading TEXT,
            alias   TEXT,
            embed   INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX links_by_file ON links(file_id);
        CREATE INDEX links_by_target ON links(target);
        """
    )


def m002_documents(conn: Connection) -> None:
    """Documents (PDF, Office, HTML, CSV, …) beside the notes.

    * ``chunks.location``: where in its document a chunk comes from, as compact JSON
      (``{"page":3}``, ``{"slide":2}``, ``{"sheet":"Q1","row_start":2,"row_end":21}``); NULL for
      notes. One JSON column rather than a column per kind: each format cites differently, a
      new format needs no migration, and nothing ever filters on it in SQL — it is only carried
      to results.
    * ``files.kind``: ``note`` or the document type; a file whose kind changes (a ``.txt`` once
      read as a note) is re-processed. ``files.ocr_pages`` / ``ocr_pending``: pages whose text
      came from OCR, and pages that needed OCR but could not get it (retried on later runs).
    * ``ocr_checkpoints``: each OCRed page's text, committed as soon as the page is done, keyed
      by the document's content hash. An interrupted run (Ctrl-C, ``kill -9``) resumes from
      them; they are deleted in the transaction that stores the document's chunks.
    """
    conn.execute(
        """
        ALTER TABLE chunks ADD COLUMN location TEXT;
        ALTER TABLE files ADD COLUMN kind TEXT NOT NULL DEFAULT 'note';
        ALTER TABLE files ADD COLUMN ocr_pages INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE files ADD COLUMN ocr_pending INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE ocr_checkpoints (
            path         TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            page         INTEGER NOT NULL,       -- 1-based
            text         TEXT NOT NULL,          -- already scrubbed of credentials
            PRIMARY KEY (path, content_hash, page)
        ) WITHOUT ROWID;
        """
    )


def m003_note_metadata(conn: Connection) -> None:
    """What search filters and the title signal ask of a file, indexed.

    * ``frontmatter_fields``: one row per scalar of a note's frontmatter (each item of a
      list), key case-folded and nested keys dot-joined, value normalised by
      ``filters.field_value`` — so ``status:Done`` finds ``Status: done`` through the
      ``(key, value)`` index. ``value`` is NULL for a value too long to compare (the key is
      still there).
    * ``file_tags``: a note's tags case-folded, each with its parents (``a/b/c`` is stored as
      ``a``, ``a/b`` and ``a/b/c``), so a tag filter — nested tags included — is one indexed
      lookup rather than a JSON scan of every file (``files.tags`` keeps the tags as written).
    * ``file_names``: a file's title, aliases and file name, normalised by
      ``signals.name_key``, so a query that *is* a note's name finds it with one lookup.
    * indexes on ``files(kind)`` and ``files(mtime_ns)`` for the kind and date filters. Every
      index on the three new tables covers all their columns: a filter reads no table rows,
      whether it lists the files with a value or tests one file's rows per search hit.

    Existing indexes get the rows when ``sync.PIPELINE_VERSION`` makes the next run re-parse
    every file.
    """
    conn.execute(
        """
        CREATE TABLE frontmatter_fields (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            key     TEXT NOT NULL,
            value   TEXT
        );
        CREATE INDEX frontmatter_by_key ON frontmatter_fields(key, value, file_id);
        CREATE INDEX frontmatter_by_file ON frontmatter_fields(file_id, key, value);
        CREATE TABLE file_tags (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            tag     TEXT NOT NULL
        );
        CREATE INDEX file_tags_by_tag ON file_tags(tag, file_id);
        CREATE INDEX file_tags_by_file ON file_tags(file_id, tag);
        CREATE TABLE file_names (
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            name    TEXT NOT NULL
        );
        CREATE INDEX file_names_by_name ON file_names(name, file_id);
        CREATE INDEX file_names_by_file ON file_names(file_id);
        CREATE INDEX files_by_kind ON files(kind);
        CREATE INDEX files_by_mtime ON files(mtime_ns);
        """
    )


def m004_links(conn: Connection) -> None:
    """Resolved links: which file each stored link points at (see ``linking.py`` for the rule).

    * ``links.syntax``: ``wiki`` (``[[…]]``, ``![[…]]``) or ``markdown`` (``[text](file.md)``).
    * ``links.key``: the name the target is looked up by (its last path segment, Unicode-
      normalised and case-folded, without ``.md``).
    * ``links.resolved``: the vault-relative path of the file the link points at; ``via`` how
      it was found (``self``, ``path``, ``name``, ``alias``; ``none`` when dangling). ``via``
      is NULL until the link is resolved (links written since the last resolution).
    * ``link_names``: every name an indexed file can be linked by — its own (``alias`` '')
      and its aliases — under the same ``key``: a link only ever resolves to a file that shares
      its key, so resolving a few links reads a few rows, not the whole vault.
    * ``link_changes``: every file row inserted, deleted or renamed, written by triggers in the
      writer's own transaction, so resolution catches up after any writer — even one stopped
      before it resolved — and nothing that writes files needs to know. Existing files are
      queued here once, so an upgraded index builds its names on its next sync.

    Independent of ``m003``: it touches only ``links`` and adds its own tables and triggers.
    """
    conn.execute(
        """
        ALTER TABLE links ADD COLUMN syntax TEXT NOT NULL DEFAULT 'wiki';
        ALTER TABLE links ADD COLUMN key TEXT;
        ALTER TABLE links ADD COLUMN resolved TEXT;
        ALTER TABLE links ADD COLUMN via TEXT;
        CREATE INDEX links_by_key ON links(key);
        CREATE INDEX links_by_resolved ON links(resolved);
        CREATE INDEX links_unresolved ON links(file_id) WHERE via IS NULL;
        CREATE TABLE link_names (
            key   TEXT NOT NULL,
            path  TEXT NOT NULL,
            alias TEXT NOT NULL DEFAULT '',     -- '' for the file's own name
            PRIMARY KEY (key, path, alias)
        ) WITHOUT ROWID;
        CREATE INDEX link_names_by_path ON link_names(path);
        CREATE TABLE link_changes (
            id   INTEGER PRIMARY KEY,
            path TEXT NOT NULL
        );
        CREATE TRIGGER files_link_change_insert AFTER INSERT ON files BEGIN
            INSERT INTO link_changes(path) VALUES (new.path);
        END;
        CREATE TRIGGER files_link_change_delete AFTER DELETE ON files BEGIN
            INSERT INTO link_changes(path) VALUES (old.path);
        END;
        CREATE TRIGGER files_link_change_update AFTER UPDATE OF path, aliases, status ON files BEGIN
            INSERT INTO link_changes(path) VALUES (old.path);
            INSERT INTO link_changes(path) VALUES (new.path);
        END;
        INSERT INTO link_changes(path) SELECT path FROM files;
        """
    )


def m005_deep_vectors(conn: Connection) -> None:
    """The deep tier's vectors (``deepening.py``): one per distinct embedded text.

    Keyed by the chunk's ``embed_hash`` rather than its id: editing a note replaces its
    chunks, and the unchanged ones keep their hash, so their deep vectors — which cost ~0.5 s
    each to make — survive the edit and a rename. A search reaches them through
    ``chunks_by_embed_hash``; vectors no chunk uses any more are pruned by the deep job.
    Which model made them is ``meta.deep_model_fingerprint``.
    """
    conn.execute(
        """
        CREATE TABLE deep_vectors (
            embed_hash BLOB PRIMARY KEY,
            vector     BLOB NOT NULL               -- int8 codes + float32 scale, as vectors
        ) WITHOUT ROWID;
        """
    )


def m006_ocr_limit(conn: Connection) -> None:
    """``files.ocr_over_limit``: pages of a document that needed OCR past
    ``ocr_max_pages_per_document`` and kept only their text layer (``vaultseek status`` counts
    them), and ``files.ocr_limit``: that limit, so a document is read again once it is raised.
    """
    conn.execute(
        """
        ALTER TABLE files ADD COLUMN ocr_over_limit INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE files ADD COLUMN ocr_limit INTEGER NOT NULL DEFAULT 0;
        """
    )


def m007_deep_generations(conn: Connection) -> None:
    """``deep_vectors_next``: the deep vectors of a newly chosen deep model, built in the
    background beside ``deep_vectors``, which keeps serving search until the new ones cover
    every chunk and take its place (``deepening.py``). Its model is ``meta.deep_next_*``.
    """
    conn.execute(
        """
        CREATE TABLE deep_vectors_next (
            embed_hash BLOB PRIMARY KEY,
            vector     BLOB NOT NULL
        ) WITHOUT ROWID;
        """
    )


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (
    m001_initial, m002_documents, m003_note_metadata, m004_links, m005_deep_vectors,
    m006_ocr_limit, m007_deep_generations,
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Connection, *, read_only: bool = False) -> int:
    """Bring the schema up to date; return the version it is at.

    Refuses a database from a newer vaultseek rather than guessing at its schema. On a
    connection that cannot write (``read_only``) a current schema is all that works: one that
    needs migrating raises :class:`IndexAccessError`.
    """
    version = _user_version(conn)
    if version == SCHEMA_VERSION:
        return version
    if read_only:
        _check_known(conn, version)
        raise IndexAccessError(
            f"the index needs an upgrade of its schema (version {version} to {SCHEMA_VERSION}), "
            "which writes to it, and it is read-only here",
            hint="run `vaultseek status` once as a user who can write the index (that upgrades "
            "it), then read it here",
        )
    # Take the write lock before looking again: two first runs starting together must not
    # both try to create the schema.
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _user_version(conn)
        _check_known(conn, version)
        for number in range(version, SCHEMA_VERSION):
            MIGRATIONS[number](conn)
            conn.execute(f"PRAGMA user_version={number + 1}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # not after COMMIT: a signal handled just after it lands here
            conn.execute("ROLLBACK")
        raise
    return SCHEMA_VERSION


def _check_known(conn: Connection, version: int) -> None:
    """Refuse a schema from a newer vaultseek, and a database that is not an index."""
    if version > SCHEMA_VERSION:
        raise IndexCorruptError(
            f"this index has schema version {version}; this vaultseek knows up to "
            f"{SCHEMA_VERSION}",
            hint="upgrade vaultseek, or index into another --db",
        )
    if version == 0 and conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()[0][0]:
        raise IndexCorruptError(
            "this database already holds tables that are not a vaultseek index",
            hint="pass another --db; vaultseek will not write into a foreign database",
        )


def _user_version(conn: Connection) -> int:
    return int(conn.execute("PRAGMA user_version").get)
