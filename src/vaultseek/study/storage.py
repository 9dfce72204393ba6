"""The study app's own database: conversations, their messages, and document categories.

Kept apart from the index (``<index>.study.db`` beside it) so rebuilding or deleting an index
never loses a conversation, and the index schema stays the engine's alone. Same SQLite
engine and pragmas as the index (``db.open_connection``); one lock around the connection,
because the web app calls it from the event loop and from worker threads.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

from ..storage import db
from ..storage.store import utc_now


def m001_study(conn: db.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE conversations (
            id         TEXT PRIMARY KEY,
            title      TEXT NOT NULL,
            scope      TEXT NOT NULL DEFAULT '{}',   -- JSON: the last scope asked under
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE messages (
            id              INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content         TEXT NOT NULL,
            thinking        TEXT NOT NULL DEFAULT '',
            citations       TEXT NOT NULL DEFAULT '[]',  -- JSON list
            meta            TEXT NOT NULL DEFAULT '{}',  -- JSON: timings, tokens, error, stopped
            created_at      TEXT NOT NULL
        );
        CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
        CREATE TABLE categories (
            path     TEXT PRIMARY KEY,                -- vault-relative file path
            category TEXT NOT NULL
        );
        CREATE INDEX categories_by_name ON categories(category);
        """
    )


def m002_study_hub(conn: db.Connection) -> None:
    """Generated study material and every study event (see :mod:`.archive`). Progress rows
    (attempts, answers, reviews, activity) outlive the material they were about, so the
    dashboard's history never shrinks when a quiz is deleted."""
    conn.execute(
        """
        CREATE TABLE materials (
            id         TEXT PRIMARY KEY,
            kind       TEXT NOT NULL CHECK (kind IN ('quiz', 'flashcards', 'workshop', 'mindmap')),
            title      TEXT NOT NULL,
            scope      TEXT NOT NULL DEFAULT '{}',   -- JSON: what it was generated from
            sources    TEXT NOT NULL DEFAULT '[]',   -- JSON: the numbered sources the model read
            content    TEXT NOT NULL,                -- JSON: questions / outline / tree
            problems   TEXT NOT NULL DEFAULT '[]',   -- JSON: what the pipeline dropped or repaired
            model      TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX materials_by_kind ON materials(kind, created_at);
        CREATE TABLE lessons (
            material_id TEXT NOT NULL REFERENCES materials(id) ON DELETE CASCADE,
            position    INTEGER NOT NULL,
            markdown    TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            PRIMARY KEY (material_id, position)
        );
        CREATE TABLE cards (
            id          INTEGER PRIMARY KEY,
            material_id TEXT NOT NULL REFERENCES materials(id) ON DELETE CASCADE,
            position    INTEGER NOT NULL,
            front       TEXT NOT NULL,
            back        TEXT NOT NULL,
            source      INTEGER,
            schedule    TEXT NOT NULL,               -- JSON: the FSRS card state
            due         TEXT NOT NULL
        );
        CREATE INDEX cards_by_material ON cards(material_id, position);
        CREATE TABLE attempts (
            id          INTEGER PRIMARY KEY,
            material_id TEXT NOT NULL,
            score       INTEGER NOT NULL,
            total       INTEGER NOT NULL,
            started_at  TEXT NOT NULL,
            finished_at TEXT NOT NULL
        );
        CREATE TABLE answers (
            attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
            question   INTEGER NOT NULL,
            chosen     INTEGER,
            correct    INTEGER NOT NULL,
            PRIMARY KEY (attempt_id, question)
        );
        CREATE TABLE reviews (
            id          INTEGER PRIMARY KEY,
            card_id     INTEGER NOT NULL,
            material_id TEXT NOT NULL,
            rating      INTEGER NOT NULL,
            reviewed_at TEXT NOT NULL,
            due         TEXT NOT NULL
        );
        CREATE TABLE activity (
            id          INTEGER PRIMARY KEY,
            at          TEXT NOT NULL,
            kind        TEXT NOT NULL,
            material_id TEXT,
            detail      TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX activity_by_time ON activity(at);
        """
    )


def m003_attachments(conn: db.Connection) -> None:
    """Files attached to chat messages (see :mod:`.attachments`): images, stripped of their
    metadata, and documents with the chunks read from them. An attachment belongs to the
    conversation it was first sent in (NULL until then) and goes with it."""
    conn.execute(
        """
        CREATE TABLE attachments (
            id              TEXT PRIMARY KEY,
            conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
            kind            TEXT NOT NULL CHECK (kind IN ('image', 'document')),
            name            TEXT NOT NULL,
            media_type      TEXT NOT NULL,
            size            INTEGER NOT NULL,
            data            BLOB NOT NULL,                -- the image as sent, or the file as given
            meta            TEXT NOT NULL DEFAULT '{}',   -- JSON: width/height, pages, notices
            created_at      TEXT NOT NULL
        );
        CREATE INDEX attachments_by_conversation ON attachments(conversation_id);
        CREATE TABLE attachment_chunks (
            id              INTEGER PRIMARY KEY,
            attachment_id   TEXT NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
            position        INTEGER NOT NULL,
            section         TEXT NOT NULL,
            heading_context TEXT NOT NULL,
            text            TEXT NOT NULL,
            location        TEXT                          -- JSON: page / slide / sheet rows
        );
        CREATE INDEX attachment_chunks_by_attachment ON attachment_chunks(attachment_id, position);
        """
    )


