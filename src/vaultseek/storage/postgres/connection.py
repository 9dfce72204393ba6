"""Connecting to PostgreSQL: the one module that imports ``psycopg``.

:func:`connect` opens an autocommit connection (the store opens its own transactions), reads
the password the way libpq does (the URL if the user put it there, else ``PGPASSWORD`` or
``~/.pgpass``; never a config file) and checks the server's version. :func:`ensure_pgvector`
creates the pgvector extension when it is missing and the role may. :func:`translate` turns
the psycopg errors a user can meet into vaultseek's typed errors: each is one line naming
``host:port/database`` (never the password) with a hint, and carries the CLI's exit code:

    server down, unreachable, timed out, connection lost  DatabaseUnavailableError    10
    wrong or missing password, no such role, pg_hba.conf  DatabaseAuthError            2
    the database does not exist                           DatabaseNotFoundError        3
    serialization failure, deadlock, lock timeout         IndexBusyError               4
    damaged data or index                                 IndexCorruptError            5
    no permission (read-only role, session or replica)    DatabasePermissionError      7
    server older than 14, pgvector missing or too old     DatabaseUnsupportedError    11

The store and schema modules import psycopg's types through here (:data:`Connection`,
:data:`sql`, :data:`pg_errors`), so an upstream change touches this file only. Without
psycopg installed, importing this module raises :class:`MissingExtraError` naming the
``postgres`` extra.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from typing import Any, TypeAlias

from ...errors import (
    DatabaseAuthError,
    DatabaseNotFoundError,
    DatabasePermissionError,
    DatabaseUnavailableError,
    DatabaseUnsupportedError,
    IndexAccessError,
    IndexBusyError,
    IndexCorruptError,
    MissingExtraError,
    VaultseekError,
)
from ...places import DatabaseTarget, database_target, display_url, is_database_url

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg import sql
except ImportError as exc:
    raise MissingExtraError.from_import(exc, "postgres", feature="an index in PostgreSQL (--db postgresql://…)") from exc

# psycopg logs a warning when a pipeline that already failed is closed ("error ignored
# terminating <Pipeline …>"); the failure itself reaches the caller as an exception, which
# :func:`translate` turns into one clear message. Without a handler of its own, Python's
# last-resort handler would print that warning above the message.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

__all__ = [
    "MIN_PGVECTOR",
    "MIN_SERVER_VERSION",
    "Connection",
    "Cursor",
    "Error",
    "ServerInfo",
    "connect",
    "display_url",
    "ensure_pgvector",
    "is_database_url",
    "pg_errors",
    "server_info",
    "sql",
    "translate",
    "unsupported_server",
]

Connection: TypeAlias = psycopg.Connection[tuple[Any, ...]]
"""A connection whose rows are tuples (psycopg's default row factory)."""
Cursor: TypeAlias = psycopg.Cursor[tuple[Any, ...]]
Error = psycopg.Error
"""The base of every psycopg error (what :func:`translate` takes)."""

MIN_SERVER_VERSION = 140000
"""PostgreSQL 14: the oldest release still supported upstream when this was written, and the
first with ``pg_read_all_data`` (the one-line grant for a read-only role)."""
MIN_PGVECTOR = (0, 7)
"""pgvector 0.7 brought ``halfvec``, the 2-byte vectors the index stores."""
_EXTENSION_LOCK = 0x7661756C_74766563
"""The advisory lock two writers creating the extension at once take turns on."""


@dataclass(frozen=True)
class ServerInfo:
    """What ``vaultseek status`` shows about the server, and what :func:`ensure_pgvector`
    checks."""

    version: str
    """``18.1``: the server's version without its build details."""
    version_num: int
    """``180001``: ``server_version_num``."""
    pgvector: str | None
    """The pgvector version created in this database; None when it is not."""
    available_pgvector: str | None
    """The pgvector version the server has installed (``CREATE EXTENSION`` would make); None
    when the server has no pgvector at all."""
    replica: bool = False
    """The server is a standby (read replica): searches work, writes do not."""


def connect(
    url: str,
    *,
    read_only: bool = False,
    application_name: str = "vaultseek",
    connect_timeout: float = 10,
) -> Connection:
    """An autocommit connection to the database ``url`` names.

    ``read_only`` makes every transaction of the session read-only, so a search cannot write
    whatever the role may do. Raises the typed errors of the module docstring; a server older
    than :data:`MIN_SERVER_VERSION` raises :class:`DatabaseUnsupportedError`."""
    target = _target(url)
    try:
        conn = psycopg.connect(
            url,
            autocommit=True,
            application_name=application_name,
            connect_timeout=max(2, math.ceil(connect_timeout)),
        )
    except psycopg.Error as exc:
        raise _connect_error(exc, url, target, timeout=connect_timeout) from exc
    try:
        old = unsupported_server(conn.info.server_version, conn.info.parameter_status("server_version") or "", target)
        if old is not None:
            raise old
        if read_only:
            conn.execute("SET default_transaction_read_only = on")
    except psycopg.Error as exc:
        conn.close()
        raise translate(exc, url) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def unsupported_server(version_num: int, version: str, target: DatabaseTarget) -> DatabaseUnsupportedError | None:
    """The error for a server older than :data:`MIN_SERVER_VERSION`, else None."""
    if version_num >= MIN_SERVER_VERSION:
        return None
    shown = version.split()[0] if version.strip() else f"{version_num // 10000}"
    return DatabaseUnsupportedError(
        f"PostgreSQL at {target.where} is version {shown}: vaultseek needs PostgreSQL "
        f"{MIN_SERVER_VERSION // 10000} or later",
        hint="upgrade the server (pg_upgrade, or a managed service's current version), or use an index file (--db PATH)",
    )


def server_info(conn: Connection) -> ServerInfo:
    """The server's version, pgvector's (created here, and installed on the server) and
    whether it is a replica."""
    try:
        row = conn.execute(
            "SELECT current_setting('server_version'), current_setting('server_version_num')::int,"
            " (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
            " (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'),"
            " pg_is_in_recovery()"
        ).fetchone()
    except psycopg.Error as exc:
        raise translate(exc, conn) from exc
    assert row is not None
    version, number, created, available, replica = row
    return ServerInfo(
        version=str(version).split()[0], version_num=int(number), pgvector=created,
        available_pgvector=available, replica=bool(replica),
    )  # fmt: skip


def ensure_pgvector(conn: Connection) -> str:
    """pgvector's version in this database, creating the extension first when it is missing
    (``CREATE EXTENSION vector``, which needs a superuser or, on managed services, the
    database owner). Raises :class:`DatabaseUnsupportedError` when the server has no pgvector,
    this role may not create it, or it is older than :data:`MIN_PGVECTOR`."""
    target = _target_of(conn)
    info = server_info(conn)
    if info.pgvector is None:
        if info.available_pgvector is None:
            raise DatabaseUnsupportedError(
                f"PostgreSQL at {target.where} does not have the pgvector extension installed",
                hint="install pgvector on the server (the postgresql-<version>-pgvector package, or the "
                "pgvector/pgvector Docker image; on a managed service, allow the 'vector' extension), "
                f"then run CREATE EXTENSION vector; in the database {target.database}",
            )
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_EXTENSION_LOCK,))
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction) as exc:
            raise DatabaseUnsupportedError(
                f"pgvector is not enabled in {target.where}, and the role {target.user!r} may not enable it",
                hint=f"ask an administrator to run CREATE EXTENSION vector; in the database {target.database} "
                f"(pgvector {info.available_pgvector} is installed on the server; creating it needs a "
                "superuser, or the database owner on a managed service)",
            ) from exc
        except psycopg.Error as exc:
            raise translate(exc, conn) from exc
        info = server_info(conn)
        assert info.pgvector is not None
    if _version_tuple(info.pgvector) < MIN_PGVECTOR:
        minimum = ".".join(map(str, MIN_PGVECTOR))
        newer = info.available_pgvector and _version_tuple(info.available_pgvector) >= MIN_PGVECTOR
        raise DatabaseUnsupportedError(
            f"pgvector {info.pgvector} in {target.where} is too old: vaultseek needs {minimum} or later (halfvec)",
            hint=(f"run ALTER EXTENSION vector UPDATE; in the database {target.database} (the server has {info.available_pgvector})"
                  if newer else f"upgrade pgvector on the server to {minimum} or later, then run ALTER EXTENSION vector UPDATE;"),
        )  # fmt: skip
    return info.pgvector


