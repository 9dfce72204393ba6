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
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import VaultseekError
from .agents import COMMANDS as AGENT_COMMANDS
from .agents import add_parsers as add_agent_parsers
from .deep import COMMANDS as DEEP_COMMANDS
from .deep import add_parsers as add_deep_parsers
from .intake import COMMANDS as INTAKE_COMMANDS
from .intake import add_parsers as add_intake_parsers
from .links import COMMANDS as LINK_COMMANDS
from .links import add_parsers as add_link_parsers
from .obsidian import COMMANDS as OBSIDIAN_COMMANDS
from .obsidian import add_parsers as add_obsidian_parsers
from .vaultmap import COMMANDS as MAP_COMMANDS
from .vaultmap import add_parsers as add_map_parsers

EXIT_INTERRUPTED = 130
RECENT_DEFAULT_DAYS = 30.0
"""The half-life ``search --recent`` uses when given no number and none is configured."""
TERM_MATCH_ON = 0.3
"""``--term-match`` without a weight: ``termmatch.DEFAULT_WEIGHT`` (not imported here: it
would load numpy for every command; a test keeps the two equal)."""


class UsageError(VaultseekError):
    """Arguments that do not fit together."""

    exit_code = 2


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

    index = commands.add_parser("index", help="index a vault (incremental after the first run)")
    index.add_argument("folder", nargs="?", help="the vault folder (default: --vault or the last one)")
    index.add_argument("--json", action="store_true", help="print the run's report as JSON")
    index.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    index.add_argument("--deep", action=argparse.BooleanOptionalAction, default=None, help="continue the deep tier in the background afterwards (default: the configuration's deep_tier, on)")
    index.add_argument("--wait", type=_seconds, metavar="SECONDS", help="while another vaultseek writes this index, wait at most this long, then exit 4 (default: wait until it is done; 0: do not wait)")
    index.add_argument("--make-default", action="store_true", help="make this --db the vault's default index (the one commands without --db open); without it, an index elsewhere leaves the default as it is")
    _add_common(index)

    search = commands.add_parser("search", help="search the index")
    search.add_argument("query", nargs="?", help='what to look for; reads "exact phrase", -word, prefix*, tag:x, path:x, file:x, kind:pdf, after:2w, [key:value] (docs/search.md)')
    search.add_argument("--mode", choices=("hybrid", "bm25", "vector", "deep"), default="hybrid", help="hybrid fuses BM25, the fast vectors and the deep tier's; the others are one list each")
    search.add_argument("--view", choices=("notes", "chunks"), default=None, help="notes: one result per file, with its best sections (the default); chunks: every ranked section on its own")
    search.add_argument("-k", type=int, default=None, help="how many results (notes, or sections with --view chunks), 1 to 100 (default: top_k, 10)")
    search.add_argument("--json", action="store_true", help="machine-readable output")
    search.add_argument("--verbose", "-v", action="store_true", help="also show each result's raw fused score (normalised per query: the best hit of any query scores about 1; --json always has it)")
    search.add_argument("--max-tokens", type=int, metavar="N", help="fit results in N tokens")
    search.add_argument(
        "--batch",
        metavar="FILE",
        help='JSON Lines of {"id": ..., "query": ...} ("-" for stdin); one JSON line out per query',
    )
    search.add_argument("--no-daemon", action="store_true", help="search in this process even if a daemon runs")
    narrow = search.add_argument_group("filters (applied before ranking; repeat a flag for alternatives)")
    narrow.add_argument("--folder", action="append", metavar="FOLDER", help="only files in this folder (and its subfolders)")
    narrow.add_argument("--tag", action="append", metavar="TAG", help="only notes with this tag (#a also takes #a/b)")
    narrow.add_argument("--where", action="append", metavar="KEY:VALUE", help="frontmatter: status:done (repeat for alternatives), a bare KEY (the key is set), or comparisons, each of which must hold: priority<3, created>=2024-01, created>=30d, status!=done (also <=, >)")
    narrow.add_argument("--kind", action="append", metavar="KIND", help="note, pdf, docx, pptx, xlsx, csv, html, txt, json, yaml, canvas, epub, odt, image")
    narrow.add_argument("--after", metavar="WHEN", help="modified at or after: 2026-01-31, 2026-01-31T14:00, or an age: 12h, 7d, 2w, 3mo, 1y")
    narrow.add_argument("--before", metavar="WHEN", help="modified before (same forms as --after)")
    signals = search.add_argument_group("ranking signals (default: the configuration's)")
    signals.add_argument("--title-match", action=argparse.BooleanOptionalAction, default=None, help="a note whose title, alias or file name is the query goes first")
    signals.add_argument("--recent", nargs="?", const="default", metavar="DAYS", help="favour recently modified files (half-life in days; default 30); 0: off")
    signals.add_argument("--intent", action=argparse.BooleanOptionalAction, default=None, help="lean lexical for identifiers, on meaning for long questions")
    signals.add_argument("--term-match", nargs="?", const=str(TERM_MATCH_ON), metavar="W", help=f"how much the best results' words matching the query's, letter by letter, counts in their lexical score (on by default: the configuration's term_match; alone: {TERM_MATCH_ON}; 0: off)")
    search.add_argument("--link-boost", type=float, metavar="W", help="re-rank by the link graph: score × (1 + W × the link_signal); 0: off (default: the configuration's link_boost, 0)")
    models = search.add_argument_group("your model servers (docs/models.md; default: the configuration's)")
    models.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None, help="re-score the best results with the configured reranker (rerank = llama, tei or chat)")
    models.add_argument("--expand", action=argparse.BooleanOptionalAction, default=None, help="also search the sub-queries and the hypothetical answer the chat model writes for the query")
    _add_common(search)

    status = commands.add_parser("status", help="what is indexed, what was skipped and why")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument("--all", action="store_true", help="list every skipped file")
    _add_common(status)

    evaluate = commands.add_parser("eval", help="measure search quality on judged queries")
    evaluate.add_argument("folder", nargs="?", metavar="BEIR_FOLDER", help="corpus.jsonl, queries.jsonl, qrels.tsv")
    evaluate.add_argument("--golden", metavar="FILE", help='JSON Lines {"id", "query", "relevant": {path: grade}, optional "kind", "split"}')
    evaluate.add_argument("--split", metavar="NAME", help='BEIR: use queries_NAME.jsonl / qrels_NAME.tsv; --golden: only lines whose "split" is NAME')
    evaluate.add_argument("--workdir", metavar="DIR", help="keep the BEIR corpus's scratch index here, reused")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate.add_argument("--modes", type=_names, default=None, metavar="LIST", help="e.g. bm25,hybrid")
    evaluate.add_argument("--fusion", type=_names, default=None, metavar="LIST", help="hybrid variants, e.g. rrf,convex")
    evaluate.add_argument("--term-match", action="store_true", help="also measure hybrid with term matching on and off (hybrid+terms and hybrid-terms rows)")
    evaluate.add_argument("--rerank", action="store_true", help="also measure hybrid with the configured reranker (a hybrid+rerank row)")
    evaluate.add_argument("--expand", action="store_true", help="also measure hybrid with query expansion (a hybrid+expand row)")
    evaluate.add_argument("--by-region", action="store_true", help="also Recall@10 by region of the vault map: per cluster, and core vs bridge notes")
    _add_common(evaluate)
    add_agent_parsers(commands, _add_common)
    add_intake_parsers(commands, _add_common)
    add_link_parsers(commands, _add_common, _positive_int)
    add_map_parsers(commands, _add_common, _positive_int)
    add_deep_parsers(commands, _add_common)
    add_obsidian_parsers(commands, _add_common)

    serve = commands.add_parser("serve", help="the local study app: knowledge base, chat with citations, search")
    serve.add_argument("--host", metavar="ADDRESS", help="address to listen on (default 127.0.0.1; others need --token)")
    serve.add_argument("--port", type=_positive_int, metavar="N", help="port (default 8765)")
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
    _add_common(serve)
    return parser


