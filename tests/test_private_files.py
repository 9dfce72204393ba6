"""What vaultseek writes about a vault is private to the user: the index and the study
database (with their -wal/-shm files) are 0600, a folder made for them 0700, and the hook's
remembered prompt 0600. Another local user must not read notes' text or a prompt out of them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from conftest import run_cli


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_index_and_its_folder_are_private(sample_vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "index.db"
    assert run_cli("index", str(sample_vault), "--db", str(db), "--quiet").returncode == 0
    assert mode(db.parent) == 0o700
    files = [db, *db.parent.glob("index.db-*")]
    assert files and {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_the_study_database_is_private(tmp_path: Path) -> None:
    from vaultseek.study.storage import StudyStore, study_db_path

    path = study_db_path(tmp_path / "index.db")
    store = StudyStore(path)
    try:
        assert mode(path) == 0o600
    finally:
        store.close()


def test_the_hook_remembers_a_prompt_in_a_private_file(sample_vault: Path, tmp_path: Path) -> None:
    assert run_cli("index", str(sample_vault), "--quiet").returncode == 0
    state = tmp_path / "state"
    event = json.dumps({"session_id": "s-1", "prompt": "how do I rotate the oauth refresh tokens?",
                        "hook_event_name": "UserPromptSubmit", "cwd": str(sample_vault)})  # fmt: skip
    run_cli("hook", "user-prompt-submit", "--vault", str(sample_vault), stdin=event, env={"XDG_STATE_HOME": str(state)})
    sessions = list((state / "vaultseek" / "sessions").glob("*.json"))
    assert len(sessions) == 1
    assert mode(sessions[0]) == 0o600 and mode(sessions[0].parent) == 0o700
