"""Hostile entries in a vault, as a user meets them: names that are not valid UTF-8, symlinks
out of the vault, named pipes — including one swapped in after the scan listed the file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_cli, wait_for
from vaultseek import open_index
from vaultseek.agents.watch import Watcher, writer_active
from vaultseek.config import load_config
from vaultseek.errors import VaultseekError
from vaultseek.index.sources import SourceError, SourceFile, read_source
from vaultseek.records import Progress, SyncReport


def bm25(vault: Path, query: str) -> list[str]:
    with open_index(vault) as index:
        return [r.path for r in index.search(query, mode="bm25", k=10).results]


def status_of(vault: Path, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    result = run_cli("status", "--json", "--vault", str(vault), env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def skipped(vault: Path) -> dict[str, str]:
    return {item["path"]: item["reason"] for item in status_of(vault)["skipped"]}


def write_bytes_name(folder: Path, name: bytes, text: str) -> None:
    """A file whose name is the given bytes (not valid UTF-8: no str path can say it)."""
    with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as handle:
        handle.write(text)


# -- names that are not valid UTF-8 -------------------------------------------------------------
def test_a_name_that_is_not_utf8_is_skipped_and_everything_else_indexed(sample_vault: Path) -> None:
    write_bytes_name(sample_vault, b"bad-\xff.md", "# Numbat\n\nNumbats eat termites all day long.\n")
    os.mkdir(os.path.join(os.fsencode(sample_vault), b"folder-\xfe"))
    write_bytes_name(sample_vault / os.fsdecode(b"folder-\xfe"), b"inner.md", "# Quoll\n\nQuolls hunt at night.\n")
    for _run in range(2):  # the first run and an incremental one
        result = run_cli("index", str(sample_vault))
        assert result.returncode == 0, result.stderr
        assert "bad-\\xff.md" in result.stdout and "Traceback" not in result.stderr
    assert bm25(sample_vault, "sourdough starter") == ["cooking/bread.md"]
    reasons = skipped(sample_vault)
    assert reasons == {
        "bad-\\xff.md": "file name is not valid UTF-8 (rename the file to index it)",
        "folder-\\xfe": "folder name is not valid UTF-8 (rename the folder to index what it holds)",
    }
    text = run_cli("status", "--vault", str(sample_vault)).stdout
    assert "bad-\\xff.md: file name is not valid UTF-8" in text
    # Renamed, it is indexed, and the skip goes.
    os.rename(os.path.join(os.fsencode(sample_vault), b"bad-\xff.md"), sample_vault / "numbat.md")
    assert run_cli("index", str(sample_vault)).returncode == 0
    assert bm25(sample_vault, "numbat termites") == ["numbat.md"]
    assert "bad-\\xff.md" not in skipped(sample_vault)


def test_the_watch_command_survives_a_name_that_is_not_utf8(sample_vault: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "watch", "--vault", str(sample_vault)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    err = ""

    def stopped() -> str:
        """Stop the watcher and say what it printed (for a failing wait)."""
        nonlocal err
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            _out, err = process.communicate(timeout=20)
        return f"the watcher's stderr: {err[-3000:]}"

    try:
        assert wait_for(lambda: _safe_bm25(sample_vault, "sourdough") == ["cooking/bread.md"], 30), stopped()
        write_bytes_name(sample_vault, b"bad-\xff.md", "# Numbat\n\nNumbats eat termites.\n")
        (sample_vault / "after.md").write_text("# Capybara\n\nCapybaras enjoy hot springs.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "capybara") == ["after.md"], 30), stopped()
        assert wait_for(lambda: "bad-\\xff.md" in _safe_skipped(sample_vault), 10), stopped()
        (sample_vault / "later.md").write_text("# Axolotl\n\nAxolotls regrow their limbs.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "axolotl") == ["later.md"], 30), stopped()
        assert process.poll() is None
    finally:
        stopped()
    assert process.returncode == 0, err
    assert "Traceback" not in err


def test_a_watcher_keeps_the_index_fresh_while_a_folder_name_stops_file_events(sample_vault: Path) -> None:
    """watchfiles cannot even start under a folder whose name is not valid UTF-8: the watcher
    syncs in full on a timer instead, and takes file events again once the folder is gone."""
    reports: list[SyncReport] = []
    errors: list[VaultseekError] = []
    watcher = Watcher(load_config(vault=sample_vault), on_sync=reports.append, on_error=errors.append)
    watcher.eventless_seconds = 0.3
    thread, stop = watcher.start()
    try:
        assert watcher.ready.wait(30)
        bad = os.path.join(os.fsencode(sample_vault), b"folder-\xfe")
        os.mkdir(bad)
        assert wait_for(lambda: watcher.events_error is not None, 10)
        (sample_vault / "fresh.md").write_text("# Okapi\n\nOkapis are related to giraffes.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "okapi") == ["fresh.md"], 10)
        assert thread.is_alive()
        assert [e for e in errors if "file events stopped" in e.message][:1]
        os.rmdir(bad)
        assert wait_for(lambda: watcher.events_error is None, 10)  # a watch again
        syncs = len(reports)
        (sample_vault / "evented.md").write_text("# Tapir\n\nTapirs have short trunks.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "tapir") == ["evented.md"], 10)
        assert any(not r.full for r in reports[syncs:])  # synced by its event, not a walk
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_the_daemon_watcher_survives_a_bad_name_and_will_not_start_beside_another_watcher(
    sample_vault: Path,
) -> None:
    daemon = run_cli("daemon", "start", "--vault", str(sample_vault))
    assert daemon.returncode == 0, daemon.stderr
    try:
        assert wait_for(lambda: _safe_bm25(sample_vault, "sourdough") == ["cooking/bread.md"], 30)
        write_bytes_name(sample_vault, b"bad-\xff.md", "# Numbat\n\nNumbats eat termites.\n")
        (sample_vault / "after.md").write_text("# Capybara\n\nCapybaras enjoy hot springs.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "capybara") == ["after.md"], 30)
        info = json.loads(run_cli("daemon", "status", "--json", "--vault", str(sample_vault)).stdout)
        assert info["daemon"]["watching"] is True
    finally:
        run_cli("daemon", "stop", "--vault", str(sample_vault))
    db = load_config(vault=sample_vault).db
    assert db is not None and wait_for(lambda: not writer_active(db), 30)  # the daemon has exited
    # A daemon whose watcher could not run (another watcher holds the index) is not started:
    # `daemon start` says so (tests/test_cli_guards.py has the whole story).
    watch = subprocess.Popen([sys.executable, "-m", "vaultseek.cli", "watch", "--vault", str(sample_vault)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert wait_for(lambda: writer_active(db), 30)
        refused = run_cli("daemon", "start", "--vault", str(sample_vault))
        assert refused.returncode == 4 and "already watching" in refused.stderr
    finally:
        watch.send_signal(signal.SIGINT)
        watch.communicate(timeout=20)


# -- symlinks out of the vault ------------------------------------------------------------------
@pytest.fixture
def linked_vault(sample_vault: Path, tmp_path: Path) -> Path:
    """A vault with links out of it (a private file, a folder, a device) and links inside it."""
    (tmp_path / "private.md").write_text("# Private\n\nThe wallaby password is hunter2.\n", "utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/far.md").write_text("# Far\n\nKookaburras laugh at dawn.\n", "utf-8")
    (tmp_path / "elsewhere/again").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # a loop
    (tmp_path / "elsewhere/vault").symlink_to(sample_vault, target_is_directory=True)  # back in
    (sample_vault / "secret.md").symlink_to(tmp_path / "private.md")
    (sample_vault / "shared").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (sample_vault / "zero.md").symlink_to("/dev/zero")
    (sample_vault / "alias.md").symlink_to(sample_vault / "cooking/bread.md")  # inside: followed
    (sample_vault / "kitchen").symlink_to(sample_vault / "cooking", target_is_directory=True)  # inside
    return sample_vault


def test_symlinks_out_of_the_vault_are_skipped_unless_the_user_opts_in(linked_vault: Path) -> None:
    vault = linked_vault
    result = run_cli("index", str(vault))
    assert result.returncode == 0, result.stderr
    assert bm25(vault, "wallaby password") == []
    assert bm25(vault, "kookaburras") == []
    assert sorted(bm25(vault, "sourdough starter")) == ["alias.md", "cooking/bread.md"]
    status = status_of(vault)
    reasons = {item["path"]: item["reason"] for item in status["skipped"]}
    assert reasons["secret.md"].startswith("symlink to a file outside the vault")
    assert reasons["shared"].startswith("symlink to a folder outside the vault")
    assert reasons["zero.md"].startswith("symlink to a file outside the vault")
    assert "follow_external_symlinks = true" in reasons["secret.md"]
    assert (status["external_symlinks"], status["follow_external_symlinks"]) == (3, False)
    text = run_cli("status", "--vault", str(vault)).stdout
    assert "3 lead out of the vault and were skipped (follow_external_symlinks = true" in text

    opt_in = {"VAULTSEEK_FOLLOW_EXTERNAL_SYMLINKS": "true"}
    assert run_cli("index", str(vault), env=opt_in).returncode == 0
    assert bm25(vault, "wallaby password") == ["secret.md"]
    assert bm25(vault, "kookaburras") == ["shared/far.md"]  # once: the loop and the way back are not walked
    status = status_of(vault, env=opt_in)
    reasons = {item["path"]: item["reason"] for item in status["skipped"]}
    assert reasons == {"shared/again": "symlink to a folder that is indexed already (a loop, or a second way to it)",
                       "zero.md": "not a regular file"}  # fmt: skip
    assert (status["external_symlinks"], status["follow_external_symlinks"]) == (0, True)
    assert "followed out of the vault" in run_cli("status", "--vault", str(vault), env=opt_in).stdout

    assert run_cli("index", str(vault)).returncode == 0  # switched off again: what they led to goes
    assert bm25(vault, "wallaby password") == [] and bm25(vault, "kookaburras") == []


def test_a_vaults_own_config_cannot_switch_on_following_links_out_of_it(linked_vault: Path) -> None:
    """Whoever shares a vault writes its ``.vaultseek.toml`` too: a link to a private file and
    the setting that would index it cannot arrive together."""
    (linked_vault / ".vaultseek.toml").write_text("follow_external_symlinks = true\n", "utf-8")
    result = run_cli("index", str(linked_vault))
    assert result.returncode == 0, result.stderr
    assert "ignored follow_external_symlinks" in result.stdout + result.stderr
    assert bm25(linked_vault, "wallaby password") == []
    assert status_of(linked_vault)["external_symlinks"] == 3


def test_a_watcher_does_not_follow_a_new_link_out_of_the_vault(sample_vault: Path, tmp_path: Path) -> None:
    (tmp_path / "private.md").write_text("# Private\n\nThe wallaby password is hunter2.\n", "utf-8")
    reports: list[SyncReport] = []
    watcher = Watcher(load_config(vault=sample_vault), on_sync=reports.append)
    thread, stop = watcher.start()
    try:
        assert watcher.ready.wait(30)
        (sample_vault / "secret.md").symlink_to(tmp_path / "private.md")
        (sample_vault / "marker.md").write_text("# Marker\n\nPlatypus eggs.\n", "utf-8")
        assert wait_for(lambda: _safe_bm25(sample_vault, "platypus") == ["marker.md"], 10)
        assert wait_for(lambda: "secret.md" in _safe_skipped(sample_vault), 10)
        assert bm25(sample_vault, "wallaby password") == []
    finally:
        stop.set()
        thread.join(10)


# -- named pipes and other special files ----------------------------------------------------------
def test_a_named_pipe_in_the_vault_is_skipped_without_waiting(sample_vault: Path) -> None:
    os.mkfifo(sample_vault / "pipe.md")
    result = subprocess.run([sys.executable, "-m", "vaultseek.cli", "index", str(sample_vault)],
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert skipped(sample_vault) == {"pipe.md": "not a regular file"}


def test_a_pipe_swapped_in_after_the_scan_is_refused_not_waited_on(
    vault: Path, write: Callable[..., Path]
) -> None:
    """The scan lists a regular file; before the indexer reads it, it becomes a FIFO."""
    for i in range(70):  # more than one batch, so the swap lands between the scan and the read
        write(f"note-{i:03d}.md", f"# Note {i}\n\nEchidna number {i} digs for ants.\n")
    swapped = vault / "note-069.md"

    def swap(progress: Progress) -> None:
        if progress.phase == "index" and not swapped.is_fifo():
            swapped.unlink()
            os.mkfifo(swapped)

    outcome: list[SyncReport] = []
    with open_index(vault, create=True) as index:
        worker = threading.Thread(target=lambda: outcome.append(index.sync(progress=swap)), daemon=True)
        worker.start()
        worker.join(60)
        if worker.is_alive():  # it hangs in open(): let it go, then fail
            os.close(os.open(swapped, os.O_WRONLY | os.O_NONBLOCK))
            worker.join(10)
            pytest.fail("the indexer waited on a FIFO swapped in after the scan")
        assert swapped.is_fifo()  # the swap did happen mid-run
        report = outcome[0]
        assert [(s.path, s.reason) for s in report.skipped] == [("note-069.md", "not a regular file")]
        assert report.added == 69
        assert index.status().files == 69


def test_reading_refuses_special_files_and_links_swapped_in_after_the_scan(vault: Path, tmp_path: Path) -> None:
    fifo = vault / "fifo.md"
    os.mkfifo(fifo)
    outside = tmp_path / "private.md"
    outside.write_text("# Private\n\nhunter2\n", "utf-8")
    link = vault / "link.md"
    link.symlink_to(outside)

    def read(path: Path) -> str:
        result: list[str] = []

        def attempt() -> None:
            try:
                read_source(SourceFile(path.name, path, 0, 0))
                result.append("read")
            except SourceError as exc:
                result.append(str(exc))

        worker = threading.Thread(target=attempt, daemon=True)
        worker.start()
        worker.join(10)
        if worker.is_alive():
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            pytest.fail(f"reading {path.name} blocked")
        return result[0]

    assert read(fifo) == "not a regular file"
    assert read(link) == "became a symlink after the scan (looked at again on the next run)"
    assert read(Path("/dev/null")) == "not a regular file"


def _safe_bm25(vault: Path, query: str) -> list[str]:
    try:
        return bm25(vault, query)
    except Exception:  # noqa: BLE001 - the index may not exist yet, or be mid-write
        return []


def _safe_skipped(vault: Path) -> dict[str, str]:
    try:
        with open_index(vault) as index:
            return {s.path: s.reason for s in index.status().skipped}
    except Exception:  # noqa: BLE001 - the index may not exist yet
        return {}
