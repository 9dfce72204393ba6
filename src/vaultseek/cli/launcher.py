"""The ``vaultseek`` console script: the agent hooks' fast lane first, then the full CLI.

Claude Code starts ``vaultseek hook user-prompt-submit`` on every prompt, so what that process
imports is paid on every prompt. When the hook names its index with ``--db`` (as
``vaultseek hook install`` writes it) and a daemon serves that index, this module forwards the
event to the daemon and prints its answer, having imported nothing beyond ``json``, ``socket``
and CPython's built-in SHA-256: no argparse, no config loading, no pathlib, no typing, no
OpenSSL. The daemon then does everything else with its own configuration: the triviality
check, the session's last prompt, the search and the rendering.

Anything else — no ``--db``, no daemon, input that is not a JSON object, a daemon error —
goes down the ordinary path (:mod:`hook_runner`, with the same stdin bytes), which fails open
and logs. Every other command goes straight to :func:`vaultseek.cli.main.main`.
"""

from __future__ import annotations

import io
import json
import os
import sys

HOOK_EVENTS = ("user-prompt-submit", "post-tool-use")
_HOOK_OPTIONS = ("--vault", "--db", "--collection", "--config")


def hook_options(words: list[str]) -> dict[str, str] | None:
    """``--vault``/``--db``/``--collection``/``--config`` (``--x V`` or ``--x=V``) and
    ``--debug``; None if the
    words hold anything else (the full parser then reports it)."""
    options: dict[str, str] = {}
    at = 0
    while at < len(words):
        name, eq, value = words[at].partition("=")
        if name == "--debug" and not eq:
            at += 1
            continue
        if name not in _HOOK_OPTIONS:
            return None
        if not eq:
            if at + 1 >= len(words):
                return None
            at += 1
            value = words[at]
        options[name[2:]] = value
        at += 1
    return options


def _fast_lane(event: str, db: str, raw: bytes) -> str | None:
    """The daemon's answer for this event, or None to take the ordinary path."""
    from ..agents import daemon_client

    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):  # nested too deep to parse: the ordinary path logs it
        return None
    if not isinstance(payload, dict):
        return None
    try:
        timeout = float(os.environ.get("VAULTSEEK_HOOK_TIMEOUT") or 2.0)
    except ValueError:
        timeout = 2.0
    message = {"op": "hook", "event": event, "input": payload, "prepare": True}
    try:
        answer = daemon_client.request(db, message, timeout=timeout)
    except TimeoutError as exc:  # the daemon is stuck: asking again would only double the wait
        from ..agents.hook_runner import EVENTS, log_event

        log_event(EVENTS.get(event, event), f"failed open: daemon did not answer: {exc}")
        return ""
    except Exception:  # noqa: BLE001 - the ordinary path retries, then logs what went wrong
        return None
    return None if answer is None else str(answer.get("output", ""))


def run_hook(event: str, options: dict[str, str], stdin: io.BufferedIOBase | None = None) -> int:
    """Run one hook event (always exit 0: hooks fail open)."""
    from ..agents import daemon_client

    try:  # more than a daemon request may hold is not read: the ordinary path refuses it
        raw = (stdin or sys.stdin.buffer).read(daemon_client.MAX_REQUEST_BYTES + 1)
    except OSError:  # no usable stdin: the ordinary path logs the empty input
        raw = b""
    try:
        fits = len(raw) <= daemon_client.MAX_REQUEST_BYTES
        # The daemon of an index file listens on a socket named after the file; a PostgreSQL
        # index's is named after its server and collection, which needs the configuration.
        local = "db" in options and "://" not in options["db"]
        output = _fast_lane(event, options["db"], raw) if local and fits else None
        if output is not None:
            if output:
                sys.stdout.write(output if output.endswith("\n") else output + "\n")
                sys.stdout.flush()
            return 0
        from ..agents.hook_runner import run

        return run(
            event,
            vault=options.get("vault"),
            db=options.get("db"),
            collection=options.get("collection"),
            config_file=options.get("config"),
            stdin=io.BytesIO(raw),
        )
    finally:
        if os.environ.get("VAULTSEEK_DEBUG_MODULES"):  # for the tests that the path stays light
            with open(os.environ["VAULTSEEK_DEBUG_MODULES"], "w", encoding="utf-8") as sink:
                sink.write("\n".join(sorted(sys.modules)))


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["search"]:
        # numpy's OpenBLAS starts a thread per core on import, ~20-30 ms of CPU for a fresh
        # search (and they spin between calls), whose matrix work is gathers and simsimd scans.
        # Not for the long-running commands: the deep tier's hub reaches are a matrix product.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if len(words) >= 2 and words[0] == "hook" and words[1] in HOOK_EVENTS:
        options = hook_options(words[2:])
        if options is not None:
            return run_hook(words[1], options)
    from .main import main as cli_main

    return cli_main(words)


if __name__ == "__main__":
    sys.exit(main())
