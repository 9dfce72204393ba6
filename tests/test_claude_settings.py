"""`vaultseek hook install / uninstall` against real settings.json files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from vaultseek import open_index
from vaultseek.agents.claude_settings import install, is_ours, uninstall
from vaultseek.config import load_config
from vaultseek.errors import ConfigError

FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/log-prompt.sh"}]}],
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def ours_in(settings: dict) -> list[str]:
    return [h["command"] for groups in settings.get("hooks", {}).values() for g in groups
            for h in g["hooks"] if is_ours(h["command"])]  # fmt: skip


def test_install_merges_keeps_everything_and_backs_up(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(FOREIGN), "utf-8")
    change = install(path, ["--vault=/notes"])
    assert change.changed and change.backup is not None
    assert json.loads(change.backup.read_text("utf-8")) == FOREIGN
    after = json.loads(path.read_text("utf-8"))
    assert after["model"] == "opus" and after["permissions"] == FOREIGN["permissions"]
    assert after["hooks"]["Stop"] == FOREIGN["hooks"]["Stop"]
    assert after["hooks"]["UserPromptSubmit"][0] == FOREIGN["hooks"]["UserPromptSubmit"][0]
    assert after["hooks"]["PostToolUse"][0] == FOREIGN["hooks"]["PostToolUse"][0]
    mine = ours_in(after)
    assert len(mine) == 2 and all("--vault=/notes" in c for c in mine)
    assert after["hooks"]["PostToolUse"][1]["matcher"] == "Bash|Read|WebFetch|Grep"
    assert after["hooks"]["UserPromptSubmit"][1]["hooks"][0]["timeout"] == 10

    again = install(path, ["--vault=/notes"])  # idempotent: no change, no new backup
    assert not again.changed and again.backup is None
    assert json.loads(path.read_text("utf-8")) == after

    moved = install(path, ["--vault=/other"])  # a new vault replaces our entries, not adds
    assert len(ours_in(json.loads(path.read_text("utf-8")))) == 2 and moved.changed
    # One backup per file, holding the version before the latest change: no pile-up.
    assert moved.backup == change.backup and json.loads(moved.backup.read_text("utf-8")) == after

    removed = uninstall(path)
    assert removed.changed
    assert json.loads(path.read_text("utf-8")) == FOREIGN
    assert not uninstall(path).changed


def test_install_into_a_missing_file_and_dry_run(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    preview = install(path, [], dry_run=True)
    assert preview.changed and not path.exists()
    assert "hook user-prompt-submit" in preview.describe()
    install(path, [])
    assert len(ours_in(json.loads(path.read_text("utf-8")))) == 2
    uninstall(path)
    assert json.loads(path.read_text("utf-8")) == {}


def test_a_broken_settings_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{ not json", "utf-8")
    with pytest.raises(ConfigError):
        install(path, [])
    assert path.read_text("utf-8") == "{ not json"


def test_is_ours() -> None:
    assert is_ours("vaultseek hook user-prompt-submit")
    assert is_ours("/home/me/.venv/bin/vaultseek hook post-tool-use --vault /n")
    assert is_ours("'/home/me/old place/.venv/bin/vaultseek' hook post-tool-use --vault /n")
    assert is_ours("/usr/bin/python3 -m vaultseek.cli.main hook user-prompt-submit")
    assert is_ours("/usr/bin/python3 -m vaultseek.cli.launcher hook post-tool-use --db=/x.db")
    assert is_ours("/usr/bin/python3 -m vaultseek hook post-tool-use")
    assert is_ours("/usr/bin/python3 -m vaultseek.cli hook post-tool-use")
    assert not is_ours("~/bin/log-prompt.sh")
    assert not is_ours("vaultseek search hook")
    assert not is_ours(None)


def test_cli_install_project_and_user(tmp_path: Path, sample_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    result = run_cli("hook", "install", "--project", "--vault", str(sample_vault), "--dry-run", cwd=project)
    assert result.returncode == 0 and "dry run" in result.stdout
    assert not (project / ".claude").exists()
    result = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project)
    assert result.returncode == 0, result.stderr
    # The default is the personal file: the commands hold this machine's absolute paths.
    assert not (project / ".claude" / "settings.json").exists()
    settings = json.loads((project / ".claude" / "settings.local.json").read_text("utf-8"))
    assert len(ours_in(settings)) == 2
    db = load_config(vault=sample_vault).db
    for command in ours_in(settings):  # the index is named exactly: the hook's fast lane needs --db
        assert command.endswith(f"--vault={sample_vault} --db={db}")
    home = tmp_path / "home"
    home.mkdir()
    result = run_cli("hook", "install", "--user", cwd=project, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert (home / ".claude" / "settings.json").exists()
    result = run_cli("hook", "uninstall", "--user", cwd=project, env={"HOME": str(home)})
    assert json.loads((home / ".claude" / "settings.json").read_text("utf-8")) == {}


# -- the command Claude Code runs ---------------------------------------------------------------
PLAIN_PATH = "/usr/bin:/bin"
"""The PATH of a process started outside any activated virtual environment, as Claude Code
starts its hooks."""
SCRIPTS = Path(sys.executable).parent
"""This installation's scripts folder (the virtual environment's ``bin``)."""


def hook_env() -> dict[str, str]:
    """The environment Claude Code gives a hook: the user's HOME and XDG folders (this test's),
    a plain PATH without the virtual environment."""
    kept = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "VAULTSEEK_")) or k == "HOME"}
    return {**kept, "PATH": PLAIN_PATH, "VAULTSEEK_HOOK_TIMEOUT": "30"}


def run_hook_command(command: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/sh", "-c", command], input=stdin, capture_output=True, text=True,
                          env=hook_env(), timeout=120, check=False)  # fmt: skip


def installed_commands(project: Path) -> dict[str, str]:
    settings = json.loads((project / ".claude" / "settings.local.json").read_text("utf-8"))
    return {event: group["hooks"][0]["command"] for event, groups in settings["hooks"].items()
            for group in groups if is_ours(group["hooks"][0]["command"])}  # fmt: skip


def test_the_installed_command_runs_with_a_plain_path(tmp_path: Path, sample_vault: Path) -> None:
    with open_index(sample_vault, create=True) as index:
        index.sync()
    project = tmp_path / "project"
    project.mkdir()
    # Installed from a shell with the virtual environment activated: `vaultseek` is on PATH.
    result = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project,
                     env={"PATH": f"{SCRIPTS}:{PLAIN_PATH}"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    commands = installed_commands(project)
    assert set(commands) == {"UserPromptSubmit", "PostToolUse"}

    prompt = json.dumps({"session_id": "s-1", "hook_event_name": "UserPromptSubmit",
                         "prompt": "how should we rotate refresh tokens?"})  # fmt: skip
    answered = run_hook_command(commands["UserPromptSubmit"], prompt)
    assert (answered.returncode, answered.stderr) == (0, "")
    assert answered.stdout.startswith("## Relevant Memory Context") and "security/oauth.md" in answered.stdout

    lines = [f"step {i} ok" for i in range(3000)]
    lines[1200] = "ERROR: refresh token reuse detected, token family revoked"
    tool = json.dumps({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "make test"}, "tool_response": {"stdout": "\n".join(lines)}})  # fmt: skip
    extracted = run_hook_command(commands["PostToolUse"], tool)
    assert (extracted.returncode, extracted.stderr) == (0, "")
    output = json.loads(extracted.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "token family revoked" in output["hookSpecificOutput"]["additionalContext"]
    for command in commands.values():  # this installation's script, by its absolute path
        assert command.startswith(str(SCRIPTS / "vaultseek") + " hook "), command


def test_reinstalling_after_the_installation_moved_replaces_our_old_entries(tmp_path: Path, sample_vault: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    old_forms = [  # what earlier installs wrote, from a virtual environment that has since moved
        "vaultseek hook user-prompt-submit",
        "'/home/me/old place/.venv/bin/vaultseek' hook user-prompt-submit --vault=/notes",
        "/usr/bin/python3 -m vaultseek.cli hook post-tool-use",
        "/opt/venv/bin/python -m vaultseek hook post-tool-use --db=/x.db",
    ]
    foreign = {"type": "command", "command": "~/bin/log-prompt.sh"}
    before = {"hooks": {
        "UserPromptSubmit": [{"hooks": [foreign, *({"type": "command", "command": c} for c in old_forms[:2])]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": c} for c in old_forms[2:]]}],
    }}  # fmt: skip
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps(before), "utf-8")

    on_path = {"PATH": f"{SCRIPTS}:{PLAIN_PATH}"}
    result = run_cli("hook", "install", "--project", "--vault", str(sample_vault), cwd=project, env=on_path)
    assert result.returncode == 0, result.stderr
    after = json.loads(path.read_text("utf-8"))
    mine = ours_in(after)
    assert len(mine) == 2 and all(c.startswith(str(SCRIPTS / "vaultseek") + " hook ") for c in mine), mine
    assert after["hooks"]["UserPromptSubmit"][0] == {"hooks": [foreign]}  # the user's own hook stays

    again = run_cli("hook", "install", "--project", "--vault", str(sample_vault), cwd=project, env=on_path)
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert json.loads(path.read_text("utf-8")) == after


# -- the personal file, and an earlier install in the shared one ---------------------------------
def test_install_moves_an_earlier_install_out_of_the_shared_file(tmp_path: Path, sample_vault: Path) -> None:
    project = tmp_path / "project"
    claude = project / ".claude"
    claude.mkdir(parents=True)
    shared = claude / "settings.json"
    personal = claude / "settings.local.json"
    # What an earlier `hook install` left in the committed file, beside the team's own settings.
    earlier = {**FOREIGN, "hooks": {**FOREIGN["hooks"], "UserPromptSubmit": [
        *FOREIGN["hooks"]["UserPromptSubmit"],
        {"hooks": [{"type": "command", "command": "/old/.venv/bin/vaultseek hook user-prompt-submit --vault=/n"}]}]}}  # fmt: skip
    shared.write_text(json.dumps(earlier), "utf-8")

    result = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project)
    assert result.returncode == 0, result.stderr
    assert json.loads(shared.read_text("utf-8")) == FOREIGN  # the team's file: only the team's settings
    assert len(ours_in(json.loads(personal.read_text("utf-8")))) == 2  # the hooks run once
    assert f"removed vaultseek's earlier hooks from {shared}" in result.stdout
    assert json.loads((claude / "settings.json.bak").read_text("utf-8")) == earlier

    again = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project)
    assert again.returncode == 0 and "already up to date" in again.stdout and "removed" not in again.stdout
    assert sorted(p.name for p in claude.iterdir()) == ["settings.json", "settings.json.bak", "settings.local.json"]

    # --project chooses the shared file; the personal one gives its entries up.
    result = run_cli("hook", "install", "--project", "--vault", str(sample_vault), cwd=project)
    assert result.returncode == 0, result.stderr
    assert len(ours_in(json.loads(shared.read_text("utf-8")))) == 2
    assert ours_in(json.loads(personal.read_text("utf-8"))) == []

    result = run_cli("hook", "uninstall", cwd=project)  # no scope named: both of the project's files
    assert result.returncode == 0, result.stderr
    assert json.loads(shared.read_text("utf-8")) == FOREIGN
    assert ours_in(json.loads(personal.read_text("utf-8"))) == []


def test_notes_after_install_a_user_install_and_git(tmp_path: Path, sample_vault: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert run_cli("hook", "install", "--user", cwd=project, env=env).returncode == 0
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    result = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    assert f"note: {home / '.claude' / 'settings.json'} holds vaultseek hooks too" in result.stdout
    assert "uninstall --user" in result.stdout
    assert "git does not ignore" in result.stdout and "`.claude/settings.local.json`" in result.stdout
    (project / ".gitignore").write_text(".claude/settings.local.json\n", "utf-8")
    assert run_cli("hook", "uninstall", "--user", cwd=project, env=env).returncode == 0
    result = run_cli("hook", "install", "--vault", str(sample_vault), cwd=project, env=env)
    assert result.returncode == 0 and "note:" not in result.stdout, result.stdout
    # A backup holds the personal paths of the version before: said too, when git would commit it.
    result = run_cli("hook", "install", "--vault", str(sample_vault / "cooking"), cwd=project, env=env)
    assert f"git does not ignore {project / '.claude' / 'settings.local.json.bak'}" in result.stdout, result.stdout
    assert "add `.claude/*.bak` to .gitignore" in result.stdout
