"""Files arriving through the study app: safe names, a size cap, written straight to disk
inside the vault's upload folder, never over an existing file; a name already taken refused
unless the upload says to replace it or keep both; bytes the knowledge base holds already
caught as duplicates; deleting uploads again; and the temporary files of uploads a stopped
server never finished."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
import threading
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..config import Config
from ..errors import QueryError, VaultseekError
from ..index.names import shown_path

if TYPE_CHECKING:
    from .readers import ReaderPool


class UploadError(VaultseekError):
    """An upload the app will not store (bad name, unsupported type, too large)."""

    exit_code = 2
    status = 400


class UploadTooLargeError(UploadError):
    status = 413


class UploadConflictError(UploadError):
    """An upload whose name is taken, sent without saying what to do (HTTP 409): ``conflict``
    names it and the file it would meet."""

    status = 409

    def __init__(self, name: str, existing: str) -> None:
        super().__init__(f"{name} is in the knowledge base already ({shown_path(existing)})",
                         hint="send it again with on_conflict=replace or on_conflict=keep_both")  # fmt: skip
        self.conflict = {"name": name, "existing": shown_path(existing)}


ON_CONFLICT = ("replace", "keep_both")
"""What an upload may do when its name is taken: take the name, or be stored beside it."""


_REDACTION = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
_PART = re.compile(r"\.[0-9a-f]{32}\.part")
"""The name of an upload's temporary file: ``.<uuid4 hex>.part``."""


def accepted_suffixes(config: Config) -> tuple[str, ...]:
    """File endings the index would read (from ``include`` patterns like ``*.pdf``)."""
    return tuple(sorted({p[1:].lower() for p in config.include if p.startswith("*.") and "/" not in p}))


def clean_upload_name(name: str, config: Config) -> str:
    """The name to store an upload under, or :class:`UploadError`. Rejects anything that could
    leave the upload folder or hide in it: separators, ``..``, leading dots, NUL and control
    characters, absolute and drive paths, over-long names, unreadable types. A credential in
    the name is replaced by ``[REDACTED-<kind>]`` (``OPENAI_API_KEY=sk-….pdf`` is stored as
    ``OPENAI_API_KEY=[REDACTED-openai-api-key].pdf``, without the marker's colon, which some
    systems refuse): the disk, the index and every list then hold the same clean name, and
    no error message repeats the secret."""
    if not isinstance(name, str) or not name.strip():
        raise UploadError("the upload has no file name")
    name = unicodedata.normalize("NFC", name)
    shown = repr(shown_path(name))
    if any(ch in name for ch in "/\\") or (len(name) > 1 and name[1] == ":"):
        raise UploadError(f"{shown}: a file name cannot contain folders or a drive",
                          hint="upload the file itself, not a path")  # fmt: skip
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise UploadError("the file name contains control characters")
    if name.startswith(".") or name != name.strip() or name.endswith("."):
        raise UploadError(f"{shown}: hidden names, '..' and names ending in a dot or space are refused")
    suffix = PurePosixPath(name).suffix.lower()
    allowed = accepted_suffixes(config)
    if suffix not in allowed:
        raise UploadError(f"{shown} is not a type vaultseek reads",
                          hint=f"supported: {', '.join(allowed)}")  # fmt: skip
    clean = _REDACTION.sub(r"[REDACTED-\1]", shown_path(name))
    if shown_path(clean) != clean:  # the cleaned name must not read as a credential again
        raise UploadError("the file name contains a credential", hint="rename the file and upload it again")
    if len(clean.encode("utf-8")) > 180:
        raise UploadError("the file name is too long (over 180 bytes)")
    return clean


