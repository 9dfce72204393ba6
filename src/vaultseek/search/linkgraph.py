"""The vault's link graph, and what ranking takes from it.

Nodes are files, edges the distinct resolved links between two different files (see
:mod:`linking`). The graph is built once per index state from the stored resolutions
(~20 ms at 16,894 files) and answers two questions:

* **Related by links** (:meth:`LinkGraph.related`): a note's direct links in either
  direction, plus every note that shares neighbours with it — co-citation (both linked from
  the same note) and coupling (both linking to the same note) alike — each shared neighbour
  weighted by Adamic–Adar, ``1 / log2(1 + its degree)``, so a map of content linking to 800
  notes says little about any two of them while a small note linking just the two says a lot.
* **A ranking signal** (:func:`boost`), applied after fusion as ``score × (1 + weight ×
  signal)`` with ``signal`` in [0, 1] (multiplicative, so the same weight means the same for
  convex and RRF scores):

  - ``backlinks`` (the default signal): a query-independent prior, ``log(1 + backlinks) /
    log(1 + most backlinks in the vault)`` — well-linked notes rise everywhere.
  - ``neighbours``: one step of a personalised PageRank seeded by the top hits.
    Each of the best ``SEEDS`` files passes its share of the seeds' fused score, split
    evenly over its links (in and out), to the files it is linked with; a candidate's
    signal is what it receives, relative to the most any candidate receives. Hits that the
    other top hits link to (or that link to them) rise; a lone hit stays where it is.

  Only the candidates that can still reach the top k are re-scored (:func:`contenders`).
  Off by default (``link_boost = 0``): turn it on where measurement shows it helps. On the
  benchmark vault's known-item probe (``python -m benchmarks.links``) ``backlinks``
  helped the densely linked notes and ``neighbours`` hurt both kinds, hence the default signal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import LinkDirection
from .fusion import Fused

LINK_SIGNALS = ("backlinks", "neighbours")
SEEDS = 10
"""How many of the best distinct files seed the ``neighbours`` signal."""


@dataclass(frozen=True, slots=True)
class LinkedNote:
    """A note related to another by links: its score, whether the two link directly, and
    the neighbours they share (strongest first)."""

    path: str
    score: float
    linked: LinkDirection | None
    """``to`` (the note links to it), ``from`` (it links to the note), ``both``, or None."""
    shared: tuple[str, ...]


class LinkGraph:
    """Files and the distinct links between them, with in/out neighbour sets."""

    def __init__(self, edges: Iterable[tuple[str, str]]) -> None:
        self.paths: list[str] = []
        self.node: dict[str, int] = {}
        self.out: list[set[int]] = []
        self.into: list[set[int]] = []
        for source, target in edges:
            a, b = self._add(source), self._add(target)
            if a != b:
                self.out[a].add(b)
                self.into[b].add(a)
        self.edges = sum(len(s) for s in self.out)
        self._around = [out | into for out, into in zip(self.out, self.into, strict=True)]
        self._most_backlinks = max((len(s) for s in self.into), default=0)

    def _add(self, path: str) -> int:
        found = self.node.get(path)
        if found is None:
            found = self.node[path] = len(self.paths)
            self.paths.append(path)
            self.out.append(set())
            self.into.append(set())
        return found

    def __len__(self) -> int:
        return len(self.paths)

    def backlinks(self, path: str) -> int:
        """How many other files link to ``path``."""
        i = self.node.get(path)
        return 0 if i is None else len(self.into[i])

    def prior(self, path: str) -> float:
        """``log(1 + backlinks) / log(1 + the most backlinks of any file)``, in [0, 1]."""
        if not self._most_backlinks:
            return 0.0
        return math.log1p(self.backlinks(path)) / math.log1p(self._most_backlinks)

    def neighbours(self, i: int) -> set[int]:
        """The files node ``i`` links to or is linked from."""
        return self._around[i]

    def related(self, path: str) -> list[LinkedNote]:
        """Notes related to ``path`` by links, best first: 1 for each direction of a direct
        link, plus the Adamic–Adar weight of every neighbour the two share."""
        i = self.node.get(path)
        if i is None:
            return []
        out, into = self.out[i], self.into[i]
        near = out | into
        scores: dict[int, float] = {j: float((j in out) + (j in into)) for j in near}
        shared: dict[int, list[tuple[float, int]]] = {}
        for z in near:
            around = self.neighbours(z)
            weight = 1.0 / math.log2(1 + len(around))
            for j in around:
                if j != i:
                    scores[j] = scores.get(j, 0.0) + weight
                    shared.setdefault(j, []).append((weight, z))
        order = sorted(scores, key=lambda j: (-scores[j], self.paths[j]))
        return [
            LinkedNote(
                self.paths[j],
                scores[j],
                _direction(j in out, j in into),
                tuple(self.paths[z] for _w, z in sorted(shared.get(j, []), key=lambda wz: (-wz[0], self.paths[wz[1]]))[:5]),
            )
            for j in order
        ]


def _direction(to: bool, from_: bool) -> LinkDirection | None:
    return "both" if to and from_ else "to" if to else "from" if from_ else None


def signal(graph: LinkGraph, fused: Sequence[Fused], paths: Mapping[int, str], kind: str) -> dict[str, float]:
    """Each candidate file's link signal in [0, 1] (see the module docstring)."""
    files = list(dict.fromkeys(paths[f.item] for f in fused if f.item in paths))
    if kind == "backlinks":
        return {path: graph.prior(path) for path in files}
    best: dict[str, float] = {}
    for f in fused:
        path = paths.get(f.item)
        if path is not None and path not in best:
            best[path] = max(f.score, 0.0)
    seeds = [(graph.node[p], best[p]) for p in files[:SEEDS] if p in graph.node]
    total = sum(score for _i, score in seeds)
    if not total:
        return {}
    spread = [(i, score / total / max(1, len(graph.neighbours(i)))) for i, score in seeds]
    received: dict[str, float] = {}
    for path in files:
        j = graph.node.get(path)
        if j is None:
            continue
        around = graph.neighbours(j)
        mass = sum(share for i, share in spread if i != j and i in around)
        if mass:
            received[path] = mass
    peak = max(received.values(), default=0.0)
    return {path: mass / peak for path, mass in received.items()} if peak else {}


def contenders(fused: Sequence[Fused], k: int, weight: float) -> list[Fused]:
    """The head of ``fused`` that can still make the top ``k`` once boosted: a score can grow
    by at most ``1 + weight``, and the k-th score only rises, so anything under ``k-th /
    (1 + weight)`` stays out. Typically a few dozen of the ~200 candidates."""
    if len(fused) <= k:
        return list(fused)
    floor = fused[k - 1].score / (1.0 + weight)
    end = k
    while end < len(fused) and fused[end].score >= floor:
        end += 1
    return list(fused[:end])


def boost(
    fused: Sequence[Fused], paths: Mapping[int, str], graph: LinkGraph, weight: float, kind: str = "backlinks"
) -> list[Fused]:
    """``fused`` re-scored as ``score × (1 + weight × signal)`` and re-sorted (ties as in
    fusion: the better best rank, then the smaller id). ``paths`` maps item → file."""
    strength = signal(graph, fused, paths, kind)
    if not strength:
        return list(fused)
    scored = [
        Fused(f.item, f.score * (1.0 + weight * strength.get(paths.get(f.item, ""), 0.0)), f.ranks)
        for f in fused
    ]
    return sorted(scored, key=lambda f: (-f.score, min(f.ranks.values(), default=0), f.item))
