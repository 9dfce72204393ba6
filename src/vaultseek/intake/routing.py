"""Where an item belongs, and how relevant it is to the vault: both from the index's vectors.

The domains are folders (``intake_domains``; by default the vault's top-level folders that
hold indexed notes, never the intake folders). Each domain is known by its chunks' vectors.
An item's **affinity** to a domain is the mean of two cosines: to the domain's centroid (its
notes as a whole) and to the domain's ``NEAREST`` passages most like the item (its closest
notes). The item goes to the domain of highest affinity; the gap to the runner-up is its
**margin**, reported with the decision.

**Relevance** is the chosen domain's affinity, blended with how close the item comes to the
vault as a whole (the mean cosine of its ``NEAREST`` nearest passages anywhere), mapped from
[``RELEVANCE_LOW``, ``RELEVANCE_HIGH``] onto [0, 1] — cosine values are not probabilities,
and those two anchors are where off-topic and held-out on-topic items fall in the
measurement (``python -m benchmarks.intake``, docs/intake.md).

Deterministic: the same index state and text give the same numbers (ties go to the domain
whose name sorts first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import IntakeError
from .scoring import Dimension, ramp

NEAREST = 5
"""How many nearest passages count for "closest notes" (in a domain, and in the vault)."""
RELEVANCE_LOW = 0.40
"""A blended cosine at or under this is relevance 0."""
RELEVANCE_HIGH = 0.65
"""A blended cosine at or over this is relevance 1."""
ROOT = ""
"""The domain of a vault without folders: its top level."""
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Affinity:
    domain: str
    centroid: float
    nearest: float

    @property
    def score(self) -> float:
        return round((self.centroid + self.nearest) / 2, 4)


@dataclass(frozen=True)
class Route:
    """The routing part of an assessment: the domain, the ranking behind it, relevance."""

    domain: str
    affinities: tuple[Affinity, ...]
    """Every domain, best first."""
    relevance: Dimension
    nearest_paths: tuple[str, ...]

    @property
    def margin(self) -> float:
        if len(self.affinities) < 2:
            return 1.0
        return round(self.affinities[0].score - self.affinities[1].score, 4)


class DomainModel:
    """The vault's domains as vectors, built once from one index state."""

    def __init__(self, paths: Sequence[str], matrix: np.ndarray, domains: Sequence[str]) -> None:
        self.domains = tuple(sorted(set(domains)))
        self.paths = list(paths)
        self.matrix = matrix
        owner = [_owner(path, self.domains) for path in self.paths]
        self.members: dict[str, np.ndarray] = {}
        self.centroids: dict[str, np.ndarray] = {}
        for domain in self.domains:
            rows = np.asarray([i for i, o in enumerate(owner) if o == domain], dtype=np.int64)
            if not len(rows):
                continue
            centroid = matrix[rows].mean(axis=0)
            norm = float(np.linalg.norm(centroid))
            if norm > 0:
                self.members[domain] = rows
                self.centroids[domain] = centroid / norm

    @property
    def usable(self) -> tuple[str, ...]:
        """Domains with at least one indexed passage (the ones items can be routed to)."""
        return tuple(d for d in self.domains if d in self.centroids)

    def route(self, vector: np.ndarray, *, forced: str | None = None) -> Route:
        """Rank the domains for ``vector`` (a unit vector) and score its relevance; ``forced``
        picks the domain instead of the ranking (its affinity still feeds relevance)."""
        if not len(self.paths) or not np.any(vector):
            reason = "the index holds no vectors yet" if not len(self.paths) else "the item has no text the model knows"
            return Route(forced or ROOT, (), Dimension("relevance", 0.0, (reason,)), ())
        sims = self.matrix @ vector.astype(np.float32)
        affinities = []
        for domain in self.usable:
            rows = self.members[domain]
            top = _top_mean(sims[rows], NEAREST)
            affinities.append(Affinity(domain, round(float(self.centroids[domain] @ vector), 4), round(top, 4)))
        affinities.sort(key=lambda a: (-a.score, a.domain))
        vault_near = _top_mean(sims, NEAREST)
        order = np.lexsort((np.arange(len(sims)), -sims))[: NEAREST]
        nearest_paths = tuple(dict.fromkeys(self.paths[i] for i in order))
        if forced is not None:
            chosen = next((a for a in affinities if a.domain == forced), None)
        else:
            chosen = affinities[0] if affinities else None
        domain = chosen.domain if chosen is not None else (forced if forced is not None else ROOT)
        domain_score = chosen.score if chosen is not None else vault_near
        blended = (domain_score + vault_near) / 2
        reasons = [
            (
                f"cosine {vault_near:.2f} to its {NEAREST} nearest passages in the vault "
                f"({', '.join(nearest_paths[:3])})"
            ),
        ]
        if chosen is not None:
            reasons.append(
                f"affinity {chosen.score:.2f} to domain {_label(chosen.domain)} "
                f"(centroid {chosen.centroid:.2f}, nearest passages {chosen.nearest:.2f})"
            )
        if len(affinities) > 1 and forced is None:
            runner = affinities[1]
            reasons.append(f"runner-up {_label(runner.domain)} {runner.score:.2f} (margin {affinities[0].score - runner.score:.3f})")
        score = ramp(blended, RELEVANCE_LOW, RELEVANCE_HIGH)
        reasons.append(f"blended cosine {blended:.3f} on a scale from {RELEVANCE_LOW:g} (0) to {RELEVANCE_HIGH:g} (1)")
        return Route(domain, tuple(affinities), Dimension("relevance", score, tuple(reasons)), nearest_paths)


