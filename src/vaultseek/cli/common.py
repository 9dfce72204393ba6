"""What the commands share: opening the index their options name, UsageError, Ctrl-C's exit."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import VaultseekError

EXIT_INTERRUPTED = 130


class UsageError(VaultseekError):
    """Arguments that do not fit together."""

    exit_code = 2


def open_index_for(args: argparse.Namespace, *, create: bool, vault: str | None = None) -> Any:
    from ..config import load_config
    from ..engine import open_index
    from .terminal import show_notices

    config = load_config(
        vault=vault or args.vault,
        db=args.db,
        collection=args.collection,
        config_file=args.config,
        prefer_cwd=create,  # `vaultseek index` with no folder means this folder
    )
    show_notices(config.notices)  # before opening: they may say why it fails
    return open_index(config=config, create=create)
