"""Finding a vault's files and reading them safely.

A vault is untrusted input: binary files named ``.md``, odd encodings, unreadable files,
names that are not valid UTF-8, symlinks out of the vault or into loops, named pipes and huge
exports all occur. Each problem becomes a :class:`SourceError` (or a :class:`SourceFile` with
an ``error``) with a reason a person can act on; the indexer records it and moves on.

Symlinks are followed only where they stay inside the vault, unless the configuration's
``follow_external_symlinks`` says otherwise: a file symlink is indexed when its target is in
the vault, and a folder symlink is never entered unless it leads out of the vault and the
option is on (one inside the vault is not followed: what it holds is indexed where it lives).
Every folder is entered at most once, so links cannot loop. Reading opens the file the scan
approved without following a symlink and without blocking, and checks on the open handle that
it is a regular file, so a file swapped for a link, a named pipe or a device after the scan is
refused rather than followed or waited on.
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_GLOB_CHARS = frozenset("*?[")
_SNIFF_BYTES = 8192
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
    | getattr(os, "O_NOFOLLOW", 0)  # a file replaced by a symlink since the scan is refused
    | getattr(os, "O_NOCTTY", 0)  # a terminal device never becomes this process's terminal
    | getattr(os, "O_CLOEXEC", 0)
)

EXTERNAL_FILE_LINK = (
    "symlink to a file outside the vault (not followed; set follow_external_symlinks = true "
    "to index it)"
)
EXTERNAL_FOLDER_LINK = (
    "symlink to a folder outside the vault (not followed; set follow_external_symlinks = true "
    "to index what it holds)"
)
FOLDER_SEEN = "symlink to a folder that is indexed already (a loop, or a second way to it)"
FILE_NAME_NOT_UTF8 = "file name is not valid UTF-8 (rename the file to index it)"
FOLDER_NAME_NOT_UTF8 = "folder name is not valid UTF-8 (rename the folder to index what it holds)"
NOT_REGULAR = "not a regular file"


def is_external_symlink(reason: str) -> bool:
    """Whether a skip reason is a symlink out of the vault that was not followed."""
    return reason in (EXTERNAL_FILE_LINK, EXTERNAL_FOLDER_LINK)


class SourceError(Exception):
    """A file that cannot be indexed; ``str()`` is the reason shown by ``status``."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A candidate file: its vault-relative path and stat data, or why it cannot be read."""

    path: str
    """Relative to the vault, '/' separated."""
    absolute: Path
    size: int
    mtime_ns: int
    error: str | None = None
    target: Path | None = None
    """For a symlink the scan accepted: the file it resolved to, which is what is read (never
    through a link again). None for a file that is not a symlink, which is then read only if it
    still is not one."""


@dataclass(frozen=True, slots=True)
class SourceText:
    text: str
    content_hash: str
    """sha256 of the file's bytes, so a touched-but-unchanged file is recognised."""


@dataclass(frozen=True, slots=True)
class SourceBytes:
    data: bytes
    content_hash: str
    """sha256 of ``data``."""


SizeLimit = Callable[[str], tuple[int, str]]
"""Vault-relative path → (the most bytes it may have, the setting that says so)."""


