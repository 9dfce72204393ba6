"""Hubs: chunks a contextual model places near every query, and what the deep list does about them.

A *hub* is a chunk that lands in the top ten of queries it has nothing to do with: in
multilingual-e5's space a one-line page such as tldr's ``.`` (source a file) or ``http`` sits
close to the centre of all queries, so without a counterweight it was among the deep list's
first ten for 99 % of a German vault's unrelated questions. The counterweight is in the style of
CSLS (Conneau et al., 2018): each chunk's *reach* is the mean cosine of its
:data:`NEIGHBOURS` nearest **probe** queries — a fixed set of everyday prompts in six
languages that no vault answers (``probes.txt``) — and the deep list ranks by ``cosine −
WEIGHT × (reach − mean reach)``. A chunk close to everything pays for it; an ordinary chunk's
score hardly moves; the mean is kept so the list's scale (and its anchor, ``fusion.ANCHORS``)
stays put. The relevance judgment reads the plain cosines, each chunk's reach and the query's
own reach against the same probes (``relevance.py``).

The probes are embedded once per deep model by the deep job and kept in the index
(:func:`probes_to_text`), so a search never embeds them; reaches are computed when the deep
vectors are loaded, and kept per chunk across reloads.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..storage.vectors import VectorIndex

if TYPE_CHECKING:
    from ..storage.store import Store

WEIGHT = 0.5
"""How much of a chunk's reach above the mean its deep score loses. Chosen on the tune halves
of the judged sets (docs/search.md, "Hubs"): at 0.5 the deep list's busiest chunk fell from
99 % to 71 % of a German vault's unrelated prompts' top ten and the hybrid's from 70 % to 25 %,
with nDCG@10 +0.014 on the mean of four languages; at 1.0 the hubs all but vanish and two of the
four languages lose quality."""
NEIGHBOURS = 10
"""Probes a chunk's reach is averaged over: its nearest ten."""
PROBES_FILE = Path(__file__).with_name("probes.txt")
META_KEY = "deep_probes"
"""Index meta key: the deep model's fingerprint and its probe vectors (:func:`probes_to_text`)."""


@functools.cache
def probe_texts() -> tuple[str, ...]:
    """The probe prompts, one a line (blank lines and ``#`` comments skipped)."""
    lines = PROBES_FILE.read_text("utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def probes_to_text(fingerprint: str, vectors: np.ndarray) -> str:
    """Probe vectors as the meta value: ``<fingerprint>:<rows>:<base64 of float16 rows>``."""
    rows = np.asarray(vectors, dtype=np.float16)
    return f"{fingerprint}:{len(rows)}:{base64.b64encode(rows.tobytes()).decode('ascii')}"


def probes_from_text(text: str | None, fingerprint: str, dim: int) -> np.ndarray | None:
    """The probe vectors stored for the model with ``fingerprint``, or None (none stored, or
    for another model, or unreadable)."""
    if not text:
        return None
    try:
        owner, rows, blob = text.split(":", 2)
        values = np.frombuffer(base64.b64decode(blob), dtype=np.float16)
        vectors = values.reshape(int(rows), dim).astype(np.float32)
    except ValueError:
        return None
    return vectors if owner == fingerprint and len(vectors) else None


def reaches(index: VectorIndex, probes: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Each row's reach: the mean cosine of its :data:`NEIGHBOURS` nearest probes (``rows``:
    only these row positions)."""
    picked = np.arange(len(index)) if rows is None else rows
    if not len(picked):
        return np.zeros(0, dtype=np.float32)
    return _nearest_mean(index.vectors(picked) @ np.asarray(probes, dtype=np.float32).T).astype(np.float32)


def query_reach(query: np.ndarray, probes: np.ndarray, *, below: float = np.inf) -> float:
    """A query's reach, as :func:`reaches` measures a row's, leaving out the probes whose cosine
    is ``below`` or more (a probe that is the query itself); 0 when none is left."""
    cosines = np.asarray(probes @ np.asarray(query, dtype=np.float32), dtype=np.float64)
    cosines = cosines[cosines < below]
    return float(_nearest_mean(cosines)) if len(cosines) else 0.0


def _nearest_mean(cosines: np.ndarray) -> np.ndarray:
    """The mean of the :data:`NEIGHBOURS` largest along the last axis."""
    nearest = min(NEIGHBOURS, cosines.shape[-1])
    return np.partition(cosines, cosines.shape[-1] - nearest, axis=-1)[..., -nearest:].mean(axis=-1)


def hub_offsets(reach: np.ndarray) -> np.ndarray:
    """What each row's score loses: :data:`WEIGHT` × its reach above the mean."""
    if not len(reach):
        return reach
    return (WEIGHT * (reach - reach.mean())).astype(np.float32)


class ProbeModel(Protocol):
    """What embedding the probes needs of a deep model."""

    fingerprint: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...


def store_probes(store: Store, model: ProbeModel) -> None:
    """Embed the probes with ``model`` and keep them in the index, unless they are there for
    this model already (a few seconds once per model; the deep job calls it)."""
    if probes_from_text(store.get_meta(META_KEY), model.fingerprint, model.dim) is not None:
        return
    vectors = model.embed_queries(probe_texts())
    store.set_meta({META_KEY: probes_to_text(model.fingerprint, vectors)})
