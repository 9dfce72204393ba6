"""The Claude Code hook on a PostgreSQL index in a collection of its own: `hook install` names
the collection in the command it writes, and that command answers from that collection (not
from the vault folder's default one), with and without a daemon serving it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, wait_for
from test_claude_settings import SCRIPTS, hook_env, installed_commands


def run_hook_command(command: str) -> subprocess.CompletedProcess[str]:
    """The installed command as Claude Code runs it, with the database password where the
    user's environment has it."""
    env = {**hook_env(), **{k: v for k, v in os.environ.items() if k.startswith("PG")}}
    return subprocess.run(["/bin/sh", "-c", command], input=PROMPT, capture_output=True, text=True,
                          env=env, timeout=120, check=False)  # fmt: skip


PROMPT = json.dumps({"session_id": "s-1", "hook_event_name": "UserPromptSubmit",
                     "prompt": "how often do we rotate the walrus refresh tokens?"})  # fmt: skip


def test_the_installed_hook_answers_from_its_collection(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "tokens.md").write_text("# Walrus token rotation\n\nRotate walrus refresh tokens every 30 days.\n", "utf-8")
    common = ["--vault", str(vault), "--db", pg_url, "--collection", "team_walrus"]
    indexed = run_cli("index", *common, "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    project = tmp_path / "project"
    project.mkdir()
    installed = run_cli("hook", "install", *common, cwd=project, env={"PATH": f"{SCRIPTS}:/usr/bin:/bin"})
    assert installed.returncode == 0, installed.stderr
    commands = installed_commands(project)
    for command in commands.values():
        assert "--collection=team_walrus" in command and os.environ["PGPASSWORD"] not in command

    # The vault folder's default collection ("vault") does not exist: only the named one answers.
    answered = run_hook_command(commands["UserPromptSubmit"])
    assert (answered.returncode, answered.stderr) == (0, "")
    assert answered.stdout.startswith("## Relevant Memory Context") and "tokens.md" in answered.stdout

    # With a daemon serving the collection, the hook is answered there: this process never
    # imports the engine (the modules it loaded are written to a file for the test).
    started = run_cli("daemon", "start", *common)
    assert started.returncode == 0, started.stderr
    try:
        assert wait_for(lambda: run_cli("daemon", "status", *common).returncode == 0, seconds=60)
        modules = tmp_path / "modules.txt"
        monkeypatch.setenv("VAULTSEEK_DEBUG_MODULES", str(modules))
        served = run_hook_command(commands["UserPromptSubmit"])
        assert (served.returncode, served.stderr) == (0, "")
        assert served.stdout == answered.stdout
        assert "vaultseek.engine" not in modules.read_text("utf-8").split()
    finally:
        run_cli("daemon", "stop", *common)
