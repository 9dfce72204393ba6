"""A note's map vector is the mean of its sections' vectors, read from the stored vectors a block
at a time: the same means whatever the blocks cut through, and whatever order the rows come in."""

from __future__ import annotations

import numpy as np
import pytest

from vaultseek.storage.vectors import VectorIndex
from vaultseek.vaultmap import features


def _plain_means(notes: int, owners: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    return np.stack([vectors[owners == note].mean(axis=0) if (owners == note).any() else np.zeros(vectors.shape[1]) for note in range(notes)])


@pytest.mark.parametrize("block", [1, 3, 4096])
def test_means_read_in_blocks_are_the_notes_means(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    rng = np.random.default_rng(5)
    stored = VectorIndex.from_floats(np.arange(40, dtype=np.int64), rng.normal(size=(40, 8)).astype(np.float32))
    # Notes own runs of rows; note 2's rows come apart (a run, another note's, its run again);
    # note 5 owns nothing.
    owners = np.array([0] * 5 + [1] * 7 + [2] * 3 + [3] * 2 + [2] * 4 + [4] * 19)
    rows = np.arange(40)
    monkeypatch.setattr(features, "_READ", block)
    means, present = features.note_means_read(6, owners, stored.vectors, rows, stored.dim)
    np.testing.assert_allclose(means, _plain_means(6, owners, stored.vectors(rows)), atol=1e-6)
    assert present.tolist() == [True, True, True, True, True, False]


def test_note_means_take_rows_in_any_order() -> None:
    rng = np.random.default_rng(6)
    vectors = rng.normal(size=(30, 4)).astype(np.float32)
    owners = rng.integers(0, 5, size=30)
    means, _present = features.note_means(["a", "b", "c", "d", "e"], owners, vectors)
    np.testing.assert_allclose(means, _plain_means(5, owners, vectors), atol=1e-6)
