"""The static model's vectors an index run writes, keyed by the text they embed.

A chunk's key is the hash of what the model reads for it (:func:`embed_hash` of
:func:`.deepening.embedding_text`, the same text the deep tier keys its vectors by). A chunk
whose key some stored chunk already has takes that vector, so an unchanged section of an edited
note, or a renamed file, costs no embedding; only the rest go to the model, in one batch.

Vectors of two models are never mixed: when the configured model is not the one the index was
built with, every stored chunk is re-embedded before anything else is written
(:func:`reembed_if_model_changed`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

import numpy as np

from ..embeddings.static import StaticEmbedder
from ..records import ChunkDraft, Progress
from ..storage.store import REEMBEDDING, Store
from .deepening import embedding_text
from .tally import Tally


def embed_hash(text: str) -> bytes:
    """The key a chunk's vector is stored and reused under: 16 bytes of the SHA-256 of the
    text embedded."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def chunk_hashes(drafts: Iterable[ChunkDraft]) -> list[bytes]:
    """Each draft's :func:`embed_hash`, in order."""
    return [embed_hash(embedding_text(d.heading_context, d.text)) for d in drafts]


def vectors_for(
    store: Store, embedder: Callable[[], StaticEmbedder], chunks: Iterable[tuple[ChunkDraft, bytes]]
) -> tuple[dict[bytes, np.ndarray], set[bytes]]:
    """A vector for every chunk hash among ``chunks`` (drafts with their hashes), and which of
    them were newly embedded (the rest are reused from any stored chunk that embedded the same
    text). The model is loaded only when something is left to embed."""
    texts: dict[bytes, str] = {}
    for draft, digest in chunks:
        texts.setdefault(digest, embedding_text(draft.heading_context, draft.text))
    vectors = store.vectors_by_hash(texts)
    missing = [h for h in texts if h not in vectors]
    if missing:
        vectors.update(zip(missing, embedder().embed([texts[h] for h in missing]), strict=True))
    return vectors, set(missing)


def reembed_if_model_changed(
    store: Store,
    model: StaticEmbedder,
    tally: Tally,
    *,
    progress: Callable[[Progress], None],
    should_stop: Callable[[], bool],
) -> bool:
    """Re-embed every stored chunk when ``model`` is not the one the index was built with.
    Returns True if interrupted. Vectors are never trusted across models: the stored
    fingerprint says "re-embedding" until every chunk is done."""
    stored = store.get_meta("model_fingerprint")
    if stored == model.fingerprint:
        return False
    total = store.counts()["chunks"]
    if stored is not None and total:
        previous = store.get_meta("model_name")
        store.set_meta({"model_fingerprint": REEMBEDDING + model.fingerprint})
        done = 0
        for batch in store.iter_chunks():
            if should_stop():
                tally.notice(
                    f"embedding model change interrupted after {done} of {total} chunks; "
                    "run again to finish (searches use BM25 until then)"
                )
                return True
            vectors = model.embed([embedding_text(ctx, text) for _cid, ctx, text in batch])
            store.replace_vectors([(row[0], vec) for row, vec in zip(batch, vectors, strict=True)])
            done += len(batch)
            progress(Progress("embed", done, total))
        tally.counts["reembedded"] = done
        tally.notice(f"embedding model changed ({previous} → {model.name}); re-embedded {done} chunks")
    store.set_meta({"model_name": model.name, "model_fingerprint": model.fingerprint, "dim": str(model.dim)})
    return False
