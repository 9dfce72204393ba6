"""The map as kept in the index: arrays and lists, saved in two meta rows.

``vault_map`` holds the JSON parts (paths, roles, cluster words, missing links, when and from
what it was made); ``vault_map_arrays`` an ``.npz`` of the numbers (reduced vectors as
float16, positions, clusters, the PCA basis), base64-encoded. Both are written in one
transaction, so a reader sees the old map or the new one. Any backend's meta table holds
them; a map that cannot be read (another format, a damaged row) is built anew.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..storage.store import Store
from .features import Basis, Centres

FORMAT = 2
MAP_KEY = "vault_map"
ARRAYS_KEY = "vault_map_arrays"


@dataclass(slots=True)
class KeptMap:
    """Everything a map is made of, row by row with ``paths``."""

    paths: list[str]
    basis: Basis
    vectors: np.ndarray
    xy: np.ndarray
    labels: np.ndarray
    centres: np.ndarray
    signature: list[int]
    bounds: tuple[float, float, float] = (0.0, 0.0, 1.0)
    """min x, min y and the span that scale positions into [0, 1] (fixed at a build, so an
    update does not move every point)."""
    built_at: float = 0.0
    updated_at: float = 0.0
    deep_share: float = 0.0
    wanted_clusters: int | None = None
    words: list[list[str]] = field(default_factory=list)
    density: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    mean_similarity: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    bridge: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    links: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    roles: list[str] = field(default_factory=list)
    missing: list[tuple[int, int, float]] = field(default_factory=list)
    linked: set[tuple[int, int]] = field(default_factory=set)
    """Pairs of rows (a < b) that link either way; not saved (read from the links)."""

    @classmethod
    def empty(
        cls, paths: list[str], basis: Basis, vectors: np.ndarray, xy: np.ndarray, labels: np.ndarray,
        centres: np.ndarray, signature: list[int],
    ) -> KeptMap:  # fmt: skip
        n = len(paths)
        low = xy.min(axis=0) if n else np.zeros(2, np.float32)
        span = float(np.ptp(xy, axis=0).max()) if n else 1.0
        kept = cls(paths, basis, vectors.astype(np.float16), xy, labels, centres, signature)
        kept.bounds = (float(low[0]), float(low[1]), max(span, 1e-9))
        kept.density = np.zeros(n, np.float32)
        kept.mean_similarity = np.zeros(n, np.float32)
        kept.bridge = np.zeros(n, np.float32)
        kept.links = np.zeros(n, np.int64)
        kept.roles = ["member"] * n
        return kept

    @classmethod
    def carry(
        cls, old: KeptMap, paths: list[str], vectors: np.ndarray, xy: np.ndarray, labels: np.ndarray,
        carried: np.ndarray, signature: list[int],
    ) -> KeptMap:  # fmt: skip
        """A map of ``paths`` that keeps ``old``'s per-note values where ``carried`` (the
        old row of each new row, -1 for a new note) says, and its clusters and missing links."""
        kept = cls(paths, old.basis, vectors.astype(np.float16), xy, labels, old.centres, signature)
        kept.bounds, kept.built_at, kept.words = old.bounds, old.built_at, old.words
        kept.wanted_clusters = old.wanted_clusters
        same = carried >= 0
        n = len(paths)
        for name, dtype in (("density", np.float32), ("mean_similarity", np.float32), ("bridge", np.float32), ("links", np.int64)):
            values = np.zeros(n, dtype)
            values[same] = getattr(old, name)[carried[same]]
            setattr(kept, name, values)
        kept.roles = [old.roles[c] if c >= 0 else "member" for c in carried.tolist()]
        new_row = {int(c): i for i, c in enumerate(carried.tolist()) if c >= 0}
        kept.missing = [
            (new_row[a], new_row[b], s) if new_row[a] < new_row[b] else (new_row[b], new_row[a], s)
            for a, b, s in old.missing
            if a in new_row and b in new_row
        ]
        return kept

    @property
    def space(self) -> str:
        return self.basis.space

    def positions(self) -> np.ndarray:
        """Positions scaled into [0, 1] (the shorter side centred)."""
        if not len(self.xy):
            return self.xy
        low_x, low_y, span = self.bounds
        scaled = (self.xy - np.array([low_x, low_y], np.float32)) / span
        extent = np.ptp(self.xy, axis=0) / span
        scaled += (1.0 - np.minimum(extent, 1.0)) / 2
        return np.clip(scaled, 0.0, 1.0)

    # -- keeping -------------------------------------------------------------------------
    def save(self, store: Store) -> None:
        arrays = {
            "vectors": self.vectors, "xy": self.xy, "labels": self.labels, "centres": self.centres,
            "mean": self.basis.mean, "axes": self.basis.axes, "density": self.density,
            "static_centre": self.basis.centres.static,
            "deep_centre": np.zeros(0, np.float32) if self.basis.centres.deep is None else self.basis.centres.deep,
            "mean_similarity": self.mean_similarity, "bridge": self.bridge, "links": self.links,
        }  # fmt: skip
        buffer = io.BytesIO()
        np.savez(buffer, allow_pickle=False, **arrays)
        head: dict[str, Any] = {
            "format": FORMAT, "paths": self.paths, "space": self.space, "signature": self.signature,
            "bounds": list(self.bounds), "built_at": self.built_at, "updated_at": self.updated_at,
            "deep_share": self.deep_share, "wanted_clusters": self.wanted_clusters, "words": self.words,
            "roles": self.roles, "missing": [[a, b, round(s, 5)] for a, b, s in self.missing],
        }  # fmt: skip
        store.set_meta({MAP_KEY: json.dumps(head, ensure_ascii=False), ARRAYS_KEY: base64.b64encode(buffer.getvalue()).decode()})

    @classmethod
    def load(cls, store: Store) -> KeptMap | None:
        """The kept map, or None when there is none or it cannot be read."""
        head_text, arrays_text = store.get_meta(MAP_KEY), store.get_meta(ARRAYS_KEY)
        if not head_text or not arrays_text:
            return None
        try:
            head = json.loads(head_text)
            if head.get("format") != FORMAT:
                return None
            with np.load(io.BytesIO(base64.b64decode(arrays_text)), allow_pickle=False) as data:
                arrays = {name: data[name] for name in data.files}
            deep_centre = arrays["deep_centre"] if len(arrays["deep_centre"]) else None
            centres = Centres(arrays["static_centre"], deep_centre)
            basis = Basis(mean=arrays["mean"], axes=arrays["axes"], space=str(head["space"]), centres=centres)
            kept = cls(list(head["paths"]), basis, arrays["vectors"], arrays["xy"], arrays["labels"], arrays["centres"],
                       list(head["signature"]))  # fmt: skip
            low_x, low_y, span = (float(v) for v in head["bounds"])
            kept.bounds = (low_x, low_y, span)
            kept.built_at, kept.updated_at = float(head["built_at"]), float(head["updated_at"])
            kept.deep_share, kept.wanted_clusters = float(head["deep_share"]), head["wanted_clusters"]
            kept.words, kept.roles = [list(w) for w in head["words"]], list(head["roles"])
            kept.missing = [(int(a), int(b), float(s)) for a, b, s in head["missing"]]
            for name in ("density", "mean_similarity", "bridge", "links"):
                setattr(kept, name, arrays[name])
        except (ValueError, KeyError, TypeError, OSError):
            return None
        if len(kept.xy) != len(kept.paths) or len(kept.roles) != len(kept.paths):
            return None
        return kept
