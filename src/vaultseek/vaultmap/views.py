"""What the surfaces get from a map: the records of ``reports.py``.

The kept map holds numbers and rows; this module adds what the index says of each note (its
title, folder, tags, modification time), names the clusters' central notes, finds the
passage pair behind each missing link (the two sections, one of each note, whose vectors are
closest), and writes the ``[[link]]`` to paste.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from ..reports import MapCluster, MapNeighbour, MapNote, MapPoint, MissingLink, Passage, VaultMap
from ..storage.store import Store
from ..storage.vectors import VectorIndex
from . import clusters as clustering
from . import features as feat
from . import regions
from .kept import KeptMap

_PASSAGE_CHARS = 280


def vault_map(store: Store, kept: KeptMap, static: VectorIndex, *, limit: int, how: str, moved: int,
              seconds: float, notices: Sequence[str] = ()) -> VaultMap:  # fmt: skip
    """The map's record, with its ``limit`` best missing links."""
    info = _file_info(store)
    nothing = _FileInfo(None, (), None)
    titles = {path: info.get(path, nothing).title for path in kept.paths}
    xy = kept.positions().astype(np.float64).tolist()
    labels, links = kept.labels.tolist(), kept.links.tolist()
    bridge, dense = kept.bridge.astype(np.float64).tolist(), kept.density.astype(np.float64).tolist()
    points = tuple(
        MapPoint(
            path=path, title=titles[path], x=round(xy[i][0], 5), y=round(xy[i][1], 5), cluster=labels[i],
            folder=_folder(path), tags=(about := info.get(path, nothing)).tags, modified=about.modified,
            links=links[i], role=kept.roles[i],  # type: ignore[arg-type]
            bridge=round(bridge[i], 3), density=round(dense[i], 3),
        )
        for i, path in enumerate(kept.paths)
    )  # fmt: skip
    found = clusters_of(kept, titles)
    names = name_counts(kept.paths)
    missing = tuple(missing_link(store, static, kept, a, b, s, names=names) for a, b, s in kept.missing[:limit])
    return VaultMap(
        space=kept.space, deep_share=round(kept.deep_share, 4), built_at=kept.built_at, updated_at=kept.updated_at,
        notes=points, clusters=found, missing_links=missing, notices=tuple(notices), how=how,  # type: ignore[arg-type]
        moved=moved, seconds=round(seconds, 3),
    )  # fmt: skip


def clusters_of(kept: KeptMap, titles: dict[str, str | None]) -> tuple[MapCluster, ...]:
    """Every cluster that holds a note, with its name, central notes, centre and density."""
    xy, vectors = kept.positions(), kept.vectors.astype(np.float32)
    return tuple(_cluster(kept, c, titles, xy, vectors) for c in np.unique(kept.labels).tolist())


def _cluster(kept: KeptMap, cluster: int, titles: dict[str, str | None], xy: np.ndarray, vectors: np.ndarray) -> MapCluster:
    members = kept.labels == cluster
    central = [kept.paths[r] for r in clustering.central_rows(vectors, kept.labels, kept.centres, cluster)]
    words = kept.words[cluster] if cluster < len(kept.words) else []
    label = clustering.label_of(words, [titles.get(p) or PurePosixPath(p).stem for p in central])
    dense = float(kept.density[members].mean())
    return MapCluster(
        id=cluster, label=label, words=tuple(words), central=tuple(central), size=int(members.sum()),
        x=round(float(xy[members, 0].mean()), 5), y=round(float(xy[members, 1].mean()), 5),
        density=round(dense, 3), thin=dense < regions.THIN,
    )


