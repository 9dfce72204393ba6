"""The map as a picture: SVG written by hand, PNG drawn with Pillow (the documents extra).

Every note is a dot coloured by its cluster; bridges get a dark ring, islands are grey; each
cluster's label sits at its centre on a light halo (the largest clusters' first; a label that
would overlap one already drawn is left out). The picture is square, ``size`` pixels a
side, with the map's [0, 1] square inside a margin.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

from ..errors import MissingExtraError
from ..reports import MapCluster, VaultMap

PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
ISLAND = "#c8c8c8"
_MARGIN = 0.04


def colour(cluster: int) -> str:
    return PALETTE[cluster % len(PALETTE)]


def _radius(notes: int, size: int) -> float:
    return max(1.2, min(6.0, size / 260 * math.sqrt(1000 / max(notes, 1))))


def _at(value: float, size: int) -> float:
    return round((_MARGIN + value * (1 - 2 * _MARGIN)) * size, 2)


def labelled(found: VaultMap, size: int, font: int) -> list[MapCluster]:
    """The clusters whose labels fit, largest cluster first: a label that would overlap one
    already placed is left out (the cluster is still coloured; ``vaultseek map`` lists it)."""
    placed: list[tuple[float, float, float, float]] = []
    chosen = []
    for cluster in sorted(found.clusters, key=lambda c: -c.size):
        half_width = len(cluster.label) * font * 0.3 + 4
        x, y = _at(cluster.x, size), _at(cluster.y, size)
        box = (x - half_width, y - font * 0.7, x + half_width, y + font * 0.7)
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            continue
        placed.append(box)
        chosen.append(cluster)
    return chosen


def svg(found: VaultMap, *, size: int = 1200) -> str:
    """The map as an SVG document."""
    r = _radius(len(found.notes), size)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
        f'<rect width="{size}" height="{size}" fill="#ffffff"/>',
    ]
    for note in found.notes:
        fill = ISLAND if note.role == "island" else colour(note.cluster)
        ring = ' stroke="#222" stroke-width="0.8"' if note.role == "bridge" else ""
        title = escape(note.title or note.path)
        parts.append(
            f'<circle cx="{_at(note.x, size)}" cy="{_at(note.y, size)}" r="{r}" fill="{fill}"{ring}>'
            f"<title>{title}</title></circle>"
        )
    font = max(11, size // 90)
    for cluster in labelled(found, size, font):
        parts.append(
            f'<text x="{_at(cluster.x, size)}" y="{_at(cluster.y, size)}" font-family="sans-serif" '
            f'font-size="{font}" text-anchor="middle" fill="#111" stroke="#fff" stroke-width="3" '
            f'paint-order="stroke">{escape(cluster.label)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def png(found: VaultMap, path: Path, *, size: int = 1600) -> None:
    """The map drawn into a PNG file at ``path``."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:
        raise MissingExtraError.from_import(exc, "documents", feature="PNG maps (or write --out map.svg)") from exc
    image = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(image)
    r = _radius(len(found.notes), size)
    for note in found.notes:
        x, y = _at(note.x, size), _at(note.y, size)
        fill = ISLAND if note.role == "island" else colour(note.cluster)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=fill, outline="#222222" if note.role == "bridge" else None)
    points = max(12, size // 90)
    font = ImageFont.load_default(size=points)
    for cluster in labelled(found, size, points):
        draw.text((_at(cluster.x, size), _at(cluster.y, size)), cluster.label, fill="#111111", font=font,
                  anchor="mm", stroke_width=3, stroke_fill="#ffffff")  # fmt: skip
    image.save(path, format="PNG")