class UploadSink:
    """One upload being written: ``write`` chunks as they arrive, then ``commit`` (or
    ``abort``). The bytes go to a hidden ``.part`` file in the upload folder (which the index
    never reads) and are linked to the final name only when complete."""

    def __init__(self, config: Config, name: str) -> None:
        assert config.vault is not None
        self.config = config
        self.name = clean_upload_name(name, config)
        self.folder = upload_folder(config)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cap = int(config.max_upload_mb * 1024 * 1024)
        self.size = 0
        self.temp = self.folder / f".{uuid.uuid4().hex}.part"
        self._file = open(self.temp, "xb")  # noqa: SIM115 - closed by commit/abort
        # Held until the file is linked or removed: a server starting meanwhile on the same
        # vault sees the upload is alive and leaves its file alone (remove_stale_parts).
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.cap:
            self.abort()
            raise UploadTooLargeError(
                f"{self.name} is larger than the {self.config.max_upload_mb:g} MB upload limit",
                hint="raise max_upload_mb, or copy the file into the vault folder",
            )
        self._file.write(data)

    def abort(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.temp.unlink(missing_ok=True)

    def commit(self) -> str:
        """Store under the clean name, or ``name (2).ext`` … if taken; the vault-relative
        path. Linking (not renaming) makes "only if nobody took the name" atomic."""
        try:
            self._file.flush()
            if self.size == 0:
                raise UploadError(f"{self.name} is empty")
            stem, suffix = PurePosixPath(self.name).stem, PurePosixPath(self.name).suffix
            for number in range(1, 1000):
                candidate = self.folder / (self.name if number == 1 else f"{stem} ({number}){suffix}")
                try:
                    os.link(self.temp, candidate)
                except FileExistsError:
                    continue
                assert self.config.vault is not None
                return candidate.relative_to(self.config.vault.resolve()).as_posix()
            raise UploadError(f"too many files named {self.name} already")
        finally:
            self.temp.unlink(missing_ok=True)  # before the lock goes with the file
            self._file.close()


@dataclass(frozen=True, slots=True)
class StoredUpload:
    """A file an upload stored: its path, the name it was sent as, the sha256 of its bytes,
    and the path it is to replace (None: it keeps its own)."""

    path: str
    name: str
    digest: str
    replaces: str | None


class HashedUpload:
    """An :class:`UploadSink` that hashes the bytes as they pass and records what it stored."""

    def __init__(self, sink: UploadSink, name: str, replaces: str | None, into: list[StoredUpload]) -> None:
        self.sink = sink
        self.name = name
        self.replaces = replaces
        self.into = into
        self.hash = hashlib.sha256()
        self.temp = sink.temp
        """The hidden file the bytes go to until the upload is complete."""

    def write(self, data: bytes) -> None:
        self.sink.write(data)
        self.hash.update(data)

    def abort(self) -> None:
        self.sink.abort()

    def commit(self) -> str:
        path = self.sink.commit()
        self.into.append(StoredUpload(path, self.name, self.hash.hexdigest(), self.replaces))
        return path


class Uploads:
    """The uploads of one knowledge base: each opened under the rule for a name already taken,
    then settled once stored, when one whose bytes the knowledge base holds already is removed
    again. ``readers`` answers which indexed files have given bytes."""

    def __init__(self, config: Config, readers: ReaderPool) -> None:
        self.config = config
        self.readers = readers
        self.recent: dict[str, str] = {}
        """sha256 of an upload's bytes → its path, until the index holds it (a second copy
        sent before the first is indexed is a duplicate too)."""
        self.lock = threading.Lock()

    def open(self, name: str, *, on_conflict: str | None = None,
             into: list[StoredUpload] | None = None) -> HashedUpload:  # fmt: skip
        """A sink for one uploaded file. A name already in the upload folder raises
        :class:`UploadConflictError` unless ``on_conflict`` says what to do: ``replace`` (the
        new bytes take the name once complete) or ``keep_both`` (stored as ``name (2).ext``).
        Each file stored is appended to ``into``, for :meth:`settle`."""
        if on_conflict not in (None, *ON_CONFLICT):
            raise QueryError(f"unknown on_conflict {str(on_conflict)[:40]!r}", hint="on_conflict is replace or keep_both")
        sink = UploadSink(self.config, name)
        existing = sink.folder / sink.name
        replaces = None
        if os.path.lexists(existing):
            assert self.config.vault is not None
            taken = existing.relative_to(self.config.vault.resolve()).as_posix()
            if on_conflict is None:
                sink.abort()
                raise UploadConflictError(sink.name, taken)
            if on_conflict == "replace":
                if not os.path.isfile(existing) or os.path.islink(existing):
                    sink.abort()
                    raise UploadError(f"{taken} is not a plain file; it cannot be replaced",
                                      hint="upload it with on_conflict=keep_both")  # fmt: skip
                replaces = taken
        return HashedUpload(sink, sink.name, replaces, into if into is not None else [])

    def settle(self, stored: list[StoredUpload]) -> tuple[list[str], list[dict[str, str]]]:
        """Check the files an upload stored, in order: one whose bytes the knowledge base holds
        already (indexed, or uploaded moments ago) is removed again and reported as a duplicate
        (``{name, duplicate_of}``) rather than indexed twice; one sent to replace a file takes
        its name now. Returns (the paths to index, the duplicates)."""
        assert self.config.vault is not None
        vault = self.config.vault.resolve()
        kept: list[str] = []
        duplicates: list[dict[str, str]] = []
        for upload in stored:
            original = self.duplicate_of(upload.digest)
            if original is not None:
                upload_file(self.config, upload.path).unlink(missing_ok=True)
                duplicates.append({"name": upload.name, "duplicate_of": shown_path(original)})
                continue
            path = upload.path
            if upload.replaces is not None:
                os.replace(vault / upload.path, vault / upload.replaces)
                path = upload.replaces
            with self.lock:
                for digest in [d for d, p in self.recent.items() if p == path]:
                    del self.recent[digest]
                self.recent[upload.digest] = path
            kept.append(path)
        return kept, duplicates

    def duplicate_of(self, digest: str) -> str | None:
        """An indexed file, or an upload not indexed yet, with these bytes (None if none)."""
        assert self.config.vault is not None
        with self.lock:
            recent = self.recent.get(digest)
        if recent is not None and (self.config.vault / recent).is_file():
            return recent
        with self.readers.borrow() as index:
            same = index.store.paths_with_hash(digest)
        return same[0] if same else None


def upload_folder(config: Config) -> Path:
    """The upload folder, resolved; :class:`UploadError` if it leads outside the vault."""
    assert config.vault is not None
    vault = config.vault.resolve()
    folder = (vault / config.upload_folder).resolve()
    if folder != vault and vault not in folder.parents:
        raise UploadError(f"the upload folder {config.upload_folder} leads outside the vault",
                          hint="set upload_folder to a folder inside the vault")  # fmt: skip
    return folder


def remove_stale_parts(config: Config) -> list[str]:
    """Remove the temporary files of uploads nobody is writing any more (a server stopped or
    killed mid-upload leaves one); returns their names. Only ``.<uuid>.part`` files in the
    upload folder are candidates, and one whose lock is held — an upload in progress in
    another server on the same vault — is left alone."""
    try:
        folder = upload_folder(config)
        entries = list(os.scandir(folder))
    except (OSError, UploadError):
        return []
    removed = []
    for entry in entries:
        if not _PART.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            descriptor = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: that upload is still arriving
            os.close(descriptor)
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.name)
        os.close(descriptor)
    return removed


