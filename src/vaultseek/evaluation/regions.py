"""Quality by region of the vault map: Recall@10 per cluster and per role (``vaultseek eval
--by-region``).

The map of the evaluated index (``Index.vault_map``: clusters, and each note's role — ``core``
deep inside its cluster, ``member``, ``bridge`` between clusters, ``island`` with no link and
few near notes) places every judged document. Each relevant document (grade above 0) counts in
its note's region, so a query whose two relevant documents sit in two clusters counts in both.
A region's Recall@10 is the mean, over the queries with a relevant document in that region, of
the share of those documents found in the first ten results (the note-level ranking the
harness scores, each document once at its best chunk's place) — Recall@10 restricted to the
region's documents. It is what measures the claim that dense clusters retrieve well and the
sparse bridge regions between them do not.

Clusters are reported when at least :data:`MIN_JUDGED` relevant (query, document) pairs fall
in them (fewer would be noise); every role is reported, with how many pairs it holds. The
notes of thin clusters (the map's ``thin``: sparse regions) are also pooled against those of
the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine import Index
from ..reports import MapCluster, VaultMap
from . import metrics

AT, DEEP_AT = 10, 100
"""The cut-offs: Recall@10, and Recall@100 beside it (in JSON), which the number of relevant
documents a query has caps less (a query with 30 cannot find more than a third in ten)."""
MIN_JUDGED = 10
"""Relevant (query, document) pairs a cluster needs to be reported on its own."""
ROLES = ("core", "member", "bridge", "island")
THIN, DENSE = "thin clusters", "dense clusters"


@dataclass(frozen=True, slots=True)
class MapRegions:
    """The evaluated index's map as the evaluation reads it: each judged document's cluster and
    role, the clusters, and how many notes each role holds."""

    space: str
    notes: int
    cluster_of: dict[str, int]
    """Document id → its note's cluster."""
    role_of: dict[str, str]
    """Document id → its note's role."""
    clusters: dict[int, MapCluster]
    role_sizes: dict[str, int]

    @classmethod
    def from_map(cls, found: VaultMap, document_of: Callable[[str], str | None]) -> MapRegions:
        """``found``'s notes placed by document (``document_of`` maps a note's path to the id
        the judgments use; None leaves the note out)."""
        cluster_of: dict[str, int] = {}
        role_of: dict[str, str] = {}
        sizes = dict.fromkeys(ROLES, 0)
        for point in found.notes:
            sizes[point.role] = sizes.get(point.role, 0) + 1
            document = document_of(point.path)
            if document is not None:
                cluster_of[document], role_of[document] = point.cluster, point.role
        return cls(found.space, len(found.notes), cluster_of, role_of, {c.id: c for c in found.clusters}, sizes)

    def to_dict(self) -> dict[str, Any]:
        return {"space": self.space, "notes": self.notes, "clusters": len(self.clusters),
                "roles": dict(self.role_sizes), "min_judged": MIN_JUDGED}  # fmt: skip


def map_regions(index: Index, document_of: Callable[[str], str | None]) -> MapRegions:
    """The map of ``index`` (kept, updated or built: ``Index.vault_map``) placing each document.
    Raises ``MapUnavailableError`` when the index has no vectors or too few notes."""
    return MapRegions.from_map(index.vault_map(limit=0), document_of)


