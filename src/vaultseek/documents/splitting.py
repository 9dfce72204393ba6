"""A recursive character splitter for running text: ~1,000-character pieces, ~100 overlap.

The text is cut at the coarsest separator that makes pieces small enough — paragraphs, then
lines, then sentences, then words, then (only for a single enormous word) characters — and the
pieces are packed greedily. Each new chunk starts with the last ~``overlap`` characters of the
previous one (whole pieces only), so a sentence cut at a boundary is still found whole.
"""

from __future__ import annotations

SEPARATORS = ("\n\n", "\n", ". ", " ")


def split_text(text: str, *, size: int = 1000, overlap: int = 100) -> list[str]:
    """Pieces of ``text`` of at most ``size`` characters (stripped; none empty)."""
    text = text.strip()
    if not text:
        return []
    if len(text) <= size:
        return [text]
    return [c for c in (c.strip() for c in _merge(_atoms(text, size, 0), size, overlap)) if c]


def _atoms(text: str, size: int, level: int) -> list[str]:
    """Cut ``text`` into pieces each at most ``size`` long, keeping every separator attached to
    the piece before it (so joining the pieces gives back the text)."""
    if len(text) <= size:
        return [text]
    if level >= len(SEPARATORS):
        return [text[i : i + size] for i in range(0, len(text), size)]
    sep = SEPARATORS[level]
    parts = text.split(sep)
    if len(parts) == 1:
        return _atoms(text, size, level + 1)
    out: list[str] = []
    for i, part in enumerate(parts):
        piece = part + (sep if i < len(parts) - 1 else "")
        if not piece:
            continue
        out.extend(_atoms(piece, size, level + 1) if len(piece) > size else [piece])
    return out


def _merge(atoms: list[str], size: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    carried = 0  # how many atoms at the start of `current` repeat the previous chunk
    length = 0
    for atom in atoms:
        if len(current) > carried and length + len(atom) > size:
            chunks.append("".join(current))
            # Carry whole trailing atoms worth at most `overlap` characters into the next chunk.
            keep: list[str] = []
            kept = 0
            for prev in reversed(current):
                if kept + len(prev) > overlap or kept + len(prev) + len(atom) > size:
                    break
                keep.insert(0, prev)
                kept += len(prev)
            current, carried, length = keep, len(keep), kept
        current.append(atom)
        length += len(atom)
    fresh = "".join(current[carried:])
    if chunks and len(fresh.strip()) < size // 10 and len(chunks[-1]) + len(fresh) <= size * 1.1:
        chunks[-1] += fresh  # a crumb at the end belongs with the chunk before it
    elif fresh.strip():
        chunks.append("".join(current))
    return chunks
