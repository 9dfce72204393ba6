"""Adding vaultseek's hooks to Claude Code's settings files, and taking them out again.

``vaultseek hook install`` merges two entries into one of the three files Claude Code reads
hooks from: ``.claude/settings.local.json`` in the current folder (``--local``, the default:
Claude Code's place for personal project settings, which are not committed — our commands
hold absolute paths of this machine), ``.claude/settings.json`` (``--project``: the project's
shared, committed settings) or ``~/.claude/settings.json`` (``--user``):

    "UserPromptSubmit": [{"hooks": [{"type": "command",
        "command": "/home/me/.venv/bin/vaultseek hook user-prompt-submit", "timeout": 10}]}]
    "PostToolUse": [{"matcher": "Bash|Read|WebFetch|Grep", "hooks": [{... post-tool-use ...}]}]

The command names this installation's ``vaultseek`` script by its absolute path: Claude Code
runs hooks with its own environment, where a virtual environment's ``bin`` folder is usually
not on ``PATH``, and a bare ``vaultseek`` would fail with "command not found" (exit 127)
before the hook could fail open.

Every other key, event and hook is kept as it was, in its order. Running it again changes
nothing; our entries are recognised by their command — an executable named ``vaultseek``
(bare or at any path, so entries written from a virtual environment that has since moved are
replaced, not duplicated), or ``python -m vaultseek`` and the other ``OUR_MODULES``, followed
by ``hook``. Claude Code runs the hooks of every file it reads, so installing into one of a
project's two files takes our entries out of the other (an earlier install wrote them into
``settings.json``): the hooks never run twice. Before a file changes, its previous content is
copied to ``<name>.bak`` — one backup per file, the version before vaultseek's latest change,
written only when the content changes. ``uninstall`` removes only our entries.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shlex
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

HOOK_TIMEOUT_SECONDS = 10
"""Claude Code's own limit for our hook; vaultseek gives up by itself long before
(``hook_timeout``, 2 s)."""
POST_TOOL_MATCHER = "Bash|Read|WebFetch|Grep"
"""The tools whose outputs get long enough to be worth an extract."""


SCOPES = ("local", "project", "user")
"""Where hooks are installed: ``local`` (the default) ``.claude/settings.local.json``,
``project`` ``.claude/settings.json``, ``user`` ``~/.claude/settings.json``."""


def settings_path(scope: str, *, project_dir: Path) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project_dir / ".claude" / name


def sibling_path(path: Path) -> Path | None:
    """The project's other settings file (``settings.json`` ↔ ``settings.local.json``), whose
    hooks Claude Code runs too; None for the user's file."""
    if path == Path.home() / ".claude" / "settings.json":
        return None
    other = "settings.json" if path.name == "settings.local.json" else "settings.local.json"
    return path.with_name(other)


def launcher_script() -> Path | None:
    """This installation's ``vaultseek`` console script, by absolute path: the one beside
    the running Python (a virtual environment, pipx), else one in a scripts folder of this
    interpreter's install schemes (``pip install --user``) whose ``#!`` line runs this very
    interpreter; None if there is none."""
    python = Path(os.path.abspath(sys.executable))
    beside = python.parent / "vaultseek"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user"):
        try:
            script = Path(sysconfig.get_path("scripts", scheme)) / "vaultseek"
        except KeyError:  # no such scheme on this platform
            continue
        if script.is_file() and os.access(script, os.X_OK) and _interpreter_of(script) == python.resolve():
            return script
    return None


def _interpreter_of(script: Path) -> Path | None:
    """The interpreter a script's ``#!/abs/path/python`` line names, resolved."""
    try:
        with script.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    words = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    return Path(words[0]).resolve() if words and words[0].startswith("/") else None


def executable() -> str:
    """How settings.json should call vaultseek: the absolute path of this installation's
    script (never a bare ``vaultseek``, which depends on the ``PATH`` Claude Code runs hooks
    with), else this interpreter by absolute path with ``-m vaultseek``."""
    script = launcher_script()
    if script is not None:
        return shlex.quote(str(script))
    return f"{shlex.quote(os.path.abspath(sys.executable))} -m vaultseek"


# ``python -m <module>`` forms a settings file may hold, this release's and earlier ones'.
OUR_MODULES = ("vaultseek", "vaultseek.cli", "vaultseek.cli.main", "vaultseek.cli.launcher", "vaultseek.launcher")