def _names(text: str) -> list[str]:
    """A comma-separated list flag (one value, so it never swallows the positional folder)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _version() -> str:
    from .. import __version__

    return __version__


def _open(args: argparse.Namespace, *, create: bool, vault: str | None = None) -> Any:
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


def cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    from dataclasses import replace

    from ..config import index_label
    from .deep import continue_after_index, format_after_index
    from .terminal import GracefulStop, ProgressBar, format_sync_report, lock_waiter

    with GracefulStop("Finishing the current file, then stopping") as stop, \
            _open(args, create=True, vault=args.folder) as index:  # fmt: skip
        if args.deep is not None:
            index.config = replace(index.config, deep_tier=args.deep)
        bar = ProgressBar(enabled=None if not args.quiet else False)
        try:
            waiter = None if args.quiet else lock_waiter(index_label(index.config), timeout=args.wait)
            report = index.sync(progress=bar, should_stop=stop, wait=args.wait, on_wait=waiter)
        finally:
            bar.clear()
        if not report.interrupted:
            _settle_default(index, make_default=args.make_default)
        deep = None if report.interrupted else continue_after_index(index)
        if args.json:
            out.write(json.dumps({**report.to_dict(), **({"deep": deep} if deep else {})}, ensure_ascii=False) + "\n")
        elif not args.quiet:
            out.write(format_sync_report(report, vault=str(index.vault), db=index_label(index.config)) + "\n")
            if deep is not None:
                out.write(format_after_index(deep) + "\n")
    return EXIT_INTERRUPTED if report.interrupted else 0


def _settle_default(index: Any, *, make_default: bool) -> None:
    """With ``--make-default``, make this index the vault's default; otherwise say so when the
    default is another index (the run left it where it was: see ``VaultRegistry.remember``)."""
    import shlex

    from ..config import index_arguments
    from ..places import VaultRegistry

    config = index.config
    registry = VaultRegistry()
    if make_default or config.database_url is not None:
        # A PostgreSQL index is recorded here, with its URL (without the password): it becomes
        # the vault's default when there is none yet, as a first index file does.
        registry.remember(index.vault, index.db_path, make_default=make_default,
                          database_url=config.database_url, collection=config.collection)  # fmt: skip
    if make_default:
        return
    default = registry.db_for(index.vault)
    if default != index.db_path:
        # --db … (and --collection … for PostgreSQL)
        flags = [word for flag in index_arguments(config)[1:] for word in flag.split("=", 1)]
        command = shlex.join(["vaultseek", "index", str(index.vault), *flags, "--make-default"])
        remembered = registry.database_for(index.vault)
        shown = f"{remembered[0]} (collection {remembered[1]})" if remembered else str(default)
        sys.stderr.write(
            f"note: the vault's default index stays {shown} (commands without --db open it); "
            f"pass {shlex.join(flags)} to use this one, or make it the default: {command}\n"
        )


def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    if args.term_match is not None:
        _term_match(args.term_match)  # `--term-match "the query"` took the query: say so first
    if (args.query is None) == (args.batch is None):
        raise UsageError(
            "give either a query or --batch FILE",
            hint='vaultseek search "how do I …" (a query starting with - goes after --)',
        )
    from ..contract import SearchRequest
    from ..records import SearchResponse

    fields = _search_fields(args)
    if args.batch is not None:
        with _open(args, create=False) as index:
            return _run_batch(index, args.batch, fields, out)
    # Checked here, before a daemon or the index is asked: refused as every surface refuses it.
    request = SearchRequest.from_mapping({"query": args.query, **fields})
    from ..config import load_config
    from .terminal import show_notices

    config = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config)
    show_notices(config.notices)  # as `_open` does, whether the daemon answers or this process
    body = None if args.no_daemon else _search_by_daemon(config, request)
    if body is None:  # the settings already loaded: read once, not again by `_open`
        from ..engine import open_index

        with open_index(config=config, create=False) as index:
            body = index.search(request).to_dict()
    if args.json:
        if config.vault_is_last_indexed:  # nothing named it: say which vault answered
            body = {**body, "vault": str(config.vault), "vault_is_last_indexed": True}
        out.write(json.dumps(body, ensure_ascii=False) + "\n")
    else:
        from .terminal import format_results, searched_vault_line, use_color

        if config.vault_is_last_indexed:
            assert config.vault is not None
            sys.stderr.write(searched_vault_line(config.vault) + "\n")
        out.write(format_results(SearchResponse.from_dict(body), color=use_color(out), verbose=args.verbose) + "\n")
    return 0


def _search_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The search flags as the search contract's request fields (``vaultseek.contract``),
    filters in their JSON shape; a flag not given is left out (the configuration's)."""
    filters = {
        name: value
        for name, value in (
            ("folders", args.folder), ("tags", args.tag), ("where", args.where), ("kinds", args.kind),
            ("modified_after", args.after), ("modified_before", args.before),
        )
        if value is not None
    }  # fmt: skip
    fields: dict[str, Any] = {"mode": args.mode, "view": args.view, "k": args.k, "max_tokens": args.max_tokens}
    if filters:
        fields["filters"] = filters
    if args.title_match is not None:
        fields["title_match"] = args.title_match
    if args.intent is not None:
        fields["intent"] = args.intent
    if args.recent is not None:
        fields["recency_half_life_days"] = _half_life(args)
    if args.term_match is not None:
        fields["term_match"] = _term_match(args.term_match)
    if args.link_boost is not None:
        fields["link_boost"] = args.link_boost
    if args.rerank is not None:
        fields["rerank"] = args.rerank
    if args.expand is not None:
        fields["expand"] = args.expand
    return {name: value for name, value in fields.items() if value is not None}


