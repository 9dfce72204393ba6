"""How the vault map is made from the index: a note's vector is the mean of its sections' vectors,
read from the stored vectors a block at a time (the same means whatever the blocks cut through,
whatever order the rows come in); and every edit reaches the kept map, the same note's again too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vaultseek import open_index
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
    means, present = features.note_means(6, owners, stored.vectors, rows, stored.dim)
    np.testing.assert_allclose(means, _plain_means(6, owners, stored.vectors(rows)), atol=1e-6)
    assert present.tolist() == [True, True, True, True, True, False]


def test_note_means_take_rows_in_any_order() -> None:
    rng = np.random.default_rng(6)
    vectors = rng.normal(size=(30, 4)).astype(np.float32)
    owners = rng.integers(0, 5, size=30)
    means, _present = features.note_means(5, owners, vectors.__getitem__, np.arange(30), 4)
    np.testing.assert_allclose(means, _plain_means(5, owners, vectors), atol=1e-6)


NOTES = {
    "bread": "Knead the dough, let it rise overnight and bake the bread loaf in a hot oven.",
    "soup": "Simmer onions, carrots and celery for the soup stock; season the broth with herbs.",
    "pasta": "Boil the pasta in salted water and toss the noodles with garlic and olive oil.",
    "salad": "Chop lettuce, tomatoes and cucumber; dress the salad with oil and lemon juice.",
    "dns": "DNS resolves host names to IP addresses through root and authoritative servers.",
    "tcp": "TCP opens a connection with a three-way handshake and retransmits lost packets.",
    "firewall": "The firewall blocks inbound ports; iptables rules filter network packets.",
    "routing": "Routers forward IP packets along routes learned by BGP and OSPF between networks.",
}
EDITS = (
    "Routers and switches carry packets between subnets; the gateway forwards them onward.",
    "Bake a sourdough loaf: feed the starter with flour and water, knead, proof and bake.",
)


def test_every_edit_of_the_same_note_reaches_the_kept_map(vault: Path) -> None:
    # An edited note's sections are written anew; in SQLite they take the highest row ids, and
    # the next edit of that same note takes those very ids again, so the map cannot tell the
    # index changed from its chunks' count and newest id alone.
    for name, text in NOTES.items():
        (vault / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n", encoding="utf-8")
    with open_index(vault, create=True) as index:
        index.sync(remember=False)
        index.vault_map()
        for text in EDITS:
            (vault / "bread.md").write_text(f"# Bread\n\n{text}\n", encoding="utf-8")
            assert index.sync(remember=False).updated == 1
            found = index.vault_map()
            assert (found.how, found.moved) == ("updated", 1), text
            assert index.vault_map().how == "kept"
