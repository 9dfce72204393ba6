"""The agent-facing commands: ``hook``, ``daemon``, ``watch`` and ``mcp``.

Kept apart from :mod:`cli` (which registers them) so each command imports only what it
needs: ``hook`` runs on every prompt and stays on the standard library when a daemon
answers; ``mcp`` imports the MCP SDK (~1 s) and nothing else does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..config import MAX_PORT, MCP_HTTP_PORT
from ..errors import ConfigError, IndexBusyError, VaultseekError

AddCommon = Callable[[argparse.ArgumentParser], None]


def add_parsers(commands: Any, add_common: AddCommon) -> None:
    hook = commands.add_parser("hook", help="Claude Code hooks: run one, or install them")
    actions = hook.add_subparsers(dest="action", metavar="ACTION", required=True)
    for event, text in (
        ("user-prompt-submit", "print relevant notes for the prompt on stdin (UserPromptSubmit)"),
        ("post-tool-use", "add a ranked extract of a large tool output (PostToolUse)"),
    ):
        add_common(actions.add_parser(event, help=text))
    for action, text, default in (
        ("install", "add vaultseek's hooks to Claude Code's settings", " (the default)"),
        ("uninstall", "remove vaultseek's hooks from Claude Code's settings", ""),
    ):
        sub = actions.add_parser(action, help=text)
        where = sub.add_mutually_exclusive_group()
        where.add_argument("--local", dest="scope", action="store_const", const="local",
                           help=f"./.claude/settings.local.json, personal, not committed{default}")  # fmt: skip
        where.add_argument("--project", dest="scope", action="store_const", const="project",
                           help="./.claude/settings.json, the project's shared settings")  # fmt: skip
        where.add_argument("--user", dest="scope", action="store_const", const="user", help="~/.claude/settings.json")
        sub.add_argument("--dry-run", action="store_true", help="show the result, change nothing")
        add_common(sub)

    daemon = commands.add_parser("daemon", help="the resident process: warm index, watcher, socket")
    daemon_actions = daemon.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = daemon_actions.add_parser("start", help="start it in the background")
    start.add_argument("--foreground", action="store_true", help="run in this terminal instead")
    start.add_argument("--no-watch", action="store_true", help="serve searches only; do not re-index")
    add_common(start)
    add_common(daemon_actions.add_parser("stop", help="stop it"))
    status = daemon_actions.add_parser("status", help="is it running, and what it serves")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    add_common(status)

    watch = commands.add_parser("watch", help="re-index notes as they are saved (foreground)")
    watch.add_argument("--quiet", "-q", action="store_true", help="no line per re-index")
    add_common(watch)

    mcp = commands.add_parser("mcp", help="serve the index to AI agents over MCP (stdio by default)")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    mcp.add_argument("--port", type=_port, default=MCP_HTTP_PORT, help=f"HTTP port (default {MCP_HTTP_PORT}; `serve` uses 8765)")
    mcp.add_argument("--watch", action="store_true", help="also re-index notes as they change")
    mcp.add_argument("--print-command", action="store_true",
                     help="print the `claude mcp add` command that serves this index (absolute paths) and exit")  # fmt: skip
    add_common(mcp)


def _config(args: argparse.Namespace) -> Any:
    from ..config import load_config
    from .terminal import show_notices

    config = load_config(vault=args.vault, db=args.db, collection=args.collection, config_file=args.config)
    show_notices(config.notices)
    return config


# -- hook --------------------------------------------------------------------------------------
def cmd_hook(args: argparse.Namespace, out: TextIO) -> int:
    if args.action in ("user-prompt-submit", "post-tool-use"):
        from ..agents import hook_runner

        return hook_runner.run(args.action, vault=args.vault, db=args.db, collection=args.collection,
                               config_file=args.config, stdout=out)  # fmt: skip
    from ..agents import claude_settings as cs

    extra: list[str] = []
    if args.action == "install" and (args.vault or args.db):
        # Name the index exactly (absolute vault and database, and a PostgreSQL index's
        # collection): with an index file's --db in its command the hook can go straight to a
        # running daemon without loading any configuration.
        from ..config import index_arguments

        config = _config(args)
        extra = index_arguments(config)
    if args.config:
        extra.append(f"--config={Path(args.config).expanduser().absolute()}")
    project = Path.cwd()
    if args.action == "install":
        scope = args.scope or "local"
        path = cs.settings_path(scope, project_dir=project)
        changes = cs.install_in(path, extra, dry_run=args.dry_run)
    else:  # uninstall: with no scope named, both of the project's files
        scopes = [args.scope] if args.scope else ["local", "project"]
        paths = [cs.settings_path(s, project_dir=project) for s in scopes]
        changes = [cs.uninstall(p, dry_run=args.dry_run) for p in paths if p.exists() or args.scope]
        if not changes:
            out.write(f"no vaultseek hooks in {' or '.join(str(p) for p in paths)}: nothing changed\n")
    for i, change in enumerate(changes):
        if i and args.action == "install":  # the project's other file, which held our entries
            if args.dry_run:
                out.write(f"would remove vaultseek's earlier hooks from {change.path}, so they run once:\n")
            else:
                saved = f"; the previous version is in {change.backup}" if change.backup else ""
                out.write(f"removed vaultseek's earlier hooks from {change.path}, so they run once{saved}\n")
                continue
        out.write(change.describe() + "\n")
    if args.action == "install":
        backups = [c.backup for c in changes if c.backup is not None]
        _warn_about_other_installs(path, args.scope or "local", backups, out)
    return 0


def _warn_about_other_installs(path: Path, scope: str, backups: list[Path], out: TextIO) -> None:
    """Notes after an install: hooks of ours in another scope (Claude Code would run both),
    and personal files git would commit (the personal settings file, backups)."""
    from ..agents import claude_settings as cs

    project = Path.cwd()
    others = ["local", "project"] if scope == "user" else ["user"]
    for other in others:
        other_path = cs.settings_path(other, project_dir=project)
        if other_path != path and cs.has_ours(other_path):
            out.write(f"note: {other_path} holds vaultseek hooks too, and Claude Code runs both; "
                      f"`vaultseek hook uninstall --{other}` removes those\n")  # fmt: skip
    personal = ([path] if scope == "local" and path.exists() else []) + backups
    exposed = [p for p in personal if cs.git_would_commit(p)]
    if exposed:
        patterns = " and ".join(sorted({"`.claude/*.bak`" if p.name.endswith(".bak") else f"`.claude/{p.name}`" for p in exposed}))
        out.write(f"note: git does not ignore {', '.join(map(str, exposed))}; add {patterns} to .gitignore "
                  "so your personal paths stay out of commits\n")  # fmt: skip


def _port(text: str) -> int:
    """``--port N``: a TCP port (a larger number would be wrapped around by the socket library,
    or refused by it with a traceback)."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port from 1 to {MAX_PORT}")
    return int(text)


