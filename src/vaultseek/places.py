"""Where vaultseek keeps things, and where a vault's index lives.

Folders follow the XDG base directories: data (indexes, the registry of vaults), configuration
and running state (logs, hook sessions, the deep tier's queue). An index is an SQLite file
outside the vault by default (``$XDG_DATA_HOME/vaultseek/indexes/``, so sync tools never see a
busy database) or a collection in a PostgreSQL database named by a ``postgresql://`` URL,
shown everywhere without its password. A small registry remembers which vaults were indexed,
so ``vaultseek search`` works from any folder after one ``vaultseek index ~/vault``.
Standard library only: :mod:`.config` and ``storage/postgres/connection.py`` build on it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import VaultNotFoundError


def data_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vaultseek"


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vaultseek"


def state_home() -> Path:
    """Where this user's running state lives (logs, the hooks' sessions, the deep tier's
    queue): ``$XDG_STATE_HOME/vaultseek``, folders made 0700."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "vaultseek"


# -- PostgreSQL URLs (connection.py re-exports these) -----------------------------------------

DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")
SECRET_URL_PARAMETERS = ("password", "sslpassword")
"""Query parameters of a libpq URL that hold a secret: left out wherever a URL is shown."""
COLLECTION_NAME = re.compile(r"[a-z0-9_]{1,40}")


def is_database_url(value: str | os.PathLike[str] | None) -> bool:
    """Whether ``value`` is a PostgreSQL URL (``postgresql://…`` or ``postgres://…``) rather
    than the path of an index file."""
    return isinstance(value, str) and value.strip().lower().startswith(DATABASE_URL_SCHEMES)


@dataclass(frozen=True)
class DatabaseTarget:
    """Where a PostgreSQL URL points, with libpq's defaults filled in (``PGHOST``,
    ``PGPORT``, ``PGDATABASE``, ``PGUSER``, else localhost, 5432 and the user name)."""

    host: str
    port: str
    database: str
    user: str
    has_password: bool

    @property
    def where(self) -> str:
        """``host:port/database`` (``[::1]:5432/db`` for an IPv6 address), for messages."""
        hosts = self.host.split(",")
        ports = self.port.split(",") if "," in self.port else [self.port] * len(hosts)
        shown = ",".join(
            f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in zip(hosts, ports, strict=False)
        )
        return f"{shown}/{self.database}"


