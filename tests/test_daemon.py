"""The resident process: a real `vaultseek daemon` behind its socket, and the light client."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli, wait_for
from vaultseek import open_index
from vaultseek.agents import daemon_client
from vaultseek.config import load_config

PROMPT = json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit",
                     "prompt": "how should we rotate refresh tokens?"})  # fmt: skip


LIGHT_TRAPS = {"argparse", "pathlib", "typing", "dataclasses", "numpy", "apsw"}
"""Modules the hook's fast lane has no need for (each costs a hook milliseconds)."""


def db_of(vault: Path) -> Path:
    db = load_config(vault=vault).db
    assert db is not None
    return db


def stop_daemon(vault: Path) -> None:
    pid_file = daemon_client.pid_path(db_of(vault))
    run_cli("daemon", "stop", "--vault", str(vault))
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except (ValueError, OSError):
            pass


@pytest.fixture
def daemon(sample_vault: Path) -> Iterator[Path]:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    result = run_cli("daemon", "start", "--vault", str(sample_vault))
    assert result.returncode == 0, result.stderr
    try:
        yield sample_vault
    finally:
        stop_daemon(sample_vault)


def test_daemon_answers_hooks_and_searches_like_the_process_itself(daemon: Path, tmp_path: Path) -> None:
    db = db_of(daemon)
    assert daemon_client.is_running(db) is not None
    modules = tmp_path / "modules.txt"
    warm = run_cli("hook", "user-prompt-submit", "--vault", str(daemon), stdin=PROMPT,
                   env={"VAULTSEEK_DEBUG_MODULES": str(modules)})  # fmt: skip
    loaded = set(modules.read_text().split())
    assert not loaded & {"numpy", "apsw", "tokenizers", "safetensors", "yaml", "vaultseek.engine"}
    assert warm.stdout.startswith("## Relevant Memory Context")

    # The command `hook install --vault` writes names the database: the launcher's fast lane
    # then forwards the event without reading any configuration (nor importing what that needs).
    fast = run_cli("hook", "user-prompt-submit", f"--vault={daemon}", f"--db={db}", stdin=PROMPT,
                   env={"VAULTSEEK_DEBUG_MODULES": str(modules)})  # fmt: skip
    loaded = {m for m in modules.read_text().split() if m.startswith("vaultseek") or m in LIGHT_TRAPS}
    # (the package __init__ files of cli/ and agents/ hold only a docstring)
    assert loaded == {"vaultseek", "vaultseek.cli", "vaultseek.agents", "vaultseek.agents.daemon_client", "vaultseek.errors"}
    assert fast.stdout == warm.stdout
    for trivial in ("thanks!", "/compact"):  # the daemon applies the client's steps itself
        event = json.dumps({"session_id": "s", "prompt": trivial})
        assert run_cli("hook", "user-prompt-submit", f"--db={db}", stdin=event).stdout == ""

    run_cli("daemon", "stop", "--vault", str(daemon))
    assert daemon_client.is_running(db) is None
    cold = run_cli("hook", "user-prompt-submit", "--vault", str(daemon), stdin=PROMPT,
                   env={"VAULTSEEK_DEBUG_MODULES": str(modules)})  # fmt: skip
    assert "numpy" in modules.read_text().split()  # the in-process fallback
    assert cold.stdout == warm.stdout


def test_search_through_the_daemon_is_identical(daemon: Path) -> None:
    via = run_cli("search", "rotate refresh tokens", "--json", "--vault", str(daemon))
    local = run_cli("search", "rotate refresh tokens", "--json", "--no-daemon", "--vault", str(daemon))
    assert via.returncode == local.returncode == 0
    assert via.stdout == local.stdout
    text = run_cli("search", "sourdough", "--vault", str(daemon), "-k", "1")
    assert "cooking/bread.md" in text.stdout
    bad = run_cli("search", "x", "--mode", "vector", "--vault", str(daemon), "-k", "1")
    assert bad.returncode == 0


def test_term_matching_reaches_the_daemon(daemon: Path) -> None:
    query = ("search", "how do we rotate refresh tokens", "--vault", str(daemon), "--json")
    via = run_cli(*query, "--term-match", "0")
    local = run_cli(*query, "--term-match", "0", "--no-daemon")
    assert via.returncode == local.returncode == 0 and via.stdout == local.stdout
    on, explicit_on = run_cli(*query), run_cli(*query, "--term-match")  # on by default
    assert on.stdout == explicit_on.stdout
    scores = [[r["score"] for r in json.loads(out.stdout)["results"]] for out in (via, on)]
    assert len(scores[0]) > 1 and scores[0] != scores[1]


def test_filters_and_signals_reach_the_daemon(daemon: Path) -> None:
    flags = ["--where", "type:howto", "--tag", "security", "--title-match", "--intent", "--json"]
    via = run_cli("search", "how do we rotate refresh tokens", "--vault", str(daemon), *flags)
    local = run_cli("search", "how do we rotate refresh tokens", "--vault", str(daemon), "--no-daemon", *flags)
    assert via.returncode == local.returncode == 0 and via.stdout == local.stdout
    body = json.loads(via.stdout)
    assert {r["path"] for r in body["results"]} == {"security/oauth.md"} and body["intent"] == "question"
    # Straight to the socket: the daemon applies a scope itself, and refuses a bad one.
    found = daemon_client.request(db_of(daemon), {"op": "search", "query": "tokens", "filters": {"folders": ["cooking"]}})
    assert found is not None and {r["path"] for r in found["results"]} == {"cooking/bread.md"}
    with pytest.raises(daemon_client.DaemonError, match="cannot read") as bad:
        daemon_client.request(db_of(daemon), {"op": "search", "query": "x", "filters": {"modified_after": "soon"}})
    assert bad.value.exit_code == 2
    refused = run_cli("search", "x", "--vault", str(daemon), "--before", "soon")
    assert refused.returncode == 2 and "cannot read" in refused.stderr


