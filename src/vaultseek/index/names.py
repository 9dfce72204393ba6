"""File and folder names as they may be shown: a credential in a name becomes its marker.

A file can be named after a secret (``OPENAI_API_KEY=sk-proj-….md``, a folder called
``password=…``). The index keeps the real vault-relative path — it is how a run finds the file
again, re-reads it, notices it deleted and resolves links to it — but every name derived from
it (a title, the names links resolve by, the heading context that is searched and embedded) is
made from :func:`shown_path`, and every path the engine hands a surface (search results,
chunks, the study app's file list) is shown that way: each secret replaced by
``[REDACTED:<pattern>]``, exactly as :func:`~vaultseek.index.credentials.scrub` does in text.

A shown path leads back to its file: the engine reads a path holding a marker as the one
indexed file shown that way (:func:`matching_paths`), and every search result carries its
``chunk_id``, which opens the chunk (and names its file) whatever the file is called.

The scrubber's patterns cost ~60 ms to compile, which a search otherwise never pays. Almost
no path could hold a secret, so a cheap test comes first: the scrubber only ever finds a
secret where one of its literal hints occurs or in a long token-like run (20+ characters), and
:func:`_may_hold_secret` looks for just those (``tests/test_secrets_in_names.py`` keeps its
hints a superset of the scrubber's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .credentials import Scrubbed

MARKER = "[REDACTED:"
"""How every redaction starts; a path holding it is a shown one, not a real one."""

TEXT_HINTS = (
    "://", ":AA", "PRIVATE KEY", "Q~", "SG.", "hooks.slack.com", "hvb.", "hvs.", "keydb-cli", "login",
    "mariadb", "mysql", "redis-cli", "sig=", "valkey-cli", "ya29.",
)  # fmt: skip
"""Literals at least one of which a case-sensitive pattern needs in the text."""
LOWER_HINTS = (
    "adgangskode", "authorization", "bearer", "contrase", "convertto-securestring", "cookie", "curl",
    "discord", "hasło", "heroku", "jelszó", "kennwort", "key", "lösenord", "machine", "mot de passe",
    "mot-de-passe", "pass", "passord", "pw", "salasana", "secret", "senha", "token", "twilio",
    "wachtwoord",
)  # fmt: skip
"""Literals at least one of which a case-insensitive pattern needs in the lower-cased text."""
_NOTE_SUFFIXES = ("md", "markdown", "txt")
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_-]{20}")
"""Where every other pattern and the entropy detectors look: runs of 20+ token characters."""


def _may_hold_secret(path: str) -> bool:
    if _LONG_RUN.search(path) or any(hint in path for hint in TEXT_HINTS):
        return True
    lowered = path.lower()
    return any(hint in lowered for hint in LOWER_HINTS)


def scrub_path(path: str) -> Scrubbed:
    """``path`` with every credential in it replaced by ``[REDACTED:<pattern>]``, and the
    count of each kind. Each file or folder name is scrubbed on its own, as a line of text is
    (``password=…/notes.md``: the folder's name is the assignment, not ``…/notes.md``), and a
    file's suffix, when it is one vaultseek reads (``.md``, ``.pdf``, …), is kept out of it, so
    ``password=….md`` is shown as ``password=[REDACTED:password-assignment].md``."""
    from .credentials import Scrubbed, scrub  # only for the rare name that might hold one

    *folders, name = path.split("/")
    stem, dot, suffix = name.rpartition(".")
    kept = ""
    if stem and dot and (suffix.lower() in _NOTE_SUFFIXES or _document_kind(name) is not None):
        name, kept = stem, dot + suffix
    parts = [scrub(part) for part in (*folders, name)]
    counts: dict[str, int] = {}
    for part in parts:
        for kind, n in part.counts.items():
            counts[kind] = counts.get(kind, 0) + n
    return Scrubbed("/".join(part.text for part in parts) + kept, counts)


def _document_kind(name: str) -> str | None:
    """The document kind vaultseek reads ``name`` as (the readers' registry, with ``zipfile``,
    is imported only for a name that is not a note's)."""
    from ..documents.registry import kind_of

    return kind_of(name)


@lru_cache(maxsize=65_536)
def shown_path(path: str) -> str:
    """``path`` (a vault-relative path, a file or folder name) as it may be shown: every
    credential in it replaced by ``[REDACTED:<pattern>]``; itself when it holds none (nearly
    always, and then without loading the scrubber)."""
    if not _may_hold_secret(path):
        return path
    return scrub_path(path).text


def matching_paths(shown: str, paths: Iterable[str]) -> list[str]:
    """The real paths among ``paths`` that are shown as ``shown`` (none when ``shown`` holds no
    marker: a real path is its own)."""
    if MARKER not in shown:
        return []
    return [path for path in paths if shown_path(path) == shown]