def _term_match(raw: str) -> float:
    """``--term-match`` alone: the measured weight; ``--term-match W``: W (the engine checks
    its range). A word there is most often the query typed after the flag."""
    try:
        return float(raw)
    except ValueError:
        raise UsageError(
            f"--term-match takes a weight from 0 to 1 (got {raw!r})",
            hint='put the query first: vaultseek search "your query" --term-match',
        ) from None


def _half_life(args: argparse.Namespace) -> float:
    """``--recent`` alone: the configured half-life, else 30 days; ``--recent N``: N days."""
    if args.recent == "default":
        from ..config import load_config

        configured = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config).recency_half_life_days
        return configured or RECENT_DEFAULT_DAYS
    try:
        return float(args.recent)  # its range is the search contract's to check
    except ValueError:
        raise UsageError(f"--recent takes a half-life in days (got {args.recent!r})", hint="e.g. --recent 14; --recent 0 turns it off") from None


def _search_by_daemon(config: Any, request: Any) -> dict[str, Any] | None:
    """The response JSON from a running daemon for this index, or None (then search here).
    The daemon gets this process's settings for what a search may vary (k, fusion, depth,
    signals), so it answers as this process would. A search that asks a model server (a
    reranker, query expansion) runs here, with this process's settings for it."""
    from ..agents import daemon_client

    assert config.db is not None
    reranks = request.rerank if request.rerank is not None else config.rerank != "off"
    if reranks or (request.expand if request.expand is not None else config.expand):
        return None  # a model server's seconds dwarf the daemon's warm start; this process's settings name it
    settings = {
        "k": config.top_k, "title_match": config.title_match, "intent": config.intent,
        "recency_half_life_days": config.recency_half_life_days or 0, "term_match": config.term_match,
        "link_boost": config.link_boost, "link_signal": config.link_signal, "fusion": config.fusion,
        "candidates": config.candidates, "deep_weight": config.deep_weight,
    }  # fmt: skip
    message = {"op": "search", **{k: v for k, v in settings.items() if v is not None}, **request.to_mapping()}
    try:
        return daemon_client.request(config.db, message, timeout=30.0)
    except TimeoutError:
        return None


