"""Link resolution: which file a ``[[link]]``, ``![[embed]]`` or ``[text](file.md)`` points
at, resolved as Obsidian does, and kept current as files come, go and change names.

The rule, the same for wiki links, embeds and markdown links. Every comparison is
case-insensitive and Unicode-normalised (a name typed in NFC matches a file macOS stored in
NFD); ``.md`` is optional wherever a note is named.

1. An empty target (``[[#Heading]]``, ``[x](#heading)``) is the linking note itself.
2. **A path.** A markdown link's destination, and any target starting with ``./`` or
   ``../``, is first taken relative to the linking note's folder (URL-decoded, as markdown
   means it); then any target is tried as a path from the vault root (``[[folder/note]]``,
   ``/folder/note``).
3. **A name.** Otherwise: the files whose name is the target's last segment, and whose path
   ends with the target's folders when it names some (``[[b/note]]`` finds ``a/b/note.md``).
   When several files share the name, the nearest to the linking note wins: the one in its
   folder, else the fewest folder steps away (up and down the tree), else the shortest path,
   else the first alphabetically — so the choice never depends on the order files were
   indexed. (Obsidian picks the same-folder file, then the shortest path; the folder-step
   count sits between the two and only differs for deep, far-apart folders.)
4. **An alias.** Otherwise: a file whose frontmatter ``aliases`` holds the target, ties as
   in 3. (Obsidian's own editor offers aliases and writes ``[[note|alias]]``; a bare
   ``[[alias]]`` counts here too, since it names the note unambiguously to a reader.)
5. Otherwise the link is **unresolved** (dangling).

Only indexed files are targets — notes and the documents vaultseek reads, so
``[[report.pdf]]`` resolves when the PDF is indexed, while ``![[diagram.png]]`` resolves only
with ``ocr_images`` on (images are not indexed otherwise). A canvas's links are its file cards
(embeds, written as vault paths) and the links inside its cards. A heading or block (``#…``)
never changes the file; whether the heading exists there is :mod:`anchors`' question, asked
when links are listed.

Resolutions are stored (``links.resolved``, ``m004_links``), with the names every file can be
linked by (``link_names``). Triggers record every file row written or removed; :func:`relink`,
run after each sync, resolves new links and re-resolves only the links whose looked-up name
is one a changed file gained or lost — a rename is a removal plus an addition, so links follow
it, fall back to another file of the same name, or become dangling. Both read only the names
they need. Figures at 16,894 files and 21k links: ``docs/links.md``.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import NotFoundError
from ..records import LinkVia, NoteLinks, ResolvedLink
from ..storage.store import LinkRow, Store

NOTE_SUFFIXES = (".md", ".markdown")
_REBUILD_ALL = 2_000
"""More changed files than this (a first index, a large import): rebuild every name and
resolve every link rather than look the affected ones up."""


def fold(text: str) -> str:
    """``text`` for comparison: NFC, case-folded (``ß`` → ``ss``), NFC again."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def _strip_note_suffix(folded: str) -> str:
    for suffix in NOTE_SUFFIXES:
        if folded.endswith(suffix) and len(folded) > len(suffix):
            return folded[: -len(suffix)]
    return folded


def link_key(target: str) -> str:
    """The name a target (or a file's path, or an alias) is looked up by: its last path
    segment, folded, without ``.md``."""
    return _strip_note_suffix(fold(target.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]))


def folder_steps(source: str, path: str) -> int:
    """How many folders apart two files are: up from ``source``'s folder to the common
    ancestor, then down to ``path``'s."""
    here, there = source.split("/")[:-1], path.split("/")[:-1]
    common = 0
    for a, b in zip(here, there, strict=False):
        if a != b:
            break
        common += 1
    return len(here) + len(there) - 2 * common


def nearest(source: str, candidates: Sequence[str]) -> str:
    """The candidate nearest ``source`` (rule 3 of the module docstring)."""
    if len(candidates) == 1:
        return candidates[0]
    return min(candidates, key=lambda p: (folder_steps(source, p), len(p), p))


def names_of(path: str, aliases: Sequence[str]) -> set[tuple[str, str, str]]:
    """The (key, path, alias) rows a file can be linked by: its own name (alias ``""``) and
    each alias."""
    rows = {(link_key(path), path, "")}
    rows.update((link_key(a.strip()), path, a.strip()) for a in aliases if isinstance(a, str) and a.strip())
    return rows


