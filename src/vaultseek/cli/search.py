"""The ``search`` command: a query or a batch, by the daemon or here; misplaced options."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from .common import UsageError, open_configured, open_index_for

AddCommon = Callable[[argparse.ArgumentParser], None]
RECENT_DEFAULT_DAYS = 30.0
"""The half-life ``search --recent`` uses when given no number and none is configured."""
TERM_MATCH_ON = 0.3
"""``--term-match`` without a weight: ``termmatch.DEFAULT_WEIGHT`` (not imported here: it
would load numpy for every command; a test keeps the two equal)."""


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    search = commands.add_parser("search", help="search the index")
    search.add_argument("query", nargs="*", help='what to look for, quoted or as separate words; reads "exact phrase", -word, prefix*, tag:x, path:x, file:x, kind:pdf, after:2w, [key:value] (docs/search.md)')
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
    add_common(search)


def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    if args.term_match is not None:
        _term_match(args.term_match)  # `--term-match "the query"` took the query: say so first
    args.query = _query_of(args.query)
    if (args.query is None) == (args.batch is None):
        raise UsageError(
            "give either a query or --batch FILE",
            hint='vaultseek search "how do I …" (a query starting with - goes after --)',
        )
    from ..contract import SearchRequest
    from ..records import SearchResponse

    fields = _search_fields(args)
    if args.batch is not None:
        with open_index_for(args, create=False) as index:
            return _run_batch(index, args.batch, fields, out)
    # Checked here, before a daemon or the index is asked: refused as every surface refuses it.
    request = SearchRequest.from_mapping({"query": args.query, **fields})
    from ..config import load_config
    from .terminal import show_notices

    config = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config)
    show_notices(config.notices)  # as `open_index_for` does, whether the daemon answers or this process
    body = None if args.no_daemon else _search_by_daemon(config, request)
    if body is None:  # the settings already loaded: read once, not again by `open_index_for`
        with open_configured(config, create=False, db=args.db) as index:
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


def _query_of(words: list[str]) -> str | None:
    """The query the shell passed as one quoted word or as several (``search rotate oauth
    tokens``); None when there is none. A word naming a folder on disk by its path
    (``~/vault``, ``/home/me/notes``, ``./vault``) is refused with the option that names a vault:
    searched as words it would find nothing and say nothing of why."""
    for word in words:
        if word.startswith(("/", "~", "./", "../")) and Path(word).expanduser().is_dir():
            raise UsageError(
                f"{word} is a folder: a vault is named with --vault, not in the query",
                hint=f"vaultseek search --vault {shlex.quote(word)} {shlex.quote(' '.join(w for w in words if w != word) or 'WORDS')}",
            )
    return " ".join(words) if words else None


def options_after_the_query(parser: argparse.ArgumentParser, words: list[str]) -> UsageError | None:
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


def exclusion_as_option(parser: argparse.ArgumentParser, words: list[str]) -> UsageError | None:
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


COMMANDS = {"search": cmd_search}