def check_domain(domain: str) -> str:
    """``domain`` as a vault-relative folder path (``work/projects``; ``/`` between folders, a
    trailing one dropped), or :class:`IntakeError`. A domain comes from ``--domain``, the
    configuration or a queued note's own frontmatter, so it is checked as untrusted text: no
    ``..``, no absolute path or drive letter, no backslash, no control characters, no hidden
    folder (``.vaultseek``, ``.obsidian``). Where the folder really leads (symlinks) is checked
    when the item is written (:func:`vaultseek.intake.filing.check_destination`)."""
    hint = 'a domain is a folder inside the vault, e.g. "cooking" or "work/projects"'
    if not isinstance(domain, str):
        raise IntakeError(f"the domain {domain!r} is not a folder name", hint=hint)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in domain):
        raise IntakeError(f"the domain {domain!r} contains control characters", hint=hint)
    if domain.startswith("/") or _DRIVE.match(domain):
        raise IntakeError(f"the domain {domain!r} is an absolute path", hint=hint)
    if "\\" in domain:
        raise IntakeError(f"the domain {domain!r} contains a backslash", hint=hint + ", with / between folders")
    parts = [part for part in domain.strip().rstrip("/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise IntakeError(f"the domain {domain!r} leads out of its folder ('..')", hint=hint)
    if any(part.startswith(".") for part in parts):
        raise IntakeError(f"the domain {domain!r} is a hidden folder", hint=hint)
    return "/".join(parts)


def default_domains(paths: Sequence[str], intake_folders: Sequence[str]) -> list[str]:
    """The vault's top-level folders that hold indexed files, minus the intake folders'."""
    reserved = {folder.split("/", 1)[0] for folder in intake_folders}
    return sorted({p.split("/", 1)[0] for p in paths if "/" in p} - reserved)


def _owner(path: str, domains: Sequence[str]) -> str | None:
    """The most specific domain folder containing ``path`` (domains may nest)."""
    best = None
    for domain in domains:
        if (domain == ROOT or path.startswith(domain + "/")) and (best is None or len(domain) > len(best)):
            best = domain
    return best


def _top_mean(values: np.ndarray, k: int) -> float:
    if not len(values):
        return 0.0
    k = min(k, len(values))
    top = np.partition(values, len(values) - k)[len(values) - k :]
    return float(top.mean())


def _label(domain: str) -> str:
    return domain or "(vault top level)"
