"""Ranking snapshots: a fixed slice of real pages, fixed queries, the ranked paths per mode.

A change that moves results shows up here as a reviewable diff. After an intended change,
regenerate with ``VAULTSEEK_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_rankings.py`` and
commit the new file with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from vaultseek import open_index

SNAPSHOT = Path(__file__).parent / "snapshots" / "tldr_common_rankings.json"
UPDATE = bool(os.environ.get("VAULTSEEK_UPDATE_SNAPSHOTS"))  # read before fixtures clear it
QUERIES = [
    "tar",
    "extract a compressed archive",
    "git commit --amend",
    "list open network ports",
    "change file permissions recursively",
    "show disk usage of a directory",
    "ssh tunnel",
    "find files by name",
    "kill a process by name",
    "convert video format",
]


RELEVANT = {
    "tar", "gzip", "unzip", "7z", "zip", "git-commit", "git-log", "lsof", "netstat", "ss",
    "chmod", "chown", "du", "df", "ssh", "scp", "rsync", "find", "fd", "locate", "kill",
    "pkill", "killall", "ffmpeg", "ps", "top",
}
"""Pages the queries are about, mixed into every 12th page of the rest as distractors."""


@pytest.fixture(scope="module")
def tldr_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = SHARED_DATA / "tldr" / "pages" / "common"
    if not source.is_dir():
        pytest.skip(f"{source} is not available")
    vault = tmp_path_factory.mktemp("tldr")
    pages = sorted(source.glob("*.md"))
    chosen = set(pages[::12]) | {p for p in pages if p.stem in RELEVANT}
    for page in sorted(chosen):
        shutil.copyfile(page, vault / page.name)
    return vault


def test_rankings_match_the_snapshot(tldr_vault: Path, tmp_path: Path) -> None:
    with open_index(tldr_vault, db=tmp_path / "i.db", create=True) as index:
        index.sync()
        got = {
            mode: {
                q: [f"{r.path} #{r.bm25_rank}/{r.vec_rank}" for r in index.search(q, mode=mode, k=5).results]
                for q in QUERIES
            }
            for mode in ("hybrid", "bm25", "vector")
        }
    if UPDATE or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
        if not UPDATE:
            pytest.fail(f"wrote a new snapshot {SNAPSHOT}; review and commit it")
    assert got == json.loads(SNAPSHOT.read_text())
