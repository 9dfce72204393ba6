"""The sign that someone is waiting for an answer, which the deep tier's worker yields to.

Searches, hooks and the daemon's requests touch one small file in the user's state folder
(``$XDG_STATE_HOME/vaultseek/deep/interactive``); the background worker (``agents/
deep_worker.py``) and the watchers' deep slices look at its modification time between batches
and rest while it was touched within :data:`QUIET_SECONDS`. The worker already runs at the
operating system's idle priority, so a search always gets the processor first; resting as well
keeps the memory bandwidth and caches a search shares with it free too, and leaves the one
core a two-core machine has beside the search to whatever else the user runs.

Touching costs a search nothing measurable: at most one ``utime`` a second per process
(:data:`TOUCH_EVERY_SECONDS`), and a clock read otherwise. Standard library only: the hook
client imports it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..places import state_home

QUIET_SECONDS = 2.0
"""The worker rests until no interactive work touched the marker for this long."""
TOUCH_EVERY_SECONDS = 1.0
"""A process touches the marker at most this often (a burst of searches costs one ``utime``)."""

_last_touch = -TOUCH_EVERY_SECONDS


def marker_path() -> Path:
    return state_home() / "deep" / "interactive"


def note_interactive() -> None:
    """Say that interactive work is happening now (never raises)."""
    global _last_touch
    now = time.monotonic()
    if now - _last_touch < TOUCH_EVERY_SECONDS:
        return
    _last_touch = now
    path = marker_path()
    try:
        os.utime(path)
    except FileNotFoundError:
        try:
            path.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            path.parent.mkdir(exist_ok=True, mode=0o700)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError:
            pass
    except OSError:
        pass


def interactive_recently(within: float = QUIET_SECONDS) -> bool:
    """Whether interactive work touched the marker in the last ``within`` seconds."""
    try:
        touched = os.stat(marker_path()).st_mtime
    except OSError:
        return False
    return time.time() - touched < within