def is_ours(command: Any) -> bool:
    """A hook command that runs ``vaultseek … hook …``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words[:-1]):
        if words[i + 1] == "hook" and (Path(word).name == "vaultseek" or word in OUR_MODULES):
            return True
    return False


def our_entries(extra_args: list[str]) -> dict[str, dict[str, Any]]:
    base = executable()
    tail = "".join(" " + shlex.quote(arg) for arg in extra_args)

    def handler(event: str) -> dict[str, Any]:
        return {"type": "command", "command": f"{base} hook {event}{tail}", "timeout": HOOK_TIMEOUT_SECONDS}

    return {
        "UserPromptSubmit": {"hooks": [handler("user-prompt-submit")]},
        "PostToolUse": {"matcher": POST_TOOL_MATCHER, "hooks": [handler("post-tool-use")]},
    }


@dataclass(frozen=True)
class SettingsChange:
    path: Path
    before: dict[str, Any]
    after: dict[str, Any]
    dry_run: bool
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = render(self.before).splitlines(keepends=True) if self.path.exists() else []
        return "".join(difflib.unified_diff(old, render(self.after).splitlines(keepends=True),
                                            str(self.path), str(self.path) + " (new)"))  # fmt: skip

    def describe(self) -> str:
        if not self.changed:
            return f"{self.path}: already up to date, nothing changed"
        if self.dry_run:
            return f"{self.path} would change (dry run, nothing written):\n{self.diff()}".rstrip()
        saved = f"; the previous version is in {self.backup}" if self.backup else ""
        return f"updated {self.path}{saved}"


def render(settings: dict[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def load_settings(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8") or "{}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", hint="fix or move the file; vaultseek left it untouched") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object", hint="vaultseek left it untouched")
    if not isinstance(data.get("hooks", {}), dict):
        raise ConfigError(f'{path}: "hooks" is not an object', hint="vaultseek left it untouched")
    return data


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` with every vaultseek hook handler removed (and any group or
    event list that only held ours); everything else untouched."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept.append(group)
                continue
            mine = [h for h in handlers if isinstance(h, dict) and is_ours(h.get("command"))]
            if not mine:
                kept.append(group)
            elif len(mine) < len(handlers):
                kept.append({**group, "hooks": [h for h in handlers if h not in mine]})
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del out["hooks"]
    return out


def _write(path: Path, before: dict[str, Any], after: dict[str, Any], dry_run: bool) -> SettingsChange:
    change = SettingsChange(path, before, after, dry_run)
    if dry_run or not change.changed:
        return change
    backup = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():  # one backup per file: the version before this change
            backup = backup_path(path)
            shutil.copy2(path, backup)
        scratch = path.with_name(path.name + ".tmp")
        scratch.write_text(render(after), "utf-8")
        scratch.replace(path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
    return SettingsChange(path, before, after, dry_run, backup)


def backup_path(path: Path) -> Path:
    """``settings.json.bak``: the file as it was before vaultseek last changed it."""
    return path.with_name(path.name + ".bak")


def install(path: Path, extra_args: list[str], *, dry_run: bool = False) -> SettingsChange:
    """Merge our hooks into the settings at ``path`` (replacing older entries of ours)."""
    before = load_settings(path)
    after = without_ours(before)
    hooks = after.setdefault("hooks", {})
    for event, group in our_entries(extra_args).items():
        existing = hooks.get(event)
        hooks[event] = [*(existing if isinstance(existing, list) else []), group]
    # Keep our entries where they were if nothing about them changed (a true no-op).
    if without_ours(before) == without_ours(after) and _ours(before) == _ours(after):
        after = before
    return _write(path, before, after, dry_run)


def _ours(settings: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(handler, dict) and is_ours(handler.get("command")):
                    found.append((event, json.dumps([group.get("matcher"), handler], sort_keys=True)))
    return sorted(found)


def uninstall(path: Path, *, dry_run: bool = False) -> SettingsChange:
    """Remove every vaultseek hook from the settings at ``path``; nothing else."""
    before = load_settings(path)
    return _write(path, before, without_ours(before), dry_run)


def has_ours(path: Path) -> bool:
    """Whether the settings at ``path`` hold a vaultseek hook (False for a file that cannot
    be read: it is left to the command that writes it to say so)."""
    try:
        return bool(_ours(load_settings(path)))
    except ConfigError:
        return False


def install_in(path: Path, extra_args: list[str], *, dry_run: bool = False) -> list[SettingsChange]:
    """Install into ``path`` and take our entries out of the project's other settings file,
    so the hooks run once: the changes, ``path``'s first."""
    changes = [install(path, extra_args, dry_run=dry_run)]
    other = sibling_path(path)
    if other is not None and has_ours(other):
        changes.append(uninstall(other, dry_run=dry_run))
    return changes


def git_would_commit(path: Path) -> bool:
    """Whether ``path`` sits in a git work tree that does not ignore it (so a ``git add .``
    would commit it); False when git is not installed or the folder is not a repository."""
    import subprocess

    try:
        probe = subprocess.run(["git", "-C", str(path.parent), "check-ignore", "-q", path.name],
                               capture_output=True, timeout=5, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 1  # 0: ignored; 128: not a repository, or git failed