class Resolver:
    """Resolves link targets against a fixed set of files (path and aliases each). Only files
    sharing a target's :func:`link_key` can match it, so a resolver built from just those
    (:meth:`from_names`) answers exactly as one built from the whole vault."""

    @classmethod
    def from_names(cls, rows: Iterable[tuple[str, str, str]]) -> Resolver:
        """From (key, path, alias) rows, as ``link_names`` stores them."""
        files: dict[str, list[str]] = {}
        for _key, path, alias in rows:
            names = files.setdefault(path, [])
            if alias:
                names.append(alias)
        return cls(files.items())

    def __init__(self, files: Iterable[tuple[str, Sequence[str]]]) -> None:
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = {}
        self._by_alias: dict[str, list[str]] = {}
        by_path, by_name = self._by_path, self._by_name
        for path, aliases in files:
            folded = fold(path)
            stem = _strip_note_suffix(folded)
            for key in (folded, stem):  # two files whose paths fold alike: the first by path wins
                if by_path.setdefault(key, path) > path:
                    by_path[key] = path
            by_name.setdefault(stem.rsplit("/", 1)[-1], []).append(path)
            for alias in aliases:
                if isinstance(alias, str) and alias.strip():
                    self._by_alias.setdefault(fold(alias.strip()), []).append(path)

    def resolve(self, source: str, target: str, syntax: str = "wiki") -> tuple[str | None, LinkVia]:
        """The file ``target`` (written in ``source``) points at, and how it was found."""
        target = target.strip().replace("\\", "/")
        if not target:
            return source, "self"
        folded = fold(target)
        relative = folded.startswith(("./", "../"))
        if folded.startswith("/"):
            found = self._by_path.get(folded.lstrip("/"))
            if found is not None:
                return found, "path"
        else:
            if syntax == "markdown" or relative:
                joined = posixpath.normpath(posixpath.join(posixpath.dirname(fold(source)), folded))
                if joined != ".." and not joined.startswith("../"):
                    found = self._by_path.get(joined)
                    if found is not None:
                        return found, "path"
            if not relative:
                found = self._by_path.get(folded)
                if found is not None:
                    return found, "path"
        segments = [s for s in folded.split("/") if s not in ("", ".", "..")]
        if segments:
            candidates = self._by_name.get(_strip_note_suffix(segments[-1]), [])
            if len(segments) > 1:
                tail = "/" + _strip_note_suffix("/".join(segments))
                candidates = [p for p in candidates if ("/" + _strip_note_suffix(fold(p))).endswith(tail)]
            if candidates:
                return nearest(source, candidates), "name"
        aliased = self._by_alias.get(folded)
        if aliased:
            return nearest(source, aliased), "alias"
        return None, "none"


def relink(store: Store) -> int:
    """Resolve the links written since the last call, and re-resolve those a file added,
    removed or renamed since then (or a changed alias) may capture or release; keep
    ``link_names`` in step. One write transaction; returns how many links were resolved.

    An edit that changes neither a file's name nor its aliases changes no other link: only
    its own links (written anew) are resolved."""
    if not store.links_pending():
        return 0
    with store.write_lock():
        through, paths = store.link_changes()
        if len(paths) > _REBUILD_ALL:
            names = [row for path, aliases in store.link_targets().items() for row in names_of(path, aliases)]
            store.replace_link_names(None, names)
            rows = store.link_rows()
            resolver = Resolver.from_names(names)
        else:
            current = store.link_targets(paths)
            after = {row for path, aliases in current.items() for row in names_of(path, aliases)}
            before = set(store.link_names_of(paths))
            store.replace_link_names(paths, sorted(after))
            changed = {key for key, _path, _alias in before ^ after}
            found = {row.rowid: row for row in store.link_rows(pending=True)}
            if changed:
                found.update((row.rowid, row) for row in store.link_rows(keys=sorted(changed)))
            rows = list(found.values())
            needed = {link_key(row.target) for row in rows}
            resolver = Resolver.from_names(store.link_names(sorted(needed)) if rows else [])
        updates = []
        for row in rows:
            path, via = resolver.resolve(row.source, row.target, row.syntax)
            updates.append((link_key(row.target), path, via, row.rowid))
        store.save_link_resolutions(updates, through=through)
    return len(updates)


def get_note_path(store: Store, note: str, vault: Path) -> str:
    """The indexed file ``note`` names: a vault-relative path, a path inside the vault, or a
    name (or alias) as a link from the vault's top folder would write it. Raises QueryError."""
    given = note.strip().replace("\\", "/")
    if given.startswith("/"):  # a file inside the vault, or a path from the vault's root
        try:
            given = Path(given).resolve().relative_to(vault.resolve()).as_posix()
        except (ValueError, OSError):
            given = given.lstrip("/")
    found = store.indexed_path(given) if given else None
    if found is None and given:
        found, _via = Resolver.from_names(store.link_names([link_key(given)])).resolve("", given)
    if found is None:
        raise NotFoundError(
            f"{note} is not in the index",
            hint="give a vault-relative path (as search results show) or a note's name",
        )
    return found


def note_links(store: Store, path: str) -> NoteLinks:
    """The links ``path`` makes and the links made to it, as stored."""
    notices = []
    if store.links_pending():
        notices.append("some links are not resolved yet; run `vaultseek index` to finish")
    return NoteLinks(
        path,
        tuple(_resolved(row) for row in store.links_from(path)),
        tuple(_resolved(row) for row in store.links_to(path)),
        tuple(notices),
    )


def _resolved(row: LinkRow) -> ResolvedLink:
    via = row.via if row.via in ("self", "path", "name", "alias") else "none"
    return ResolvedLink(
        source=row.source, target=row.target, heading=row.heading, alias=row.alias,
        embed=bool(row.embed), syntax="markdown" if row.syntax == "markdown" else "wiki",
        path=row.resolved, via=via,
    )  # fmt: skip