@dataclass(frozen=True, slots=True)
class RegionScore:
    """Recall@10 over the relevant documents in one region of the map."""

    region: str
    """A role, :data:`THIN` / :data:`DENSE`, or a cluster's id."""
    notes: int
    """Notes of the map in the region."""
    judged: int
    """Relevant (query, document) pairs whose document lies in the region."""
    queries: int
    """Queries with at least one relevant document in the region."""
    recall: float
    """Mean over those queries of the share of their region's documents in the first ten."""
    recall_100: float
    """The same in the first hundred."""
    label: str | None = None
    """A cluster's name (its distinctive words)."""
    density: float | None = None
    """A cluster's density (0–1, the mean of its notes' density percentiles)."""
    per_query: tuple[tuple[int, float], ...] = ()
    """(position of the query, its Recall@10 in the region) for each query counted: what a
    bootstrap over queries resamples (``benchmarks/regions.py``); not in the JSON."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"region": self.region, "notes": self.notes, "judged": self.judged,
                               "queries": self.queries, "recall@10": round(self.recall, 6),
                               "recall@100": round(self.recall_100, 6)}  # fmt: skip
        if self.label is not None:
            out |= {"label": self.label, "density": self.density}
        return out


@dataclass(frozen=True, slots=True)
class RegionScores:
    """One configuration's Recall@10 by role, by thin vs dense cluster, and per cluster."""

    roles: tuple[RegionScore, ...]
    density: tuple[RegionScore, ...]
    clusters: tuple[RegionScore, ...]
    """Clusters with at least :data:`MIN_JUDGED` judged pairs, most judged first."""
    off_map: int
    """Relevant (query, document) pairs whose document is not on the map (no text)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": {s.region: s.to_dict() for s in self.roles},
            "density": {s.region: s.to_dict() for s in self.density},
            "clusters": [s.to_dict() for s in self.clusters], "off_map": self.off_map,
        }  # fmt: skip


def region_scores(
    regions: MapRegions, judgments: Sequence[metrics.Judgments], rankings: Sequence[Sequence[str]]
) -> RegionScores:
    """Recall@10 by region from each query's judgments and note-level ranking (in one order)."""
    per_region: dict[str, list[tuple[int, float, float]]] = {}
    judged: dict[str, int] = {}
    off_map = 0
    for position, (judged_docs, ranking) in enumerate(zip(judgments, rankings, strict=True)):
        found, deep = set(ranking[:AT]), set(ranking[:DEEP_AT])
        groups: dict[str, list[str]] = {}
        for document, grade in judged_docs.items():
            if grade <= 0:
                continue
            if document not in regions.role_of:
                off_map += 1
                continue
            cluster = regions.clusters.get(regions.cluster_of[document])
            thin = cluster is not None and cluster.thin
            for region in (regions.role_of[document], THIN if thin else DENSE, f"cluster {regions.cluster_of[document]}"):
                groups.setdefault(region, []).append(document)
        for region, documents in groups.items():
            shares = (position, sum(d in found for d in documents) / len(documents), sum(d in deep for d in documents) / len(documents))
            per_region.setdefault(region, []).append(shares)
            judged[region] = judged.get(region, 0) + len(documents)

    def score(region: str, notes: int, cluster: MapCluster | None = None) -> RegionScore:
        values = per_region.get(region, [])
        recall = metrics.mean([v[1] for v in values]) if values else 0.0
        recall_100 = metrics.mean([v[2] for v in values]) if values else 0.0
        label, density = (cluster.label, cluster.density) if cluster is not None else (None, None)
        per_query = tuple((v[0], v[1]) for v in values)
        return RegionScore(region, notes, judged.get(region, 0), len(values), recall, recall_100, label, density, per_query)

    thin_notes = sum(c.size for c in regions.clusters.values() if c.thin)
    clusters = [
        score(f"cluster {c.id}", c.size, c)
        for c in regions.clusters.values()
        if judged.get(f"cluster {c.id}", 0) >= MIN_JUDGED
    ]
    clusters.sort(key=lambda s: (-s.judged, s.region))
    return RegionScores(
        roles=tuple(score(role, regions.role_sizes.get(role, 0)) for role in ROLES),
        density=(score(DENSE, regions.notes - thin_notes), score(THIN, thin_notes)),
        clusters=tuple(clusters), off_map=off_map,
    )  # fmt: skip


def render_regions(regions: MapRegions, by_config: Sequence[tuple[str, RegionScores]]) -> list[str]:
    """The text of ``--by-region``: a row per configuration with Recall@10 by role and by thin
    vs dense cluster (each cell: recall, and the judged pairs it is over), then a row per
    reported cluster with a column per configuration."""
    if not by_config:
        return []
    first = by_config[0][1]
    head = (f"Recall@10 by region of the map ({regions.space} vectors, {regions.notes:,} notes, "
            f"{len(regions.clusters)} clusters): each relevant document counts in its note's region; "
            "in brackets, the relevant (query, document) pairs:")  # fmt: skip
    columns = [f"{s.region} ({s.notes:,} notes)" for s in (*first.roles, *first.density)]
    rows = [["configuration", *columns]]
    for label, scores in by_config:
        rows.append([label, *(_cell(s) for s in (*scores.roles, *scores.density))])
    lines = ["", head, *_aligned(rows)]
    if first.clusters:
        lines += ["", f"Recall@10 per cluster (clusters with at least {MIN_JUDGED} relevant pairs):"]
        names = [label for label, _s in by_config]
        cluster_rows = [["cluster", "notes", "density", "judged", *names]]
        for cluster in first.clusters:
            recalls = []
            for _label, scores in by_config:
                same = next((s for s in scores.clusters if s.region == cluster.region), None)
                recalls.append(f"{same.recall:.3f}" if same is not None else "-")
            name = f"{cluster.region.removeprefix('cluster ')} {cluster.label}"
            cluster_rows.append([name, f"{cluster.notes:,}", f"{cluster.density:.2f}", str(cluster.judged), *recalls])
        lines += _aligned(cluster_rows)
    if first.off_map:
        lines.append(f"note: {first.off_map} relevant pair(s) name a document that is not on the map")
    return lines


def _cell(score: RegionScore) -> str:
    return f"{score.recall:.3f} ({score.judged})" if score.queries else "-"


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]  # fmt: skip
