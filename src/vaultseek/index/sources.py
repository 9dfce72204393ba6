"""Finding a vault's files and reading them safely.

A vault is untrusted input: binary files named ``.md``, odd encodings, unreadable files,
symlink loops and huge exports all occur. Each problem becomes a :class:`SourceError` with a
reason a person can act on; the indexer records it and moves on.
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
) -> list[SourceFile]:
    """Every file the filter accepts, sorted by path, with stat data or the reason it is
    unusable. Directory symlinks are not followed (they are how vaults loop into themselves).
    ``size_limit`` gives some files another cap than ``max_bytes`` (documents)."""
    limit: SizeLimit = size_limit or (lambda _rel: (max_bytes, "max_file_mb"))
    found: list[SourceFile] = []
    unreadable_dirs: list[SourceFile] = []

    def on_error(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else vault
        rel = _relative(where, vault)
        if rel and not path_filter.skips_dir(rel):
            unreadable_dirs.append(SourceFile(rel, where, 0, 0, f"folder unreadable: {_os_reason(exc)}"))

    for root, dirs, files in os.walk(vault, onerror=on_error):
        rel_root = _relative(Path(root), vault)
        dirs[:] = sorted(
            d for d in dirs if not path_filter.skips_dir(f"{rel_root}/{d}" if rel_root else d)
        )
        for name in files:
            rel = f"{rel_root}/{name}" if rel_root else name
            if path_filter.accepts_file(rel):
                found.append(_stat(Path(root) / name, rel, *limit(rel)))
    found.extend(unreadable_dirs)
    found.sort(key=lambda f: f.path)
    return found


def find_source(
    vault: Path,
    path_filter: PathFilter,
    rel_path: str,
    *,
    max_bytes: int,
    size_limit: SizeLimit | None = None,
) -> SourceFile | None:
    """The entry :func:`scan_vault` would list for ``rel_path`` (vault-relative, '/'
    separated), or None when the walk would not list it: gone, a folder, not included, or
    behind a skipped folder or a folder symlink. Lets a caller that knows which paths changed
    look at just those, by the walk's own rules."""
    if not rel_path or path_filter.skips_parent_of(rel_path) or not path_filter.accepts_file(rel_path):
        return None
    absolute = vault / rel_path
    if not _parents_walked(vault, rel_path) or not os.path.lexists(absolute):
        return None
    if absolute.is_dir():  # the walk lists a folder (or a symlink to one) among its folders
        return None
    limit: SizeLimit = size_limit or (lambda _rel: (max_bytes, "max_file_mb"))
    return _stat(absolute, rel_path, *limit(rel_path))


def walks_into(vault: Path, path_filter: PathFilter, rel_dir: str) -> bool:
    """Whether :func:`scan_vault` descends into the folder ``rel_dir``: it is a real folder
    (not a symlink), and neither it nor a folder above it is skipped."""
    if not rel_dir:
        return True
    if path_filter.skips_parent_of(rel_dir) or path_filter.skips_dir(rel_dir):
        return False
    return _parents_walked(vault, rel_dir) and _is_real_dir(vault / rel_dir)


def _parents_walked(vault: Path, rel_path: str) -> bool:
    """Every folder above ``rel_path`` is a real folder: ``os.walk`` follows no folder
    symlinks, so nothing behind one is ever listed."""
    parts = rel_path.split("/")[:-1]
    return all(_is_real_dir(vault.joinpath(*parts[: i + 1])) for i in range(len(parts)))


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _relative(path: Path, vault: Path) -> str:
    rel = os.path.relpath(path, vault)
    return "" if rel == "." else rel.replace(os.sep, "/")


def _stat(absolute: Path, rel: str, max_bytes: int, setting: str) -> SourceFile:
    try:
        st = absolute.stat()
    except OSError as exc:
        return SourceFile(rel, absolute, 0, 0, _os_reason(exc))
    if not stat.S_ISREG(st.st_mode):  # from the stat above: a second stat per file cost 0.1 s a walk
        return SourceFile(rel, absolute, st.st_size, st.st_mtime_ns, "not a regular file")
    if st.st_size > max_bytes:
        return SourceFile(
            rel,
            absolute,
            st.st_size,
            st.st_mtime_ns,
            f"too large ({st.st_size / 1048576:.1f} MB; the limit is "
            f"{max_bytes / 1048576:g} MB, set {setting} to change it)",
        )
    return SourceFile(rel, absolute, st.st_size, st.st_mtime_ns)


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "broken symlink or vanished while scanning"
    return exc.strerror or exc.__class__.__name__


def read_bytes(source: SourceFile) -> SourceBytes:
    """A document's bytes, read once: hashed here, parsed from memory by its reader."""
    try:
        data = source.absolute.read_bytes()
    except OSError as exc:
        raise SourceError(_os_reason(exc)) from exc
    return SourceBytes(data, hashlib.sha256(data).hexdigest())


def read_source(source: SourceFile) -> SourceText:
    """Read and decode a text file. UTF-8 (with or without BOM) and BOM-marked UTF-16 are
    accepted; anything else is refused with the offending byte's offset rather than guessed."""
    try:
        data = source.absolute.read_bytes()
    except OSError as exc:
        raise SourceError(_os_reason(exc)) from exc
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
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "re-save the file as UTF-8"
        ) from exc
