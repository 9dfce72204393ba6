"""The ``status`` command: what is indexed or skipped, where the index lives, the deep worker."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, TextIO

from .common import open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    status = commands.add_parser("status", help="what is indexed, what was skipped and why")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument("--all", action="store_true", help="list every skipped file")
    add_common(status)


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    from dataclasses import replace

    from ..config import index_label

    with open_index_for(args, create=False) as index:
        status = index.status()
        backend = _backend_info(index)
        if index.config.database_url is not None:
            status = replace(status, db_path=index_label(index.config))
    worker = None
    if status.deep is not None:  # the background worker, and every index it serves
        from ..agents.deep_worker import worker_status

        worker = worker_status()
    if args.json:
        body = {**status.to_dict(), "backend": backend, "deep_worker": None if worker is None else worker.to_dict(),
                "config_notices": list(index.config.notices)}  # also on stderr, as every command warns
        out.write(json.dumps(body, ensure_ascii=False) + "\n")
    else:
        from .terminal import format_backend, format_deep_worker, format_status

        out.write(format_status(status, show_all_skipped=args.all) + "\n")
        if backend.get("backend", "sqlite") != "sqlite":  # the index line names database and collection
            shown = {key: value for key, value in backend.items() if key not in ("database", "collection")}
            out.write(format_backend(shown) + "\n")
        if worker is not None:
            out.write(format_deep_worker(worker) + "\n")
    return 0


def _backend_info(index: Any) -> dict[str, str]:
    """Where the index lives, for ``status``: ``Index.backend_info()`` (the backend, and for
    PostgreSQL the server and pgvector versions, the database, the collection and sizes), or
    just the backend's name from an index that offers no more."""
    info = getattr(index, "backend_info", None)
    if callable(info):
        return {str(key): str(value) for key, value in info().items()}
    return {"backend": str(getattr(index, "backend", "sqlite"))}


COMMANDS = {"status": cmd_status}