# -- daemon ------------------------------------------------------------------------------------
def daemon_log_path() -> Path:
    from ..places import state_home

    return state_home() / "daemon.log"


def cmd_daemon(args: argparse.Namespace, out: TextIO) -> int:
    from ..agents import daemon_client

    config = _config(args)
    if args.action == "status":
        try:
            status = daemon_client.request(config.db, {"op": "status"}, timeout=5.0)
        except TimeoutError:
            raise VaultseekError("the daemon did not answer within 5 s") from None
        if args.json:
            out.write(json.dumps(status or {"running": False}, ensure_ascii=False) + "\n")
        elif status is None:
            out.write(f"not running (index {config.db})\n")
        else:
            info = status["daemon"]
            out.write(
                f"running: pid {info['pid']}, up {info['uptime_seconds']} s, socket {info['socket']}\n"
                f"vault {status['vault']}: {status['files']:,} files, {status['chunks']:,} chunks; "
                f"{'watching' if info['watching'] else 'not watching'}, {info['syncs']} syncs"
                + (f"; last error: {info['last_error']}" if info["last_error"] else "")
                + "\n"
            )
        return 0 if status is not None or args.json else 1
    if args.action == "stop":
        ping = daemon_client.is_running(config.db)
        if ping is None:
            out.write("not running\n")
            return 0
        daemon_client.request(config.db, {"op": "shutdown"})
        for _ in range(100):
            if daemon_client.is_running(config.db, timeout=0.2) is None:
                break
            time.sleep(0.05)
        out.write(f"stopped (pid {ping['pid']})\n")
        return 0
    if args.foreground:
        if not args.no_watch and daemon_client.is_running(config.db) is None:
            _refuse_beside_a_watcher(config.db)
        return _run_daemon(config, watch=not args.no_watch, out=out)
    return _spawn_daemon(args, config, out)


def _refuse_beside_a_watcher(db: Path) -> None:
    """An index has one writer. The daemon runs a watcher, which could not start beside a
    running ``vaultseek watch`` (or ``mcp --watch``): say so now, rather than start a daemon
    whose watcher fails in its log."""
    from ..agents.watch import writer_active

    if writer_active(db):
        raise IndexBusyError(
            f"another vaultseek is already watching the index {db} (`vaultseek watch` or `mcp --watch`)",
            hint="stop it and start the daemon again (it watches too), or `vaultseek daemon start "
            "--no-watch` to serve searches beside it",
        )


def _run_daemon(config: Any, *, watch: bool, out: TextIO) -> int:
    import signal

    from ..agents.daemon import Daemon

    daemon = Daemon(config, watch=watch)
    daemon.bind()
    signal.signal(signal.SIGTERM, lambda _s, _f: threading_stop(daemon))
    out.write(f"vaultseek daemon: pid {os.getpid()}, socket {daemon.socket_path}\n")
    out.flush()
    try:
        daemon.serve()
    except KeyboardInterrupt:
        pass
    return 0


