"""Token budgets: a search answer cut to fit ``max_tokens``.

A result costs what it shows — path, section, heading context, snippet — at
:data:`CHARS_PER_TOKEN` characters a token; a note of the note view costs its title and its
sections. Results are kept best first while they fit, in the order they are shown, and the
first one that does not fit ends the answer, so what is kept is always a head of the ranking.
The best result is always kept: alone over budget, its snippet is shortened, but its path,
section and heading context are never cut (they say where to look).
"""

from __future__ import annotations

from dataclasses import replace

from ..records import NoteResult, SearchResult

CHARS_PER_TOKEN = 4


def result_tokens(result: SearchResult) -> int:
    """Estimated tokens a result costs when shown: path, section, heading context, snippet."""
    chars = len(result.path) + len(result.section) + len(result.heading_context) + len(result.snippet)
    return -(-chars // CHARS_PER_TOKEN)


def fit_budget(results: list[SearchResult], max_tokens: int) -> list[SearchResult]:
    """Keep results, best first, while they fit in ``max_tokens`` (4 characters a token)."""
    kept: list[SearchResult] = []
    used = 0
    for result in results:
        cost = result_tokens(result)
        if used + cost > max_tokens:
            if not kept:
                fixed = len(result.path) + len(result.section) + len(result.heading_context)
                room = max_tokens * CHARS_PER_TOKEN - fixed - 1
                snippet = result.snippet[:room] + "…" if room > 0 else ""
                kept.append(replace(result, snippet=snippet))
            break
        kept.append(result)
        used += cost
    return kept


def fit_notes(notes: list[NoteResult], max_tokens: int) -> list[NoteResult]:
    """Keep notes, best first, and each note's sections, best first, while they fit in
    ``max_tokens``: a note's title counts with its first section. A note whose extra section
    does not fit is kept with the sections that do, and ends the answer."""
    kept: list[NoteResult] = []
    used = 0
    for note in notes:
        title = -(-len(note.title) // CHARS_PER_TOKEN)
        sections: list[SearchResult] = []
        for section in note.sections:
            cost = result_tokens(section) + (0 if sections else title)
            if used + cost > max_tokens:
                if not kept and not sections:  # the best note's best section, shortened
                    sections = fit_budget([section], max(max_tokens - title, 1))
                if sections:
                    kept.append(replace(note, sections=tuple(sections)))
                return kept
            sections.append(section)
            used += cost
        kept.append(note)
    return kept