def upload_file(config: Config, path: str) -> Path:
    """The file a vault-relative upload path names — ``vault/path`` itself, never resolved, so
    deleting a symlink removes the link and not what it names — or :class:`UploadError`. The
    path must lie in the upload folder with no folder link on the way out of it, and be a
    regular file or a symlink (a path already gone is returned as it is)."""
    assert config.vault is not None
    if not is_upload(path, config):
        raise UploadError(f"{path} is not in the upload folder", hint="the app deletes uploaded files only")
    folder = upload_folder(config)
    target = config.vault.resolve() / path
    parent = target.parent.resolve()
    if parent != folder and folder not in parent.parents:
        raise UploadError(f"{path} is reached through a link out of the upload folder; only files in it can be deleted",
                          hint="remove it from the vault folder yourself")  # fmt: skip
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return target
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise UploadError(f"{path} is not a file", hint="the app deletes uploaded files only")
    return target


def is_upload(path: str, config: Config) -> bool:
    """Whether a vault-relative path lies in the upload folder (only those may be deleted
    from the app: the rest of the vault is the user's own folder)."""
    folder = PurePosixPath(config.upload_folder.strip("/"))
    parts = PurePosixPath(path).parts
    return ".." not in parts and PurePosixPath(path).is_relative_to(folder) and len(parts) > len(folder.parts)