def threading_stop(daemon: Any) -> None:
    import threading

    threading.Thread(target=daemon.stop, daemon=True).start()


def _spawn_daemon(args: argparse.Namespace, config: Any, out: TextIO) -> int:
    import subprocess

    from ..agents import daemon_client

    running = daemon_client.is_running(config.db)
    if running is not None:
        out.write(f"already running (pid {running['pid']})\n")
        return 0
    if not args.no_watch:
        _refuse_beside_a_watcher(config.db)
    log = daemon_log_path()
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    from ..config import index_arguments

    command = [sys.executable, "-m", "vaultseek.cli", "daemon", "start", "--foreground",
               *index_arguments(config)]  # fmt: skip
    if args.config:
        command += ["--config", args.config]
    if args.no_watch:
        command.append("--no-watch")
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, start_new_session=True
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ping = daemon_client.is_running(config.db, timeout=0.5)
        if ping is not None:
            out.write(f"started (pid {ping['pid']}); log: {log}\n")
            return 0
        if process.poll() is not None:
            tail = log.read_text("utf-8", "replace").strip().splitlines()[-3:]
            raise VaultseekError("the daemon exited at start: " + " / ".join(tail), hint=f"see {log}")
        time.sleep(0.05)
    raise VaultseekError("the daemon did not answer within 60 s", hint=f"see {log}")


# -- watch -------------------------------------------------------------------------------------
def cmd_watch(args: argparse.Namespace, out: TextIO) -> int:
    import threading

    from ..agents.watch import Watcher

    config = _config(args)

    def on_sync(report: Any) -> None:
        changed = report.added + report.updated + report.deleted
        if not args.quiet and (changed or watcher.syncs == 0):
            out.write(
                f"{time.strftime('%H:%M:%S')} {report.added} added, {report.updated} updated, "
                f"{report.deleted} deleted ({report.seconds:.2f} s)\n"
            )
            out.flush()

    def on_error(exc: VaultseekError) -> None:
        sys.stderr.write(f"{time.strftime('%H:%M:%S')} error: {exc.message} (will retry)\n")

    def on_intake(outcomes: Any) -> None:
        for outcome in outcomes if not args.quiet else ():
            if outcome.destination:
                out.write(f"{time.strftime('%H:%M:%S')} intake: {outcome.item} → {outcome.destination}\n")
        out.flush()

    watcher = Watcher(config, on_sync=on_sync, on_error=on_error, on_intake=on_intake)
    if not args.quiet:
        out.write(f"watching {config.vault} (Ctrl-C to stop)\n")
        out.flush()
    stop = threading.Event()
    try:
        watcher.run(stop)
    except KeyboardInterrupt:
        stop.set()
    return 0


# -- mcp ---------------------------------------------------------------------------------------
def cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    config = _config(args)
    if args.print_command:
        out.write(claude_mcp_add_command(config, args.config) + "\n")
        return 0
    from ..agents.mcp_server import build_mcp_server, run_mcp_server
    from ..engine import Index

    if config.database_url is None and not Path(config.db).exists() and not args.watch:
        raise ConfigError(f"no index at {config.db}", hint="run `vaultseek index` first, or pass --watch")
    if args.http:  # one clear error for a port in use, before the SDK's own bind fails
        from ..web.ports import check_port

        check_port(args.host, args.port, what="the MCP server")
    stop = None
    if args.watch:
        from ..agents.watch import Watcher

        def on_error(exc: VaultseekError) -> None:
            sys.stderr.write(f"watch: {exc.message}\n")

        watcher = Watcher(config, on_error=on_error)
        _thread, stop = watcher.start()
        watcher.ready.wait(timeout=600)
    try:
        with Index(config, create=args.watch) as index:
            server = build_mcp_server(index)
            run_mcp_server(server, http=args.http, host=args.host, port=args.port)
    finally:
        if stop is not None:
            stop.set()
    return 0


def claude_mcp_add_command(config: Any, config_file: str | None) -> str:
    """The ``claude mcp add`` line that serves ``config``'s index: this installation's
    ``vaultseek`` by its absolute path (as ``hook install`` writes it: Claude Code starts
    servers with its own ``PATH``) and the index named exactly."""
    import shlex

    from ..agents.claude_settings import executable
    from ..config import index_arguments

    words = index_arguments(config)
    if config_file:
        words.append(f"--config={Path(config_file).expanduser().absolute()}")
    return f"claude mcp add vaultseek -- {executable()} mcp " + " ".join(shlex.quote(w) for w in words)


COMMANDS = {"hook": cmd_hook, "daemon": cmd_daemon, "watch": cmd_watch, "mcp": cmd_mcp}
