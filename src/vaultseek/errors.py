"""Every error vaultseek raises on purpose, under one base class.

    VaultseekError                 base: the CLI prints ``error: <message>`` plus ``hint``
    ├── ConfigError                a bad config file, flag or environment variable
    │   └── DatabaseAuthError      the PostgreSQL server refused the role (password, no role)
    ├── VaultNotFoundError         the vault folder does not exist or is not a folder
    ├── IndexNotFoundError         no index database yet: run ``vaultseek index``
    │   └── DatabaseNotFoundError  the PostgreSQL database named in ``--db`` does not exist
    ├── IndexBusyError             another process holds the write lock too long
    ├── IndexCorruptError          the database file is not a vaultseek index (or is damaged)
    ├── IndexAccessError           the index cannot be written: read-only, disk full, I/O error
    │   ├── VaultAccessError       intake cannot write into the vault: disk full, read-only, …
    │   └── DatabasePermissionError  the PostgreSQL role may not do that (write, create, connect)
    ├── DatabaseUnavailableError   the PostgreSQL server cannot be reached, or the connection
    │                              was lost
    ├── DatabaseUnsupportedError   the PostgreSQL server lacks what vaultseek needs (version 14+,
    │                              the pgvector extension 0.7+ in the database)
    ├── IndexClosedError           the study app's readers were closed (it is shutting down)
    ├── ModelError                 the embedding model cannot be found or loaded
    │   └── EmbeddingServerError   the deep tier's embedding server is down, failing or
    │                              answered something unusable (the job pauses, nothing lost)
    ├── QueryError                 a query the engine cannot answer (e.g. an unknown mode)
    │   └── NotFoundError          what a request names does not exist (HTTP 404)
    │       └── AttachmentNotFoundError  a chat attachment that does not exist, or belongs
    │                              to another conversation
    ├── IntakeError                an item intake cannot take (unreadable, unknown review item)
    ├── MissingExtraError          a feature whose optional extra (``vaultseek[study]``, …) is
    │                              not installed
    ├── PortUnavailableError       a server cannot listen on its address and port (in use, …)
    └── LLMError                   the study app's language model could not answer
        ├── LLMUnavailableError    the LLM server is down or unreachable
        ├── ModelMissingError      the server does not have the configured model
        ├── ContextTooLongError    the prompt does not fit the model's context
        ├── VisionUnsupportedError the model cannot see images, and the message has some
        ├── ModelReplyError        a model server answered with something that cannot be read
                                   (a reranker's or an expansion's reply that is not its JSON)
        └── TranscriptionError     speech could not be turned into text (no transcription
                                   server configured, or it failed)

The library raises these and never prints; each adapter turns them into its own message shape.
"""

from __future__ import annotations