def _run_batch(index: Any, source: str, fields: dict[str, Any], out: TextIO) -> int:
    """One JSON line per input line: ``{"id", ...the response JSON}``, or ``{"id", "error"}``
    for a line that cannot be searched. A line is a search request plus its ``id``; its
    fields replace the flags' (``fields``)."""
    try:
        lines = (
            sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        ).splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read batch file {source}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"batch file {source} is not UTF-8 text") from exc
    from ..contract import SearchRequest

    failures = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record: dict[str, Any] = {"id": None}
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise ValueError("each line must be a JSON object")
            record["id"] = item.pop("id", number)
            request = SearchRequest.from_mapping({**fields, **item})
            record.update(index.search(request).to_dict())
        except Exception as exc:  # noqa: BLE001 - one bad query must not end a run of hundreds
            failures += 1
            record["error"] = f"line {number}: {exc}"
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
    if failures:
        sys.stderr.write(f"vaultseek: {failures} batch line(s) could not be searched\n")
    return 1 if failures else 0


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    from dataclasses import replace

    from ..config import index_label

    with _open(args, create=False) as index:
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


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    if (args.folder is None) == (args.golden is None):
        raise UsageError(
            "give either a BEIR folder or --golden FILE",
            hint="vaultseek eval ../data/scifact --split test, or vaultseek eval --golden q.jsonl --vault ~/vault",
        )
    if args.golden is None and (args.vault or args.db):
        raise UsageError("--vault and --db go with --golden; a BEIR folder is indexed into --workdir")
    if args.golden is not None and args.workdir:
        raise UsageError("--workdir goes with a BEIR folder, not --golden")
    from ..config import FUSION_METHODS
    from ..evaluation.harness import (
        EXPAND,
        MODES,
        NO_TERM_MATCH,
        RERANK,
        TERM_MATCH,
        configurations,
        evaluate_beir,
        evaluate_golden,
    )
    from ..evaluation.tables import render_table
    from .terminal import ProgressBar

    chosen = configurations(args.modes or MODES, FUSION_METHODS if args.fusion is None else args.fusion)
    if args.term_match:
        if not any(c.mode == "hybrid" for c in chosen):
            raise UsageError("--term-match measures hybrid search", hint="include hybrid in --modes")
        chosen = (*chosen, TERM_MATCH, NO_TERM_MATCH)
    if (args.rerank or args.expand) and not any(c.mode == "hybrid" for c in chosen):
        raise UsageError("--rerank and --expand measure hybrid search", hint="include hybrid in --modes")
    chosen = (*chosen, *((RERANK,) if args.rerank else ()), *((EXPAND,) if args.expand else ()))
    bar = ProgressBar()
    try:
        if args.golden is not None:
            with _open(args, create=False) as index:
                report = evaluate_golden(index, args.golden, split=args.split, chosen=chosen, progress=bar,
                                         by_region=args.by_region)  # fmt: skip
        else:
            report = evaluate_beir(
                args.folder, split=args.split, workdir=args.workdir, chosen=chosen, progress=bar,
                config_file=args.config, by_region=args.by_region,
            )  # fmt: skip
    finally:
        bar.clear()
    out.write((json.dumps(report.to_dict(), ensure_ascii=False) if args.json else render_table(report)) + "\n")
    return 0


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


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "serve": cmd_serve,
    "index": cmd_index,
    "search": cmd_search,
    "status": cmd_status,
    "eval": cmd_eval,
    **AGENT_COMMANDS,
    **INTAKE_COMMANDS,
    **LINK_COMMANDS,
    **MAP_COMMANDS,
    **DEEP_COMMANDS,
    **OBSIDIAN_COMMANDS,
}


