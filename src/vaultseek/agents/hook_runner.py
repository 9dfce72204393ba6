"""Running a hook as Claude Code calls it: stdin in, context out, and never in the way.

``vaultseek hook user-prompt-submit`` / ``post-tool-use`` read the event's JSON from stdin,
ask the resident process (:mod:`daemon_client`) for the answer, and fall back to opening the
index in this process when no daemon runs. Whatever goes wrong — bad JSON, no index, a locked
database, a model that will not load, the self-imposed deadline (``hook_timeout``, 2 s by
default), an event larger than a daemon request may be (4 MB) or nested absurdly deep — the
hook **fails open**: exit 0, nothing on stdout, one line in
``$XDG_STATE_HOME/vaultseek/hook.log``. A user's prompt is never blocked and never shows a
traceback.

The last non-trivial prompt of each session is kept (``…/vaultseek/sessions/``, one small
file per session, 0600, pruned after a day), credentials scrubbed, so that PostToolUse can rank
a tool's output against what the user asked, not only against the tool's input.

The engine is imported only on the fallback path. With ``--db`` and a daemon running, even this
module is skipped: :mod:`launcher` forwards the event to the daemon directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ..config import Config, load_config
from ..index.activity import note_interactive
from ..places import state_home
from . import daemon_client
from .hooks import (
    EVENTS,
    HookSettings,
    is_trivial,
    parse_hook_input,
    prompt_of,
    tool_output_size,
)

LOG_BYTES = 256 * 1024
"""hook.log is rotated to hook.log.1 past this size: it never grows without bound."""
SESSION_TTL_SECONDS = 24 * 3600


class HookTimeout(Exception):
    """The hook's own deadline passed."""


def log_path() -> Path:
    return state_home() / "hook.log"


def log_event(event: str, message: str) -> None:
    """Append one line to hook.log (rotating it when large); never raises."""
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists() and path.stat().st_size > LOG_BYTES:
            path.replace(path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = " ".join(f"{stamp} {event} {message}".split())[:2000]
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except Exception:  # noqa: BLE001 - logging must never be the thing that fails
        pass


def settings_of(config: Config) -> HookSettings:
    return HookSettings(
        max_tokens=config.hook_max_tokens,
        min_relevance=config.hook_min_relevance,
        tool_output_chars=config.hook_tool_output_chars,
        tool_max_tokens=config.hook_tool_max_tokens,
    )


# -- the session's last prompt -----------------------------------------------------------------
def _session_file(session_id: Any) -> Path | None:
    if not isinstance(session_id, str) or not session_id:
        return None
    name = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]
    return state_home() / "sessions" / f"{name}.json"


def remember_prompt(payload: dict[str, Any], prompt: str) -> None:
    """Keep ``prompt`` as the session's last one, its credentials scrubbed first (the whole
    prompt, before it is cut to 4,000 characters, so no piece of a key survives the cut)."""
    path = _session_file(payload.get("session_id"))
    if path is None:
        return
    from ..index.credentials import scrub  # its patterns cost a hook only when a prompt is kept

    prompt = scrub(prompt).text
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        scratch = path.with_suffix(".tmp")
        scratch.unlink(missing_ok=True)
        fd = os.open(scratch, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)  # private to the user
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps({"prompt": prompt[:4000]}))
        scratch.replace(path)
        cutoff = time.time() - SESSION_TTL_SECONDS
        for old in path.parent.glob("*.json"):
            if old.stat().st_mtime < cutoff:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def recall_prompt(payload: dict[str, Any]) -> str:
    path = _session_file(payload.get("session_id"))
    try:
        data = json.loads(path.read_text("utf-8")) if path else {}
    except (OSError, ValueError):
        return ""
    prompt = data.get("prompt") if isinstance(data, dict) else None
    return prompt if isinstance(prompt, str) else ""


# -- the deadline ------------------------------------------------------------------------------
@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`HookTimeout` in this (main) thread after ``seconds``."""

    def expire(_signum: int, _frame: object) -> None:
        raise HookTimeout(f"gave up after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- one run -----------------------------------------------------------------------------------
def prepare(event: str, payload: dict[str, Any], settings: HookSettings) -> str | None:
    """The steps before any searching, wherever the hook is answered (here or in the daemon):
    None when there is nothing to add (a trivial prompt, a small tool output); otherwise the
    prompt to rank a tool's output against ("" for UserPromptSubmit, whose prompt is
    remembered for the session's later PostToolUse events)."""
    if event == "user-prompt-submit":
        prompt = prompt_of(payload)
        if is_trivial(prompt):
            return None
        remember_prompt(payload, prompt)
        return ""
    if tool_output_size(payload) < settings.tool_output_chars:
        return None
    return recall_prompt(payload)


def compute(event: str, payload: dict[str, Any], config: Config, *, timeout: float) -> str:
    """What the hook prints: from the daemon if one serves this index, else in-process."""
    settings = settings_of(config)
    last_prompt = prepare(event, payload, settings)
    if last_prompt is None:
        return ""
    note_interactive()  # the deep tier's worker rests while the agent waits for this
    assert config.db is not None
    message = {
        "op": "hook",
        "event": event,
        "input": payload,
        "last_prompt": last_prompt,
        "settings": settings.to_dict(),
    }
    answer = daemon_client.request(config.db, message, timeout=timeout)
    if answer is not None:
        return str(answer.get("output", ""))
    from ..engine import Index  # the fallback: the heavy stack, only now
    from .hooks import run_event

    with Index(config) as index:
        return run_event(index, event, payload, settings, last_prompt=last_prompt)


def run(
    event: str,
    *,
    vault: str | None = None,
    db: str | None = None,
    collection: str | None = None,
    config_file: str | None = None,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run one hook event; always returns 0 (failures are logged, not shown)."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout
    name = EVENTS.get(event, event)
    started = time.perf_counter()
    timeout = 2.0
    try:
        limit = daemon_client.MAX_REQUEST_BYTES
        raw = source.read(limit + 1)  # a larger event is refused unread, not held in memory
        config = load_config(vault=vault, db=db, collection=collection, config_file=config_file)
        timeout = config.hook_timeout
        with deadline(timeout):
            payload = parse_hook_input(raw, max_bytes=limit)
            output = compute(event, payload, config, timeout=max(timeout - 0.05, 0.1))
        if output:
            sink.write(output if output.endswith("\n") else output + "\n")
            sink.flush()
        if os.environ.get("VAULTSEEK_HOOK_TRACE"):
            log_event(name, f"ok {len(output)} chars in {time.perf_counter() - started:.3f} s")
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever it was
        if isinstance(exc, KeyboardInterrupt):
            return 0
        log_event(name, f"failed open: {exc.__class__.__name__}: {exc}")
    return 0