class PathFilter:
    """Decides which vault-relative paths are indexed (include globs, exclude names/globs)."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = tuple(include)
        self.exclude_names = frozenset(
            p.strip("/") for p in exclude if not (_GLOB_CHARS & set(p)) and "/" not in p.strip("/")
        )
        self.exclude_globs = tuple(
            p.strip("/") for p in exclude if p.strip("/") not in self.exclude_names
        )

    def skips_dir(self, rel_dir: str) -> bool:
        name = rel_dir.rsplit("/", 1)[-1]
        return name in self.exclude_names or any(
            fnmatch.fnmatchcase(rel_dir, g) or rel_dir == g for g in self.exclude_globs
        )

    def accepts_file(self, rel_path: str) -> bool:
        name = rel_path.rsplit("/", 1)[-1]
        if name in self.exclude_names:
            return False
        if any(fnmatch.fnmatchcase(rel_path, g) for g in self.exclude_globs):
            return False
        return any(
            fnmatch.fnmatchcase(name.lower(), p.lower()) or fnmatch.fnmatchcase(rel_path, p)
            for p in self.include
        )

    def skips_parent_of(self, rel_path: str) -> bool:
        """Whether a folder on the way to ``rel_path`` is skipped, so the walk never gets
        there (``.obsidian/…``, ``_intake/inbox/…``, an ``exclude`` glob's folder)."""
        parts = rel_path.split("/")
        return any(self.skips_dir("/".join(parts[: i + 1])) for i in range(len(parts) - 1))


def scan_vault(
    vault: Path,
    path_filter: PathFilter,
    *,
    max_bytes: int,
    size_limit: SizeLimit | None = None,
    follow_external_symlinks: bool = False,
) -> list[SourceFile]:
    """Every file the filter accepts, sorted by path, with stat data or the reason it is
    unusable (the module docstring has the rules for symlinks). Entries that cannot be indexed
    at all are listed with their reason too: an unreadable folder, a symlink out of the vault,
    a file or folder whose name is not valid UTF-8 (listed under its name with the bad bytes
    written ``\\xff``). ``size_limit`` gives some files another cap than ``max_bytes``
    (documents)."""
    walk = _Walk(vault, path_filter, size_limit or (lambda _rel: (max_bytes, "max_file_mb")),
                 follow_external=follow_external_symlinks)  # fmt: skip
    found: list[SourceFile] = []
    folders: list[tuple[str, str]] = [(os.fspath(vault), "")]
    while folders:
        folder, rel_folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            if rel_folder:
                found.append(SourceFile(rel_folder, Path(folder), 0, 0, f"folder unreadable: {_os_reason(exc)}"))
            continue
        for entry in reversed(entries):  # popped in name order: the loop guard is repeatable
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_link, is_dir = entry.is_symlink(), entry.is_dir(follow_symlinks=False)
            except OSError:  # vanished while scanning
                continue
            seen = walk.look(entry.path, rel, is_link=is_link, is_dir=is_dir)
            if isinstance(seen, SourceFile):
                found.append(seen)
            elif seen is not None:
                folders.append((seen, rel))
    found.sort(key=lambda f: f.path)
    return found


def find_source(
    vault: Path,
    path_filter: PathFilter,
    rel_path: str,
    *,
    max_bytes: int,
    size_limit: SizeLimit | None = None,
    follow_external_symlinks: bool = False,
) -> SourceFile | None:
    """The entry :func:`scan_vault` would list for ``rel_path`` (vault-relative, '/'
    separated), or None when the walk would not list it: gone, a folder, not included, or
    behind a skipped folder or a folder the walk does not enter. Lets a caller that knows which
    paths changed look at just those, by the walk's own rules."""
    if not rel_path or path_filter.skips_parent_of(rel_path):
        return None
    walk = _Walk(vault, path_filter, size_limit or (lambda _rel: (max_bytes, "max_file_mb")),
                 follow_external=follow_external_symlinks)  # fmt: skip
    parent = rel_path.rpartition("/")[0]
    if parent and not walk.enters(parent):
        return None
    absolute = os.path.join(vault, *rel_path.split("/"))
    try:
        mode = os.lstat(absolute).st_mode
    except OSError:
        return None
    seen = walk.look(absolute, rel_path, is_link=stat.S_ISLNK(mode), is_dir=stat.S_ISDIR(mode))
    return seen if isinstance(seen, SourceFile) else None


def walks_into(
    vault: Path, path_filter: PathFilter, rel_dir: str, *, follow_external_symlinks: bool = False
) -> bool:
    """Whether :func:`scan_vault` descends into the folder ``rel_dir``: it and every folder
    above it are real folders (or, with ``follow_external_symlinks``, symlinks to folders
    outside the vault) that are not skipped."""
    if not rel_dir:
        return True
    if path_filter.skips_parent_of(rel_dir) or path_filter.skips_dir(rel_dir):
        return False
    walk = _Walk(vault, path_filter, lambda _rel: (0, ""), follow_external=follow_external_symlinks)
    return walk.enters(rel_dir)


class _Walk:
    """The walk's rules for one entry, shared by the full walk and the look-up of named
    paths, so both list the same entries for the same files."""

    def __init__(self, vault: Path, path_filter: PathFilter, limit: SizeLimit, *, follow_external: bool) -> None:
        self.vault = os.fspath(vault)
        self.root = os.path.realpath(vault)
        self.filter = path_filter
        self.limit = limit
        self.follow_external = follow_external
        self.folders_seen: set[tuple[int, int]] = set()
        """(device, inode) of every folder entered, once symlinked folders can be followed:
        a folder is walked once, so no link loops and no tree is listed twice."""
        if follow_external:
            self._first_visit(self.root)

    def look(self, path: str, rel: str, *, is_link: bool, is_dir: bool) -> SourceFile | str | None:
        """What the walk does with the entry at ``path``: list it (a :class:`SourceFile`,
        perhaps with the reason it cannot be indexed), enter it (the folder's path, a str), or
        pass it by (None). ``is_link`` and ``is_dir`` are its type, not following a link."""
        name = rel.rpartition("/")[2]
        if not _is_utf8(name):
            display = _display(rel)
            if is_dir or (is_link and os.path.isdir(path)):
                skipped = self.filter.skips_dir(rel)
                return None if skipped else SourceFile(display, Path(path), 0, 0, FOLDER_NAME_NOT_UTF8)
            accepted = self.filter.accepts_file(rel)
            return SourceFile(display, Path(path), 0, 0, FILE_NAME_NOT_UTF8) if accepted else None
        if is_dir:
            if self.filter.skips_dir(rel) or (self.follow_external and not self._first_visit(path)):
                return None
            return path
        if is_link:
            return self._link(path, rel)
        if not self.filter.accepts_file(rel):
            return None
        try:
            st = os.lstat(path)
        except OSError as exc:
            return SourceFile(rel, Path(path), 0, 0, _os_reason(exc))
        return self._file(path, rel, st)

    def enters(self, rel_dir: str) -> bool:
        """Whether the walk enters the folder ``rel_dir`` (and every folder above it)."""
        parts = rel_dir.split("/")
        for depth in range(1, len(parts) + 1):
            path = os.path.join(self.vault, *parts[:depth])
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                return False
            rel = "/".join(parts[:depth])
            if not isinstance(self.look(path, rel, is_link=stat.S_ISLNK(mode), is_dir=stat.S_ISDIR(mode)), str):
                return False
        return True

    def _link(self, path: str, rel: str) -> SourceFile | str | None:
        try:
            st = os.stat(path)  # follows the link
        except OSError as exc:  # broken, or a loop
            return SourceFile(rel, Path(path), 0, 0, _os_reason(exc)) if self.filter.accepts_file(rel) else None
        target = os.path.realpath(path)
        inside = _contains(self.root, target)
        if stat.S_ISDIR(st.st_mode):
            if self.filter.skips_dir(rel) or inside:
                return None  # a folder inside the vault is indexed where it lives
            if not self.follow_external:
                return SourceFile(rel, Path(path), 0, 0, EXTERNAL_FOLDER_LINK)
            return path if self._first_visit(target) else SourceFile(rel, Path(path), 0, 0, FOLDER_SEEN)
        if not self.filter.accepts_file(rel):
            return None
        if not inside and not self.follow_external:
            return SourceFile(rel, Path(path), st.st_size, st.st_mtime_ns, EXTERNAL_FILE_LINK)
        return self._file(path, rel, st, target=Path(target))

    def _file(self, path: str, rel: str, st: os.stat_result, *, target: Path | None = None) -> SourceFile:
        if not stat.S_ISREG(st.st_mode):
            return SourceFile(rel, Path(path), st.st_size, st.st_mtime_ns, NOT_REGULAR)
        max_bytes, setting = self.limit(rel)
        if st.st_size > max_bytes:
            return SourceFile(
                rel,
                Path(path),
                st.st_size,
                st.st_mtime_ns,
                f"too large ({st.st_size / 1048576:.1f} MB; the limit is "
                f"{max_bytes / 1048576:g} MB, set {setting} to change it)",
            )
        return SourceFile(rel, Path(path), st.st_size, st.st_mtime_ns, target=target)

    def _first_visit(self, folder: str) -> bool:
        """Record a folder as entered; False if it was entered before (or is gone)."""
        try:
            st = os.stat(folder)
        except OSError:
            return False
        identity = (st.st_dev, st.st_ino)
        if identity in self.folders_seen:
            return False
        self.folders_seen.add(identity)
        return True


def _contains(root: str, path: str) -> bool:
    """Whether the resolved ``path`` is ``root`` or inside it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _is_utf8(name: str) -> bool:
    """False for a name decoded from bytes that are not UTF-8 (Python keeps those bytes as
    lone surrogates, which no UTF-8 text — a database row, a hash input — can hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _display(rel: str) -> str:
    """A path that is valid text, for listing and recording: the bytes that are not UTF-8
    written as ``\\xff``."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "broken symlink or vanished while scanning"
    return exc.strerror or exc.__class__.__name__


def load_bytes(source: SourceFile) -> bytes:
    """The bytes of the file the scan accepted, read without following a symlink and without
    blocking: opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked on the open handle, so a
    file swapped since the scan for a symlink, a named pipe, a device or a socket is refused
    (:class:`SourceError`) instead of followed out of the vault or waited on forever."""
    path = source.target or source.absolute
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise SourceError("became a symlink after the scan (looked at again on the next run)") from exc
        if exc.errno == errno.ENXIO:  # a socket, or a device with nothing behind it
            raise SourceError(NOT_REGULAR) from exc
        raise SourceError(_os_reason(exc)) from exc
    with open(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise SourceError(NOT_REGULAR)
        try:
            return handle.read()
        except OSError as exc:
            raise SourceError(_os_reason(exc)) from exc


def read_bytes(source: SourceFile) -> SourceBytes:
    """A document's bytes, read once: hashed here, parsed from memory by its reader."""
    data = load_bytes(source)
    return SourceBytes(data, hashlib.sha256(data).hexdigest())


def read_source(source: SourceFile) -> SourceText:
    """Read and decode a text file. UTF-8 (with or without BOM) and BOM-marked UTF-16 are
    read as such; other text is decoded as a ``.txt`` document is (the charset detected, see
    :mod:`vaultseek.documents.encoding`), so a note saved as cp1252 reads like a cp1252 ``.txt``."""
    data = load_bytes(source)
    digest = hashlib.sha256(data).hexdigest()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return SourceText(data.decode("utf-16"), digest)
        except UnicodeDecodeError as exc:
            raise SourceError(f"invalid UTF-16 at byte {exc.start}") from exc
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        return SourceText(data.decode("utf-8-sig"), digest)
    except UnicodeDecodeError:
        pass
    from ..documents.encoding import decode_text  # imported here: the search path never decodes
    from ..documents.extraction import DocumentError

    try:
        return SourceText(decode_text(data), digest)
    except DocumentError as exc:  # a UTF-8 byte-order mark before bytes that are not UTF-8
        raise SourceError(f"{exc}; re-save the file as UTF-8") from exc