def _options_after_the_query(parser: argparse.ArgumentParser, words: list[str]) -> UsageError | None:
    """``search -- -flag --vault V``: after ``--`` every word is the query's, so argparse would
    refuse ``--vault V`` as extra arguments without saying why. The error naming the search
    options written after the query, with the command line that moves them before ``--``;
    None when there are none."""
    if not words or words[0] != "search" or "--" not in words:
        return None
    cut = words.index("--")
    query, rest = words[cut + 1 : cut + 2], words[cut + 2 :]
    known = set(_search_options(parser))
    found = [word.split("=", 1)[0] for word in rest if word.split("=", 1)[0] in known]
    if not query or not found:
        return None
    named = " and ".join([", ".join(found[:-1]), found[-1]] if len(found) > 1 else found)
    verb = "are not read as options" if len(found) > 1 else "is not read as an option"
    return UsageError(
        f"after --, every word is part of the query: {named} {verb}",
        hint=f"put options before --: {shlex.join(['vaultseek', *words[:cut], *rest, '--', *query])}",
    )


_EXCLUSION = re.compile(r"-[^\W\d_]{2,}\*?")
"""A word the query syntax reads as an exclusion (``-android``, ``-draft*``), as the shell
passes it when it stands apart."""


def _search_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return next(
        (dict(action.choices["search"]._option_string_actions) for action in parser._actions
         if isinstance(action, argparse._SubParsersAction)),
        {},
    )  # fmt: skip


