"""A recursive character splitter for running text: ~1,000-character pieces, ~100 overlap.

The text is cut at the coarsest separator that makes pieces small enough — paragraphs, then
lines, then sentences, then words, then (only for a single enormous word) characters — and the
pieces are packed greedily. Each new chunk starts with the last ~``overlap`` characters of the
previous one (whole pieces only), so a sentence cut at a boundary is still found whole.

Text longer than :data:`WINDOW` (a 20 MB export on one line) is split a window at a time, each
window cut at the coarsest separator in its second half: the pieces of one window are in memory
at once, never the millions of a whole document. A chunk never spans two windows, and the first
chunk of a window carries no overlap.
"""

from __future__ import annotations

SEPARATORS = ("\n\n", "\n", ". ", " ")
WINDOW = 1 << 20


def split_text(text: str, *, size: int = 1000, overlap: int = 100) -> list[str]:
    """Pieces of ``text`` of at most ``size`` characters (stripped; none empty)."""
    text = text.strip()
    if not text:
        return []
    if len(text) <= size:
        return [text]
    if len(text) > WINDOW:
        pieces: list[str] = []
        start = 0
        while start < len(text):
            end = _window_end(text, start)
            pieces.extend(split_text(text[start:end], size=size, overlap=overlap))
            start = end
        return pieces
    return [c for c in (c.strip() for c in _merge(_atoms(text, size, 0), size, overlap)) if c]


def _window_end(text: str, start: int) -> int:
    """Where the window that begins at ``start`` ends: after the coarsest separator in its
    second half, else at its full length."""
    end = start + WINDOW
    if end >= len(text):
        return len(text)
    for sep in SEPARATORS:
        cut = text.rfind(sep, start + WINDOW // 2, end)
        if cut != -1:
            return cut + len(sep)
    return end


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
    """Pack atoms greedily; each new chunk opens with the previous chunk's last ~``overlap``
    characters (cut at a word boundary)."""
    chunks: list[str] = []
    current = ""
    carried = 0  # length of the overlap at the start of `current`
    for atom in atoms:
        if len(current) > carried and len(current) + len(atom) > size:
            chunks.append(current)
            tail = _tail(current, min(overlap, size - len(atom)))
            current, carried = tail, len(tail)
        current += atom
    fresh = current[carried:]
    if chunks and len(fresh.strip()) < size // 10 and len(chunks[-1]) + len(fresh) <= size * 1.1:
        chunks[-1] += fresh  # a crumb at the end belongs with the chunk before it
    elif fresh.strip():
        chunks.append(current)
    return chunks


def _tail(text: str, limit: int) -> str:
    """The end of ``text``, at most ``limit`` characters, starting at a word."""
    if limit <= 0:
        return ""
    tail = text[-limit:]
    if len(text) > limit and not text[-limit - 1].isspace():
        cut = next((i for i, ch in enumerate(tail) if ch.isspace()), len(tail))
        tail = tail[cut:]
    return tail.lstrip()
