"""Hints for a filter that names nothing in the index: a folder, a tag or a kind no indexed
file has. A search under such a filter finds nothing, and "No results" alone would hide the
typo; each miss becomes a notice naming the nearest names the index does hold (folder names
compare case-sensitively, as the files do on Linux: ``obsidian publish`` is not
``Obsidian Publish``, and the hint says so)."""

from __future__ import annotations

from collections.abc import Iterable

from ..records import SearchFilter
from ..storage.store import Store

_MAX_SUGGESTIONS = 3


def filter_misses(store: Store, scope: SearchFilter | None) -> list[str]:
    """One message per folder, tag or kind of ``scope`` (and of the filters it holds, such
    as a query's ``tag:x``) that no indexed file has."""
    if scope is None:
        return []
    misses = filter_misses(store, scope.inside)
    missing_folders = [f for f in scope.folders or () if f and not store.has_files_under(f)]
    if missing_folders:
        folders = store.folders()
        misses += [f"no folder {f!r} in the index{_nearest(f, folders)}" for f in missing_folders]
    missing_tags = [t for t in scope.tags or () if not store.has_tag(t)]
    if missing_tags:
        tags = store.tag_names()
        misses += [f"no note has the tag {t!r}{_nearest(t, tags)}" for t in missing_tags]
    misses += [f"no {k} files in the index" for k in scope.kinds or () if not store.has_kind(k)]
    return misses


def _nearest(name: str, names: Iterable[str]) -> str:
    """``; did you mean 'A' or 'B'?`` for the names closest to ``name`` (case first), or ""."""
    import difflib  # only for a filter that matched nothing, not on every search's start-up

    names = list(names)
    same_case = [n for n in names if n.casefold() == name.casefold()]
    by_folded = {n.casefold(): n for n in names}
    close = [by_folded[n] for n in difflib.get_close_matches(name.casefold(), list(by_folded), n=_MAX_SUGGESTIONS)]
    picks = list(dict.fromkeys([*same_case, *close]))[:_MAX_SUGGESTIONS]
    if not picks:
        return ""
    return "; did you mean " + " or ".join(repr(p) for p in picks) + "?"
