"""What the commands share: opening the index their options name, UsageError, Ctrl-C's exit."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import VaultseekError

if TYPE_CHECKING:
    from ..config import Config

EXIT_INTERRUPTED = 130


class UsageError(VaultseekError):
    """Arguments that do not fit together."""

    exit_code = 2


def open_index_for(args: argparse.Namespace, *, create: bool, vault: str | None = None) -> Any:
    from ..config import load_config
    from .terminal import show_notices

    config = load_config(
        vault=vault or args.vault,
        db=args.db,
        collection=args.collection,
        config_file=args.config,
        prefer_cwd=create,  # `vaultseek index` with no folder means this folder
    )
    show_notices(config.notices)  # before opening: they may say why it fails
    return open_configured(config, create=create, db=args.db)


def open_configured(config: Config, *, create: bool, db: str | None = None) -> Any:
    """The index ``config`` names; a missing one's error says the command that makes it, for
    the vault the settings found (``--db`` included when one was given)."""
    from ..engine import open_index
    from ..errors import IndexNotFoundError

    try:
        return open_index(config=config, create=create)
    except IndexNotFoundError as exc:
        vault = config.vault
        if type(exc) is not IndexNotFoundError or vault is None or not Path(vault).is_dir():
            raise  # a PostgreSQL database that is missing has a hint of its own
        command = ["vaultseek", "index", str(vault), *(["--db", db] if db else [])]
        raise IndexNotFoundError(exc.message, hint=f"run `{shlex.join(command)}` first") from None


def folder_as_argument(words: list[str], extra: list[str]) -> UsageError | None:
    """``vaultseek status ~/vault``: a command that takes its vault as ``--vault`` given one
    as a bare word, which argparse refuses as "unrecognized arguments" without saying why. The
    error with the command line that names it; None when no word left over is a folder."""
    folder = next((word for word in extra if not word.startswith("-") and Path(word).expanduser().is_dir()), None)
    if folder is None:
        return None
    fixed = [word for word in words if word != folder]
    return UsageError(
        f"{folder} is a folder: vaultseek {words[0]} takes its vault as --vault PATH",
        hint=shlex.join(["vaultseek", *fixed, "--vault", folder]),
    )
