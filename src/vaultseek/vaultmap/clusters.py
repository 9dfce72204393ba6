"""Clusters of notes, and the words and notes that name them.

Clustering is spherical k-means on the notes' reduced vectors (k-means++ seeds, then Lloyd
rounds on cosine): a few milliseconds of matrix products for 20k notes, every note in a
cluster (a map has no "noise" colour), and a new note joins the cluster whose centre is
nearest without moving the others. ``python -m benchmarks.vaultmap`` measures it against
HDBSCAN on the same vectors (adjusted Rand index against known groups, run time).

The number of clusters grows with the square root of the vault — a map a person can read
has tens of regions, not hundreds — unless ``clusters`` names it.

A cluster is named by its distinctive words (class-based TF-IDF: a word's share of the
cluster's words against how common it is across the vault) and by its most central notes
(nearest its centre).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ..text.lexical import STOPWORDS

MIN_CLUSTERS, MAX_CLUSTERS = 2, 40
_ROUNDS = 40
_SEED = 11
_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]{2,}")
_ADDRESS = re.compile(r"<?\b(?:https?://|www\.)\S+|\b[\w.-]+\.(?:com|org|net|io|dev|de)\b\S*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_LABEL_WORDS = 3
_WORDS_KEPT = 8
_EXTRA_STOPWORDS = frozenset(
    """also any been both each had has have here just more most much only other over same
    some such than them they those through too under use used using very was were would about
    after again all am because before being between could did doing down during few further
    him his her hers its itself let off once out own she should while whom yours sie wir ich
    auf für dem des ein einer eines oder wie wird sind auch als bei nach aus einem noch nur
    les des une est pour dans par sur pas que qui avec los las del por para una con que""".split()
)


def cluster_count(notes: int, wanted: int | None = None) -> int:
    """How many clusters a map of ``notes`` notes gets (``wanted`` if given, within reason)."""
    if wanted is not None:
        return max(1, min(wanted, notes))
    return max(min(MIN_CLUSTERS, notes), min(MAX_CLUSTERS, round(math.sqrt(notes / 3))))


def k_means(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means of unit rows: (the cluster of each row, the unit centres)."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros((0, vectors.shape[1]), np.float32)
    k = max(1, min(k, n))
    rng = np.random.default_rng(_SEED)
    centres = [int(rng.integers(n))]
    closest = 1.0 - vectors @ vectors[centres[0]]
    for _ in range(1, k):
        weight = np.maximum(closest, 0.0) ** 2
        total = weight.sum()
        pick = int(rng.choice(n, p=weight / total)) if total > 0 else int(rng.integers(n))
        centres.append(pick)
        closest = np.minimum(closest, 1.0 - vectors @ vectors[pick])
    centre = vectors[centres].copy()
    labels = np.full(n, -1, np.int64)
    for _ in range(_ROUNDS):
        new = np.argmax(vectors @ centre.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        sums = np.zeros_like(centre)
        np.add.at(sums, labels, vectors)
        empty = np.bincount(labels, minlength=k) == 0
        sums[empty] = centre[empty]
        centre = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return labels, centre.astype(np.float32)


def words_of(text: str) -> list[str]:
    """The words a label may use: letters (3 or more), and CJK runs as pairs of characters;
    web addresses are left out (a note's sources would name every cluster)."""
    text = _ADDRESS.sub(" ", text)
    found = [w for w in (m.group().lower() for m in _WORD.finditer(text)) if len(w) >= 3]
    for run in _CJK.findall(text):
        found += [run[i : i + 2] for i in range(max(len(run) - 1, 1))]
    return [w for w in found if w not in STOPWORDS and w not in _EXTRA_STOPWORDS]


def distinctive_words(labels: np.ndarray, note_words: Sequence[Iterable[str]], k: int) -> list[list[str]]:
    """Each cluster's most distinctive words, best first (class-based TF-IDF)."""
    per_cluster: list[Counter[str]] = [Counter() for _ in range(k)]
    for cluster, words in zip(labels.tolist(), note_words, strict=True):
        per_cluster[cluster].update(set(words))
    overall: Counter[str] = Counter()
    for counts in per_cluster:
        overall.update(counts)
    sizes = np.bincount(labels, minlength=k)
    notes = max(len(labels), 1)
    named = []
    for cluster, counts in enumerate(per_cluster):
        size = max(int(sizes[cluster]), 1)
        scored = [
            (share * math.log(notes / overall[word]), word)
            for word, count in counts.items()
            if count >= min(2, size) and (share := count / size) > 0
        ]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        named.append([word for _score, word in scored[:_WORDS_KEPT]])
    return named


def label_of(words: Sequence[str], central_titles: Sequence[str]) -> str:
    """A cluster's name: its first distinctive words, else its most central note's title."""
    if words:
        return " · ".join(words[:_LABEL_WORDS])
    return central_titles[0] if central_titles else "(unnamed)"


def central_rows(vectors: np.ndarray, labels: np.ndarray, centres: np.ndarray, cluster: int, count: int = 3) -> list[int]:
    """The rows of a cluster's ``count`` notes nearest its centre."""
    members = np.flatnonzero(labels == cluster)
    if not len(members):
        return []
    closeness = vectors[members] @ centres[cluster]
    return members[np.argsort(-closeness)[:count]].tolist()