class VaultseekError(Exception):
    """Base of all vaultseek errors; ``hint`` says how the user can fix it."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class ConfigError(VaultseekError):
    exit_code = 2


class DatabaseAuthError(ConfigError):
    """The PostgreSQL server refused the role: a wrong or missing password, a role that does
    not exist, or no ``pg_hba.conf`` entry for this client. Exit 2 like any configuration the
    user fixes (the password belongs in ``PGPASSWORD`` or ``~/.pgpass``)."""


class VaultNotFoundError(VaultseekError):
    exit_code = 2


class IndexNotFoundError(VaultseekError):
    exit_code = 3


class DatabaseNotFoundError(IndexNotFoundError):
    """The database named in a ``postgresql://`` URL does not exist on that server (exit 3,
    like an index file that does not exist yet; the hint says how to create it)."""


class IndexBusyError(VaultseekError):
    exit_code = 4


class IndexCorruptError(VaultseekError):
    exit_code = 5


class IndexAccessError(VaultseekError):
    exit_code = 7


class VaultAccessError(IndexAccessError):
    """Intake could not write into the vault (disk full, quota, read-only): the same exit code
    as an index that cannot be written, since the fix is the same (space or permissions)."""


class DatabasePermissionError(IndexAccessError):
    """The PostgreSQL role may not do what was asked: write through a read-only role, session
    or replica, create the collection's tables, or connect to the database (exit 7, as for an
    index file that cannot be written). Searching needs only read access."""


class DatabaseUnavailableError(VaultseekError):
    """The PostgreSQL server cannot be reached (down, wrong host or port, a firewall, a
    timeout, too many connections), or the connection to it was lost mid-use (a restart, a
    terminated session, the network). Work committed before it happened is kept."""

    exit_code = 10


class DatabaseUnsupportedError(VaultseekError):
    """The PostgreSQL server lacks what vaultseek needs: PostgreSQL 14 or later, and the
    pgvector extension (0.7 or later, for ``halfvec``) created in the database — or available
    on the server while this role may not create it. An administrator fixes it."""

    exit_code = 11


class IndexClosedError(VaultseekError):
    exit_code = 1


class MapUnavailableError(VaultseekError):
    """The vault map cannot be drawn: the index holds no vectors, or the scope too few notes."""

    exit_code = 1


class ModelError(VaultseekError):
    exit_code = 6


class EmbeddingServerError(ModelError):
    """The deep tier's embedding server (``deep_model = "ollama:…"`` or ``"openai:…"``) could
    not embed: unreachable, too slow, an error status after the retries, a body that is not
    the embeddings asked for, or vectors of another dimension than the model's. Unlike its
    base it may pass: the deep job pauses (``status`` says why) and resumes where it stopped."""


class QueryError(VaultseekError):
    exit_code = 2


class NotFoundError(QueryError):
    """What a request names does not exist: a note, a chunk, a conversation, a study
    material (HTTP answers 404; the CLI exits 2 like any bad request)."""


class AttachmentNotFoundError(NotFoundError):
    """A chat attachment id that does not exist, or that belongs to another conversation (the
    two are not told apart, so one conversation cannot probe another's ids)."""


class IntakeError(VaultseekError):
    exit_code = 2


class MissingExtraError(VaultseekError):
    """A feature whose libraries come with an optional extra that is not installed: raised
    where the extra's library is imported, naming the extra and the command that installs it.

    ``extra`` is the extra's name (``documents``, ``study``, ``mcp``), ``feature`` what needed
    it (``the study app``), ``missing`` the module that could not be imported and ``install``
    the pip command, which is also the hint."""

    exit_code = 8

    def __init__(self, extra: str, *, feature: str, missing: str) -> None:
        self.extra = extra
        self.feature = feature
        self.missing = missing
        self.install = f"pip install 'vaultseek[{extra}]'"
        what = f"{missing} is not installed" if "." not in missing else f"cannot import {missing}"
        super().__init__(
            f"{feature} needs the optional '{extra}' extra ({what})", hint=self.install
        )

    @classmethod
    def from_import(cls, exc: ImportError, extra: str, *, feature: str) -> MissingExtraError:
        """The error for an ``ImportError`` met importing the extra's library."""
        return cls(extra, feature=feature, missing=exc.name or str(exc))


class PortUnavailableError(VaultseekError):
    """``serve`` or ``mcp --http`` cannot listen where asked: the port is in use (by another
    ``vaultseek serve``, say), needs privileges, or the address is not this machine's."""

    exit_code = 9


class LLMError(VaultseekError):
    exit_code = 1


class LLMUnavailableError(LLMError):
    pass


class ModelMissingError(LLMError):
    pass


class ContextTooLongError(LLMError):
    pass


class VisionUnsupportedError(LLMError):
    """A message carries images and the model says it cannot see (Ollama's ``/api/show``
    capabilities lack ``vision``; ``llm_vision = false`` for an OpenAI-compatible server).
    Raised before anything is sent."""


class ModelReplyError(LLMError):
    """A model server answered, but not in the shape asked for: a reranker whose reply holds
    no scores, a chat model whose query expansion holds no sub-queries. Searches answer
    without it and say so."""


class TranscriptionError(LLMError):
    """Speech could not be turned into text: no transcription server is configured, it is
    down, or it refused the audio."""