def map_note(store: Store, kept: KeptMap, static: VectorIndex, path: str, *, k: int, candidates: Sequence[str]) -> MapNote:
    """``path``'s cluster, role, ``k`` nearest notes and its missing links: the first ``k``
    of ``candidates`` (paths, best first) it does not link."""
    row = kept.paths.index(path)
    vectors = kept.vectors.astype(np.float32)
    near, sims = feat.nearest(vectors[row : row + 1], k + 1, among=vectors)
    pairs = [(int(b), float(s)) for b, s in zip(near[0], sims[0], strict=True) if b != row][:k]
    titles = store.titles([kept.paths[b] for b, _s in pairs] + [path])
    linked = {b for b, _s in pairs if (min(row, b), max(row, b)) in kept.linked}
    neighbours = tuple(
        MapNeighbour(path=kept.paths[b], title=titles.get(kept.paths[b]), similarity=round(s, 4),
                     cluster=int(kept.labels[b]), linked=b in linked)
        for b, s in pairs
    )  # fmt: skip
    names = name_counts(kept.paths)
    where = {p: i for i, p in enumerate(kept.paths)}
    rows = [where[c] for c in candidates if c in where and where[c] != row]
    unlinked = [b for b in rows if (min(row, b), max(row, b)) not in kept.linked][:k]
    missing = tuple(
        missing_link(store, static, kept, row, b, min(float(vectors[row] @ vectors[b]), 1.0), names=names)
        for b in unlinked
    )
    cluster = _cluster(kept, int(kept.labels[row]), titles, kept.positions(), vectors)
    return MapNote(
        path=path, title=titles.get(path), cluster=cluster, role=kept.roles[row],  # type: ignore[arg-type]
        bridge=round(float(kept.bridge[row]), 3), density=round(float(kept.density[row]), 3),
        neighbours=neighbours, missing_links=missing,
    )


def missing_link(
    store: Store, static: VectorIndex, kept: KeptMap, a: int, b: int, similarity: float, *, names: Counter[str] | None = None
) -> MissingLink:
    """The missing link between rows ``a`` and ``b``, with the passages that make them close
    (``names``: :func:`name_counts` of the map's paths, when already counted)."""
    source, target = kept.paths[a], kept.paths[b]
    first, second = _closest_passages(store, static, source, target)
    return MissingLink(
        source=source, target=target, similarity=round(similarity, 4), source_passage=first,
        target_passage=second, link=link_text(target, kept.paths, names=names),
    )


def name_counts(paths: Sequence[str]) -> Counter[str]:
    """How many of ``paths`` have a file name that starts with each ``stem.`` (``a.b.md``
    counts for ``a`` and ``a.b``): what :func:`link_text` asks of every link, counted once."""
    counts: Counter[str] = Counter()
    for path in paths:
        name = path.rpartition("/")[2]
        dot = name.find(".")
        while dot >= 0:
            counts[name[:dot]] += 1
            dot = name.find(".", dot + 1)
    return counts


def link_text(target: str, paths: Sequence[str], *, names: Counter[str] | None = None) -> str:
    """The wiki link Obsidian would write for ``target``: its name, or its path when another
    note has the same name (``names``: :func:`name_counts` of ``paths``, when already counted)."""
    pure = PurePosixPath(target)
    name = pure.stem if pure.suffix.lower() == ".md" else pure.name
    clash = (names if names is not None else name_counts(paths))[pure.stem] > 1
    written = str(pure.with_suffix("")) if clash and pure.suffix.lower() == ".md" else (target if clash else name)
    return f"[[{written}]]"


def _closest_passages(store: Store, static: VectorIndex, a: str, b: str) -> tuple[Passage | None, Passage | None]:
    rows_a, rows_b = store.chunks_of_file(a), store.chunks_of_file(b)
    if not rows_a or not rows_b:
        return None, None
    va, vb = _chunk_vectors(static, [r.id for r in rows_a]), _chunk_vectors(static, [r.id for r in rows_b])
    if va is None or vb is None:
        return _passage(rows_a[0]), _passage(rows_b[0])
    sims = va @ vb.T
    i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
    return _passage(rows_a[int(i)]), _passage(rows_b[int(j)])


def _chunk_vectors(static: VectorIndex, ids: list[int]) -> np.ndarray | None:
    wanted = np.asarray(ids, dtype=np.int64)
    rows = np.searchsorted(static.ids, wanted)
    rows = np.minimum(rows, len(static.ids) - 1)
    if not len(static.ids) or not np.array_equal(static.ids[rows], wanted):
        return None
    return static.vectors(rows)


def _passage(row: object) -> Passage:
    text = " ".join(str(getattr(row, "text", "")).split())
    if len(text) > _PASSAGE_CHARS:
        text = text[: _PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
    heading = str(getattr(row, "section", "")) or None
    return Passage(chunk_id=int(getattr(row, "id", 0)), heading=heading, text=text)


@dataclass(frozen=True, slots=True)
class _FileInfo:
    title: str | None
    tags: tuple[str, ...]
    modified: float | None


def _file_info(store: Store) -> dict[str, _FileInfo]:
    return {
        path: _FileInfo(title, tuple(str(t) for t in tags), round(mtime_ns / 1e9, 3) if mtime_ns else None)
        for path, title, tags, mtime_ns in store.note_facts()
    }


def _folder(path: str) -> str:
    return path.rpartition("/")[0]
