"""The ``vaultseek`` command: parse arguments, call the engine, render, map errors to exits.

Exit codes: 0 success · 1 an unexpected failure · 2 bad usage or configuration · 3 no index ·
4 index locked (another vaultseek wrote it past ``index --wait``), or already watched by another
vaultseek, or the deep-tier worker could not be stopped · 5 index damaged · 6 embedding model
unusable · 7 index (or, for intake, the vault) not writable · 8 an optional extra not installed
(the hint names it) · 9 a server's port
unavailable (in use, privileged) · 10 the PostgreSQL server unreachable, or the connection to it
lost · 11 the PostgreSQL server lacks what vaultseek needs (version 14+, pgvector 0.7+ in the
database) · 130 stopped by Ctrl-C · 143 ``serve --demo`` stopped by SIGTERM.
Every error a user can cause prints one line (``error: …``) and a hint; ``--debug`` shows the
traceback instead.

Each command's parser and code live in a module named for it (``search.py``, ``serve.py``,
``agents.py`` …); this one assembles the parser from them and runs the command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..errors import VaultseekError
from .agents import COMMANDS as AGENT_COMMANDS
from .agents import add_parsers as add_agent_parsers
from .common import EXIT_INTERRUPTED, folder_as_argument
from .deep import COMMANDS as DEEP_COMMANDS
from .deep import add_parsers as add_deep_parsers
from .evaluate import COMMANDS as EVAL_COMMANDS
from .evaluate import add_parsers as add_eval_parsers
from .indexing import COMMANDS as INDEX_COMMANDS
from .indexing import add_parsers as add_index_parsers
from .intake import COMMANDS as INTAKE_COMMANDS
from .intake import add_parsers as add_intake_parsers
from .links import COMMANDS as LINK_COMMANDS
from .links import add_parsers as add_link_parsers
from .obsidian import COMMANDS as OBSIDIAN_COMMANDS
from .obsidian import add_parsers as add_obsidian_parsers
from .search import COMMANDS as SEARCH_COMMANDS
from .search import add_parsers as add_search_parsers
from .search import exclusion_as_option, options_after_the_query
from .serve import COMMANDS as SERVE_COMMANDS
from .serve import add_parsers as add_serve_parsers
from .status import COMMANDS as STATUS_COMMANDS
from .status import add_parsers as add_status_parsers
from .vaultmap import COMMANDS as MAP_COMMANDS
from .vaultmap import add_parsers as add_map_parsers


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vault", metavar="PATH", help='the vault folder (default: see "Which vault, which index" in docs/configuration.md)')
    parser.add_argument("--db", metavar="PATH", help="the index database file, or a postgresql://user@host:port/database URL (docs/postgres.md)")
    parser.add_argument("--collection", metavar="NAME", help="the vault's index inside a PostgreSQL database (default: the vault folder's name)")
    parser.add_argument("--config", metavar="FILE", help="a TOML config file to use")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


class _Unbuilt:
    """The parser of a command that is not being run: takes every call argparse's parsers
    and groups take, and builds nothing."""

    def __getattr__(self, _name: str) -> Callable[..., _Unbuilt]:
        return self._accept

    def _accept(self, *_args: Any, **_kwargs: Any) -> _Unbuilt:
        return self


class _OneCommand:
    """``add_subparsers()``'s action, building the parser of one command only: the other 13
    commands' parsers (and their subcommands') are ~85% of what building them all costs (~40
    ms, much of it argparse asking gettext for translations), which every command paid."""

    def __init__(self, commands: Any, name: str) -> None:
        self.commands, self.name = commands, name

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self.commands.add_parser(name, **kwargs) if name == self.name else _Unbuilt()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``only``, a command's name, one that parses that
    command alone, as the whole parser would (``main`` runs a named command with it)."""
    parser = argparse.ArgumentParser(
        prog="vaultseek",
        description="Local hybrid (BM25 + vector) search over a folder of notes and documents, for you and your agents.",
    )
    parser.add_argument("--version", action="version", version=f"vaultseek {_version()}")
    commands: Any = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if only is not None:
        commands = _OneCommand(commands, only)

    add_index_parsers(commands, _add_common)
    add_search_parsers(commands, _add_common)
    add_status_parsers(commands, _add_common)
    add_eval_parsers(commands, _add_common)
    add_agent_parsers(commands, _add_common)
    add_intake_parsers(commands, _add_common)
    add_link_parsers(commands, _add_common, _positive_int)
    add_map_parsers(commands, _add_common, _positive_int)
    add_deep_parsers(commands, _add_common)
    add_obsidian_parsers(commands, _add_common)
    add_serve_parsers(commands, _add_common, _positive_int)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _version() -> str:
    from .. import __version__

    return __version__


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    **SERVE_COMMANDS,
    **INDEX_COMMANDS,
    **SEARCH_COMMANDS,
    **STATUS_COMMANDS,
    **EVAL_COMMANDS,
    **AGENT_COMMANDS,
    **INTAKE_COMMANDS,
    **LINK_COMMANDS,
    **MAP_COMMANDS,
    **DEEP_COMMANDS,
    **OBSIDIAN_COMMANDS,
}


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if len(words) >= 2 and words[0] == "hook":
        from .launcher import HOOK_EVENTS, hook_options, run_hook

        options = hook_options(words[2:]) if words[1] in HOOK_EVENTS else None
        if options is not None:  # on every prompt: skip building the parser
            return run_hook(words[1], options)
    parser = build_parser(only=words[0] if words and words[0] in COMMANDS else None)
    misplaced = options_after_the_query(parser, words) or exclusion_as_option(parser, words)
    if misplaced is not None:  # before argparse, whose own message would not say why
        sys.stderr.write(f"error: {misplaced.message}\nhint: {misplaced.hint}\n")
        return misplaced.exit_code
    args, extra = parser.parse_known_args(words)
    if extra:
        stray = folder_as_argument(words, extra) if hasattr(args, "vault") else None
        if stray is not None:
            sys.stderr.write(f"error: {stray.message}\nhint: {stray.hint}\n")
            return stray.exit_code
        parser.parse_args(words)  # argparse's own message for the rest, and its exit code
    try:
        return COMMANDS[args.command](args, sys.stdout)
    except VaultseekError as exc:
        if args.debug:
            raise
        sys.stderr.write(f"error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `vaultseek search … | head`
        return 0
    except Exception as exc:  # a bug or an environment fault: one line, not a traceback
        if args.debug:
            raise
        sys.stderr.write(f"error: unexpected {exc.__class__.__name__}: {exc}\n")
        sys.stderr.write("hint: run again with --debug for details, and report it if it persists\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