def _exclusion_as_option(parser: argparse.ArgumentParser, words: list[str]) -> UsageError | None:
    """``search sync -android``, unquoted: the shell passes ``-android`` as a word of its own,
    which argparse takes for an option — "unrecognized arguments: -android", or for
    ``-kubernetes`` "argument -k: invalid int value: 'ubernetes'". The error saying that an
    exclusion belongs inside the quoted query; None when no such word is there (or after
    ``--``, where every word is the query's). Flags run together (``-vh``) stay options."""
    if not words or words[0] != "search" or "--" in words:
        return None
    options = _search_options(parser)
    flags = {name[1] for name, action in options.items() if len(name) == 2 and action.nargs == 0}
    typed: list[str] = []
    query: list[str] = []
    value_next = False  # the word after --folder is its value, whatever argparse makes of it
    for word in words[1:]:
        if value_next:
            value_next = False
        elif _EXCLUSION.fullmatch(word) and word not in options and not set(word[1:]) <= flags:
            typed.append(word)
        elif word.startswith("-"):
            action = options.get(word.split("=", 1)[0])
            value_next = action is not None and action.nargs is None and "=" not in word
        else:
            query.append(word)
    if not typed:
        return None
    quoted = shlex.quote(" ".join([*(query or ["WORDS"]), *typed]))
    return UsageError(
        f"{', '.join(typed)}: not an option of vaultseek search; an exclusion goes inside the quoted query",
        hint=f"quote the whole query as one word: vaultseek search {quoted}",
    )


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if len(words) >= 2 and words[0] == "hook":
        from .launcher import HOOK_EVENTS, hook_options, run_hook

        options = hook_options(words[2:]) if words[1] in HOOK_EVENTS else None
        if options is not None:  # on every prompt: skip building the parser
            return run_hook(words[1], options)
    parser = build_parser(only=words[0] if words and words[0] in COMMANDS else None)
    misplaced = _options_after_the_query(parser, words) or _exclusion_as_option(parser, words)
    if misplaced is not None:  # before argparse, whose own message would not say why
        sys.stderr.write(f"error: {misplaced.message}\nhint: {misplaced.hint}\n")
        return misplaced.exit_code
    args = parser.parse_args(words)
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
