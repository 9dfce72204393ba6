"""Moving an item to its destination so that nothing is ever lost or doubled.

A move writes a note (and copies an attachment, for documents) to a destination folder and
then removes the sources (the inbox file, or the review note and its attachment). A crash at
any instant leaves the item either still at its source or in exactly one destination:

1. a **journal** entry (``<vault>/.vaultseek/intake/journal/<id>.json``) records the move's
   id, sources and destinations, written to a temporary file, fsynced and renamed into place;
2. each attachment is copied to a temporary file in its destination folder, fsynced, and
   hard-linked to its final name (no-clobber: an existing file is never overwritten);
3. the note — whose frontmatter carries the move's id as ``intake_id`` — is written the same
   way: from then on the destination is complete;
4. the sources are removed, then the journal entry.

Before any of that, every destination and source is checked to lie inside the vault, with no
symlink on the way out of it (:func:`check_destination`); a refused move writes nothing. A
write that fails (a full disk, a quota, a read-only folder) removes its temporary file and
undoes the steps before it — the attachment copies and the journal entry — so the item stays
whole at its source, and raises :class:`VaultAccessError`.

:func:`recover` (run before every intake operation, under the same lock) finishes what a
crash interrupted: if the destination note exists and carries the journal's id, the sources
are removed (copying a missing attachment first); otherwise the half-made destination files
are removed and the item stays at its source, to be taken again. Only one intake runs per
vault at a time (``intake.lock``, an exclusive ``flock``) — the CLI, the watcher and the
daemon share it.

After each durable step (``journal``, ``attachment``, ``note``) filing calls
:func:`_after_step`, which does nothing; the crash tests replace it in a real subprocess to
kill the process right there. (No environment variable is read for this: a fault switch in
shipped code is one a user could trip by accident.)
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IntakeError, VaultAccessError
from ..index.credentials import scrub
from ..index.names import shown_path

LOCK_TIMEOUT = 60.0
_TMP_SUFFIX = ".intake-tmp"
_MOVE_ID = re.compile(r"[0-9a-f]{16}")


@dataclass
class Move:
    """One item's move: a note to write, attachments to copy, sources to remove after."""

    id: str
    note: Path
    note_text: str
    attachments: list[tuple[Path, Path]] = field(default_factory=list)
    """(source, destination) pairs."""
    sources: list[Path] = field(default_factory=list)
    """Removed once the note is in place (empty for a pasted snippet or a copied file)."""


def state_dir(vault: Path) -> Path:
    return vault / ".vaultseek" / "intake"


