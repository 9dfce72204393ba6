"""The watcher through real file edits; readers searching while it writes see no errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support import docgen

from conftest import wait_for
from vaultseek import open_index
from vaultseek.agents import watch
from vaultseek.agents.watch import Watcher
from vaultseek.config import load_config
from vaultseek.errors import ConfigError, VaultseekError
from vaultseek.records import SyncReport


def paths(vault: Path, query: str) -> list[str]:
    with open_index(vault) as index:
        return [r.path for r in index.search(query, mode="bm25", k=5).results]



@dataclass
class Watching:
    vault: Path
    watcher: Watcher
    reports: list[SyncReport]
    errors: list[VaultseekError]

    def later_syncs_were_path_limited(self) -> bool:
        """The first sync (at start) is a full one; were all that followed limited to paths?"""
        return self.reports[0].full and not any(r.full for r in self.reports[1:])


@pytest.fixture
def watching(sample_vault: Path) -> Iterator[Watching]:
    reports: list[SyncReport] = []
    errors: list[VaultseekError] = []
    watcher = Watcher(load_config(vault=sample_vault), on_sync=reports.append, on_error=errors.append)
    thread, stop = watcher.start()
    assert watcher.ready.wait(30)
    yield Watching(sample_vault, watcher, reports, errors)
    stop.set()
    thread.join(10)


def test_watch_indexes_creates_edits_and_deletes_within_2_s(watching: Watching) -> None:
    vault = watching.vault
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
    assert watching.later_syncs_were_path_limited() and watching.errors == []


def test_watch_follows_a_renamed_note(watching: Watching) -> None:
    vault = watching.vault
    (vault / "cooking/bread.md").rename(vault / "cooking/loaf.md")  # reported as a deletion and a creation
    assert wait_for(lambda: paths(vault, "sourdough starter") == ["cooking/loaf.md"])
    assert watching.later_syncs_were_path_limited()


def test_watch_syncs_everything_when_a_folder_moves(watching: Watching) -> None:
    vault = watching.vault
    (vault / "cooking").rename(vault / "kitchen")  # the events name the two folders, not the note inside
    assert wait_for(lambda: paths(vault, "sourdough starter") == ["kitchen/bread.md"])
    assert wait_for(lambda: any(r.full for r in watching.reports[1:]))  # reported just after the commit


def test_watch_reads_documents_and_leaves_skipped_folders_alone(watching: Watching) -> None:
    vault = watching.vault
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/axolotl.md").write_text("# Axolotl\n\nAxolotls in the app's own folder.\n", "utf-8")
    docgen.text_pdf(vault / "code/report.pdf", ["Axolotls regrow their limbs.", "Salamanders on page two."])
    # Its pages hold fewer than 50 characters each, so they are OCRed too where an engine runs
    # (seconds a page on a busy machine): the wait is generous, the poll returns at once.
    assert wait_for(lambda: paths(vault, "axolotls") == ["code/report.pdf"], 60)
    assert watching.later_syncs_were_path_limited()
    with open_index(vault) as index:
        assert {f["path"]: f["kind"] for f in index.files()}["code/report.pdf"] == "pdf"


def test_watch_syncs_only_what_the_events_name_until_a_full_sync(watching: Watching, tmp_path: Path) -> None:
    vault = watching.vault
    behind = tmp_path / "hard-link.md"  # the vault's note under a second name, outside the watched folder
    os.link(vault / "cooking/bread.md", behind)
    behind.write_text("# Pangolin\n\nPangolins roll into a ball.\n", "utf-8")  # no event in the vault
    (vault / "new.md").write_text("# Quokka\n\nQuokkas smile at tourists.\n", "utf-8")
    assert wait_for(lambda: paths(vault, "quokka") == ["new.md"])
    assert paths(vault, "pangolin") == []  # the sync looked at new.md only, not the whole vault
    assert watching.later_syncs_were_path_limited()
    watching.watcher.rescan_seconds = 0  # the periodic full sync, now
    assert wait_for(lambda: paths(vault, "pangolin") == ["cooking/bread.md"], 5)
    assert wait_for(lambda: watching.reports[-1].full)  # reported just after the commit


def test_a_batch_of_more_than_max_paths_is_synced_in_full(watching: Watching, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,000 in use (a bulk change may have lost events). With 0 every batch is "more", so the
    # test does not depend on how the machine's timing splits a few writes into batches.
    monkeypatch.setattr(watch, "MAX_PATHS", 0)
    vault = watching.vault
    (vault / "code/one.md").write_text("# Quokka\n\nQuokkas smile at tourists.\n", "utf-8")
    assert wait_for(lambda: paths(vault, "quokka") == ["code/one.md"])
    assert wait_for(lambda: len(watching.reports) > 1)  # reported just after the commit
    assert all(r.full for r in watching.reports[1:])


def test_after_a_failed_sync_the_next_one_is_full(watching: Watching) -> None:
    vault = watching.vault
    with open_index(vault) as other, other.store.write_lock():  # another writer (`vaultseek index`)
        (vault / "new.md").write_text("# Quokka\n\nQuokkas smile at tourists.\n", "utf-8")
        assert wait_for(lambda: watching.errors != [], 15)  # the busy timeout runs out
    # The failed batch's events are spent: only a full sync finds new.md now.
    assert wait_for(lambda: paths(vault, "quokka") == ["new.md"], 5)
    assert wait_for(lambda: watching.reports[-1].full)  # reported just after the commit


def test_one_writer_only(watching: Watching) -> None:
    with pytest.raises(ConfigError, match="already watching"):
        Watcher(load_config(vault=watching.vault)).run(threading.Event())


def test_readers_never_see_an_error_while_the_watcher_writes(watching: Watching) -> None:
    vault, watcher = watching.vault, watching.watcher
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
