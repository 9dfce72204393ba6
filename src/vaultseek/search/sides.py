"""What one index's searches read besides BM25: the models and the vectors, kept loaded.

A search, related notes, the map and the relevance judgment all read the same two sides:

- the **static side** — the bundled (or configured) static model, and the int8 matrix of every
  chunk's vector in memory (:class:`~vaultseek.storage.vectors.VectorIndex`), or, for a large
  PostgreSQL collection, its HNSW index searched in the database;
- the **deep side** — the deep tier's model, and the matrix of the chunks that have a deep
  vector, each with its hub offset (``hubs.py``), and the share of chunks it covers.

:class:`Sides` loads each on first use and loads a matrix again when any connection has
committed since (the store's data version), so a long-lived index (the daemon, the study app)
sees what another process wrote. A side that cannot serve this index raises
:class:`~.hybrid.VectorsUnavailable` with the reason (no vectors yet, another model's vectors,
a model change half done); the search goes on without it and says so.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

import numpy as np

from ..embeddings.static import StaticEmbedder, load_embedder
from ..errors import EmbeddingServerError, ModelError
from ..storage.store import REEMBEDDING, Store
from ..storage.vectors import VectorIndex
from .candidates import NearestVectors
from .hybrid import DeepSide, VectorsUnavailable

if TYPE_CHECKING:
    from ..config import Config
    from ..embeddings.deep import DeepModel
    from ..storage.postgres.store import HnswVectors, PgStore

SERVER_RETRY_SECONDS = 30.0
"""An embedding server that could not be reached is asked again after this long (a search
in between goes without the deep list rather than wait on it)."""


class Sides:
    """The static and deep sides of one index's searches (the module docstring). Not
    thread-safe, like the index that owns it."""

    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.config = config
        self._embedder: StaticEmbedder | None = None
        self._embedder_error: ModelError | None = None
        self._vectors: VectorIndex | None = None
        self._vectors_version: int | None = None
        self._hnsw: HnswVectors | None = None
        self._hnsw_version: int | None = None
        self._deep_model: DeepModel | None = None
        self._serving_deep: DeepModel | None = None
        self._deep_errors: dict[str, tuple[ModelError, float]] = {}
        """Deep models that failed to load, by spec, and until when that stands (a server may
        come back; a missing package will not)."""
        self._deep_vectors: VectorIndex | None = None
        self._deep_version: int | None = None
        self._deep_coverage = 0.0
        self._reaches: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.float32))
        """Chunk ids and their hub reaches from the last load of the deep vectors."""

    def close(self) -> None:
        if self._hnsw is not None:
            self._hnsw.close()
            self._hnsw = None

    # -- the static side ---------------------------------------------------------------------
    def embedder(self) -> StaticEmbedder:
        """The configured static model, loaded on first use (raises :class:`ModelError`)."""
        if self._embedder is None:
            if self._embedder_error is not None:
                raise self._embedder_error
            try:
                self._embedder = load_embedder(self.config.model)
            except ModelError as exc:
                self._embedder_error = exc
                raise
        return self._embedder

    def search_side(self) -> tuple[VectorIndex | NearestVectors, StaticEmbedder]:
        """What a search's vector list comes from: a large PostgreSQL collection's HNSW index
        (searched in the database), else the vectors in memory (:meth:`vector_side`)."""
        if self.config.database_url is not None:
            hnsw = self._hnsw_vectors()
            if hnsw is not None:
                return hnsw, self.query_model()
        return self.vector_side()

    def vector_side(self) -> tuple[VectorIndex, StaticEmbedder]:
        """The vectors in memory and the model, if they can serve this index."""
        model = self.query_model()
        try:
            index = self.vector_index()
        except ValueError as exc:  # vectors of mixed dimensions: an index from a broken run
            raise VectorsUnavailable(f"{exc}; run `vaultseek index` to repair it") from exc
        if not len(index):
            raise VectorsUnavailable("the index holds no vectors yet")
        return index, model

    def query_model(self) -> StaticEmbedder:
        """The model, if the index's vectors come from it (raises :class:`VectorsUnavailable`)."""
        try:
            model = self.embedder()
        except ModelError as exc:
            raise VectorsUnavailable(exc.message) from exc
        stored = self.store.get_meta("model_fingerprint")
        if stored is not None and stored.startswith(REEMBEDDING):
            raise VectorsUnavailable("a change of embedding model is half done; run `vaultseek index` to finish it")
        if stored is not None and stored != model.fingerprint:
            raise VectorsUnavailable(
                f"the index was built with model {self.store.get_meta('model_name')}; "
                "run `vaultseek index` to re-embed with the configured one"
            )
        return model

    def vector_index(self) -> VectorIndex:
        """The in-memory matrix, loaded again when any connection has committed since."""
        version = self.store.data_version()
        if self._vectors is None or version != self._vectors_version:
            ids, codes = self.store.load_vectors()
            self._vectors = VectorIndex(ids, codes)
            self._vectors_version = version
        return self._vectors

    def _hnsw_vectors(self) -> NearestVectors | None:
        from ..storage.postgres.connection import connect

        url = self.config.database_url
        assert self.store.backend == "postgresql" and url is not None
        store = cast("PgStore", self.store)
        version = store.data_version()
        if self._hnsw is None or version != self._hnsw_version:
            if self._hnsw is not None:
                self._hnsw.close()
            self._hnsw = store.hnsw_vectors(lambda: connect(url, read_only=True))
            self._hnsw_version = version
        return self._hnsw

    # -- the deep side -----------------------------------------------------------------------
    def deep_model(self) -> DeepModel:
        """The deep tier's configured model, loaded on first use (raises :class:`ModelError`;
        an embedding server that failed is asked again after :data:`SERVER_RETRY_SECONDS`)."""
        if self._deep_model is None:
            self._deep_model = self._load_deep(self.config.deep_model)
        return self._deep_model

    def forget_deep_failure(self) -> None:
        """Ask the configured deep model's server again at the next use, however recently it
        failed (the deep job, which reports the failure itself)."""
        failed = self._deep_errors.get(self.config.deep_model)
        if failed is not None and isinstance(failed[0], EmbeddingServerError):
            del self._deep_errors[self.config.deep_model]

    def forget_deep_vectors(self) -> None:
        """Load the deep matrix again at the next use: this connection's own writes (the deep
        job's) do not change the store's data version."""
        self._deep_vectors = None

    def forget_vectors(self) -> None:
        """Load both matrices again at the next use (this connection is about to write)."""
        self._vectors = None
        self._deep_vectors = None

    def deep_side(self) -> DeepSide:
        """The deep vectors, the deep model and the share of chunks the vectors cover, if
        they can serve this index (raises :class:`VectorsUnavailable`, or
        :class:`EmbeddingServerError` when the model's server cannot be reached)."""
        stored = self.store.get_meta("deep_model_fingerprint")
        if stored is None:
            raise VectorsUnavailable("no deep vectors yet")
        version = self.store.data_version()
        if self._deep_vectors is None or version != self._deep_version:
            ids, codes = self.store.load_deep_vectors()
            self._deep_vectors = VectorIndex(ids, codes)
            self._weigh_hubs(self._deep_vectors, stored)
            self._deep_version = version
            self._deep_coverage = min(len(ids) / max(self.store.chunk_count(), 1), 1.0)
        if not len(self._deep_vectors):
            raise VectorsUnavailable("no deep vectors yet")
        try:
            model = self._serving_deep_model(stored)
        except EmbeddingServerError:
            raise  # a server away: the search says so and goes on without the deep list
        except ModelError as exc:
            raise VectorsUnavailable(exc.message) from exc
        if stored != model.fingerprint:
            raise VectorsUnavailable("the deep vectors come from another model; `vaultseek deep` re-embeds them")
        return self._deep_vectors, model, self._deep_coverage

    def stored_deep_vectors(self) -> VectorIndex | None:
        """The deep vectors as stored, no model needed (None: there are none): the matrix a
        search loaded when it is current (its hub offsets leave the vectors alone), else read
        now and not kept — a search must load them itself, with its hub offsets."""
        if self.store.get_meta("deep_model_fingerprint") is None:
            return None
        if self._deep_vectors is not None and self._deep_version == self.store.data_version():
            deep = self._deep_vectors
        else:
            deep = VectorIndex(*self.store.load_deep_vectors())
        return deep if len(deep) else None

    def _load_deep(self, spec: str) -> DeepModel:
        from ..embeddings.deep import load_deep_model
        from ..index.credentials import scrub

        failed = self._deep_errors.get(spec)
        if failed is not None and (not isinstance(failed[0], EmbeddingServerError) or time.monotonic() < failed[1]):
            raise failed[0]
        config = self.config
        try:
            return load_deep_model(spec, url=config.deep_url, prompts=config.deep_prompts, clean=lambda text: scrub(text).text)
        except ModelError as exc:
            self._deep_errors[spec] = (exc, time.monotonic() + SERVER_RETRY_SECONDS)
            raise

    def _serving_deep_model(self, fingerprint: str) -> DeepModel:
        """The model whose vectors serve search: the configured one, or — while a newly
        chosen model's vectors are built — the one the stored vectors come from (raises
        :class:`ModelError`)."""
        from ..embeddings.deep import DEEP_MODEL, deep_recipe

        stored = self.store.get_meta("deep_model_spec") or DEEP_MODEL  # before it was recorded: e5
        if stored == deep_recipe(self.config.deep_model, self.config.deep_prompts):
            return self.deep_model()
        if self._serving_deep is None or self._serving_deep.fingerprint != fingerprint:
            self._serving_deep = self._load_deep(stored)  # not the configured one: not asked
        return self._serving_deep

    def _weigh_hubs(self, vectors: VectorIndex, fingerprint: str) -> None:
        """Give the deep vectors their hub offsets (``hubs.py``) when the deep job has stored
        the probes for this model; reaches already known from the last load are kept."""
        from .hubs import META_KEY, hub_offsets, probes_from_text, reaches

        probes = probes_from_text(self.store.get_meta(META_KEY), fingerprint, vectors.dim) if len(vectors) else None
        if probes is None:
            return
        reach = np.zeros(len(vectors), dtype=np.float32)
        missing = np.ones(len(vectors), dtype=bool)
        known_ids, known = self._reaches
        if len(known_ids):
            at = np.minimum(np.searchsorted(known_ids, vectors.ids), len(known_ids) - 1)
            found = known_ids[at] == vectors.ids
            reach[found], missing = known[at[found]], ~found
        reach[missing] = reaches(vectors, probes, np.flatnonzero(missing))
        self._reaches = (vectors.ids, reach)
        vectors.offsets = hub_offsets(reach)
        vectors.probes = probes
