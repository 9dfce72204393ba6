"""Installing the shipped Obsidian plugin into a vault: its three built files copied into
``<vault>/.obsidian/plugins/vaultseek/``, whatever else is there (the plugin's settings,
``data.json``) left alone. Running it again changes nothing unless the shipped files changed."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import VaultAccessError, VaultNotFoundError

PLUGIN = Path(__file__).parent / "plugin"
FILES = ("main.js", "manifest.json", "styles.css")
PLUGIN_ID = "vaultseek"


@dataclass(frozen=True, slots=True)
class Installed:
    folder: Path
    version: str
    outcome: Literal["installed", "updated", "unchanged"]
    enabled: bool
    """Whether the vault's ``community-plugins.json`` lists the plugin as enabled already."""


def shipped_version() -> str:
    manifest = json.loads((PLUGIN / "manifest.json").read_text("utf-8"))
    return str(manifest["version"])


def install_plugin(vault: Path) -> Installed:
    """Copy the plugin into ``vault``; raises :class:`VaultNotFoundError` for a folder that is
    missing or not an Obsidian vault (no ``.obsidian`` folder: Obsidian makes it when it opens
    the vault once), :class:`VaultAccessError` when the files cannot be written."""
    vault = vault.expanduser()
    if not vault.is_dir():
        raise VaultNotFoundError(f"no vault at {vault}: the folder does not exist",
                                 hint="give the folder Obsidian opens as a vault: --vault PATH")  # fmt: skip
    settings = vault / ".obsidian"
    if not settings.is_dir():
        raise VaultNotFoundError(f"{vault} is not an Obsidian vault yet (it has no .obsidian folder)",
                                 hint="open the folder once in Obsidian (Open folder as vault), then run this again")  # fmt: skip
    folder = settings / "plugins" / PLUGIN_ID
    existed = folder.is_dir()
    changed = False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            source, target = PLUGIN / name, folder / name
            if target.is_file() and not target.is_symlink() and target.read_bytes() == source.read_bytes():
                continue
            temporary = folder / f".{name}.part"
            shutil.copyfile(source, temporary)
            os.replace(temporary, target)
            changed = True
    except OSError as exc:
        raise VaultAccessError(f"cannot write the plugin into {folder}: {exc.strerror or exc}",
                               hint="check that this user may write to the vault's .obsidian folder") from exc  # fmt: skip
    outcome: Literal["installed", "updated", "unchanged"] = "unchanged" if not changed else "updated" if existed else "installed"
    return Installed(folder, shipped_version(), outcome, _enabled(settings))


def _enabled(settings: Path) -> bool:
    try:
        listed = json.loads((settings / "community-plugins.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(listed, list) and PLUGIN_ID in listed
