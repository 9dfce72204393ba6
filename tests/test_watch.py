"""The watcher through real file edits; readers searching while it writes see no errors."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import wait_for

from vaultseek import open_index
from vaultseek.config import load_config
from vaultseek.errors import ConfigError
from vaultseek.watch import Watcher


def paths(vault: Path, query: str) -> list[str]:
    with open_index(vault) as index:
        return [r.path for r in index.search(query, mode="bm25", k=5).results]



@pytest.fixture
def watching(sample_vault: Path):  # type: ignore[no-untyped-def]
    watcher = Watcher(load_config(vault=sample_vault))
    thread, stop = watcher.start()
    assert watcher.ready.wait(30)
    yield sample_vault, watcher
    stop.set()
    thread.join(10)


def test_watch_indexes_creates_edits_and_deletes_within_2_s(watching) -> None:  # type: ignore[no-untyped-def]
    vault, _watcher = watching
    note = vault / "new.md"
    note.write_text("# Quokka\n\nQuokkas smile at tourists on Rottnest.\n", "utf-8")
    assert wait_for(lambda: paths(vault, "quokka") == ["new.md"])
    note.write_text("# Wombat\n\nWombats leave cube-shaped droppings.\n", "utf-8")
    assert wait_for(lambda: paths(vault, "quokka") == [] and paths(vault, "wombat") == ["new.md"])
    note.unlink()
    assert wait_for(lambda: paths(vault, "wombat") == [])
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("# Wombat\n", "utf-8")
    time.sleep(0.5)
    assert paths(vault, "wombat") == []


def test_one_writer_only(watching) -> None:  # type: ignore[no-untyped-def]
    vault, _watcher = watching
    with pytest.raises(ConfigError, match="already watching"):
        Watcher(load_config(vault=vault)).run(threading.Event())


def test_readers_never_see_an_error_while_the_watcher_writes(watching) -> None:  # type: ignore[no-untyped-def]
    vault, watcher = watching
    errors: list[BaseException] = []
    searches = [0]
    stop = threading.Event()

    def reader(n: int) -> None:
        try:
            with open_index(vault) as index:
                while not stop.is_set():
                    for mode in ("hybrid", "bm25", "vector"):
                        index.search(f"note {n} refresh tokens", mode=mode, k=5)
                        searches[0] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    readers = [threading.Thread(target=reader, args=(n,)) for n in range(8)]
    for thread in readers:
        thread.start()
    before = watcher.syncs
    for i in range(12):
        (vault / f"churn/{i % 4}.md").parent.mkdir(exist_ok=True)
        (vault / f"churn/{i % 4}.md").write_text(f"# Churn {i}\n\n" + f"refresh tokens edit {i}\n" * 50, "utf-8")
        if i % 5 == 4:
            (vault / f"churn/{i % 4}.md").unlink()
        time.sleep(0.15)
    assert wait_for(lambda: watcher.syncs > before + 2, 5)
    stop.set()
    for thread in readers:
        thread.join(30)
    assert errors == []
    assert searches[0] > 50


def test_watch_command_runs_and_stops_cleanly(sample_vault: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "watch", "--vault", str(sample_vault)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert wait_for(lambda: (load_config(vault=sample_vault).db or Path("/nonexistent")).exists(), 30)
        (sample_vault / "live.md").write_text("# Capybara\n\nCapybaras enjoy hot springs.\n", "utf-8")
        assert wait_for(lambda: _safe_paths(sample_vault, "capybara") == ["live.md"], 30)
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "watching" in out and "Traceback" not in err


def _safe_paths(vault: Path, query: str) -> list[str]:
    try:
        return paths(vault, query)
    except Exception:  # noqa: BLE001 - the index may not exist yet
        return []
