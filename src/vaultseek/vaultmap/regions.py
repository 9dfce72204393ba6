"""Where the map is dense, where it is thin, which notes join clusters, and links never made.

Read from each note's nearest notes (``features.nearest``):

* **density** — the note's mean similarity to its ten nearest notes, as a percentile of all
  notes (0 the loneliest, 1 the most surrounded); a cluster's density is its notes' mean.
  A cluster below ``THIN`` is a **thin region**: few notes, far apart, where retrieval has the
  least around a note to confirm it.
* **bridge** — how evenly a note's nearest notes split between its own cluster and another:
  twice the share of the second most common cluster among them (0 all one cluster, 1 half
  and half). Bridges sit between clusters, where retrieval is said to struggle and where a
  link helps most.
* **role** — ``island`` (no link in or out, and density under ``ISLAND``: the loneliest
  tenth), ``bridge`` (``bridge`` ≥ ``BRIDGE``), ``core`` (at least ``CORE`` of its neighbours
  in its own cluster) or ``member``.
* **missing links** — pairs of a note and one of its ``MISSING_NEIGHBOURS`` nearest notes that
  do not link either way, ranked by the cosine of their vectors.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

THIN = 0.3
ISLAND = 0.1
BRIDGE = 0.6
CORE = 0.8
DENSITY_NEIGHBOURS = 10
MISSING_NEIGHBOURS = 5
"""A vault's missing links pair a note with one of its five nearest notes only: further out,
"close" is a matter of degree, and a note's own list (``map_note``) goes as deep as asked."""
MISSING_KEPT = 500
"""Missing links kept with a map (the best ones; a note's own are found on request)."""


def density(similarities: np.ndarray) -> np.ndarray:
    """Each note's mean similarity to its nearest notes, as a percentile in [0, 1]."""
    if not len(similarities):
        return np.zeros(0, np.float32)
    mean = similarities[:, :DENSITY_NEIGHBOURS].mean(axis=1) if similarities.shape[1] else np.zeros(len(similarities))
    order = np.argsort(np.argsort(mean, kind="stable"), kind="stable")
    return (order / max(len(mean) - 1, 1)).astype(np.float32)


def depth(labels: np.ndarray, most: int) -> int:
    """How many nearest notes bridges and core shares read: up to ``most``, but fewer than the
    typical cluster holds — in a small vault with clusters of six, fifteen neighbours would
    reach into other clusters from every note."""
    sizes = np.bincount(labels)
    typical = int(np.median(sizes[sizes > 0])) if len(sizes) else 0
    return max(1, min(most, max(5, typical - 1)))


def bridge_scores(neighbours: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Twice the share of each note's neighbours in the second most common cluster among them
    (the first :func:`depth` neighbours)."""
    if not neighbours.size:
        return np.zeros(len(neighbours), np.float32)
    k = depth(labels, neighbours.shape[1])
    around = labels[neighbours[:, :k]]
    scores = np.zeros(len(neighbours), np.float32)
    for row, clusters in enumerate(around):
        counts = np.bincount(clusters)
        if len(counts) > 1:
            top_two = np.partition(counts, len(counts) - 2)[-2:]
            scores[row] = min(2.0 * top_two[0] / k, 1.0)
    return scores


def own_share(neighbours: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The share of each note's neighbours (the first :func:`depth`) in its own cluster."""
    if not neighbours.size:
        return np.ones(len(neighbours), np.float32)
    k = depth(labels, neighbours.shape[1])
    return (labels[neighbours[:, :k]] == labels[:, None]).mean(axis=1).astype(np.float32)


def roles(dense: np.ndarray, bridges: np.ndarray, own: np.ndarray, link_counts: np.ndarray) -> list[str]:
    """Each note's role on the map (see the module's docstring)."""
    out = []
    for d, b, o, links in zip(dense.tolist(), bridges.tolist(), own.tolist(), link_counts.tolist(), strict=True):
        if links == 0 and d < ISLAND:
            out.append("island")
        elif b >= BRIDGE:
            out.append("bridge")
        elif o >= CORE:
            out.append("core")
        else:
            out.append("member")
    return out


def unlinked_pairs(
    rows: np.ndarray, neighbours: np.ndarray, vectors: np.ndarray, linked: Collection[tuple[int, int]]
) -> list[tuple[int, int, float]]:
    """(a, b, cosine) for each note ``a`` of ``rows`` and one of its nearest notes ``b``
    (``neighbours``, row by row with ``rows``) that do not link either way (``linked`` holds
    pairs with a < b), best first, each pair once."""
    seen: dict[tuple[int, int], float] = {}
    for a, near in zip(rows.tolist(), neighbours[:, :MISSING_NEIGHBOURS].tolist(), strict=True):
        for b in near:
            pair = (a, b) if a < b else (b, a)
            if a == b or pair in seen or pair in linked:
                continue
            seen[pair] = min(float(vectors[a] @ vectors[b]), 1.0)
    return sorted(((a, b, s) for (a, b), s in seen.items()), key=lambda item: -item[2])