def test_socket_is_private_and_status_reports(daemon: Path) -> None:
    path = daemon_client.socket_path(db_of(daemon))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    status = run_cli("daemon", "status", "--json", "--vault", str(daemon))
    info = json.loads(status.stdout)
    assert info["files"] == 4 and info["daemon"]["watching"] is True
    again = run_cli("daemon", "start", "--vault", str(daemon))
    assert "already running" in again.stdout


def test_the_daemon_watcher_makes_a_saved_note_searchable(daemon: Path) -> None:
    db = db_of(daemon)

    def found(word: str) -> list[str]:
        reply = daemon_client.request(db, {"op": "search", "query": word, "mode": "bm25", "k": 3})
        return [r["path"] for r in reply["results"]] if reply else []

    note = daemon / "cooking/bread.md"
    note.write_text(note.read_text("utf-8") + "\n\n## Fresh\n\nA fresh word: zqfreshword.\n", "utf-8")
    assert wait_for(lambda: found("zqfreshword") == ["cooking/bread.md"], 10)
    note.rename(daemon / "code/bread.md")
    assert wait_for(lambda: found("zqfreshword") == ["code/bread.md"], 10)


def test_a_killed_daemon_leaves_a_stale_socket_that_is_cleaned_up(daemon: Path) -> None:
    db = db_of(daemon)
    pid = int(daemon_client.pid_path(db).read_text())
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert daemon_client.socket_path(db).exists()
    assert daemon_client.is_running(db) is None  # refused: stale
    fallback = run_cli("hook", "user-prompt-submit", "--vault", str(daemon), stdin=PROMPT)
    assert fallback.stdout.startswith("## Relevant Memory Context")
    restarted = run_cli("daemon", "start", "--vault", str(daemon))
    assert restarted.returncode == 0, restarted.stderr
    assert daemon_client.is_running(db)["pid"] != pid


def test_the_daemon_reindexes_saved_and_deleted_notes(daemon: Path) -> None:
    db = db_of(daemon)

    def paths(query: str) -> list[str]:
        found = daemon_client.request(db, {"op": "search", "query": query, "mode": "bm25", "k": 5})
        assert found is not None
        return [r["path"] for r in found["results"]]

    note = daemon / "zoo" / "zebra.md"
    note.parent.mkdir()
    note.write_text("# Zebras\n\n## Stripes\n\nZebra stripes confuse biting flies.\n", "utf-8")
    assert wait_for(lambda: paths("zebra stripes") == ["zoo/zebra.md"])
    note.write_text("# Zebras\n\n## Stripes\n\nOkapi cousins have fewer stripes.\n", "utf-8")
    assert wait_for(lambda: paths("okapi") == ["zoo/zebra.md"] and paths("biting flies") == [])
    note.rename(daemon / "zoo" / "renamed.md")
    assert wait_for(lambda: paths("okapi") == ["zoo/renamed.md"])
    (daemon / "zoo").rename(daemon / "animals")  # a folder rename reports only the folder
    assert wait_for(lambda: paths("okapi") == ["animals/renamed.md"])
    (daemon / "animals" / "renamed.md").unlink()
    assert wait_for(lambda: paths("okapi") == [])



def test_protocol_errors_are_answers_not_crashes(daemon: Path) -> None:
    db = db_of(daemon)
    with pytest.raises(daemon_client.DaemonError, match="unknown op"):
        daemon_client.request(db, {"op": "launch-missiles"})
    with pytest.raises(daemon_client.DaemonError, match="unknown search mode"):
        daemon_client.request(db, {"op": "search", "query": "x", "mode": "psychic"})
    assert daemon_client.is_running(db) is not None


def test_the_socket_folder_follows_the_configured_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from vaultseek.places import data_home

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert daemon_client.runtime_dir() == data_home() / "run"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert daemon_client.runtime_dir() == data_home() / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert daemon_client.socket_path("x.db").parent == tmp_path / "vaultseek"
    assert daemon_client.index_key("x.db") == daemon_client.index_key(Path.cwd() / "x.db")


def test_the_hook_client_path_does_not_load_openssl() -> None:
    """Naming a daemon's socket takes SHA-256 of the index path; hashlib would load OpenSSL
    (about 12 ms of a hook's start) for it, the built-in module gives the same digest."""
    import hashlib

    code = ("import sys; from vaultseek.agents import daemon_client; from vaultseek.cli import launcher;"
            "print(daemon_client.index_key('/notes/x.db'), sorted(m for m in ('hashlib', '_hashlib') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = hashlib.sha256(b"/notes/x.db").hexdigest()[:16]  # the socket a running daemon has
    assert out.stdout.split() == [expected, "[]"]