@contextlib.contextmanager
def intake_lock(vault: Path, *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the vault's intake lock (waits up to ``timeout`` seconds)."""
    folder = state_dir(vault)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = (folder / "intake.lock").open("ab")
    except OSError as exc:
        raise _not_written(folder / "intake.lock", exc) from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise IntakeError(
                        "another intake is running on this vault", hint="try again in a moment"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        handle.close()


def unique_path(folder: Path, stem: str, suffix: str, *, taken: set[Path] | None = None) -> Path:
    """``folder/stem.suffix``, or ``stem-2``, ``stem-3``, … if that exists."""
    taken = taken or set()
    candidate = folder / f"{stem}{suffix}"
    n = 2
    while candidate.exists() or candidate in taken:
        candidate = folder / f"{stem}-{n}{suffix}"
        n += 1
    return candidate


def check_folder(vault: Path, folder: Path) -> None:
    """Raise :class:`IntakeError` unless ``folder`` (which need not exist yet) lies inside
    ``vault`` once every symlink on the way to it is followed."""
    try:
        inside = folder.resolve().is_relative_to(vault.resolve())
    except (OSError, RuntimeError):  # a symlink loop on the way
        inside = False
    if not inside:
        raise IntakeError(
            f"{folder} is outside the vault {vault}",
            hint="domains and intake folders are folders inside the vault (no '..', and no symlink out of it)",
        )


def check_destination(vault: Path, path: Path, *, source: bool = False) -> None:
    """Raise :class:`IntakeError` unless ``path`` lies inside ``vault`` once every symlink on
    the way to it is followed. A destination must not be a symlink itself (it would be written
    through); a ``source`` may be one, since removing it removes the link alone."""
    check_folder(vault, path.parent)
    if not source and path.is_symlink():
        raise IntakeError(f"{path} is a symlink; intake does not write through one",
                          hint="replace the link with the file or folder itself")  # fmt: skip


def carry_out(vault: Path, move: Move) -> Path:
    """Perform ``move`` crash-safely (see the module docstring); returns the note's path.
    Raises :class:`IntakeError` for a destination or source outside the vault (nothing is
    written) and :class:`VaultAccessError` when a write fails (what was written is undone)."""
    for path in (move.note, *(d for _s, d in move.attachments)):
        check_destination(vault, path)
    for path in move.sources:
        check_destination(vault, path, source=True)
    journal = state_dir(vault) / "journal"
    entry = journal / f"{move.id}.json"
    record = {
        "id": move.id,
        "note": str(move.note),
        "attachments": [[str(s), str(d)] for s, d in move.attachments],
        "sources": [str(s) for s in move.sources],
    }
    _write_atomic(entry, json.dumps(record, indent=1).encode("utf-8"), replace=True)
    _after_step("journal")
    made: list[Path] = []
    try:
        for source, destination in move.attachments:
            _write_atomic(destination, _read(source), replace=False)
            made.append(destination)
        _after_step("attachment")
        _write_atomic(move.note, move.note_text.encode("utf-8"), replace=False)
    except Exception:
        for path in made:  # the note is not in place: the item is still whole at its source
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            entry.unlink()
        raise
    _after_step("note")
    _finish(move.sources)
    entry.unlink()
    return move.note


def save_assessment(vault: Path, move_id: str, record: dict[str, Any]) -> None:
    """Keep a filed note's full assessment (scores, reasons, routing) under its id, in the
    vault's intake folder: the index never reads it, and it follows the note wherever the note
    is moved or renamed, since the note carries the id (``intake_id``). It sits in the vault,
    where sync tools may carry it, so a credential in the item's name or title is redacted
    (``_intake/inbox/ghp_….md``) and the file is readable by its owner only."""
    shown = dict(record)
    for key in ("source", "item"):
        if isinstance(shown.get(key), str):
            shown[key] = shown_path(shown[key])
    if isinstance(shown.get("title"), str):
        shown["title"] = scrub(shown["title"]).text
    _write_atomic(_assessment_path(vault, move_id), json.dumps(shown, ensure_ascii=False, indent=1).encode("utf-8"),
                  replace=True, mode=0o600)  # fmt: skip


def find_assessment(vault: Path, move_id: object) -> dict[str, Any] | None:
    """The assessment kept for ``move_id``, or None (no such id, or an unreadable file)."""
    if not isinstance(move_id, str) or not _MOVE_ID.fullmatch(move_id):
        return None
    try:
        record = json.loads(_assessment_path(vault, move_id).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def forget_assessment(vault: Path, move_id: str) -> None:
    with contextlib.suppress(OSError):
        _assessment_path(vault, move_id).unlink()


def is_move_id(text: object) -> bool:
    """Whether ``text`` has the shape of a move id (16 hex digits)."""
    return isinstance(text, str) and _MOVE_ID.fullmatch(text) is not None


def _assessment_path(vault: Path, move_id: str) -> Path:
    return state_dir(vault) / "assessments" / f"{move_id}.json"


def recover(vault: Path) -> list[str]:
    """Finish or undo every move a crash interrupted; returns what was done, one line each."""
    journal = state_dir(vault) / "journal"
    if not journal.is_dir():
        return []
    done: list[str] = []
    for entry in sorted(journal.glob("*.json")):
        try:
            record = json.loads(entry.read_text("utf-8"))
            move_id, note = str(record["id"]), Path(record["note"])
            attachments = [(Path(s), Path(d)) for s, d in record["attachments"]]
            sources = [Path(s) for s in record["sources"]]
        except (OSError, ValueError, KeyError, TypeError):
            entry.rename(entry.with_suffix(".unreadable"))
            done.append(f"unreadable intake journal entry kept as {entry.with_suffix('.unreadable').name}")
            continue
        for path in [note, *(d for _s, d in attachments)]:
            _tmp_of(path).unlink(missing_ok=True)
        if note.is_file() and _carries_id(note, move_id):
            for source, destination in attachments:
                if not destination.exists() and source.exists():
                    _write_atomic(destination, source.read_bytes(), replace=False)
            _finish(sources)
            done.append(f"finished an interrupted move to {note}")
        else:
            for source, destination in attachments:
                if destination.exists() and source.exists():
                    destination.unlink()  # a half-made copy; the source is still whole
            done.append(f"undid an interrupted move; the item stays at {sources[0] if sources else 'its source'}")
        entry.unlink()
    return done


def _carries_id(note: Path, move_id: str) -> bool:
    try:
        head = note.read_text("utf-8")[:4096]
    except (OSError, UnicodeDecodeError):
        return False
    return f"id: {move_id}" in head


def _finish(sources: list[Path]) -> None:
    folders = set()
    for source in sources:
        with contextlib.suppress(FileNotFoundError):
            source.unlink()
            folders.add(source.parent)
    for folder in folders:
        _fsync_dir(folder)


def _write_atomic(path: Path, data: bytes, *, replace: bool, mode: int | None = None) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then move it into place:
    ``replace`` renames over ``path``; otherwise a hard link refuses an existing file. The
    temporary file never outlives the call; a failed write is a :class:`VaultAccessError`.
    ``mode`` (e.g. ``0o600``) is set on the temporary file before a byte is written to it."""
    tmp = _tmp_of(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise IntakeError(f"{path} appeared while intake was writing it; try again") from None
            except OSError:  # a filesystem without hard links (a full disk fails the rename too)
                if path.exists():
                    raise IntakeError(f"{path} already exists") from None
                os.replace(tmp, path)
    except OSError as exc:
        raise _not_written(path, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


def _not_written(path: Path, exc: OSError) -> VaultAccessError:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "free some space on the disk that holds the vault, then run intake again (the item was left where it was)"
    else:
        hint = "check that the vault's folders can be written, then run intake again (the item was left where it was)"
    return VaultAccessError(f"cannot write {path}: {reason}", hint=hint)


def _read(source: Path) -> bytes:
    try:
        return source.read_bytes()
    except OSError as exc:
        raise IntakeError(f"cannot read {source}: {exc.strerror or exc}") from exc


def _tmp_of(path: Path) -> Path:
    return path.with_name(f".{path.name}{_TMP_SUFFIX}")


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _after_step(step: str) -> None:
    """The seam the crash tests replace (see the module docstring); ``step`` names what was
    just made durable."""