def database_target(url: str, environ: dict[str, str] | None = None) -> DatabaseTarget:
    """Parse a PostgreSQL URL (raises ``ValueError`` when it cannot be one)."""
    import getpass
    from urllib.parse import parse_qsl, unquote, urlsplit

    env = os.environ if environ is None else environ
    parts = urlsplit(url.strip())
    query = dict(parse_qsl(parts.query))
    userinfo, _, hostlist = parts.netloc.rpartition("@")
    user_part, colon, _password = userinfo.partition(":")
    hosts, ports = [], []
    for entry in hostlist.split(",") if hostlist else []:
        if entry.startswith("["):  # [IPv6]:port
            host, _, rest = entry[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            host, _, port = entry.partition(":")
        if port and not port.isdigit():
            raise ValueError(f"the port {port!r} is not a number")
        hosts.append(unquote(host))
        ports.append(port)
    host = query.get("host") or ",".join(h for h in hosts if h) or env.get("PGHOST") or "localhost"
    port = query.get("port") or ",".join(p for p in ports if p) or env.get("PGPORT") or "5432"
    try:
        fallback_user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        fallback_user = "postgres"
    user = unquote(user_part) or query.get("user") or env.get("PGUSER") or fallback_user
    database = unquote(parts.path.lstrip("/")) or query.get("dbname") or env.get("PGDATABASE") or user
    return DatabaseTarget(
        host=host, port=port, database=database, user=user,
        has_password=bool(colon) or any(name in query for name in SECRET_URL_PARAMETERS),
    )  # fmt: skip


def display_url(url: str) -> str:
    """``url`` without its password (nor any other secret query parameter): what messages,
    ``status`` and logs show."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    userinfo, at, hostlist = parts.netloc.rpartition("@")
    netloc = f"{userinfo.partition(':')[0]}{at}{hostlist}" if at else hostlist
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k not in SECRET_URL_PARAMETERS])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def default_collection(vault: Path) -> str:
    """A vault's collection name unless one is configured: its folder name lower-cased, every
    run of other characters than ``a-z0-9_`` as one ``_``, at most 40 characters (a name of
    no such characters at all: ``vault_`` and a hash of its path)."""
    import hashlib

    name = re.sub(r"[^a-z0-9_]+", "_", vault.name.lower()).strip("_")[:40].rstrip("_")
    if name:
        return name
    return "vault_" + hashlib.sha256(str(vault.resolve()).encode("utf-8")).hexdigest()[:8]


def database_state_path(url: str, collection: str) -> Path:
    """The local file that stands for a PostgreSQL index on this machine (``Config.db``): its
    writer lock, daemon socket and the study app's data are named after it. Never opened as an
    index. The same server, database and collection give the same file, whoever connects."""
    import hashlib

    key = f"{database_target(url).where}\n{collection}"
    return data_home() / "indexes" / f"pg-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}.db"


# -- vaults -------------------------------------------------------------------------------

def resolve_vault(explicit: Path | str | None, *, prefer_cwd: bool = False) -> Path:
    """The vault to work on: the explicit one, else the indexed vault that contains the
    current folder, else (unless ``prefer_cwd``) the most recently indexed vault, else the
    current folder."""
    return find_vault(explicit, prefer_cwd=prefer_cwd)[0]


def find_vault(explicit: Path | str | None, *, prefer_cwd: bool = False) -> tuple[Path, bool]:
    """:func:`resolve_vault`, and whether the vault is the most recently indexed one, taken
    because nothing named a vault and the current folder is in none."""
    if explicit:
        path = Path(explicit).expanduser().resolve()
        if not path.exists():
            raise VaultNotFoundError(f"vault folder {path} does not exist")
        if not path.is_dir():
            raise VaultNotFoundError(f"{path} is a file, not a vault folder")
        return path, False
    cwd = Path.cwd().resolve()
    registry = VaultRegistry()
    containing = registry.find_containing(cwd)
    if containing is not None:
        return containing, False
    recent = None if prefer_cwd else registry.most_recent()
    return (recent, True) if recent is not None else (cwd, False)


def default_db_path(vault: Path) -> Path:
    """``$XDG_DATA_HOME/vaultseek/<folder name>-<hash of the absolute path>.db``."""
    import hashlib

    digest = hashlib.sha256(str(vault.resolve()).encode("utf-8")).hexdigest()[:10]
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in vault.name) or "vault"
    return data_home() / "indexes" / f"{safe}-{digest}.db"


class VaultRegistry:
    """The vaults this user has indexed, and their databases (a small JSON file)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_home() / "vaults.json"

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def db_for(self, vault: Path) -> Path:
        entry = self._load().get(str(vault))
        if entry and entry.get("db"):
            return Path(entry["db"])
        return default_db_path(vault)

    def database_for(self, vault: Path) -> tuple[str, str] | None:
        """``(URL without password, collection)`` when the vault's default index is in a
        PostgreSQL database, else None."""
        entry = self._load().get(str(vault)) or {}
        url, collection = entry.get("database_url"), entry.get("collection")
        if isinstance(url, str) and is_database_url(url) and isinstance(collection, str):
            return url, collection
        return None

    def find_containing(self, folder: Path) -> Path | None:
        best: Path | None = None
        for key in self._load():
            vault = Path(key)
            if (
                (folder == vault or vault in folder.parents)
                and vault.is_dir()
                and (best is None or len(str(vault)) > len(str(best)))
            ):
                best = vault
        return best

    def most_recent(self) -> Path | None:
        entries = [
            (entry.get("last_indexed", ""), key)
            for key, entry in self._load().items()
            if Path(key).is_dir()
        ]
        return Path(max(entries)[1]) if entries else None

    def remember(
        self, vault: Path, db: Path, *, make_default: bool = False,
        database_url: str | None = None, collection: str | None = None,
    ) -> None:  # fmt: skip
        """Record a finished index run of ``vault`` into ``db``; failures to write are not worth
        failing the run.

        ``db`` becomes the vault's default index (what a command without ``--db`` opens) when
        ``make_default``, or when the default is ``db`` already or its file is gone. An index
        written elsewhere leaves an existing default where it is, so one ``index --db X`` does
        not orphan the index every other command opens.

        For an index in PostgreSQL, ``db`` is its local state file (``Config.db``) and
        ``database_url`` and ``collection`` say where it is; the URL is kept without its
        password. A PostgreSQL default counts as existing (there is no file to look at)."""
        from datetime import UTC, datetime

        if database_url is None and db.parent == data_home() / "indexes" and db.name.startswith("pg-"):
            return  # a PostgreSQL index's local file: remembered only together with its URL
        data = self._load()
        entry = data.get(str(vault)) or {}
        current = self.db_for(vault)
        current_exists = current.exists() or bool(entry.get("database_url"))
        keep = not make_default and current != db and current_exists
        if keep:
            new = dict(entry)
        else:
            new = {"db": str(db)}
            if database_url and collection:
                new.update(database_url=display_url(database_url), collection=collection)
        new["last_indexed"] = datetime.now(UTC).isoformat(timespec="seconds")
        data[str(vault)] = new
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            scratch = self.path.with_suffix(".tmp")
            scratch.write_text(json.dumps(data, indent=2, sort_keys=True), "utf-8")
            scratch.replace(self.path)
        except OSError:
            pass
