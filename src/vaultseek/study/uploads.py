"""Files arriving through the study app: safe names, a size cap, written straight to disk
inside the vault's upload folder, never over an existing file."""

from __future__ import annotations

import os
import unicodedata
import uuid
from pathlib import Path, PurePosixPath

from ..config import Config
from ..errors import VaultseekError


class UploadError(VaultseekError):
    """An upload the app will not store (bad name, unsupported type, too large)."""

    exit_code = 2
    status = 400


class UploadTooLargeError(UploadError):
    status = 413


def accepted_suffixes(config: Config) -> tuple[str, ...]:
    """File endings the index would read (from ``include`` patterns like ``*.pdf``)."""
    return tuple(sorted({p[1:].lower() for p in config.include if p.startswith("*.") and "/" not in p}))


def clean_upload_name(name: str, config: Config) -> str:
    """The name to store an upload under, or :class:`UploadError`. Rejects anything that could
    leave the upload folder or hide in it: separators, ``..``, leading dots, NUL and control
    characters, absolute and drive paths, over-long names, unreadable types."""
    if not isinstance(name, str) or not name.strip():
        raise UploadError("the upload has no file name")
    name = unicodedata.normalize("NFC", name)
    if any(ch in name for ch in "/\\") or (len(name) > 1 and name[1] == ":"):
        raise UploadError(f"{name!r}: a file name cannot contain folders or a drive",
                          hint="upload the file itself, not a path")  # fmt: skip
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise UploadError("the file name contains control characters")
    if name.startswith(".") or name != name.strip() or name.endswith("."):
        raise UploadError(f"{name!r}: hidden names, '..' and names ending in a dot or space are refused")
    if len(name.encode("utf-8")) > 180:
        raise UploadError("the file name is too long (over 180 bytes)")
    suffix = PurePosixPath(name).suffix.lower()
    allowed = accepted_suffixes(config)
    if suffix not in allowed:
        raise UploadError(f"{name!r} is not a type vaultseek reads",
                          hint=f"supported: {', '.join(allowed)}")  # fmt: skip
    return name


class UploadSink:
    """One upload being written: ``write`` chunks as they arrive, then ``commit`` (or
    ``abort``). The bytes go to a hidden ``.part`` file in the upload folder (which the index
    never reads) and are linked to the final name only when complete."""

    def __init__(self, config: Config, name: str) -> None:
        assert config.vault is not None
        self.config = config
        self.name = clean_upload_name(name, config)
        vault = config.vault.resolve()
        self.folder = (vault / config.upload_folder).resolve()
        if self.folder != vault and vault not in self.folder.parents:
            raise UploadError(f"the upload folder {config.upload_folder} leads outside the vault",
                              hint="set upload_folder to a folder inside the vault")  # fmt: skip
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cap = int(config.max_upload_mb * 1024 * 1024)
        self.size = 0
        self.temp = self.folder / f".{uuid.uuid4().hex}.part"
        self._file = open(self.temp, "xb")  # noqa: SIM115 - closed by commit/abort

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
        self._file.close()
        if self.size == 0:
            self.temp.unlink(missing_ok=True)
            raise UploadError(f"{self.name} is empty")
        stem, suffix = PurePosixPath(self.name).stem, PurePosixPath(self.name).suffix
        try:
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
            self.temp.unlink(missing_ok=True)


def is_upload(path: str, config: Config) -> bool:
    """Whether a vault-relative path lies in the upload folder (only those may be deleted
    from the app: the rest of the vault is the user's own folder)."""
    folder = PurePosixPath(config.upload_folder.strip("/"))
    parts = PurePosixPath(path).parts
    return ".." not in parts and PurePosixPath(path).is_relative_to(folder) and len(parts) > len(folder.parts)


def resolve_inside(vault: Path, path: str) -> Path:
    """``vault / path``, refusing anything that leaves the vault."""
    target = (vault / path).resolve()
    if vault.resolve() not in target.parents:
        raise UploadError(f"{path!r} is not inside the vault")
    return target