MIGRATIONS = (m001_study, m002_study_hub, m003_attachments)


def study_db_path(index_db: Path) -> Path:
    return index_db.with_name(index_db.stem + ".study.db")


class StudyStore:
    """Conversations, messages and categories (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = db.open_connection(path, create=True)
        self.lock = threading.Lock()
        with self.lock:
            version = int(self.conn.execute("PRAGMA user_version").get)
            if version < len(MIGRATIONS):
                with self.conn:
                    for number in range(version, len(MIGRATIONS)):
                        MIGRATIONS[number](self.conn)
                        self.conn.execute(f"PRAGMA user_version={number + 1}")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        with self.lock, self.conn:
            self.conn.execute(sql, params)

    # -- conversations ------------------------------------------------------------------
    def create_conversation(self, title: str, scope: dict[str, Any]) -> str:
        conversation_id = uuid.uuid4().hex[:16]
        now = utc_now()
        self._write(
            "INSERT INTO conversations(id, title, scope, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            (conversation_id, title[:120] or "New conversation", json.dumps(scope), now, now),
        )
        return conversation_id

    def find_conversation(self, conversation_id: str) -> dict[str, Any] | None:
        rows = self._rows(
            "SELECT id, title, scope, created_at, updated_at FROM conversations WHERE id = ?",
            (conversation_id,),
        )
        if not rows:
            return None
        cid, title, scope, created, updated = rows[0]
        messages = [
            {
                "id": mid, "role": role, "content": content, "thinking": thinking,
                "citations": json.loads(citations), "meta": json.loads(meta), "created_at": at,
            }
            for mid, role, content, thinking, citations, meta, at in self._rows(
                "SELECT id, role, content, thinking, citations, meta, created_at FROM messages "
                "WHERE conversation_id = ? ORDER BY id",
                (cid,),
            )
        ]  # fmt: skip
        return {"id": cid, "title": title, "scope": json.loads(scope), "created_at": created,
                "updated_at": updated, "messages": messages}  # fmt: skip

    def list_conversations(self, limit: int = 100) -> list[dict[str, Any]]:
        return [
            {"id": cid, "title": title, "updated_at": updated, "messages": n}
            for cid, title, updated, n in self._rows(
                "SELECT c.id, c.title, c.updated_at, "
                "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) "
                "FROM conversations c ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?",
                (limit,),
            )
        ]

    def delete_conversation(self, conversation_id: str) -> bool:
        exists = bool(self._rows("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)))
        self._write("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return exists

    def add_message(self, conversation_id: str, role: str, content: str, *, thinking: str = "",
                    citations: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
                    scope: dict[str, Any] | None = None) -> int:  # fmt: skip
        now = utc_now()
        with self.lock, self.conn:
            self.conn.execute(
                "INSERT INTO messages(conversation_id, role, content, thinking, citations, meta, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, role, content, thinking, json.dumps(citations or [], ensure_ascii=False),
                 json.dumps(meta or {}, ensure_ascii=False), now),
            )  # fmt: skip
            message_id = self.conn.last_insert_rowid()
            self.conn.execute(
                "UPDATE conversations SET updated_at = ?, scope = coalesce(?, scope) WHERE id = ?",
                (now, json.dumps(scope) if scope is not None else None, conversation_id),
            )
        return int(message_id)

    def add_message_meta(self, message_id: int, meta: dict[str, Any]) -> None:
        """Merge ``meta`` into message ``message_id``'s (what its retrieval learnt after it was
        stored: the words a search took for a mistyped one)."""
        self._write(
            "UPDATE messages SET meta = json_patch(meta, ?) WHERE id = ?", (json.dumps(meta, ensure_ascii=False), message_id)
        )

    def delete_messages_from(self, conversation_id: str, message_id: int) -> int:
        """Forget user message ``message_id`` of the conversation and every message after it
        (a question edited or asked again replaces its turn and what followed); returns how
        many went. An id that is not a user message of this conversation deletes nothing."""
        deleted = 0
        with self.lock, self.conn:
            found = self.conn.execute(
                "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ? AND role = 'user'",
                (message_id, conversation_id),
            ).fetchall()
            if found:
                self.conn.execute("DELETE FROM messages WHERE conversation_id = ? AND id >= ?", (conversation_id, message_id))
                deleted = int(self.conn.changes())
        return deleted

    # -- categories ---------------------------------------------------------------------
    def set_category(self, path: str, category: str | None) -> None:
        if category:
            self._write(
                "INSERT INTO categories(path, category) VALUES (?, ?) "
                "ON CONFLICT(path) DO UPDATE SET category = excluded.category",
                (path, category),
            )
        else:
            self._write("DELETE FROM categories WHERE path = ?", (path,))

    def categories(self) -> dict[str, str]:
        """File path → its category."""
        return dict(self._rows("SELECT path, category FROM categories"))

    def paths_in(self, categories: list[str]) -> tuple[str, ...]:
        marks = ",".join("?" * len(categories))
        if not categories:
            return ()
        return tuple(
            row[0]
            for row in self._rows(
                f"SELECT path FROM categories WHERE category IN ({marks}) ORDER BY path", tuple(categories)
            )
        )

    def rename_path(self, old: str, new: str | None) -> None:
        """Follow a file that was deleted (``new`` None) so no stale category remains."""
        if new is None:
            self._write("DELETE FROM categories WHERE path = ?", (old,))
        else:
            self._write("UPDATE categories SET path = ? WHERE path = ?", (new, old))
