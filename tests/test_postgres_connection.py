"""Connecting to PostgreSQL, against a real server (tests/support/postgres.py): what works, and
the one-line error, hint and exit code a user gets for each thing that can go wrong. Every
error names ``host:port/database`` and never the password."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.postgres import HOST, LocalPostgres, free_port

from vaultseek.config import load_config
from vaultseek.errors import (
    ConfigError,
    DatabaseAuthError,
    DatabaseNotFoundError,
    DatabasePermissionError,
    DatabaseUnavailableError,
    DatabaseUnsupportedError,
    VaultseekError,
)
from vaultseek.places import (
    VaultRegistry,
    data_home,
    database_target,
    default_collection,
    display_url,
    is_database_url,
)
from vaultseek.storage.postgres import connection
from vaultseek.storage.postgres.connection import (
    connect,
    ensure_pgvector,
    server_info,
    translate,
    unsupported_server,
)


def assert_one_line(error: VaultseekError, *, where: str, secret: str | None = None, exit_code: int) -> None:
    """The error is one line naming ``where``, has a one-line hint, the exit code, and neither
    repeats ``secret``."""
    assert where in str(error), str(error)
    assert "\n" not in str(error) and error.hint and "\n" not in error.hint
    assert error.exit_code == exit_code
    if secret:
        assert secret not in str(error) and secret not in error.hint


def database_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def with_password(url: str, password: str) -> str:
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{password}@{host}"


# -- a server that works ----------------------------------------------------------------------


def test_connect_reports_postgresql_18_and_pgvector_08(pg_url: str) -> None:
    with connect(pg_url, application_name="vaultseek-test") as conn:
        assert conn.autocommit
        assert conn.execute("SHOW application_name").fetchone() == ("vaultseek-test",)
        info = server_info(conn)
        assert info.version.startswith("18.") and info.version_num >= 180000
        assert info.pgvector is None  # a fresh database: not created yet
        assert info.available_pgvector is not None and info.available_pgvector.startswith("0.8")
        assert not info.replica
        version = ensure_pgvector(conn)
        assert version == info.available_pgvector
        assert server_info(conn).pgvector == version
        assert ensure_pgvector(conn) == version  # a second call finds it
        assert conn.execute("SELECT '[1,2,3]'::halfvec(3)::text").fetchone() == ("[1,2,3]",)


def test_the_password_comes_from_a_pgpass_file(postgres: LocalPostgres, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGPASSWORD")
    passfile = postgres.write_passfile(tmp_path / "pgpass", "vaultseek_admin", postgres.password)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    with connect(pg_url) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("vaultseek_admin",)


# -- server down ------------------------------------------------------------------------------


def test_a_closed_port_is_server_down_naming_host_port_and_database(postgres: LocalPostgres, pg_url: str) -> None:
    port = free_port()
    url = with_password(postgres.url(port=port, database=database_of(pg_url)), "hunter2-secret")
    with pytest.raises(DatabaseUnavailableError) as caught:
        connect(url, connect_timeout=3)
    where = f"{HOST}:{port}/{database_of(pg_url)}"
    assert_one_line(caught.value, where=where, secret="hunter2-secret", exit_code=10)
    assert "connection refused" in str(caught.value)
    assert f"pg_isready -h {HOST} -p {port}" in caught.value.hint


@pytest.fixture(scope="module")
def spare() -> Iterator[LocalPostgres]:
    """A server of this module's own, for the tests that stop or kill it."""
    from tests.support.postgres import require_binaries

    require_binaries()
    with LocalPostgres() as server:
        yield server


