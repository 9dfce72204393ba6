"""The paths an index is given and gives back.

The index keys files by their real vault-relative, '/'-separated path; every path it hands a
surface is shown (a credential in a name redacted: :mod:`vaultseek.index.names`). A caller may
pass either kind, absolute or relative: :class:`Paths` reads each as the indexed path it
stands for, and the ``shown_*`` functions turn records' paths into shown ones.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import QueryError
from ..index.names import MARKER, matching_paths, shown_path
from ..records import SearchFilter, SkippedFile
from ..storage.store import ChunkRow, Store
from .backend import ErrorScope

if TYPE_CHECKING:
    from ..reports import ResolvedLink


class Paths:
    """How one index reads the paths it is given: a shown path as the real one, a path on
    disk as the vault-relative one. ``errors`` re-raises database failures as vaultseek
    errors."""

    def __init__(self, store: Store, vault: Path, errors: ErrorScope) -> None:
        self.store = store
        self.vault = vault
        self.errors = errors

    def real(self, path: str) -> str:
        """The indexed path ``path`` stands for: itself, unless it is a path as shown (it
        holds a redaction marker and no indexed file has it), which stands for the one indexed
        file shown that way. Raises QueryError when several are: a search result's chunk id
        tells them apart."""
        if MARKER not in path:
            return path
        with self.errors():
            known = self.store.file_states()
        if path in known:
            return path
        found = matching_paths(path, known)
        if len(found) > 1:
            raise QueryError(
                f"{len(found)} files are shown as {path}",
                hint="open the one you mean by the chunk id of a search result (get_chunk)",
            )
        return found[0] if found else path

    def real_scope(self, scope: SearchFilter | None) -> SearchFilter | None:
        """``scope`` with each path it names as shown replaced by the file's real path."""
        if scope is None or not scope.paths or not any(MARKER in p for p in scope.paths):
            return scope
        return replace(scope, paths=tuple(self.real(p) for p in scope.paths))

    def in_vault(self, paths: Iterable[str | os.PathLike[str]]) -> list[str]:
        """The vault-relative, '/'-separated form of each path inside the vault (``""`` for
        the vault folder itself); paths outside it, or climbing out with ``..``, are dropped.
        An absolute path may name the vault as configured or as resolved (a watcher reports
        paths under the resolved folder)."""
        roots = dict.fromkeys([os.path.abspath(self.vault), str(self.vault.resolve())])
        out = []
        for given in paths:
            path = os.fspath(given)
            tries = [os.path.relpath(path, root) for root in roots] if os.path.isabs(path) else [path]
            for rel in (posixpath.normpath(t.replace(os.sep, "/")) for t in tries):
                if rel != ".." and not rel.startswith("../"):
                    out.append("" if rel == "." else rel)
                    break
        return out


def shown_row(row: ChunkRow) -> ChunkRow:
    """A chunk as surfaces show it: its file's path with any credential in it redacted."""
    shown = shown_path(row.path)
    return row if shown == row.path else replace(row, path=shown)


def shown_link(link: ResolvedLink) -> ResolvedLink:
    path = link.path if link.path is None else shown_path(link.path)
    return replace(link, source=shown_path(link.source), path=path)


def shown_skip(item: SkippedFile) -> SkippedFile:
    shown = shown_path(item.path)
    return item if shown == item.path else SkippedFile(shown, item.reason)
