"""The ``serve`` command: the local study app, its token, ``--get`` and the demo mode."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from .common import UsageError

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon, positive_int: Callable[[str], int]) -> None:
    serve = commands.add_parser("serve", help="the local study app: knowledge base, chat with citations, search")
    serve.add_argument("--host", metavar="ADDRESS", help="address to listen on (default 127.0.0.1; others need --token)")
    serve.add_argument("--port", type=positive_int, metavar="N", help="port (default 8765)")
    token = serve.add_mutually_exclusive_group()
    token.add_argument("--token", metavar="SECRET",
                       help="require this token on every API request (other users see it in `ps`: "
                            "prefer --token-file or VAULTSEEK_SERVE_TOKEN)")  # fmt: skip
    token.add_argument("--token-file", metavar="PATH", type=Path,
                       help="read the token from this file (its first line; keep it mode 600)")  # fmt: skip
    serve.add_argument("--get", metavar="PATH", help="answer one in-process GET request (e.g. /api/status) and exit")
    serve.add_argument("--demo", action="store_true",
                       help="try the app with no model server: a built-in stand-in that quotes your notes, "
                            "on a small bundled demo vault (a scratch copy, deleted on exit), or on --vault")  # fmt: skip
    add_common(serve)


def _read_token_file(path: Path) -> str:
    """``--token-file``: the file's first line, stripped (warns when others may read it)."""
    import stat

    from ..errors import ConfigError
    from .terminal import show_notices

    try:
        text = path.expanduser().read_text("utf-8")
        mode = path.expanduser().stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc}") from None
    lines = text.strip().splitlines()
    if not lines or not lines[0].strip():
        raise ConfigError(f"the token file {path} is empty",
                          hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe())' > FILE")  # fmt: skip
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        show_notices((f"the token file {path} can be read by other users (chmod 600 {path})",))
    return lines[0].strip()


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from ..config import load_config
    from ..engine import Index
    from ..web.server import fetch_once, serve
    from .terminal import show_notices

    token = args.token if args.token_file is None else _read_token_file(args.token_file)
    settings = {"serve_host": args.host, "serve_port": args.port, "serve_token": token}
    if args.demo:
        return _serve_demo(args, out, {k: v for k, v in settings.items() if v is not None})
    config = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config,
                         **{k: v for k, v in settings.items() if v is not None})  # fmt: skip
    show_notices(config.notices)
    if args.token is not None:
        warning = ("--token SECRET is visible to every user of this machine (`ps`, /proc): put it in "
                   "a file for --token-file PATH, or in VAULTSEEK_SERVE_TOKEN")  # fmt: skip
        show_notices((warning,))

    def factory() -> Index:
        return Index(config, create=True)

    if args.get is not None:
        status, body = fetch_once(factory, config, args.get)
        out.write((json.dumps(body, ensure_ascii=False) if not isinstance(body, str) else body) + "\n")
        return 0 if status < 400 else 1
    serve(factory, config, out=out)
    return 0


def _serve_demo(args: argparse.Namespace, out: TextIO, settings: dict[str, Any]) -> int:
    """``serve --demo``: the built-in stand-in model instead of a model server. Without
    ``--vault``, on the bundled demo vault, copied to a scratch folder with its index, which is
    deleted when the app stops (Ctrl-C or SIGTERM); with ``--vault``, on that vault and its own
    index, as ``serve`` would."""
    import contextlib
    import shutil
    import tempfile

    from ..config import load_config
    from ..engine import Index
    from ..llm.demo import DemoClient
    from ..study.hub import DEMO_VAULT
    from ..web.server import fetch_once, serve
    from .terminal import exit_on_sigterm, show_notices

    if args.vault is None and (args.db or args.collection):
        raise UsageError("--db and --collection go with --vault in demo mode",
                         hint="vaultseek serve --demo runs on a scratch copy of the bundled demo vault; "
                              "vaultseek serve --demo --vault ~/notes tries it on your own notes")  # fmt: skip
    with exit_on_sigterm(), contextlib.ExitStack() as scratch_folder:
        if args.vault is None:
            scratch = Path(scratch_folder.enter_context(tempfile.TemporaryDirectory(prefix="vaultseek-demo-")))
            vault = scratch / "demo-vault"
            shutil.copytree(DEMO_VAULT, vault)
            config = load_config(vault=vault, db=scratch / "index.db", config_file=args.config, **settings)
            quoting = "the demo notes"
        else:
            config = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config,
                                 **settings)  # fmt: skip
            show_notices(config.notices)
            quoting = f"your notes in {config.vault}"
        client = DemoClient()

        def factory() -> Index:
            return Index(config, create=True)

        if args.vault is None:
            with factory() as index:  # indexed before the first request (a few small notes)
                index.sync(remember=False)
        if args.get is not None:
            status, body = fetch_once(factory, config, args.get, client=client)
            out.write((json.dumps(body, ensure_ascii=False) if not isinstance(body, str) else body) + "\n")
            return 0 if status < 400 else 1
        out.write(f"DEMO MODE: a built-in stand-in answers by quoting {quoting}; no language model runs.\n")
        serve(factory, config, out=out, client=client)
    return 0


COMMANDS = {"serve": cmd_serve}
