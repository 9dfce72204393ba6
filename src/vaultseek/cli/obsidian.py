"""The ``obsidian`` command: ``vaultseek obsidian install --vault PATH`` puts the shipped plugin
into a vault and says how to enable it. Kept apart from :mod:`cli` (which registers it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

AddCommon = Callable[[argparse.ArgumentParser], None]

ENABLE = """\
To enable it: in Obsidian, Settings → Community plugins → turn on community plugins (if
Restricted mode is on) → Installed plugins → vaultseek (reload the list if it is not there).
Then start the server the plugin talks to, e.g.
  vaultseek serve --vault "{vault}" --token-file ~/.config/vaultseek/token
and give the plugin the same token (Settings → vaultseek), or let it start the server."""


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    obsidian = commands.add_parser("obsidian", help="the Obsidian plugin: install it into a vault")
    actions = obsidian.add_subparsers(dest="obsidian_action", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="copy the plugin into <vault>/.obsidian/plugins/vaultseek/")
    install.add_argument("--vault", metavar="PATH", required=True, help="the Obsidian vault's folder")
    install.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def cmd_obsidian(args: argparse.Namespace, out: TextIO) -> int:
    from ..obsidian.install import install_plugin

    installed = install_plugin(Path(args.vault))
    said = {"installed": "installed", "updated": "updated", "unchanged": "already up to date"}[installed.outcome]
    out.write(f"vaultseek plugin {installed.version} {said} in {installed.folder}\n")
    if installed.enabled:
        out.write("It is enabled in this vault" + ("; reload Obsidian (or the plugin) to run the new version.\n"
                                                  if installed.outcome != "unchanged" else ".\n"))  # fmt: skip
    else:
        out.write(ENABLE.format(vault=Path(args.vault).expanduser().resolve()) + "\n")
    return 0


COMMANDS = {"obsidian": cmd_obsidian}