def translate(exc: BaseException, where: str | Connection) -> BaseException:
    """The vaultseek error for a psycopg error met using the database at ``where`` (its URL,
    or the connection); anything else is returned unchanged."""
    if isinstance(exc, VaultseekError) or not isinstance(exc, psycopg.Error):
        return exc
    target = _target(where) if isinstance(where, str) else _target_of(where)
    place = target.where
    reason = _reason(exc, where if isinstance(where, str) else None)
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return DatabasePermissionError(
            f"cannot write to {place}: the connection is read-only",
            hint="a read-only role or a replica can search but not index: index through the primary "
            "server with a role that may write",
        )
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return DatabasePermissionError(
            f"the role {target.user!r} may not do this in {place}: {reason}",
            hint="searching needs only read access; indexing needs a role that owns the collection's schema "
            "or may create schemas in the database (GRANT CREATE ON DATABASE …; docs/postgres.md)",
        )
    if isinstance(exc, (pg_errors.SerializationFailure, pg_errors.DeadlockDetected, pg_errors.LockNotAvailable)):
        return IndexBusyError(
            f"the index in {place} was busy: {reason}",
            hint="another vaultseek wrote to it at the same moment; run the command again",
        )
    if isinstance(exc, pg_errors.DiskFull):
        return IndexAccessError(
            f"cannot write to {place}: the database server's disk is full",
            hint="free space on the database server (or ask its administrator)",
        )
    if isinstance(exc, (pg_errors.DataCorrupted, pg_errors.IndexCorrupted)):
        return IndexCorruptError(
            f"PostgreSQL at {place} reports damaged data: {reason}",
            hint="ask the server's administrator to check it; REINDEX rebuilds a damaged index",
        )
    if isinstance(exc, pg_errors.TooManyConnections):
        return _too_many(place)
    if _is_lost(exc):
        return DatabaseUnavailableError(
            f"lost the connection to PostgreSQL at {place}: {reason}",
            hint="the server stopped or restarted, the session was ended, or the network dropped; run the "
            "command again (what was committed is kept)",
        )
    return exc