@pytest.fixture
def spare_env(spare: LocalPostgres, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PGPASSWORD", spare.password)
    return spare.url()


def test_a_stopped_server_is_server_down(spare: LocalPostgres, spare_env: str) -> None:
    spare.stop()
    try:
        with pytest.raises(DatabaseUnavailableError) as caught:
            connect(spare_env)
        assert_one_line(caught.value, where=f"{HOST}:{spare.port}/postgres", secret=spare.password, exit_code=10)
    finally:
        spare.restart()
    with connect(spare_env) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_killed_server_mid_use_is_a_lost_connection(spare: LocalPostgres, spare_env: str) -> None:
    conn = connect(spare_env)
    try:
        spare.kill()
        with pytest.raises(connection.Error) as caught:
            conn.execute("SELECT 1")
        lost = translate(caught.value, spare_env)
        assert isinstance(lost, DatabaseUnavailableError), lost
        assert str(lost).startswith("lost the connection to PostgreSQL at ")
        assert_one_line(lost, where=f"{HOST}:{spare.port}/postgres", secret=spare.password, exit_code=10)
        with pytest.raises(connection.Error) as again:  # the broken connection stays broken
            conn.execute("SELECT 1")
        assert isinstance(translate(again.value, conn), DatabaseUnavailableError)
    finally:
        conn.close()
        spare.restart()
    with connect(spare_env) as fresh:
        assert fresh.execute("SELECT 1").fetchone() == (1,)


def test_a_terminated_session_is_a_lost_connection(postgres: LocalPostgres, pg_url: str) -> None:
    name = f"victim-{secrets.token_hex(4)}"
    with connect(pg_url, application_name=name) as conn:
        assert postgres.terminate_sessions(database_of(pg_url), application_name=name) == 1
        with pytest.raises(connection.Error) as caught:
            conn.execute("SELECT 1")
        lost = translate(caught.value, conn)  # from the connection: libpq's own host, port, db
        assert isinstance(lost, DatabaseUnavailableError)
        assert_one_line(lost, where=f"{HOST}:{postgres.port}/{database_of(pg_url)}", secret=postgres.password, exit_code=10)
        assert "terminating connection" in str(lost)


# -- the role and the database ----------------------------------------------------------------


def test_a_wrong_password_is_an_authentication_error(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-the-password-123")
    with pytest.raises(DatabaseAuthError) as caught:
        connect(pg_url)
    where = f"{HOST}:{database_target(pg_url).port}/{database_of(pg_url)}"
    assert_one_line(caught.value, where=where, secret="not-the-password-123", exit_code=2)
    assert "'vaultseek_admin'" in str(caught.value) and "wrong password" in str(caught.value)
    assert "~/.pgpass" in caught.value.hint and "PGPASSWORD" in caught.value.hint
    # The same wrong password written into the URL is not repeated either.
    with pytest.raises(DatabaseAuthError) as in_url:
        connect(with_password(pg_url, "url-secret-456"))
    assert_one_line(in_url.value, where=where, secret="url-secret-456", exit_code=2)


def test_no_password_anywhere_says_where_to_put_it(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGPASSWORD")
    with pytest.raises(DatabaseAuthError) as caught:
        connect(pg_url)
    assert "none was found" in str(caught.value)
    assert_one_line(caught.value, where=database_target(pg_url).where, exit_code=2)


def test_a_missing_database_is_not_found(postgres: LocalPostgres, pg_url: str) -> None:
    url = postgres.url(database="no_such_db")
    with pytest.raises(DatabaseNotFoundError) as caught:
        connect(url)
    assert_one_line(caught.value, where=f"{HOST}:{postgres.port}/no_such_db", secret=postgres.password, exit_code=3)
    assert "createdb" in caught.value.hint and "CREATE DATABASE no_such_db" in caught.value.hint


def test_missing_pgvector_and_a_role_that_may_not_create_it(postgres: LocalPostgres, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain role (no superuser, no CREATE on the database) cannot enable pgvector: the
    error says so and who can fix it; once an administrator has, the same role gets on."""
    role = f"plain_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(12)
    postgres.create_role(role, password)  # LOGIN only: CONNECT comes from PUBLIC
    monkeypatch.setenv("PGPASSWORD", password)
    url = postgres.url(user=role, database=database_of(pg_url))
    with connect(url) as conn:
        assert conn.execute(
            "SELECT has_database_privilege(current_user, current_database(), 'CREATE')"
        ).fetchone() == (False,)
        with pytest.raises(DatabaseUnsupportedError) as caught:
            ensure_pgvector(conn)
    error = caught.value
    assert_one_line(error, where=database_target(url).where, secret=password, exit_code=11)
    assert f"the role '{role}' may not enable it" in str(error)
    assert "ask an administrator to run CREATE EXTENSION vector;" in error.hint
    assert database_of(pg_url) in error.hint
    postgres.execute("CREATE EXTENSION vector", database=database_of(pg_url))
    with connect(url) as conn:
        assert ensure_pgvector(conn).startswith("0.8")


def test_a_read_only_role_reads_and_a_write_is_refused(postgres: LocalPostgres, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    database = database_of(pg_url)
    postgres.execute("CREATE SCHEMA vs_notes; CREATE TABLE vs_notes.chunks (id int, body text);"
                     "INSERT INTO vs_notes.chunks VALUES (1, 'hello')", database=database)  # fmt: skip
    reader = f"reader_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(12)
    postgres.create_role(reader, password, read_only=True, database=database)
    monkeypatch.setenv("PGPASSWORD", password)
    url = postgres.url(user=reader, database=database)
    with connect(url, read_only=True) as conn:
        assert conn.execute("SELECT body FROM vs_notes.chunks").fetchall() == [("hello",)]
        with pytest.raises(connection.Error) as caught:
            conn.execute("INSERT INTO vs_notes.chunks VALUES (2, 'x')")
        refused = translate(caught.value, url)
        assert isinstance(refused, DatabasePermissionError)
        assert_one_line(refused, where=database_target(url).where, secret=password, exit_code=7)
        assert "read-only" in str(refused)
    with connect(url) as conn:  # a session that may write, of a role that may not
        with pytest.raises(connection.Error) as caught:
            conn.execute("INSERT INTO vs_notes.chunks VALUES (2, 'x')")
        refused = translate(caught.value, conn)
        assert isinstance(refused, DatabasePermissionError)
        assert f"the role '{reader}' may not do this" in str(refused) and "permission denied" in str(refused)
        assert_one_line(refused, where=database_target(url).where, secret=password, exit_code=7)


def test_a_read_only_session_of_a_writer_cannot_write(pg_url: str) -> None:
    with connect(pg_url, read_only=True) as conn:
        with pytest.raises(connection.Error) as caught:
            conn.execute("CREATE TABLE t (x int)")
        refused = translate(caught.value, pg_url)
        assert isinstance(refused, DatabasePermissionError) and refused.exit_code == 7
        assert "the connection is read-only" in str(refused)


def test_a_server_older_than_14_is_refused() -> None:
    target = database_target("postgresql://u@db.example:5432/notes")
    error = unsupported_server(130011, "13.11 (Debian 13.11-1)", target)
    assert isinstance(error, DatabaseUnsupportedError) and error.exit_code == 11
    assert str(error) == "PostgreSQL at db.example:5432/notes is version 13.11: vaultseek needs PostgreSQL 14 or later"
    assert unsupported_server(140000, "14.0", target) is None


def test_other_errors_pass_through_translate(pg_url: str) -> None:
    with connect(pg_url) as conn:
        with pytest.raises(connection.Error) as caught:
            conn.execute("SELECT * FROM no_such_table")
        assert translate(caught.value, conn) is caught.value  # the store's to handle
    plain = ValueError("x")
    assert translate(plain, pg_url) is plain


# -- URLs -------------------------------------------------------------------------------------


def test_urls_are_recognised_and_shown_without_secrets() -> None:
    assert is_database_url("postgresql://u@h/db") and is_database_url("postgres://h/db")
    assert is_database_url("  POSTGRESQL://u@h/db")
    assert not is_database_url("/home/me/index.db") and not is_database_url(None)
    assert not is_database_url(Path("postgresql://x"))
    shown = display_url("postgresql://alice:s3cr%40t@db.example:6543/notes?sslmode=require&password=p2&sslpassword=p3")
    assert shown == "postgresql://alice@db.example:6543/notes?sslmode=require"
    assert display_url("postgresql://[::1]:5432/db") == "postgresql://[::1]:5432/db"
    assert connection.display_url is display_url and connection.is_database_url is is_database_url


def test_targets_fill_in_libpq_defaults() -> None:
    target = database_target("postgresql://alice@db.example/notes")
    assert (target.host, target.port, target.database, target.user) == ("db.example", "5432", "notes", "alice")
    assert target.where == "db.example:5432/notes" and not target.has_password
    from_env = database_target("postgresql://", {"PGHOST": "pg.internal", "PGPORT": "6000", "PGUSER": "bob"})
    assert from_env.where == "pg.internal:6000/bob"
    assert database_target("postgresql://[::1]:5433/db").where == "[::1]:5433/db"
    assert database_target("postgresql://u:pw@h/db").has_password
    assert database_target("postgresql://u@h/db?password=x").has_password
    with pytest.raises(ValueError):
        database_target("postgresql://h:notaport/db")


# -- the configuration ------------------------------------------------------------------------


def test_a_database_url_in_db_selects_postgresql(vault: Path) -> None:
    url = "postgresql://alice@db.example:5432/team"
    config = load_config(vault=vault, db=url)
    assert config.database_url == url
    assert config.collection == "vault" == default_collection(vault)
    assert config.db is not None and config.db.parent == data_home() / "indexes"
    assert config.db.name.startswith("pg-") and not config.db.exists()
    # Who connects does not change which index it is; the collection does.
    assert load_config(vault=vault, db="postgresql://bob@db.example/team").db == config.db
    other = load_config(vault=vault, db=url, collection="wiki")
    assert other.collection == "wiki" and other.db != config.db
    assert load_config(vault=vault, environ={"VAULTSEEK_DB": url}).database_url == url
    plain = load_config(vault=vault)
    assert plain.database_url is None and plain.collection == "vault"


def test_the_default_collection_is_the_folder_name_made_safe(tmp_path: Path) -> None:
    for name, expected in (("My Notes (2026)", "my_notes_2026"), ("wiki", "wiki"), ("Ärzte-Wiki", "rzte_wiki")):
        folder = tmp_path / name
        folder.mkdir()
        assert default_collection(folder) == expected
    folder = tmp_path / "笔记"
    folder.mkdir()
    assert default_collection(folder).startswith("vault_") and len(default_collection(folder)) == 14
    long = tmp_path / ("x" * 60)
    long.mkdir()
    assert default_collection(long) == "x" * 40


def test_a_bad_collection_name_is_refused(vault: Path) -> None:
    with pytest.raises(ConfigError, match="lower-case letters, digits"):
        load_config(vault=vault, db="postgresql://h/db", collection="Team Wiki")


def test_a_vault_file_cannot_choose_the_database_or_the_collection(vault: Path) -> None:
    (vault / ".vaultseek.toml").write_text(
        'db = "postgresql://attacker@evil.example/loot"\ncollection = "company_wiki"\ntop_k = 7\n', encoding="utf-8"
    )
    config = load_config(vault=vault)
    assert config.database_url is None and config.collection == "vault" and config.top_k == 7
    (notice,) = config.notices
    assert "ignored collection, db" in notice


def test_a_config_file_with_a_password_in_the_url_is_refused(vault: Path, tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text('db = "postgresql://alice:hunter2@db.example/team"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(vault=vault, config_file=file)
    assert "hunter2" not in str(caught.value) and caught.value.hint and "hunter2" not in caught.value.hint
    assert "postgresql://alice@db.example/team" in caught.value.hint and "~/.pgpass" in caught.value.hint
    file.write_text('db = "postgresql://alice@db.example/team"\ncollection = "team_wiki"\n', encoding="utf-8")
    config = load_config(vault=vault, config_file=file)
    assert config.database_url == "postgresql://alice@db.example/team" and config.collection == "team_wiki"


def test_a_password_on_the_command_line_gets_a_warning(vault: Path) -> None:
    config = load_config(vault=vault, db="postgresql://alice:pw@db.example/team")
    assert any("~/.pgpass or PGPASSWORD" in notice for notice in config.notices)
    assert not any("pw@" in notice for notice in config.notices)


def test_the_registry_remembers_a_postgresql_default_without_its_password(vault: Path) -> None:
    url = "postgresql://alice:pw@db.example/team"
    config = load_config(vault=vault, db=url, collection="team")
    assert config.db is not None
    VaultRegistry().remember(vault, config.db, database_url=config.database_url, collection=config.collection)
    assert VaultRegistry().database_for(vault) == ("postgresql://alice@db.example/team", "team")
    again = load_config(vault=vault)  # no --db: the vault's default index
    assert again.database_url == "postgresql://alice@db.example/team" and again.collection == "team"
    assert again.db == config.db
    # An index file elsewhere leaves the PostgreSQL default as it is, unless asked.
    VaultRegistry().remember(vault, vault.parent / "other.db")
    assert VaultRegistry().database_for(vault) is not None
    VaultRegistry().remember(vault, vault.parent / "other.db", make_default=True)
    assert VaultRegistry().database_for(vault) is None


# -- without the postgres extra ---------------------------------------------------------------


def test_without_psycopg_the_postgres_extra_is_named() -> None:
    code = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'psycopg':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "from vaultseek.errors import MissingExtraError\n"
        "try:\n"
        "    import vaultseek.storage.postgres.connection\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.exit_code, exc.extra, exc.hint, sep='|')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "8|postgres|pip install 'vaultseek[postgres]'"


# -- the command line -------------------------------------------------------------------------


def test_status_shows_the_backend_server_and_pgvector(pg_url: str, sample_vault: Path) -> None:
    from conftest import run_cli

    done = run_cli("index", str(sample_vault), "--db", pg_url, "--collection", "team_notes", "--quiet")
    assert done.returncode == 0, done.stderr
    done = run_cli("status", "--vault", str(sample_vault), "--db", pg_url, "--collection", "team_notes")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line and not line.startswith(" "))
    assert lines["index"].strip().startswith(f"{pg_url} (collection team_notes)")
    assert lines["backend"].strip() == "postgresql"
    assert lines["server"].strip().startswith("18.") and lines["pgvector"].strip().startswith("0.8")
    assert lines["files"].strip().startswith("4 indexed")
    done = run_cli("status", "--vault", str(sample_vault), "--db", pg_url, "--collection", "team_notes", "--json")
    backend = json.loads(done.stdout)["backend"]
    assert backend["backend"] == "postgresql" and backend["collection"] == "team_notes"
    assert backend["database"] == pg_url and backend["server"].startswith("18.")
    assert os.environ["PGPASSWORD"] not in done.stdout
    # The first index of the vault became its default: no --db needed from now on.
    done = run_cli("search", "sourdough starter", "--vault", str(sample_vault), "--json", "--no-daemon")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["path"] == "cooking/bread.md"


def test_an_sqlite_status_says_so_in_json(sample_vault: Path) -> None:
    from conftest import run_cli

    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    done = run_cli("status", "--vault", str(sample_vault), "--json")
    assert json.loads(done.stdout)["backend"] == {"backend": "sqlite"}
    assert "backend:" not in run_cli("status", "--vault", str(sample_vault)).stdout


def test_the_cli_prints_one_line_and_a_hint_with_the_exit_code(postgres: LocalPostgres, pg_url: str, vault: Path) -> None:
    from conftest import run_cli

    (vault / "a.md").write_text("# A\n\nA note.\n", encoding="utf-8")
    port = free_port()
    closed = with_password(postgres.url(port=port, database=database_of(pg_url)), "pw-on-the-line")
    done = run_cli("search", "note", "--vault", str(vault), "--db", closed, "--no-daemon")
    assert done.returncode == 10
    warning, error, hint = done.stderr.splitlines()
    assert warning.startswith("warning: the password in --db can be read by other users")
    assert error == f"error: cannot connect to PostgreSQL at {HOST}:{port}/{database_of(pg_url)}: connection refused"
    assert hint.startswith("hint: is the server running") and "pw-on-the-line" not in done.stderr
    done = run_cli("index", str(vault), "--db", pg_url, env={"PGPASSWORD": "wrong-pw-789"})
    assert done.returncode == 2 and "wrong-pw-789" not in done.stderr
    assert done.stderr.splitlines()[0].startswith(f"error: PostgreSQL at {database_target(pg_url).where} refused the role")
    done = run_cli("status", "--vault", str(vault), "--db", postgres.url(database="nowhere"))
    assert done.returncode == 3 and "the database 'nowhere' does not exist" in done.stderr


def test_without_psycopg_a_database_url_names_the_postgres_extra(pg_url: str, vault: Path) -> None:
    from test_extras import assert_missing_extra, run_without

    (vault / "a.md").write_text("# A\n\nA note.\n", encoding="utf-8")
    done = run_without(("psycopg",), "index", str(vault), "--db", pg_url)
    assert_missing_extra(done, "postgres", "psycopg")


def test_search_reads_a_replica_and_index_is_refused_there(postgres: LocalPostgres, pg_url: str, sample_vault: Path) -> None:
    """What docs/postgres.md promises for read replicas: readers point --db at a hot standby;
    a writer pointed there exits 7 saying the connection is read-only."""
    from conftest import run_cli

    assert run_cli("index", str(sample_vault), "--db", pg_url, "--quiet").returncode == 0
    replica = postgres.start_replica()
    try:
        url = replica.url(database=database_of(pg_url))
        with connect(url) as conn:
            assert server_info(conn).replica
        done = run_cli("search", "sourdough starter", "--vault", str(sample_vault), "--db", url, "--json", "--no-daemon")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"][0]["path"] == "cooking/bread.md"
        done = run_cli("index", str(sample_vault), "--db", url)
        assert done.returncode == 7
        assert done.stderr.splitlines()[0] == f"error: cannot write to {HOST}:{replica.port}/{database_of(pg_url)}: the connection is read-only"
    finally:
        replica.cleanup()


def test_a_server_killed_mid_sync_is_a_lost_connection_not_an_unexpected_error(
    spare: LocalPostgres, spare_env: str, tmp_path: Path
) -> None:
    from vaultseek import open_index

    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(200):
        (vault / f"note-{n:03}.md").write_text(f"# Note {n}\n\nText about topic {n} and its details.\n", "utf-8")
    calls = []

    def kill_on_the_way(progress: object) -> None:  # the server goes away with the sync half done
        calls.append(progress)
        if len(calls) == 2:
            spare.kill()

    try:
        with open_index(vault, db=spare_env, create=True, collection="killed") as index, pytest.raises(VaultseekError) as caught:
            index.sync(progress=kill_on_the_way, remember=False)
        assert len(calls) >= 2, "the sync finished before the server was killed"
        assert isinstance(caught.value, DatabaseUnavailableError), repr(caught.value)
        assert str(caught.value).startswith("lost the connection to PostgreSQL at "), str(caught.value)
        assert_one_line(caught.value, where=f"{HOST}:{spare.port}/postgres", secret=spare.password, exit_code=10)
    finally:
        spare.restart()