# -- internals -----------------------------------------------------------------------------------


def _target(url: str) -> DatabaseTarget:
    try:
        return database_target(url)
    except ValueError:
        return DatabaseTarget(display_url(url), "?", "?", "?", has_password=False)


def _target_of(conn: Connection) -> DatabaseTarget:
    """Where an open (or broken) connection points, from what libpq negotiated."""
    try:
        info = conn.info
        return DatabaseTarget(str(info.host), str(info.port), str(info.dbname), str(info.user), has_password=False)
    except psycopg.Error:
        return DatabaseTarget("?", "?", "?", "?", has_password=False)


def _is_lost(exc: psycopg.Error) -> bool:
    """A connection that failed or went away: the server ended the session (57P01–57P03),
    a connection exception (class 08), or a client-side failure with no SQLSTATE (the socket
    closed, "the connection is closed")."""
    state = exc.sqlstate or ""
    if isinstance(exc, (pg_errors.AdminShutdown, pg_errors.CrashShutdown, pg_errors.CannotConnectNow)):
        return True
    if state.startswith("08"):
        return True
    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) and not state


def _too_many(place: str) -> DatabaseUnavailableError:
    return DatabaseUnavailableError(
        f"PostgreSQL at {place} accepts no more connections (too many clients)",
        hint="try again shortly; the server's administrator can raise max_connections or put a pooler "
        "(PgBouncer) in front",
    )


def _reason(exc: BaseException, url: str | None = None) -> str:
    """libpq's or the server's reason, one line: ``connection failed: connection to server
    at "h", port 5432 failed: FATAL:  database "x" does not exist`` → ``database "x" does not
    exist``. A password in ``url`` is masked should a message ever repeat it."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    text = text.rsplit(" failed: ", 1)[-1]
    text = re.sub(r"^(FATAL|ERROR):\s+", "", text).strip()
    if url:
        password = _password_of(url)
        if password:
            text = text.replace(password, "***")
    if text[1:2].islower():  # "Connection refused" → "connection refused"; "SSL …" stays
        text = text[:1].lower() + text[1:]
    return text


def _password_of(url: str) -> str | None:
    from urllib.parse import parse_qsl, unquote, urlsplit

    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    if ":" in userinfo:
        return unquote(userinfo.partition(":")[2]) or None
    return dict(parse_qsl(parts.query)).get("password") or None


def _connect_error(exc: psycopg.Error, url: str, target: DatabaseTarget, *, timeout: float) -> BaseException:
    """The typed error for a connection that could not be made."""
    reason = _reason(exc, url)
    lower = reason.lower()
    place, user, database = target.where, target.user, target.database
    host, port = target.host.split(",")[0], target.port.split(",")[0]
    password_hint = (
        "put the password in ~/.pgpass (host:port:database:user:password, mode 600) or the "
        "PGPASSWORD variable, never in a config file"
    )
    if "password authentication failed" in lower or "authentication failed" in lower:
        return DatabaseAuthError(
            f"PostgreSQL at {place} refused the role {user!r}: wrong password, or no such role",
            hint=f"{password_hint}; check the user name in the URL",
        )
    if "no password supplied" in lower or "password is required" in lower:
        return DatabaseAuthError(
            f"PostgreSQL at {place} wants the password of the role {user!r} and none was found",
            hint=password_hint,
        )
    if re.search(r'role ".*" does not exist', lower):
        return DatabaseAuthError(
            f"PostgreSQL at {place} has no role {user!r}",
            hint="fix the user name in the URL, or ask the administrator to create the role (CREATE ROLE … LOGIN)",
        )
    if "pg_hba.conf" in lower:
        return DatabaseAuthError(
            f"PostgreSQL at {place} does not admit the role {user!r} from this machine (pg_hba.conf)",
            hint="ask the server's administrator to allow this host and role, or add ?sslmode=require if "
            "the server only admits SSL connections",
        )
    if re.search(r'database ".*" does not exist', lower):
        return DatabaseNotFoundError(
            f"PostgreSQL at {place}: the database {database!r} does not exist",
            hint=f"create it (createdb -h {host} -p {port} {database}, or CREATE DATABASE {database};) "
            "and run `vaultseek index`",
        )
    if "permission denied for database" in lower or "not permitted to log in" in lower:
        return DatabasePermissionError(
            f"the role {user!r} may not connect to {place}: {reason}",
            hint=f"ask an administrator for GRANT CONNECT ON DATABASE {database} TO {user} (and LOGIN on the role)",
        )
    if "too many clients" in lower or "too many connections" in lower:
        return _too_many(place)
    if any(word in lower for word in ("starting up", "shutting down", "recovery mode", "not yet accepting")):
        return DatabaseUnavailableError(
            f"PostgreSQL at {place} is not accepting connections right now: {reason}",
            hint="it is starting, stopping or recovering; try again in a moment",
        )
    if "timeout expired" in lower or "timed out" in lower:
        return DatabaseUnavailableError(
            f"PostgreSQL at {place} did not answer within {timeout:g} s",
            hint="check the host and port, and that no firewall or VPN drops the connection",
        )
    if "could not translate host name" in lower or "name or service not known" in lower:
        return DatabaseUnavailableError(
            f"cannot connect to PostgreSQL at {place}: the host name {host!r} does not resolve",
            hint="check the host name in the URL",
        )
    return DatabaseUnavailableError(
        f"cannot connect to PostgreSQL at {place}: {reason}",
        hint=f"is the server running and listening there? `pg_isready -h {host} -p {port}` tells; "
        "check the host and port in the URL",
    )


def _version_tuple(version: str) -> tuple[int, ...]:
    """``0.8.1`` → ``(0, 8, 1)``; a suffix such as ``-dev`` is ignored."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])
